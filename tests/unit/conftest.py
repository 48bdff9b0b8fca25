from __future__ import annotations

import pytest

from compliance_core import FrozenClock, Platform, Role, SequentialIds
from compliance_core.kernel.events import OUTBOX
from compliance_store.memory import MemoryStore


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def platform(clock: FrozenClock) -> Platform:
    return Platform(MemoryStore(), clock=clock, ids=SequentialIds())


def _delivered(platform: Platform, boot):
    """Mark the bootstrap's own events (``organization.created``, ``api_key.created``) as
    delivered, so a test's outbox holds only what the test itself recorded."""
    with platform.uow.write(None) as tx:
        tx[OUTBOX].mark_published([message.id for message in tx[OUTBOX].pending(1000)], platform.clock.now())
    return boot


@pytest.fixture
def boot(platform: Platform):
    return _delivered(platform, platform.bootstrap("Acme"))


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
    other = _delivered(platform, platform.bootstrap("Globex"))
    return platform.actor(other.organization.id)
