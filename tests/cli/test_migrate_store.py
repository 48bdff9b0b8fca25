"""`compliance migrate-store`: an instance moved from SQLite to PostgreSQL (and back) without
loss, verified by counts and checksums; a non-empty target refused unless ``--replace``.

Needs a PostgreSQL server (skipped, saying why, when there is none, unless
``COMPLIANCE_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest
from psycopg import sql
from scripted_provider import Scripted, user_result

from compliance_core import FrozenClock, PageRequest, Platform
from compliance_core.areas.api_keys import NewApiKey
from compliance_core.areas.automations import NewAutomation
from compliance_core.areas.comments import NewComment
from compliance_core.areas.context import NewContextEntry
from compliance_core.areas.evidence import NewEvidence
from compliance_core.areas.evidence_export import NewEvidenceExport
from compliance_core.areas.finding_templates import NewFindingTemplate
from compliance_core.areas.findings import FindingFilter, FindingPatch, NewFinding
from compliance_core.areas.frameworks.controls import MappingEntry, MappingImport
from compliance_core.areas.frameworks.imported import FrameworkImport
from compliance_core.areas.frameworks.soa import ApproveSoa, SubmitSoa
from compliance_core.areas.integrations import NewConnection, RunChecks
from compliance_core.areas.organization_logos import LogoUpload
from compliance_core.areas.organizations import Plan
from compliance_core.areas.people import NewPerson, PersonFilter
from compliance_core.areas.policies import NewPolicy, PublishPolicy
from compliance_core.areas.risks import NewRisk
from compliance_core.areas.tasks import NewTask
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_core.areas.webhooks import NewWebhook
from compliance_core.kernel.events import OUTBOX
from compliance_http.cli import main
from compliance_store.sqlite import search

PASSWORD = "Migr4te-pw"


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    def run_command(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert PASSWORD not in out + err
        return code, json.loads(out) if out.strip() else None, json.loads(err) if err.strip() else None

    return run_command


@pytest.fixture
def fresh_schema(postgres_server: str) -> Iterator[str]:
    """The URL (with a password the trusting server ignores) of a schema that does not exist
    yet: migrate-store creates and migrates it. Dropped after the test."""
    name = f"t_{secrets.token_hex(6)}"
    scheme, rest = postgres_server.split("://", 1)
    users, _, hosts = rest.rpartition("@")
    separator = "&" if "?" in hosts else "?"
    yield f"{scheme}://{users or 'postgres'}:{PASSWORD}@{hosts}{separator}schema={name}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


@attrs.frozen
class Instance:
    db: str
    organization_id: str
    owner_secret: str
    auditor_secret: str
    revoked_secret: str
    replayed: Any
    replayed_finding: Any
    ids: dict[str, list[str]]


ONE_PIXEL_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGPgqokCAAF0AOHsk8xnAAAAAElFTkSuQmCC"


def seed_instance(path: Path) -> Instance:
    """A SQLite instance with something in every table, written through the platform: two
    organizations, vendors (archived ones and sub-processors included), people, findings,
    finding templates, policies (a version, an acknowledgement), API keys (one revoked) with usage and
    rate-limit buckets, a webhook and a queued delivery, idempotency records and the outbox events
    of all of it, the organization's logo and a context answer."""
    db = str(path)
    provider = Scripted(answers={"mfa": [user_result("ada", True), user_result("bob", False)]})
    with Platform.open(f"sqlite:///{db}", settings={"providers": [provider]}) as platform:
        boot = platform.bootstrap("Acme GmbH")
        other = platform.bootstrap("Globex", Plan.FREE)
        owner = platform.actor(boot.organization.id)
        people = [
            platform.people.create(owner, NewPerson(name="Ada Lovelace", email="ada@example.com", role="admin")),
            *platform.people.bulk_create(
                owner,
                [
                    NewPerson(name="Grace Hopper", email="grace@example.com"),
                    NewPerson(name="Zoë", email="zoe@example.com"),
                ],
            ),
        ]
        requests = [
            NewVendor(
                name=f"Vendor {n:02d} – Łódź",
                country=("DE", "FR", "IE")[n % 3],
                criticality=("critical", "important", "standard")[n % 3],
                processes_personal_data=n % 2 == 0,
                assignee_id=people[n % 3].id,
                dpa_status="signed" if n % 2 == 0 else None,
                dpa_signed_at="2025-03-01" if n % 2 == 0 else None,
                sub_processors=[
                    {"name": "Backups Oy", "country": "FI", "purpose_category": "data_storage"},
                    {"name": "Pager Inc", "country": "IE", "purpose_category": "communications"},
                ]
                if n % 4 == 0
                else [],
            )
            for n in range(12)
        ]
        vendors = [
            platform.vendors.create(owner, request, idempotency_key=f"vendor-{n}") for n, request in enumerate(requests)
        ]
        for vendor in vendors[::3]:
            platform.vendors.archive(owner, vendor.id)
        replayed = (requests[4], vendors[4])
        findings = [
            platform.findings.create(owner, NewFinding(title=f"Finding {n}", severity=("low", "high")[n % 2]))
            for n in range(4)
        ]
        replayed_finding = platform.findings.create(
            owner, NewFinding(title="Retried", severity="medium"), idempotency_key="finding-retried"
        )
        platform.findings.update(owner, findings[0].id, FindingPatch(severity="critical"))
        platform.findings.close(owner, findings[1].id)
        templates = [
            platform.finding_templates.create(owner, NewFindingTemplate(category="iso27001", title=f"A.{n}", order=n))
            for n in range(3)
        ]
        policy = platform.policies.create(
            owner, NewPolicy(name="Acceptable use – Łódź", content="# Rules\n\n- Lock screens", frequency="yearly")
        )
        platform.policies.publish(owner, policy.id, PublishPolicy(changelog="First"))
        grace = platform.actor(boot.organization.id, "employee", person_id=people[1].id)
        platform.policies.acknowledge(grace, policy.id)
        platform.api_keys.create(owner, NewApiKey(name="Grace", role="employee", person_id=people[1].id))
        for n in range(3):
            platform.risks.create(owner, NewRisk(title=f"Risk {n}", likelihood="likely", owner_id=people[n].id))
        auditor = platform.api_keys.create(owner, NewApiKey(name="Auditor", role="auditor"))
        revoked = platform.api_keys.create(owner, NewApiKey(name="Old CI", role="admin"))
        for secret in (boot.owner_key.secret, auditor.secret, revoked.secret, other.owner_key.secret):
            for _ in range(3):
                platform.access.admit(secret)
        platform.access.flush()
        platform.api_keys.revoke(owner, revoked.key.id)
        platform.vendors.create(platform.actor(other.organization.id), NewVendor(name="Globex's own"))
        hook = platform.webhooks.create(owner, NewWebhook(url="https://93.184.215.14/hook", events=["*"])).webhook
        platform.webhooks.ping(owner, hook.id)
        platform.organization_logos.upload(owner, LogoUpload(content=ONE_PIXEL_PNG))
        platform.context.create(owner, NewContextEntry(question="What is in scope?", answer="Every office"))
        entry = MappingEntry(source="cc6.1", target="a.8.24", relation="intersects")
        mapping = MappingImport(source_framework="soc2-tsc-2017", target_framework="iso-27001-2022", mappings=[entry])
        platform.controls.import_mappings(owner, mapping)
        connection = platform.integration_connections.create(
            owner,
            NewConnection(
                provider="scripted", credentials={"token": "tok_seed"}, variables={"url": "https://idp.example"}
            ),
        )
        platform.integration_checks.run_checks(owner, connection.id, RunChecks())  # a run, its results, a finding
        platform.controls.enable(owner, "iso-27001-2022")  # controls, rows, task templates, a statement
        (statement,) = platform.soa.list(owner).items
        platform.soa.submit(owner, statement.id, SubmitSoa())
        platform.soa.approve(owner, statement.id, ApproveSoa(comment="Agreed"))
        control = platform.controls.list(owner).items[0]
        risk = platform.risks.create(owner, NewRisk(title="Theft", control_ids=[control.id]))
        platform.comments.create(
            owner, NewComment(content="Laptops are **encrypted**.", entity_type="risk", entity_id=risk.id)
        )
        sheet = b"id,title,group\nSUP-1,Keep a register of suppliers,sup\n"
        platform.framework_imports.create(
            owner, FrameworkImport(format="csv", content=base64.b64encode(sheet).decode(), name="Supplier rules")
        )
        task = platform.tasks.create(owner, NewTask(title="Check disk encryption", control_ids=[control.id]))
        platform.evidence.add(owner, task.id, NewEvidence(kind="note", note="Every laptop reports FileVault on."))
        automation = platform.automations.add(owner, task.id, NewAutomation())  # no URL: its run probes nothing
        platform.automations.run(owner, task.id, automation.id)
        platform.evidence_export_auditor.create(owner, NewEvidenceExport())  # queued, not built
    return Instance(
        db=db,
        organization_id=boot.organization.id,
        owner_secret=boot.owner_key.secret,
        auditor_secret=auditor.secret,
        revoked_secret=revoked.secret,
        replayed=replayed,
        replayed_finding=replayed_finding,
        ids={
            "vendors": [v.id for v in vendors],
            "people": [p.id for p in people],
            "findings": [f.id for f in [*findings, replayed_finding]],
            "templates": [t.id for t in templates],
        },
    )


def answers(url: str, instance: Instance) -> dict[str, Any]:
    """What the platform over ``url`` answers about the instance (at one fixed moment)."""
    moment = dt.datetime.now(dt.UTC).replace(microsecond=0)
    with Platform.open(url, clock=FrozenClock(moment)) as platform:
        owner = platform.actor(instance.organization_id)
        everything = PageRequest(per_page=200)
        found: dict[str, Any] = {
            "organization": platform.organizations.get(owner),
            "vendors": platform.vendors.list(owner, VendorFilter(), everything),
            "archive": platform.vendors.list(owner, VendorFilter(archived=True), everything),
            "critical DE": platform.vendors.list(owner, VendorFilter(criticality="critical", country="DE")),
            "page 2 of 3": platform.vendors.list(owner, VendorFilter(), PageRequest(page=2, per_page=3)),
            "people": platform.people.list(owner, PersonFilter(), everything),
            "admins": platform.people.list(owner, PersonFilter(role="admin")),
            "findings": platform.findings.list(owner, FindingFilter(), everything),
            "closed": platform.findings.list(owner, FindingFilter(status="closed")),
            "templates": platform.finding_templates.list(owner),
            "keys": platform.api_keys.list(owner),
            "vendor gets": [platform.vendors.get(owner, i) for i in instance.ids["vendors"]],
            "person gets": [platform.people.get(owner, i) for i in instance.ids["people"]],
            "finding gets": [platform.findings.get(owner, i) for i in instance.ids["findings"]],
            "template gets": [platform.finding_templates.get(owner, i) for i in instance.ids["templates"]],
        }
        found["usage"] = [platform.api_keys.usage(owner, key.id) for key in found["keys"].items]
        with platform.uow.read() as session:
            found["outbox"] = session[OUTBOX].pending(limit=1000)
        return found


def sqlite_counts(db: str) -> dict[str, int]:
    """The rows of every table but the derived ones (counters, statistics, search indexes)."""
    with sqlite3.connect(db) as conn:
        indexes = search.index_tables(conn)
        names = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in indexes
            and name
            not in (
                "list_counts",
                "list_revisions",
                "list_blocks",
                "list_facet_blocks",
                "_sqlite_migrations",
                "sqlite_stat1",
            )
        ]
        return {name: conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}


def test_an_instance_moves_to_postgres_and_back_without_loss(run, tmp_path: Path, fresh_schema: str) -> None:
    instance = seed_instance(tmp_path / "before.db")
    expected = answers(f"sqlite:///{instance.db}", instance)
    counts = sqlite_counts(instance.db)

    code, report, err = run("migrate-store", "--from", instance.db, "--to", fresh_schema)

    assert (code, err) == (0, None)
    assert (report["verified"], report["replaced"], report["from"]) == (True, False, f"sqlite:///{instance.db}")
    assert "***@" in report["to"]
    tables = {t["table"]: t for t in report["tables"]}
    assert set(tables) == set(counts)
    for name, table in tables.items():
        assert table["rows"] == {"source": counts[name], "target": counts[name]}, name
        assert table["checksum"]["source"] == table["checksum"]["target"] and table["match"], name
        assert table["rows"]["source"] > 0, f"the seed left {name} empty"
    assert report["rows"] == sum(counts.values())

    target = fresh_schema.replace(f":{PASSWORD}@", "@")
    assert answers(target, instance) == expected
    with Platform.open(target) as platform:
        assert platform.access.admit(instance.owner_secret).actor.organization_id == instance.organization_id
        assert platform.access.admit(instance.auditor_secret).actor.role == "auditor"
        with pytest.raises(Exception) as refused:
            platform.access.admit(instance.revoked_secret)
        assert refused.value.code == "unauthorized"
        owner = platform.actor(instance.organization_id)
        request, original = instance.replayed
        assert platform.vendors.create(owner, request, idempotency_key="vendor-4") == original  # with sub-processors
        retried = NewFinding(title="Retried", severity="medium")
        assert platform.findings.create(owner, retried, idempotency_key="finding-retried") == instance.replayed_finding
        with pytest.raises(Exception) as reused:
            platform.vendors.create(owner, NewVendor(name="Another"), idempotency_key="vendor-4")
        assert reused.value.code == "conflict"
        assert platform.vendors.list(owner).total == 8  # 12 made, 4 archived; no replay made one more

    # and back, into a new SQLite file: the same rows, the same checksums
    back = tmp_path / "after.db"
    code, returned, err = run("migrate-store", "--from", fresh_schema, "--to", str(back))
    assert (code, err) == (0, None) and returned["verified"]
    # the replays above wrote nothing; the admissions counted usage and moved the buckets
    unchanged = {"organizations", "vendors", "people", "findings", "finding_templates", "idempotency", "outbox"}
    for table in returned["tables"]:
        if table["table"] in unchanged:
            assert table["checksum"]["source"] == tables[table["table"]]["checksum"]["source"], table["table"]


def test_a_non_empty_target_is_refused_and_replace_empties_it(run, tmp_path: Path, fresh_schema: str) -> None:
    instance = seed_instance(tmp_path / "source.db")
    code, _, _ = run("init", "--db", fresh_schema, "--org-name", "Already here")
    assert code == 0
    target = fresh_schema.replace(f":{PASSWORD}@", "@")
    before = answers_of_everyone(target)

    code, out, err = run("migrate-store", "--from", instance.db, "--to", fresh_schema)
    assert (code, out) == (1, None)
    assert err["error"]["code"] == "conflict" and "--replace" in err["error"]["message"]
    bootstrapped = {"organizations": 1, "api_keys": 1, "outbox": 2, "audit_log": 2}  # and its two events
    assert err["error"]["details"]["tables"] == bootstrapped
    assert answers_of_everyone(target) == before

    code, report, err = run("migrate-store", "--from", instance.db, "--to", fresh_schema, "--replace")
    assert (code, err) == (0, None) and report["verified"] and report["replaced"]
    deleted = {t["table"]: t["deletedFromTarget"] for t in report["tables"] if "deletedFromTarget" in t}
    assert deleted == bootstrapped
    assert [o.name for o in answers_of_everyone(target)] == ["Acme GmbH", "Globex"]
    assert answers(target, instance) == answers(f"sqlite:///{instance.db}", instance)


def answers_of_everyone(url: str) -> list[Any]:
    from compliance_core.areas.organizations import ORGANIZATIONS

    with Platform.open(url) as platform, platform.uow.read() as session:
        return session[ORGANIZATIONS].list_all()


@pytest.mark.parametrize(
    "argv, field, reason",
    [
        (["--from", "memory://", "--to", "{db}"], "--from", "memory://"),
        (["--from", "{tmp}/missing.db", "--to", "{db}"], "--from", "no database there"),
        (["--from", "{db}", "--to", "{db}"], "--to", "is the source itself"),
        (["--from", "{db}", "--to", "memory://"], "--to", "memory://"),
        (["--from", "{db}", "--to", "{tmp}/no/such/dir/x.db"], "--to", "cannot open"),
        (["--from", "{empty}", "--to", "{tmp}/target.db"], "--from", "nothing to copy"),
        (["--from", "{db}", "--to", "nosuch://x"], "--to", "no store for this URL scheme"),
    ],
)
def test_bad_sources_and_targets_name_the_option(run, tmp_path: Path, argv, field: str, reason: str) -> None:
    db, empty = tmp_path / "source.db", tmp_path / "empty.db"
    run("init", "--db", str(db), "--org-name", "Acme")
    Platform.open(f"sqlite:///{empty}").close()
    argv = [a.format(db=db, tmp=tmp_path, empty=empty) for a in argv]
    code, out, err = run("migrate-store", *argv)
    assert (code, out) == (2, None)
    assert err["error"]["details"]["field"] == field and reason in err["error"]["message"]
    assert not (tmp_path / "target.db").exists() or sqlite_counts(str(tmp_path / "target.db"))["organizations"] == 0


def test_an_empty_postgres_source_is_refused_and_the_target_untouched(run, tmp_path: Path, fresh_schema: str) -> None:
    """A mistyped schema is an empty store: refusing it keeps --replace from emptying the target."""
    target = tmp_path / "precious.db"
    run("init", "--db", str(target), "--org-name", "Precious")
    code, _, err = run("migrate-store", "--from", fresh_schema, "--to", str(target), "--replace")
    assert code == 2 and err["error"]["details"]["field"] == "--from"
    assert sqlite_counts(str(target))["organizations"] == 1
