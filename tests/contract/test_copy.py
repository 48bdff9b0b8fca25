"""Copying a store (``compliance_store.copy``, behind ``compliance migrate-store``).

First what each store offers the copy, on every store: ``dump()`` gives every row it keeps, as
models, in key order; ``clear()`` deletes them, keeping the list counts right; the API-key
repository's usage rows travel with ``dump_usage``/``add_usage``. Then the copy itself between
pairs of stores: verified by counts and checksums, the platform over the target answering as over
the source, one snapshot of the source, all or nothing on the target, a non-empty target refused
unless ``replace``.
"""

from __future__ import annotations

import base64
import datetime as dt
import pathlib
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import psycopg
import pytest
from scripted_provider import Scripted, user_result

import compliance_store.copy as copying
from compliance_core import FrozenClock, PageRequest, Platform, SequentialIds, ValidationError
from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import API_KEYS, DailyUsage, NewApiKey
from compliance_core.areas.automations import NewAutomation
from compliance_core.areas.comments import NewComment
from compliance_core.areas.context import NewContextEntry
from compliance_core.areas.evidence import NewEvidence
from compliance_core.areas.evidence_export import NewEvidenceExport
from compliance_core.areas.finding_templates import NewFindingTemplate
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.frameworks.control_models import NewControl
from compliance_core.areas.frameworks.controls import MappingEntry, MappingImport
from compliance_core.areas.frameworks.imported import FrameworkImport
from compliance_core.areas.frameworks.soa import ApproveSoa, SubmitSoa
from compliance_core.areas.integrations import NewConnection, RunChecks
from compliance_core.areas.organization_logos import LogoUpload
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.areas.people import NewPerson
from compliance_core.areas.policies import NewPolicy, PublishPolicy
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.tasks import NewTask
from compliance_core.areas.vendors import VENDORS, NewVendor, VendorFilter
from compliance_core.areas.webhooks import NewWebhook
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.idempotency import IdempotencyRecord
from compliance_core.kernel.ratelimit import RATE_LIMITS, Bucket
from compliance_core.kernel.uow import Store
from compliance_store.copy import CopyMismatch, copy_store, digest_store, tables
from compliance_store.memory import MemoryStore
from compliance_store.sqlite.migrations.helpers import BLOCK_ROWS

from . import samples

TABLE_NAMES = [table.name for table in tables()]


# --- what every store offers the copy -----------------------------------------------------------


def _rows(store: Store) -> dict[str, list[Any]]:
    with store.session(write=False) as session:
        return {table.name: list(table.dump(session)) for table in tables()}


def _write_samples(store: Store) -> dict[str, list[Any]]:
    """Two rows (three for some) of every table, written out of key order, and what ``dump``
    must give back: the same rows, sorted by key."""
    records = {
        name: [table.make("org_b", f"{table.records.prefix}_2"), table.make("org_a", f"{table.records.prefix}_9")]
        for name, table in samples.TABLES.items()
    }
    written: dict[str, list[Any]] = {
        "organizations": [samples.organization("org_b"), samples.organization("org_a")],
        "api_keys": [samples.api_key("org_a", "key_2", secret_hash="cd" * 32), samples.api_key("org_a", "key_1")],
        "key_usage": [
            ("key_2", DailyUsage(date=dt.date(2026, 3, 4), requests=7)),
            ("key_1", DailyUsage(date=dt.date(2026, 3, 5), requests=2)),
            ("key_1", DailyUsage(date=dt.date(2026, 3, 4), requests=40)),
        ],
        "rate_limit_buckets": [
            ("key_2", Bucket(tokens=12.5, updated_at=samples.at(5))),
            ("key_1", Bucket(tokens=60.0, updated_at=samples.T0)),
        ],
        "idempotency": [
            IdempotencyRecord(
                organization_id="org_a",
                principal="key:key_1",
                key=key,
                operation="vendors.create",
                fingerprint="f" * 64,
                result=result,
                created_at=samples.at(9),
            )
            for key, result in (("retry-b", samples.vendor()), ("Retry-a", ("tuple", 1, None, samples.T0.date())))
        ],
        "outbox": [samples.outbox_message("evt_2"), samples.outbox_message("evt_1", published_at=samples.at(99))],
        **records,
    }
    with store.session(write=True) as session:
        for table in tables():
            for row in written[table.name]:
                table.load(session, row)
    keyed = {table.name: table.key for table in tables()}
    return {name: sorted(rows, key=keyed[name]) for name, rows in written.items()}


def test_every_table_dumps_every_row_in_key_order(store: Store) -> None:
    expected = _write_samples(store)
    assert set(expected) == set(TABLE_NAMES)
    assert _rows(store) == expected


def test_clear_deletes_every_row_and_keeps_the_list_counts_right(store: Store) -> None:
    expected = _write_samples(store)
    vendors = samples.TABLES["vendors"].records
    with store.session(write=False) as session:
        revision = session[vendors].revision("org_a")
    with store.session(write=True) as session:
        cleared = {table.name: table.clear(session) for table in tables()}
    assert cleared == {name: len(rows) for name, rows in expected.items()}
    assert _rows(store) == {name: [] for name in TABLE_NAMES}
    with store.session(write=False) as session:
        for archived in (False, True):
            assert session[vendors].list("org_a", VendorFilter(archived=archived), PageRequest()) == ([], 0)
        assert session[vendors].revision("org_a") > revision  # a cached page can never come back
        assert session[API_KEYS].find_by_hash("ab" * 32) is None
        assert session[RATE_LIMITS].get("key_1") is None
        assert session[ORGANIZATIONS].count() == 0
    # everything can be written again under the same keys (people's e-mails, key hashes: free)
    _write_samples(store)
    assert _rows(store) == expected


def test_a_rolled_back_clear_keeps_everything(store: Store) -> None:
    expected = _write_samples(store)
    with pytest.raises(RuntimeError), store.session(write=True) as session:
        for table in tables():
            table.clear(session)
        raise RuntimeError("changed my mind")
    assert _rows(store) == expected


def test_a_dump_stopped_early_leaves_the_session_usable(store: Store) -> None:
    expected = _write_samples(store)
    with store.session(write=False) as session:
        for table in tables():
            assert next(iter(table.dump(session))) == expected[table.name][0]
        assert list(tables()[-1].dump(session)) == expected[tables()[-1].name]
        assert session[OUTBOX].pending() == [expected["outbox"][1]]


def test_the_copy_covers_every_table_a_store_keeps(tmp_path: pathlib.Path) -> None:
    """Every table of a migrated SQLite file, and every table the PostgreSQL registry knows,
    is copied, except what the stores derive (the list counters, SQLite's search indexes and
    planner statistics) and their migration books."""
    from compliance_store.postgres import tables as postgres_tables
    from compliance_store.sqlite import SqliteStore, search
    from compliance_store.sqlite import tables as sqlite_tables

    derived = {"list_counts", "list_revisions", "list_blocks", "list_facet_blocks"}
    SqliteStore(f"sqlite:///{tmp_path / 'every.db'}").close()
    with sqlite3.connect(tmp_path / "every.db") as conn:
        found = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        found -= search.index_tables(conn)  # the search indexes: the target's triggers fill them
    assert found - derived - {"_sqlite_migrations", "sqlite_stat1"} == set(TABLE_NAMES)
    assert {table.table for table in sqlite_tables.TABLES} | {"key_usage"} == set(TABLE_NAMES)
    assert {table.table for table in postgres_tables.TABLES} | set(postgres_tables.SUPPORT_TABLES) - derived == set(
        TABLE_NAMES
    )
    assert TABLE_NAMES[-len([r for a in AREAS for r in a.records]) :] == [r.name for a in AREAS for r in a.records]


def test_the_postgres_schema_has_no_table_the_copy_misses(postgres_url: str) -> None:
    from compliance_store.postgres import PostgresStore, parse_url

    store = PostgresStore(postgres_url, pool_min=0)
    store.close()
    server, schema = parse_url(postgres_url)
    with psycopg.connect(server) as conn:
        found = {name for (name,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))}
    assert found - {
        "list_counts",
        "list_revisions",
        "list_blocks",
        "list_facet_blocks",
        "compliance_migrations",
    } == set(TABLE_NAMES)


# --- the copy between stores --------------------------------------------------------------------

PAIRS = [
    ("memory", "sqlite"),
    ("sqlite", "postgresql"),
    ("postgresql", "sqlite"),
    ("sqlite", "sqlite"),
    ("postgresql", "postgresql"),
    ("postgresql", "memory"),
]


@pytest.fixture
def new_store(request: pytest.FixtureRequest, tmp_path: pathlib.Path) -> Iterator[Callable[[str], Store]]:
    """Opens an empty store of a kind: a new SQLite file, this run's PostgreSQL schema (emptied)
    and then new schemas, or memory; closes them all after the test."""
    opened: list[Store] = []

    def make(kind: str) -> Store:
        store: Store
        if kind == "memory":
            store = MemoryStore()
        elif kind == "sqlite":
            from compliance_store.sqlite import SqliteStore

            store = SqliteStore(f"sqlite:///{tmp_path / f'copy-{len(opened)}.db'}")
        else:
            from compliance_store.postgres import PostgresStore

            taken = any(type(s).__name__ == "PostgresStore" for s in opened)
            url = request.getfixturevalue("new_postgres_schema")() if taken else request.getfixturevalue("postgres_url")
            store = PostgresStore(url, pool_min=0)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@attrs.frozen
class Seeded:
    organization_id: str
    other_id: str
    secret: str
    vendor_ids: tuple[str, ...]
    replayed: Any


RATED_VENDOR = {"inherent_probability": 4, "inherent_impact": "major", "residual_probability": 2, "residual_impact": 2}
RATED_RISK = {"likelihood": "likely", "impact": 4, "residual_likelihood": 2, "residual_impact": "minor"}
"""Ratings in full: the seed fills a database of the last release too, which had no unrated ones."""


LOGO = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGPgqokCAAF0AOHsk8xnAAAAAElFTkSuQmCC"
"""A PNG of one pixel."""


def seed(store: Store) -> Seeded:
    """An instance with something in every table, written through the platform."""
    clock = FrozenClock()
    provider = Scripted(answers={"mfa": [user_result("ada", True), user_result("bob", False)]})
    settings = {"providers": [provider], "vault": "memory://"}
    platform = Platform(store, clock=clock, ids=SequentialIds(), settings=settings)
    boot = platform.bootstrap("Acme")
    other = platform.bootstrap("Globex", Plan.FREE)
    owner = platform.actor(boot.organization.id)
    vendors = [
        platform.vendors.create(
            owner,
            NewVendor(
                name=f"Vendor {n}",
                country="DE",
                criticality="critical" if n % 2 else "standard",
                **RATED_VENDOR,
                sub_processors=[{"name": "Backups Oy", "country": "FI", "purpose_category": "data_storage"}],
            ),
        )
        for n in range(5)
    ]
    platform.vendors.archive(owner, vendors[1].id)
    replayed = platform.vendors.create(owner, NewVendor(name="Once", **RATED_VENDOR), idempotency_key="once")
    ada = platform.people.create(owner, NewPerson(name="Ada", email="ada@example.com", role="admin"))
    policy = platform.policies.create(owner, NewPolicy(name="Access control", content="# Access\n\n- MFA"))
    platform.policies.publish(owner, policy.id, PublishPolicy())
    platform.policies.acknowledge(platform.actor(boot.organization.id, "employee", person_id=ada.id), policy.id)
    finding = platform.findings.create(owner, NewFinding(title="MFA", severity="high"))
    platform.findings.update(owner, finding.id, FindingPatch(severity="critical"))
    platform.finding_templates.create(owner, NewFindingTemplate(category="iso", title="Access control"))
    platform.organization_logos.upload(owner, LogoUpload(content=LOGO))
    webhook = platform.webhooks.create(owner, NewWebhook(url="https://93.184.215.14/hook", events=["*"])).webhook
    platform.webhooks.ping(owner, webhook.id)
    platform.context.create(owner, NewContextEntry(question="What is in scope?", answer="Every office", tags=["scope"]))
    control = platform.controls.create(owner, NewControl(name="Disk encryption", code="ORG-1"))
    risk = platform.risks.create(owner, NewRisk(title="Laptop theft", **RATED_RISK, control_ids=[control.id]))
    platform.comments.create(
        owner, NewComment(content="Laptops are **encrypted**.", entity_type="risk", entity_id=risk.id)
    )
    entry = MappingEntry(source="cc6.1", target="a.8.24", relation="intersects")
    platform.controls.import_mappings(
        owner, MappingImport(source_framework="soc2-tsc-2017", target_framework="iso-27001-2022", mappings=[entry])
    )
    platform.controls.enable(owner, "iso-27001-2022")  # controls, rows, task templates, a statement
    (statement,) = platform.soa.list(owner).items
    platform.soa.submit(owner, statement.id, SubmitSoa())
    platform.soa.approve(owner, statement.id, ApproveSoa(comment="Agreed"))
    sheet = "id,title,label,statement,group,groupTitle,parent,kind\nSUP-1,Keep a register of suppliers,S1,List them.,sup,Suppliers,,rule\n"
    platform.framework_imports.create(
        owner, FrameworkImport(format="csv", content=base64.b64encode(sheet.encode()).decode(), name="Supplier rules")
    )
    task = platform.tasks.create(owner, NewTask(title="Check disk encryption", control_ids=[control.id]))
    platform.evidence.add(owner, task.id, NewEvidence(kind="note", note="Every laptop reports FileVault on."))
    platform.evidence.add(owner, task.id, NewEvidence(kind="link", url="https://wiki.example.com/encryption"))
    automation = platform.automations.add(owner, task.id, NewAutomation())  # no URL: its run probes nothing
    platform.automations.run(owner, task.id, automation.id)
    connection = platform.integration_connections.create(
        owner,
        NewConnection(provider="scripted", credentials={"token": "tok_seed"}, variables={"url": "https://idp.example"}),
    )
    platform.integration_checks.run_checks(owner, connection.id, RunChecks())  # a run, its results, a finding
    platform.evidence_export_auditor.create(owner, NewEvidenceExport())  # queued; the chore that builds it is not run
    auditor = platform.api_keys.create(owner, NewApiKey(name="Auditor", role="auditor"))
    platform.access.admit(auditor.secret)
    clock.advance(days=1)
    platform.access.admit(boot.owner_key.secret)
    platform.access.flush()
    platform.access.admit(other.owner_key.secret)
    platform.access.flush()
    return Seeded(
        organization_id=boot.organization.id,
        other_id=other.organization.id,
        secret=boot.owner_key.secret,
        vendor_ids=tuple(v.id for v in [*vendors, replayed]),
        replayed=replayed,
    )


def _answers(store: Store, seeded: Seeded) -> dict[str, Any]:
    """What the platform over ``store`` answers for the seeded organization."""
    platform = Platform(store, clock=FrozenClock(dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)), ids=SequentialIds(1000))
    owner = platform.actor(seeded.organization_id)
    return {
        "vendors": platform.vendors.list(owner),
        "archive": platform.vendors.list(owner, VendorFilter(archived=True)),
        "critical": platform.vendors.list(owner, VendorFilter(criticality="critical")),
        "gets": [platform.vendors.get(owner, vendor_id) for vendor_id in seeded.vendor_ids],
        "people": platform.people.list(owner),
        "findings": platform.findings.list(owner),
        "templates": platform.finding_templates.list(owner),
        "webhooks": platform.webhooks.list(owner),
        "risks": platform.risks.list(owner),
        "keys": platform.api_keys.list(owner),
        "organizations": [
            platform.organizations.get(platform.actor(o)) for o in (seeded.organization_id, seeded.other_id)
        ],
        "usage": [platform.api_keys.usage(owner, key.id) for key in platform.api_keys.list(owner).items],
    }


@pytest.mark.parametrize("source_kind, target_kind", PAIRS, ids=[f"{a}-to-{b}" for a, b in PAIRS])
def test_a_copy_is_verified_and_the_platform_answers_the_same(
    new_store: Callable[[str], Store], source_kind: str, target_kind: str
) -> None:
    source, target = new_store(source_kind), new_store(target_kind)
    seeded = seed(source)
    before = _answers(source, seeded)

    report = copy_store(source, target)

    assert report.verified and not report.replaced
    assert [t.table for t in report.tables] == TABLE_NAMES
    assert all(t.source_rows > 0 for t in report.tables), [t.table for t in report.tables if not t.source_rows]
    figures = digest_store(target)
    assert figures == digest_store(source) == {t.table: (t.source_rows, t.source_checksum) for t in report.tables}
    assert report.as_json()["tables"][0] == {
        "table": "organizations",
        "rows": {"source": 2, "target": 2},
        "checksum": {"source": figures["organizations"][1], "target": figures["organizations"][1]},
        "match": True,
    }
    assert _answers(target, seeded) == before
    platform = Platform(target, clock=FrozenClock(dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)), ids=SequentialIds(5000))
    logo = platform.organization_logos.image(platform.actor(seeded.organization_id))
    assert b"".join(logo.chunks) == base64.b64decode(LOGO)
    assert platform.access.admit(seeded.secret).actor.organization_id == seeded.organization_id
    again = platform.vendors.create(
        platform.actor(seeded.organization_id), NewVendor(name="Once", **RATED_VENDOR), idempotency_key="once"
    )
    assert again == seeded.replayed
    with target.session(write=False) as session:
        assert session[VENDORS].revision(seeded.organization_id) > 0
        assert len(session[OUTBOX].pending(100_000)) == report.tables[TABLE_NAMES.index("outbox")].source_rows


def _block_sizes(store: Store, table: str) -> list[int]:
    """The rows of each of ``table``'s list blocks in a SQL store, in block order."""
    query = f"SELECT rows FROM list_blocks WHERE table_name = '{table}' ORDER BY organization_id, block"
    if type(store).__name__ == "PostgresStore":
        from compliance_store.postgres import parse_url

        with psycopg.connect(parse_url(store.url)[0]) as conn:  # type: ignore[attr-defined]
            conn.execute(f'SET search_path TO "{store.schema}"')  # type: ignore[attr-defined]
            return [row[0] for row in conn.execute(query)]
    with sqlite3.connect(store.path) as conn:  # type: ignore[attr-defined]
        return [row[0] for row in conn.execute(query)]


@pytest.mark.parametrize("target_kind", ["sqlite", "postgresql"])
def test_records_arrive_in_list_order_so_the_target_cuts_even_blocks(
    new_store: Callable[[str], Store], target_kind: str
) -> None:
    """Ids that sort against time (imported from elsewhere, say) copied by id would all join the
    target's first block, and its deep pages would skip through it row by row."""
    source, target = new_store("memory"), new_store(target_kind)
    count = 2 * BLOCK_ROWS + 100
    with source.session(write=True) as session:
        session[ORGANIZATIONS].add(samples.organization("org_a"))
        for n in range(count):
            session[VENDORS].add(samples.plain_vendor("org_a", f"vnd_{count - n:05d}", samples.at(n)))
    copy_store(source, target)
    assert _block_sizes(target, "vendors") == [BLOCK_ROWS, BLOCK_ROWS, 100]


def test_a_postgres_target_is_vacuumed_and_analysed_after_the_copy(new_store: Callable[[str], Store]) -> None:
    """Its counts are index-only scans (they need the visibility map) and its plans need
    statistics, from the first request on rather than after autovacuum's next round."""
    import psycopg

    from compliance_store.postgres import PostgresStore, parse_url

    source, target = new_store("sqlite"), new_store("postgresql")
    seed(source)
    copy_store(source, target)
    assert isinstance(target, PostgresStore)
    with psycopg.connect(parse_url(target.url)[0]) as conn:
        row = conn.execute(
            "SELECT c.reltuples, c.relallvisible FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relname = 'vendors'",
            (target.schema,),
        ).fetchone()
    assert row is not None and row[0] > 0 and row[1] > 0, row


def test_a_non_empty_target_is_refused_and_left_alone(new_store: Callable[[str], Store]) -> None:
    source, target = new_store("sqlite"), new_store("postgresql")
    seed(source)
    Platform(target).bootstrap("Already here")
    before = digest_store(target)
    with pytest.raises(Conflict) as refused:
        copy_store(source, target)
    bootstrapped = {"organizations": 1, "api_keys": 1, "outbox": 2, "audit_log": 2}  # and its two events
    assert refused.value.details == {"reason": "target_not_empty", "tables": bootstrapped}
    assert digest_store(target) == before


@pytest.mark.parametrize("target_kind", ["sqlite", "postgresql", "memory"])
def test_replace_empties_the_target_first_in_the_same_transaction(
    new_store: Callable[[str], Store], target_kind: str
) -> None:
    source, target = new_store("sqlite"), new_store(target_kind)
    seeded = seed(source)
    stale = Platform(target, ids=SequentialIds(9000))
    old = stale.bootstrap("Old")
    stale.vendors.create(stale.actor(old.organization.id), NewVendor(name="Old vendor"))
    stale.vendors.create(stale.actor(old.organization.id), NewVendor(name="Old vendor 2"))

    report = copy_store(source, target, replace=True)

    assert report.verified and report.replaced
    deleted = {t.table: t.deleted for t in report.tables if t.deleted}
    assert deleted == {"organizations": 1, "api_keys": 1, "vendors": 2, "outbox": 4, "audit_log": 4}
    assert digest_store(target) == digest_store(source)
    assert _answers(target, seeded) == _answers(source, seeded)
    with target.session(write=False) as session:
        assert session[ORGANIZATIONS].get(old.organization.id) is None
        assert session[VENDORS].list(old.organization.id, VendorFilter(), PageRequest()) == ([], 0)


def test_a_mismatch_rolls_the_whole_copy_back(
    new_store: Callable[[str], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target that does not read back what the source gave (here: a load that drops a vendor)
    fails the verification, and nothing of the copy stays, not even with ``replace``."""
    source, target = new_store("sqlite"), new_store("postgresql")
    seed(source)
    Platform(target).bootstrap("Kept")
    before = digest_store(target)
    plan = tables()

    def lossy(areas: Any = AREAS) -> tuple[copying.Table, ...]:
        dropped: list[Any] = []

        def load(session: Any, row: Any) -> None:
            if not dropped:
                dropped.append(row)
                return
            vendors.load(session, row)

        vendors = next(t for t in plan if t.name == "vendors")
        return tuple(attrs.evolve(t, load=load) if t is vendors else t for t in plan)

    monkeypatch.setattr(copying, "tables", lossy)
    with pytest.raises(CopyMismatch) as failed:
        copy_store(source, target, replace=True)
    assert failed.value.code == "internal_error" and failed.value.details == {"tables": ["vendors"]}
    vendors = next(t for t in failed.value.report.tables if t.table == "vendors")
    assert vendors.target_rows == vendors.source_rows - 1 and vendors.target_checksum != vendors.source_checksum
    assert digest_store(target) == before


@pytest.mark.parametrize("source_kind", ["sqlite", "postgresql"])
def test_the_copy_reads_one_snapshot_of_the_source(
    new_store: Callable[[str], Store], monkeypatch: pytest.MonkeyPatch, source_kind: str
) -> None:
    """A write committed on the source while the copy runs (after it read the organizations,
    before the vendors) is not half-copied: the copy is of the moment the copy began."""
    source, target = new_store(source_kind), new_store("sqlite")
    seeded = seed(source)
    expected = digest_store(source)
    from compliance_store.postgres import PostgresStore
    from compliance_store.sqlite import SqliteStore

    writer = Platform(SqliteStore(source.url) if source_kind == "sqlite" else PostgresStore(source.url, pool_min=0))
    plan = tables()
    first = plan[0]

    def load_then_write(session: Any, row: Any) -> None:
        first.load(session, row)
        writer.vendors.create(writer.actor(seeded.organization_id), NewVendor(name=f"During the copy {row.id}"))

    monkeypatch.setattr(copying, "tables", lambda areas=AREAS: (attrs.evolve(first, load=load_then_write), *plan[1:]))
    try:
        report = copy_store(source, target)
    finally:
        writer.close()
    assert {t.table: (t.source_rows, t.source_checksum) for t in report.tables} == expected
    assert digest_store(target) == expected
    assert digest_store(source)["vendors"][0] == expected["vendors"][0] + 2  # the writes did happen


def test_an_empty_source_and_the_store_itself_are_refused(new_store: Callable[[str], Store]) -> None:
    source, target = new_store("sqlite"), new_store("sqlite")
    with pytest.raises(ValidationError) as empty:
        copy_store(source, target)
    assert empty.value.details["field"] == "source" and "nothing to copy" in empty.value.details["reason"]
    seed(source)
    with pytest.raises(ValidationError) as itself:
        copy_store(source, source)
    assert itself.value.details["field"] == "target"
    from compliance_store.sqlite import SqliteStore

    same_file = SqliteStore(source.url)
    try:
        with pytest.raises(ValidationError):
            copy_store(source, same_file, replace=True)
    finally:
        same_file.close()
    assert all(rows == 0 for rows, _ in digest_store(target).values())


def test_every_store_copies_through_its_own_method(new_store: Callable[[str], Store]) -> None:
    for kind in ("memory", "sqlite", "postgresql"):
        source, target = new_store(kind), new_store("sqlite")
        seed(source)
        report = source.copy_to(target)
        assert report.verified and report.source == getattr(source, "display_url", source.url)


def test_canonical_rows_are_the_same_whichever_store_read_them() -> None:
    naive = dt.datetime(2026, 3, 4, 5, 6, 7)
    paris = dt.datetime(2026, 3, 4, 6, 6, 7, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert copying.canonical(naive) == copying.canonical(paris) == "2026-03-04T05:06:07.000000+00:00"
    assert copying.canonical(("a", 60.0, [1.5])) == copying.canonical(["a", 60, (1.5,)]) == ["a", 60, [1.5]]
    vendor = copying.canonical(samples.vendor())
    assert vendor["$type"] == "compliance_core.areas.vendors.models:Vendor" and vendor["criticality"] == "critical"
    assert vendor["sub_processors"][0]["purpose_category"] == "data_storage"
    with pytest.raises(TypeError):
        copying.canonical(object())
