"""Issue 19: the frameworks' lists at 10,000 and 100,000 rows, in-process, on SQLite and PostgreSQL.

One organization gets N controls, N rows of enabled frameworks' requirements
(``control_requirements``: 90 % of them in ISO 27001, 10 % in SOC 2) and N task templates. The
two frameworks are enabled through the platform first (their catalogue controls, rows, task
templates and draft statements), then the rest goes in through the store's own session, 5,000
rows a write transaction (``uow.write(None)``, ``tx[CONTROLS].add``): the store's triggers keep
the facet counters, block counts, revisions and search index as for any write, and the run
checks the counted totals against ``count(*)`` before it measures. ISO's statement is then
submitted and approved through the platform (freezing its 0.9 N rows into ``soa_rows``, timed
and printed, not part of the table) and a second version opened as a draft, so both kinds of
statement rows are listed. With vendors on (the default), the same organization also holds N
vendors (``seed.py``), listed beside the frameworks as the baseline on the same machine at the
same moment. Seeding is not timed; SQLite's statistics are refreshed and PostgreSQL's tables
vacuumed and analysed afterwards (``after_bulk_load``), as after an import.

Every case is one service call as an in-process caller makes it (authorization, the read
transaction, the models built), timed ``--runs`` times after one unmeasured call: median and 95th
percentile in ms. "as built" is the platform as it runs (these lists keep no pages, the total of a
filter set is counted once per revision); "cold total" counts the total on every call, what the
first request of a filter set after a write costs. Vendors, whose pages the platform caches, run
with a page cache that keeps nothing, so every row of the table is a query.

    .venv/bin/python -m bench.frameworks_bench --sizes 10000,100000 [--stores sqlite,postgresql] [--runs 20]
    .venv/bin/python -m bench --frameworks 10000,100000          # the same, from the bench's entry point

PostgreSQL runs in a schema ``bench_<random>`` of the server (``--postgres-url``, else
``$COMPLIANCE_POSTGRES_URL``, else the local test database), dropped at the end whatever happens;
SQLite in a temporary directory. Nothing is written into the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import random
import secrets
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import psycopg
from psycopg import sql

from compliance_core.areas.frameworks.control_models import (
    CONTROL_REQUIREMENTS,
    CONTROLS,
    Control,
    ControlFilter,
    ControlOrigin,
    ControlRequirement,
    ControlRequirementFilter,
    ControlStatus,
    Driver,
)
from compliance_core.areas.frameworks.soa import NewSoaDocument, SoaRowQuery
from compliance_core.areas.frameworks.soa.models import ApproveSoa, SubmitSoa
from compliance_core.areas.frameworks.task_templates import (
    TASK_TEMPLATES,
    TaskTemplate,
    TaskTemplateDepartment,
    TaskTemplateFilter,
    TaskTemplateSource,
)
from compliance_core.areas.vendors import VendorFilter
from compliance_core.kernel.page_cache import PageCache, TotalCache
from compliance_core.kernel.pages import Page, PageRequest, Position
from compliance_core.kernel.permissions import Actor
from compliance_core.platform import Platform
from compliance_store.postgres import parse_url

from .machine import describe
from .seed import seed_url, sqlite_url
from .stores_bench import STORES, postgres_server_url

__all__ = ["Timed", "run_frameworks_bench", "format_frameworks", "run_frameworks_cli", "main"]

ISO = "iso-27001-2022"
SOC2 = "soc2-tsc-2017"
CHUNK = 5_000
DEEP_PAGE = 1_000
PER_PAGE = 50
BROAD_Q = "key rotation"
"""One of the 20 topics: in about 5 % of the names."""
_TOPICS = (
    "access review",
    "backup restore test",
    "encryption at rest",
    "incident response drill",
    "vendor assessment",
    "change approval",
    "log retention",
    "key rotation",
    "security awareness training",
    "vulnerability scanning",
    "physical entry control",
    "asset inventory",
    "business continuity test",
    "data classification",
    "secure development",
    "network segmentation",
    "password policy",
    "privileged access",
    "supplier monitoring",
    "capacity planning",
)
_SCOPES = ("production", "HR systems", "finance", "the data centre", "laptops", "cloud accounts", "source code")
_STATUSES = (
    (ControlStatus.NOT_STARTED, 40),
    (ControlStatus.IN_PROGRESS, 25),
    (ControlStatus.IMPLEMENTED, 30),
    (ControlStatus.STALE, 5),
)
_FRAMEWORKS = ((ISO, 40), (SOC2, 25), ("gdpr", 15), ("dora", 10), ("nis2", 10))
_FREQUENCIES = ("monthly", "quarterly", "yearly", "FREQ=WEEKLY;BYDAY=MO")


@attrs.frozen(kw_only=True)
class Timed:
    store: str
    rows: int
    listed: str
    """The operation and its path, as the table heads its group."""
    case: str
    total: int
    median_ms: float
    p95_ms: float
    cold_median_ms: float
    cold_p95_ms: float


@attrs.frozen(kw_only=True)
class _World:
    """What the cases name: the tenant, the records they filter by and the statements."""

    platform: Platform
    actor: Actor
    person_id: str
    control_id: str
    requirement_id: str
    draft_id: str
    approved_id: str
    selective_q: str
    vendors: int


@attrs.frozen(kw_only=True)
class _Services:
    """The four list services, all answering through one page cache."""

    controls: Any
    soa: Any
    task_templates: Any
    vendors: Any

    @classmethod
    def of(cls, platform: Platform, pages: PageCache) -> _Services:
        return cls(
            controls=attrs.evolve(platform.controls, pages=pages),
            soa=attrs.evolve(platform.soa, pages=pages),
            task_templates=attrs.evolve(platform.task_templates, pages=pages),
            vendors=attrs.evolve(platform.vendors, pages=pages),
        )


Call = Callable[[_Services, PageRequest], Page[Any]]


# --- seeding ------------------------------------------------------------------------------------


def _weighted(rng: random.Random, choices: Sequence[tuple[Any, int]]) -> Any:
    return rng.choices([value for value, _ in choices], [weight for _, weight in choices])[0]


def _times(platform: Platform, count: int) -> Iterator[dt.datetime]:
    """Increasing creation times from now on, a second apart: each row newer than every row of
    its table, as the platform's own writes make them. (Rows older than the newest one all land
    in the last block the triggers opened, which then grows without bound: the seeded rows of a
    first version of this bench, dated before the enabled frameworks' rows, made one block of
    100,000 and deep pages skipped 50,000 rows.)"""
    start = platform.clock.now() + dt.timedelta(seconds=1)
    return (start + dt.timedelta(seconds=index) for index in range(count))


def _control(
    rng: random.Random, index: int, control_id: str, organization_id: str, people: list[str], at: dt.datetime
) -> Control:
    topic, scope = rng.choice(_TOPICS), rng.choice(_SCOPES)
    origin = ControlOrigin.CATALOGUE if rng.random() < 0.7 else ControlOrigin.CUSTOM
    status = _weighted(rng, _STATUSES)
    return Control(
        id=control_id,
        organization_id=organization_id,
        name=f"{topic.capitalize()} for {scope} {index:06d}",
        code=f"A.{rng.randrange(5, 9)}.{rng.randrange(1, 40)}"
        if origin is ControlOrigin.CATALOGUE
        else f"ORG-{index:06d}",
        description=f"Shows that {topic} is done for {scope}, with the records an auditor asks for.",
        owner_id=rng.choice(people) if rng.random() < 0.8 else None,
        status=status,
        status_changed_at=None if status is ControlStatus.NOT_STARTED else at,
        origin=origin,
        framework_ids=(ISO,) if origin is ControlOrigin.CATALOGUE else (),
        created_at=at,
        updated_at=at + dt.timedelta(minutes=rng.randrange(0, 100_000)),
    )


def _requirement(rng: random.Random, index: int, row_id: str, control: Control, at: dt.datetime) -> ControlRequirement:
    applicable = rng.random() < 0.9
    topic = rng.choice(_TOPICS)
    return ControlRequirement(
        id=row_id,
        organization_id=control.organization_id,
        framework_id=ISO if rng.random() < 0.9 else SOC2,
        requirement_id=f"bench-{index:06d}",
        label=f"A.{rng.randrange(5, 9)}.{rng.randrange(1, 100)}.{index % 1000}",
        title=f"The organization plans {topic} and keeps its records {index:06d}",
        control_id=control.id,
        control_status=control.status,
        applicable=applicable,
        justification="" if applicable else f"No {rng.choice(_SCOPES)} in scope of the {topic}.",
        drivers=tuple(rng.sample(list(Driver), rng.randrange(0, 3))) if applicable else (),
        created_at=at,
        updated_at=at,
    )


def _template(rng: random.Random, index: int, template_id: str, organization_id: str, at: dt.datetime) -> TaskTemplate:
    topic, scope = rng.choice(_TOPICS), rng.choice(_SCOPES)
    catalogue = rng.random() < 0.2
    return TaskTemplate(
        id=template_id,
        organization_id=organization_id,
        framework_id=_weighted(rng, _FRAMEWORKS),
        name=f"{topic.capitalize()} ({scope}) {index:06d}",
        description=f"Carry out the {topic} for {scope} and attach what shows it was done.",
        frequency=rng.choice(_FREQUENCIES),
        department=rng.choice(list(TaskTemplateDepartment)),
        source=TaskTemplateSource.CATALOGUE if catalogue else TaskTemplateSource.CUSTOM,
        seed_key=f"bench-{index:06d}" if catalogue else None,
        created_at=at,
        updated_at=at + dt.timedelta(minutes=rng.randrange(0, 100_000)),
    )


def _add(platform: Platform, records: Any, rows: Iterator[Any], count: int, log: Callable[[str], None]) -> None:
    started = time.perf_counter()
    written = 0
    while written < count:
        with platform.uow.write(None) as tx:
            repository = tx[records]
            for _ in range(min(CHUNK, count - written)):
                repository.add(next(rows))
                written += 1
    seconds = time.perf_counter() - started
    log(f"  {records.name}: {count:,} rows in {seconds:.1f} s ({seconds / max(count, 1) * 1e6:.0f} us a row)")


def _seed(platform: Platform, organization_id: str, rows: int, vendors: int, log: Callable[[str], None]) -> _World:
    rng = random.Random(19)
    actor = platform.actor(organization_id)
    people = [person.id for person in platform.people.list(actor).items]
    for framework in (ISO, SOC2):
        platform.controls.enable(actor, framework)
    made = max(0, rows - platform.controls.list(actor, page=PageRequest(per_page=1)).total)
    ids = platform.ids
    controls = [
        _control(rng, index, ids.new(CONTROLS.prefix), organization_id, people, at)
        for index, at in enumerate(_times(platform, made))
    ]
    _add(platform, CONTROLS, iter(controls), made, log)
    served = platform.controls.requirement_controls(actor, ISO, page=PageRequest(per_page=1)).total
    served += platform.controls.requirement_controls(actor, SOC2, page=PageRequest(per_page=1)).total
    wanted = max(0, rows - served)
    requirements = (
        _requirement(rng, index, ids.new(CONTROL_REQUIREMENTS.prefix), controls[index % max(len(controls), 1)], at)
        for index, at in enumerate(_times(platform, wanted))
    )
    _add(platform, CONTROL_REQUIREMENTS, requirements, wanted, log)
    templates = max(0, rows - platform.task_templates.list(actor, page=PageRequest(per_page=1)).total)
    _add(
        platform,
        TASK_TEMPLATES,
        (
            _template(rng, index, ids.new(TASK_TEMPLATES.prefix), organization_id, at)
            for index, at in enumerate(_times(platform, templates))
        ),
        templates,
        log,
    )
    draft = next(item for item in platform.soa.list(actor).items if item.framework_id == ISO)
    started = time.perf_counter()
    platform.soa.submit(actor, draft.id, SubmitSoa())
    approved = platform.soa.approve(actor, draft.id, ApproveSoa(comment="Approved for the benchmark."))
    log(f"  approving ISO's statement froze {approved.row_count:,} rows in {time.perf_counter() - started:.1f} s")
    second = platform.soa.create(actor, NewSoaDocument(framework_id=ISO))
    started = time.perf_counter()
    after_bulk_load = getattr(platform.store, "after_bulk_load", None)
    if after_bulk_load is not None:
        after_bulk_load()
    log(f"  statistics refreshed in {time.perf_counter() - started:.1f} s")
    middle = controls[len(controls) // 2] if controls else platform.controls.list(actor).items[0]
    row = platform.controls.requirement_controls(actor, ISO, ControlRequirementFilter(control_id=middle.id)).items
    return _World(
        platform=platform,
        actor=actor,
        person_id=people[0],
        control_id=middle.id,
        requirement_id=row[0].requirement_id if row else "",
        draft_id=second.id,
        approved_id=approved.id,
        selective_q=middle.name.rsplit(" ", 1)[-1],
        vendors=vendors,
    )


# --- checking the counters ----------------------------------------------------------------------

_CHECKS: tuple[tuple[str, str, str], ...] = (
    ("controls", "status", "controls"),
    ("controls", "origin", "controls"),
    ("control_requirements", "control_status", "requirements"),
    ("control_requirements", "applicable", "requirements"),
    ("task_templates", "framework_id", "templates"),
    ("task_templates", "source", "templates"),
)


def _counted(url: str, organization_id: str, table: str, column: str) -> dict[str, int]:
    """``count(*)`` per value of ``column``, straight in SQL (the counters' ground truth)."""
    query = f"SELECT {column}, count(*) FROM {table} WHERE organization_id = {{}} GROUP BY {column}"
    if url.startswith("sqlite:"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
            found = conn.execute(query.format("?"), (organization_id,)).fetchall()
        return {str(bool(value)) if column == "applicable" else str(value): int(n) for value, n in found}
    server, schema = parse_url(url)
    with psycopg.connect(server) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(str(schema))))
        found = conn.execute(query.format("%s"), (organization_id,)).fetchall()
    return {str(value): int(n) for value, n in found}


def _check_counters(world: _World, url: str) -> None:
    """Every facet value's total as the platform serves it (from the counters) equals ``count(*)``."""
    platform, actor = world.platform, world.actor
    for table, column, _ in _CHECKS:
        for value, expected in _counted(url, actor.organization_id, table, column).items():
            typed: Any = value == "True" if column == "applicable" else value
            if table == "controls":
                served = platform.controls.list(actor, ControlFilter(**{column: typed}), PageRequest(per_page=1)).total
            elif table == "task_templates":
                filters = TaskTemplateFilter(**{column: typed})
                served = platform.task_templates.list(actor, filters, PageRequest(per_page=1)).total
            else:
                served = sum(
                    platform.controls.requirement_controls(
                        actor, framework, ControlRequirementFilter(**{column: typed}), PageRequest(per_page=1)
                    ).total
                    for framework in (ISO, SOC2)
                )
            if served != expected:
                raise RuntimeError(f"{table}.{column} = {value}: the platform counts {served}, count(*) {expected}")


# --- the cases ----------------------------------------------------------------------------------


def _deep(call: Call, services: _Services, request: PageRequest) -> tuple[PageRequest, PageRequest | None]:
    """Page ``DEEP_PAGE`` of the list (its last full page when it has fewer: a short last page
    would read fewer rows than the others), and the cursor walk standing at the same place
    (None for an empty page)."""
    full = call(services, request).total // request.per_page
    numbered = attrs.evolve(request, page=max(1, min(DEEP_PAGE, full)))
    items = tuple(call(services, numbered).items)
    if not items:
        return numbered, None
    before = items[0]
    offset = (numbered.page - 1) * numbered.per_page
    previous = call(services, attrs.evolve(numbered, page=numbered.page - 1)).items if numbered.page > 1 else ()
    if previous:
        before = previous[-1]
        after: Position | None = Position(before.created_at, before.id, offset, request.sort)
    else:
        after = None
    return numbered, PageRequest.walking(request.per_page, after, **request.search)


def _cases(world: _World, services: _Services) -> list[tuple[str, str, Call, PageRequest]]:
    """(list, case, call, request) for every measured request."""
    chosen: list[tuple[str, str, Call, PageRequest]] = []

    def paged(listed: str, case: str, call: Call, request: PageRequest, *, deep: bool = False) -> None:
        chosen.append((listed, case, call, request))
        if deep:
            numbered, walk = _deep(call, services, request)
            chosen.append((listed, f"{case}, page {numbered.page}", call, numbered))
            if walk is not None:
                chosen.append((listed, f"{case}, cursor at page {numbered.page}", call, walk))

    actor, first = world.actor, PageRequest(per_page=PER_PAGE)

    def controls(filters: ControlFilter) -> Call:
        return lambda s, page: s.controls.list(actor, filters, page)

    listed = "controls.list GET /v1/controls"
    paged(listed, "first page", controls(ControlFilter()), first, deep=True)
    paged(listed, "status=implemented", controls(ControlFilter(status=ControlStatus.IMPLEMENTED)), first, deep=True)
    paged(listed, "origin=catalogue", controls(ControlFilter(origin=ControlOrigin.CATALOGUE)), first)
    paged(listed, "ownerId=<person> (counted)", controls(ControlFilter(owner_id=world.person_id)), first)
    paged(listed, f"q={BROAD_Q}", controls(ControlFilter()), attrs.evolve(first, q=BROAD_Q))
    paged(listed, f"q={world.selective_q}", controls(ControlFilter()), attrs.evolve(first, q=world.selective_q))
    paged(listed, "sort=code (indexed)", controls(ControlFilter()), attrs.evolve(first, sort="code"), deep=True)
    paged(listed, "sort=name", controls(ControlFilter()), attrs.evolve(first, sort="name"))
    paged(listed, "sort=-updatedAt", controls(ControlFilter()), attrs.evolve(first, sort="-updated_at"))
    paged(listed, "sort=status", controls(ControlFilter()), attrs.evolve(first, sort="status"))

    def rows(framework: str, filters: ControlRequirementFilter) -> Call:
        return lambda s, page: s.controls.requirement_controls(actor, framework, filters, page)

    path = "controls.requirement_controls GET /v1/frameworks/{frameworkId}/controls"
    listed = f"{path} ({ISO}: 90 % of the rows)"
    paged(listed, "first page", rows(ISO, ControlRequirementFilter()), first, deep=True)
    implemented = ControlRequirementFilter(control_status=ControlStatus.IMPLEMENTED)
    paged(listed, "controlStatus=implemented", rows(ISO, implemented), first, deep=True)
    paged(listed, "applicable=false", rows(ISO, ControlRequirementFilter(applicable=False)), first)
    both = ControlRequirementFilter(control_status=ControlStatus.IMPLEMENTED, applicable=True)
    paged(listed, "controlStatus=implemented&applicable=true", rows(ISO, both), first)
    paged(listed, "controlId=<control>", rows(ISO, ControlRequirementFilter(control_id=world.control_id)), first)
    paged(
        listed, "requirementId=<row>", rows(ISO, ControlRequirementFilter(requirement_id=world.requirement_id)), first
    )
    paged(listed, f"q={BROAD_Q}", rows(ISO, ControlRequirementFilter()), attrs.evolve(first, q=BROAD_Q))
    q = world.selective_q
    paged(listed, f"q={q}", rows(ISO, ControlRequirementFilter()), attrs.evolve(first, q=q))
    sort = attrs.evolve(first, sort="label")
    paged(listed, "sort=label (indexed)", rows(ISO, ControlRequirementFilter()), sort, deep=True)
    paged(
        listed, "sort=controlStatus", rows(ISO, ControlRequirementFilter()), attrs.evolve(first, sort="control_status")
    )
    paged(
        f"{path} ({SOC2}: 10 % of the rows)",
        "sort=label (indexed)",
        rows(SOC2, ControlRequirementFilter()),
        sort,
        deep=True,
    )

    def templates(filters: TaskTemplateFilter) -> Call:
        return lambda s, page: s.task_templates.list(actor, filters, page)

    listed = "task_templates.list GET /v1/framework-editor/task-template"
    paged(listed, "first page", templates(TaskTemplateFilter()), first, deep=True)
    paged(listed, f"frameworkId={ISO}", templates(TaskTemplateFilter(framework_id=ISO)), first, deep=True)
    it = TaskTemplateFilter(department=TaskTemplateDepartment.IT)
    paged(listed, "department=it", templates(it), first)
    paged(listed, "source=custom", templates(TaskTemplateFilter(source=TaskTemplateSource.CUSTOM)), first)
    paged(listed, f"q={BROAD_Q}", templates(TaskTemplateFilter()), attrs.evolve(first, q=BROAD_Q))
    paged(listed, "sort=name", templates(TaskTemplateFilter()), attrs.evolve(first, sort="name"), deep=True)
    paged(listed, "sort=-updatedAt", templates(TaskTemplateFilter()), attrs.evolve(first, sort="-updated_at"))

    def statement(document_id: str, filters: SoaRowQuery) -> Call:
        return lambda s, page: s.soa.rows(actor, document_id, filters, page)

    for document_id, kind in ((world.draft_id, "draft: working rows"), (world.approved_id, "approved: frozen rows")):
        listed = f"soa.rows GET /v1/soa/{{documentId}}/rows ({kind})"
        paged(listed, "first page", statement(document_id, SoaRowQuery()), first, deep=True)
        implemented_rows = SoaRowQuery(control_status=ControlStatus.IMPLEMENTED)
        paged(listed, "controlStatus=implemented", statement(document_id, implemented_rows), first)
        paged(listed, "applicable=false", statement(document_id, SoaRowQuery(applicable=False)), first)
        paged(listed, f"q={BROAD_Q}", statement(document_id, SoaRowQuery()), attrs.evolve(first, q=BROAD_Q))
        paged(listed, "sort=label", statement(document_id, SoaRowQuery()), sort, deep=True)

    if world.vendors:

        def vendors(filters: VendorFilter) -> Call:
            return lambda s, page: s.vendors.list(actor, filters, page)

        listed = "vendors.list GET /v1/vendors (baseline, no page cache)"
        paged(listed, "first page", vendors(VendorFilter()), first, deep=True)
        paged(listed, "criticality=critical", vendors(VendorFilter(criticality="critical")), first, deep=True)
        paged(listed, "q=cloud hosting", vendors(VendorFilter()), attrs.evolve(first, q="cloud hosting"))
        paged(listed, "sort=name (indexed)", vendors(VendorFilter()), attrs.evolve(first, sort="name"), deep=True)
    return chosen


def _timed(call: Call, services: _Services, request: PageRequest, runs: int) -> tuple[list[float], int]:
    """Milliseconds of ``runs`` calls after one unmeasured call, each reading its page's models."""
    page = call(services, request)
    tuple(page.items)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        page = call(services, request)
        tuple(page.items)  # an in-process caller reads the models
        times.append((time.perf_counter() - started) * 1000)
    return times, page.total


def _p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20, method="inclusive")[18] if len(times) > 1 else times[0]


def _measure(world: _World, store: str, rows: int, runs: int, log: Callable[[str], None]) -> list[Timed]:
    built = _Services.of(world.platform, PageCache(0))
    cold = _Services.of(world.platform, PageCache(0, totals=TotalCache(0)))
    measured = []
    for listed, case, call, request in _cases(world, built):
        times, total = _timed(call, built, request, runs)
        cold_times, _ = _timed(call, cold, request, runs)
        timed = Timed(
            store=store,
            rows=rows,
            listed=listed,
            case=case,
            total=total,
            median_ms=statistics.median(times),
            p95_ms=_p95(times),
            cold_median_ms=statistics.median(cold_times),
            cold_p95_ms=_p95(cold_times),
        )
        log(f"  {listed.split()[0]:<30} {case:<44} {timed.median_ms:8.2f} ms (cold total {timed.cold_median_ms:.2f})")
        measured.append(timed)
    return measured


# --- stores and the run -------------------------------------------------------------------------


@contextlib.contextmanager
def _store_url(store: str, postgres_url: str, directory: str) -> Iterator[str]:
    """A fresh store's URL: a file in ``directory``, or a schema of its own dropped at the end."""
    if store == "sqlite":
        yield sqlite_url(f"{directory}/frameworks-{secrets.token_hex(4)}.db")
        return
    schema = f"bench_{secrets.token_hex(6)}"
    try:
        yield f"{postgres_url}?schema={schema}"
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def run_frameworks_bench(
    sizes: Sequence[int],
    stores: Sequence[str] = STORES,
    *,
    postgres_url: str | None = None,
    runs: int = 20,
    vendors: bool = True,
    log: Callable[[str], None] = print,
) -> list[Timed]:
    """Seed and measure each store at each size, smallest first; returns every case's figures."""
    server = postgres_server_url(postgres_url)
    measured: list[Timed] = []
    with tempfile.TemporaryDirectory(prefix="compliance-frameworks-bench-") as directory:
        for rows in sorted(sizes):
            for store in stores:
                with _store_url(store, server, directory) as url:
                    log(f"{store}, {rows:,} rows: seeding (not measured)")
                    started = time.perf_counter()
                    seeded = seed_url(url, rows if vendors else 0)
                    log(f"  vendors and people: {time.perf_counter() - started:.1f} s")
                    with Platform.open(url) as platform:
                        world = _seed(platform, seeded.organization_id, rows, seeded.vendors, log)
                        _check_counters(world, url)
                        log(f"{store}, {rows:,} rows: counters equal count(*); measuring")
                        measured += _measure(world, store, rows, runs, log)
    return measured


def format_frameworks(measured: Sequence[Timed], runs: int) -> str:
    lines = [
        f"Machine: {describe()}",
        f"Frameworks' lists in-process: one page of {PER_PAGE} and its total, models built; "
        f"ms over {runs} calls after one unmeasured (as built: total counted once per revision; "
        "cold: counted every call)",
    ]
    listed = None
    for timed in sorted(measured, key=lambda t: (t.listed, t.store, t.rows)):
        if timed.listed != listed:
            listed = timed.listed
            lines.append("")
            lines.append(listed)
            lines.append(
                f"  {'store':<11}{'rows':>8}  {'case':<46}{'total':>8}{'median':>9}{'p95':>8}"
                f"{'cold med':>10}{'cold p95':>10}"
            )
        lines.append(
            f"  {timed.store:<11}{timed.rows:>8,}  {timed.case:<46}{timed.total:>8,}{timed.median_ms:>9.2f}"
            f"{timed.p95_ms:>8.2f}{timed.cold_median_ms:>10.2f}{timed.cold_p95_ms:>10.2f}"
        )
    return "\n".join(lines)


def run_frameworks_cli(
    sizes: Sequence[int], stores: Sequence[str], postgres_url: str | None, runs: int = 20, vendors: bool = True
) -> int:
    """Run, print the table; the exit status is 0 whatever the figures. SIGTERM unwinds as
    Ctrl-C does, so the PostgreSQL schema and the SQLite files are removed on the way out."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    measured = run_frameworks_bench(
        sizes, stores, postgres_url=postgres_url, runs=runs, vendors=vendors, log=lambda line: print(line, flush=True)
    )
    print()
    print(format_frameworks(measured, runs), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.frameworks_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", default="10000,100000", help="rows per table, comma-separated (default 10000,100000)"
    )
    parser.add_argument("--stores", default=",".join(STORES), help="sqlite, postgresql or both (default both)")
    parser.add_argument("--runs", type=int, default=20, help="measured calls per case and mode (default 20)")
    parser.add_argument("--no-vendors", action="store_true", help="leave out the vendors baseline")
    parser.add_argument("--postgres-url", default=None, help="PostgreSQL server, without a schema")
    args = parser.parse_args(argv)
    sizes = [int(size.replace("_", "")) for size in args.sizes.split(",") if size.strip()]
    stores = [store.strip() for store in args.stores.split(",") if store.strip() in STORES]
    return run_frameworks_cli(sizes, stores, args.postgres_url, args.runs, not args.no_vendors)


if __name__ == "__main__":
    sys.exit(main())
