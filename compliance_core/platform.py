"""The composition root: one ``Platform`` wires a store, a clock and an id generator into every
service. Nothing else in core constructs adapters, and nothing happens at import time."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from .access import AccessService
from .areas import AREAS
from .areas.api_keys import API_KEYS, ApiKeyCreated, IssuedKey, NewApiKey
from .areas.organizations import ORGANIZATIONS, Organization, OrganizationCreated, Plan
from .areas.people import PEOPLE
from .areas.webhooks import DeliveryEngine, Sender, WebhookPolicy
from .kernel.blobs import BlobStore, blobs_of
from .kernel.chores import KERNEL_CHORES, ChoreReport
from .kernel.clock import Clock, SystemClock, utc
from .kernel.errors import ValidationError, require
from .kernel.events import Signals
from .kernel.ids import IdGenerator, RandomIds
from .kernel.page_cache import DEFAULT_BUDGET, PageCache
from .kernel.permissions import Actor, Role
from .kernel.registry import Area, Chore, Operation
from .kernel.rendering import Renderer
from .kernel.uow import Context, Store, UnitOfWork

if TYPE_CHECKING:
    from .areas.api_keys import ApiKeyService
    from .areas.audit_log import AuditLogService
    from .areas.automations import AutomationService
    from .areas.comments import CommentService
    from .areas.context import ContextService
    from .areas.evidence import AttachmentService, EvidenceService
    from .areas.evidence_export import AuditorExportService, EvidenceExportService
    from .areas.finding_templates import FindingTemplateService
    from .areas.findings import FindingService
    from .areas.frameworks import FrameworkService
    from .areas.frameworks.controls import ControlService
    from .areas.frameworks.imported import FrameworkImportService
    from .areas.frameworks.soa import SoaService
    from .areas.frameworks.task_templates import TaskTemplateService
    from .areas.integrations import CheckService, CloudSecurityService, ConnectionService, VariableService
    from .areas.organization_logos import OrganizationLogoService
    from .areas.organizations import OrganizationService
    from .areas.people import PeopleService
    from .areas.policies import PolicyService
    from .areas.risks import RiskService
    from .areas.tasks import TaskService
    from .areas.tasks.management import TaskManagementService
    from .areas.vendors import VendorService
    from .areas.webhooks import WebhookService

__all__ = ["Platform", "Bootstrap", "STORE_ENTRY_POINTS", "declared_chores", "open_store", "version"]

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
            store: Store = entry.load()(url, **options)
            return store
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
    :param page_cache_bytes: the byte budget of the list caches (``PageCache``)
    :param page_cache: list caches configured otherwise (``PageCache(budget=0,
        totals=TotalCache(entries=0, anchor_keys=0))`` runs every list as a COUNT and an OFFSET
        query, as lists ran before those caches existed)
    :param render_rows: transports render list pages straight from the store's rows (False:
        through the models, as before; the answers are the same bytes)
    :param settings: per-area settings by area name, e.g. ``{"webhooks": WebhookPolicy(allow_private=True)}``
    :param areas: the areas to serve (default: ``compliance_core.areas.AREAS``)

    >>> platform = Platform.open("memory://")
    >>> boot = platform.bootstrap("Acme")
    >>> platform.vendors.list(platform.actor(boot.organization.id)).total
    0
    """

    # Each built-in area's service, typed for embedders and their type checkers. Annotations
    # only: ``__getattr__`` answers them from ``services``, as it does for areas an embedder adds.
    organizations: OrganizationService
    organization_logos: OrganizationLogoService
    api_keys: ApiKeyService
    people: PeopleService
    vendors: VendorService
    findings: FindingService
    finding_templates: FindingTemplateService
    audit_log: AuditLogService
    webhooks: WebhookService
    policies: PolicyService
    risks: RiskService
    frameworks: FrameworkService
    controls: ControlService
    soa: SoaService
    task_templates: TaskTemplateService
    tasks: TaskService
    task_management: TaskManagementService
    framework_imports: FrameworkImportService
    context: ContextService
    comments: CommentService
    automations: AutomationService
    evidence: EvidenceService
    attachments: AttachmentService
    evidence_export: EvidenceExportService
    evidence_export_auditor: AuditorExportService
    integration_connections: ConnectionService
    integration_variables: VariableService
    integration_checks: CheckService
    cloud_security: CloudSecurityService

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock | None = None,
        ids: IdGenerator | None = None,
        areas: Sequence[Area[Any]] | None = None,
        page_cache_bytes: int = DEFAULT_BUDGET,
        page_cache: PageCache | None = None,
        render_rows: bool = True,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.ids: IdGenerator = ids or RandomIds()
        self.signals = Signals()
        self.renderer = Renderer(self.clock, from_rows=render_rows)
        self.uow = UnitOfWork(store=store, signals=self.signals, clock=self.clock, ids=self.ids, renderer=self.renderer)
        self.access = AccessService(self.uow)
        self.areas: tuple[Area[Any], ...] = tuple(AREAS if areas is None else areas)
        self.settings: dict[str, Any] = dict(settings or {})
        context = Context(
            uow=self.uow,
            pages=page_cache if page_cache is not None else PageCache(page_cache_bytes),
            flush_admission=self.access.flush,
            event_types=frozenset(event.type for area in self.areas for event in area.events),
            settings=self.settings,
            links=tuple(link for area in self.areas for link in area.links),
            ports=tuple(port for area in self.areas for port in area.ports),
        )
        self._context = context
        self.services: dict[str, Any] = {area.name: area.service(context) for area in self.areas}
        self.operations: dict[str, Operation] = {op.name: op for area in self.areas for op in area.operations}
        self.chores: tuple[Chore[Any], ...] = declared_chores(self.areas)
        """The scheduled work of the kernel and of every area (see ``run_chore``)."""
        self._chore_targets: dict[str, tuple[Chore[Any], Any]] = _chore_targets(self.areas, context, self.services)
        self.started_at = self.clock.now()

    @property
    def blobs(self) -> BlobStore:
        """The store of evidence files (opened on first use: ``kernel.blobs.blobs_of``); a server
        reads its ``max_bytes`` to let a file's body through that far."""
        return blobs_of(self._context)

    def __getattr__(self, name: str) -> Any:
        """Each area's service by the area's name: ``platform.vendors``."""
        services = self.__dict__.get("services", {})
        if name in services:
            return services[name]
        raise AttributeError(name)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        clock: Clock | None = None,
        ids: IdGenerator | None = None,
        page_cache_bytes: int = DEFAULT_BUDGET,
        settings: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Platform:
        """The platform over the store at ``url``; ``options`` go to the store adapter."""
        return cls(
            open_store(url, **options), clock=clock, ids=ids, page_cache_bytes=page_cache_bytes, settings=settings
        )

    def bootstrap(
        self,
        organization_name: str,
        plan: Plan | str = Plan.PROFESSIONAL,
        *,
        rpm: int | None = None,
        burst: int | None = None,
        key_name: str = "Owner key",
    ) -> Bootstrap:
        """Create an organization and its first Owner API key in one transaction (recorded as the
        system's: ``organization.created`` and ``api_key.created``)."""
        boot = self._bootstrap(organization_name, plan, rpm=rpm, burst=burst, key_name=key_name, only_if_empty=False)
        assert boot is not None
        return boot

    def bootstrap_if_empty(self, organization_name: str, plan: Plan | str = Plan.PROFESSIONAL) -> Bootstrap | None:
        """``bootstrap`` into a store that has no organization yet, else nothing (None). The check
        is inside the write: of several servers starting at once on a new database, exactly one
        bootstraps it."""
        return self._bootstrap(organization_name, plan, rpm=None, burst=None, key_name="Owner key", only_if_empty=True)

    def _bootstrap(
        self,
        organization_name: str,
        plan: Plan | str,
        *,
        rpm: int | None,
        burst: int | None,
        key_name: str,
        only_if_empty: bool,
    ) -> Bootstrap | None:
        organization = self.organizations.new(organization_name, plan, rpm=rpm, burst=burst)
        issued = self.api_keys.issue(organization.id, NewApiKey(name=key_name, role=Role.OWNER), created_by=None)
        with self.uow.write(None) as tx:
            if only_if_empty and tx[ORGANIZATIONS].count() > 0:
                return None
            tx[ORGANIZATIONS].add(organization)
            tx[API_KEYS].add(issued.key)
            tx.record(OrganizationCreated(organization_id=organization.id, subject=organization))
            tx.record(ApiKeyCreated(organization_id=organization.id, subject=issued.key))
        return Bootstrap(organization=organization, owner_key=issued)

    def delivery_engine(self, sender: Sender, **options: Any) -> DeliveryEngine:
        """The webhook delivery engine over this platform's store, sending through ``sender``
        (``compliance_http.delivery.HttpSender`` for real deliveries); ``options`` are
        ``DeliveryEngine``'s (batch, lease, concurrency, draw). Run one per delivering process:
        ``engine.run(stop_event)`` in a thread, or ``engine.step()`` from your own scheduler."""
        policy = self.settings.get("webhooks") or WebhookPolicy()
        return DeliveryEngine(self.uow, sender, policy=policy, **options)

    def actor(self, organization_id: str, role: Role | str = Role.OWNER, *, person_id: str | None = None) -> Actor:
        """An in-process caller acting inside ``organization_id`` (operators, embedding apps);
        with ``person_id``, acting as that person of the organization, as a person-bound key does."""
        name = None
        with self.uow.read() as session:
            require(session[ORGANIZATIONS].get(organization_id), "organization", organization_id)
            if person_id is not None:
                name = require(session[PEOPLE].get(organization_id, person_id), "person", person_id).name
        return Actor(
            organization_id=organization_id,
            role=Role.parse(role),
            person_id=person_id,
            person_name=name,
            auth_type="local",
        )

    def run_chore(self, chore: Chore[Any], now: dt.datetime | None = None) -> int:
        """Run one of ``chores`` once and return its count (what it did: records purged,
        policies moved). The server's lead worker calls this on each chore's own schedule.

        :param now: the time the chore judges by (default: the platform's clock; a naive value
            is taken as UTC)

        Maintenance, not a caller's operation: no actor, and no permission to check.
        """
        target = self._chore_targets.get(chore.name)
        if target is None or target[0] is not chore:
            raise ValueError(f"{chore.name!r} is not a chore of this platform's areas")
        return int(chore.run(target[1], utc(now) if now is not None else self.clock.now()))

    def run_chores(self, now: dt.datetime | None = None) -> ChoreReport:
        """Run every chore of ``chores`` once, in order, all judging by the same ``now``; a failing
        chore is reported and the others still run. ``compliance maintenance`` prints this.

        >>> platform = Platform.open("memory://")
        >>> platform.run_chores().counts["purgedIdempotencyRecords"]
        0
        """
        now = utc(now) if now is not None else self.clock.now()
        counts: dict[str, int] = {}
        failures: dict[str, Exception] = {}
        for chore in self.chores:
            try:
                counts[chore.report] = self.run_chore(chore, now)
            except Exception as error:  # one failing chore must not stop the others
                failures[chore.report] = error
        return ChoreReport(counts=counts, failures=failures)

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

    def __enter__(self) -> Platform:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def declared_chores(areas: Sequence[Area[Any]]) -> tuple[Chore[Any], ...]:
    """The kernel's chores, then each area's, in the order of ``areas``: what ``Platform.chores``
    holds and ``run_chores`` runs."""
    return (*KERNEL_CHORES, *(chore for area in areas for chore in area.chores))


def _chore_targets(
    areas: Sequence[Area[Any]], context: Context, services: Mapping[str, Any]
) -> dict[str, tuple[Chore[Any], Any]]:
    """Each chore by name, with what it runs on: the kernel's on ``context``, an area's on its
    service. Two chores may share neither a name nor a report key (one would hide the other in
    the logs and in ``compliance maintenance``'s report)."""
    targets: dict[str, tuple[Chore[Any], Any]] = {chore.name: (chore, context) for chore in KERNEL_CHORES}
    reports = {chore.report for chore in KERNEL_CHORES}
    for area in areas:
        for chore in area.chores:
            if chore.name in targets or chore.report in reports:
                raise ValueError(f"area {area.name}: a chore named {chore.name!r} or reporting {chore.report!r} exists")
            targets[chore.name] = (chore, services[area.name])
            reports.add(chore.report)
    return targets
