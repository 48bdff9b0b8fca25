"""The composition root: one ``Platform`` wires a store, a clock and an id generator into every
service. Nothing else in core constructs adapters, and nothing happens at import time."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import attrs

from .access import AccessService
from .api_keys import ApiKeyService, IssuedKey, NewApiKey
from .clock import Clock, SystemClock
from .errors import ValidationError, require
from .events import Signals
from .findings import FindingService
from .ids import IdGenerator, RandomIds
from .organizations import Organization, OrganizationService, Plan
from .people import PeopleService
from .permissions import Actor, Role
from .uow import Store, UnitOfWork
from .vendors import VendorService

__all__ = ["Platform", "Bootstrap", "STORE_ENTRY_POINTS", "open_store", "version"]

STORE_ENTRY_POINTS = "compliance.stores"


def version() -> str:
    try:
        return importlib.metadata.version("compliance-platform")
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0+local"


def open_store(url: str, **options: Any) -> Store:
    """Find the store adapter for ``url``'s scheme among installed entry points, so core never
    imports an adapter: ``memory://``, ``sqlite:///path.db``, ``postgresql://...``."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme == "postgres":
        scheme = "postgresql"
    for entry in importlib.metadata.entry_points(group=STORE_ENTRY_POINTS):
        if entry.name == scheme:
            return entry.load()(url, **options)  # type: ignore[no-any-return]
    known = sorted(e.name for e in importlib.metadata.entry_points(group=STORE_ENTRY_POINTS))
    raise ValidationError.field("url", url, f"no store for this URL scheme; installed: {', '.join(known) or 'none'}")


@attrs.frozen(kw_only=True)
class Bootstrap:
    organization: Organization
    owner_key: IssuedKey


class Platform:
    """Everything the platform does, for one store.

    :param store: a storage adapter (see ``open_store``)
    :param clock: where time comes from (default: the system clock)
    :param ids: where identifiers come from (default: random, time-ordered)

    >>> platform = Platform.open("memory://")
    >>> boot = platform.bootstrap("Acme")
    >>> platform.vendors.list(platform.actor(boot.organization.id)).total
    0
    """

    def __init__(self, store: Store, *, clock: Clock | None = None, ids: IdGenerator | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.ids: IdGenerator = ids or RandomIds()
        self.signals = Signals()
        self.uow = UnitOfWork(store=store, signals=self.signals, clock=self.clock, ids=self.ids)
        self.access = AccessService(self.uow)
        self.organizations = OrganizationService(self.uow, plan_changed=self.access.flush)
        self.api_keys = ApiKeyService(self.uow, flush_usage=self.access.flush)
        self.vendors = VendorService(self.uow)
        self.people = PeopleService(self.uow)
        self.findings = FindingService(self.uow)
        self.started_at = self.clock.now()

    @classmethod
    def open(cls, url: str, *, clock: Clock | None = None, ids: IdGenerator | None = None, **options: Any) -> "Platform":
        return cls(open_store(url, **options), clock=clock, ids=ids)

    def bootstrap(self, organization_name: str, plan: Plan | str = Plan.PROFESSIONAL, *,
                  rpm: int | None = None, burst: int | None = None, key_name: str = "Owner key") -> Bootstrap:
        """Create an organization and its first Owner API key in one transaction."""
        organization = self.organizations.new(organization_name, plan, rpm=rpm, burst=burst)
        issued = self.api_keys.issue(organization.id, NewApiKey(name=key_name, role=Role.OWNER), created_by=None)
        with self.uow.write() as tx:
            tx.organizations.add(organization)
            tx.api_keys.add(issued.key)
        return Bootstrap(organization=organization, owner_key=issued)

    def actor(self, organization_id: str, role: Role | str = Role.OWNER) -> Actor:
        """An in-process caller acting inside ``organization_id`` (operators, embedding apps)."""
        with self.uow.read() as session:
            require(session.organizations.get(organization_id), "organization", organization_id)
        return Actor(organization_id=organization_id, role=Role.parse(role), auth_type="local")

    def health(self) -> dict[str, Any]:
        store = self.store.health()
        now = self.clock.now()
        return {
            "status": "ok" if store.get("status") == "ok" else "degraded",
            "version": version(),
            "timestamp": now,
            "uptimeSeconds": round((now - self.started_at).total_seconds(), 3),
            "store": store,
        }

    def close(self) -> None:
        """Store what admission still holds in memory (usage counts, unspent tokens), then close."""
        try:
            self.access.flush()
        finally:
            self.store.close()

    def __enter__(self) -> "Platform":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
