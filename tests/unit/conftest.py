from __future__ import annotations

import pytest

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_store.memory import MemoryStore


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return Platform(MemoryStore(), clock=clock, ids=SequentialIds())


@pytest.fixture
def boot(platform: Platform):
    return platform.bootstrap("Acme")


@pytest.fixture
def owner(platform: Platform, boot):
    return platform.actor(boot.organization.id)


@pytest.fixture
def actor_as(platform: Platform, boot):
    def make(role: Role | str):
        return platform.actor(boot.organization.id, role)

    return make


@pytest.fixture
def other_org(platform: Platform):
    other = platform.bootstrap("Globex")
    return platform.actor(other.organization.id)
