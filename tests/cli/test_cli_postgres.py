"""Every `compliance` command on a PostgreSQL store: ``--db postgresql://...?schema=...`` (or
``COMPLIANCE_DB``) works as a SQLite path does, and a password in the URL is never printed.

Needs a PostgreSQL server (``tests/conftest.py``: skipped, saying why, when there is none, unless
``COMPLIANCE_REQUIRE_POSTGRES=1``). The server here trusts local connections, so a URL with a
password still connects: what the commands print can be searched for it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest

from compliance_core import FrozenClock, PageRequest, Platform
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.areas.vendors import VENDORS, NewVendor, VendorFilter
from compliance_http.cli import main

COMPLIANCE = str(Path(sys.executable).with_name("compliance"))
LISTENING = re.compile(r"listening on (http://\S+)/v1")
PASSWORD = "Sup3r-s3cret.pw"


def with_password(url: str, password: str = PASSWORD) -> str:
    """``url`` with a password for its user (ignored by a server that trusts the connection)."""
    parts = urlsplit(url)
    users, _, hosts = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{users or 'postgres'}:{password}@{hosts}"))


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """Run one command; return (exit code, parsed stdout or None, parsed stderr or None), and
    check that the password appears in neither."""

    def run_command(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        assert PASSWORD not in out + err
        return code, json.loads(out) if out.strip() else None, json.loads(err) if err.strip() else None

    return run_command


@pytest.fixture
def db(postgres_url: str) -> str:
    """This run's schema (emptied), as a URL with a password."""
    return with_password(postgres_url)


def test_init_org_and_keys_commands_on_postgres(run, db: str, postgres_url: str) -> None:
    code, boot, err = run("init", "--db", db, "--org-name", "Acme", "--plan", "free")
    assert (code, err) == (0, None) and set(boot) == {"organizationId", "apiKey"}
    org_id = boot["organizationId"]

    code, listed, _ = run("org", "list", "--db", db)
    assert code == 0 and [(o["id"], o["plan"], o["rateLimit"]["burst"]) for o in listed] == [(org_id, "free", 60)]

    code, changed, _ = run(
        "org", "set-plan", "--db", db, "--org", org_id, "--plan", "enterprise", "--rpm", "2000", "--burst", "4000"
    )
    assert code == 0 and changed["rateLimit"] == {"requestsPerMinute": 2000, "burst": 4000}

    code, created, _ = run("keys", "create", "--db", db, "--org", org_id, "--name", "CI", "--role", "auditor")
    assert code == 0 and created["key"].startswith("comp_")
    code, keys, _ = run("keys", "list", "--db", db, "--org", org_id)
    assert code == 0 and {k["id"] for k in keys} >= {created["id"]} and len(keys) == 2
    assert created["key"] not in json.dumps(keys)

    with Platform.open(postgres_url) as platform:  # the same data, opened without the password
        assert platform.access.admit(created["key"]).actor.role == "auditor"
        assert platform.access.admit(boot["apiKey"]).rate.limit == 4000

    code, revoked, _ = run("keys", "revoke", "--db", db, "--org", org_id, "--key", created["id"])
    assert code == 0 and revoked["status"] == "revoked"
    with Platform.open(postgres_url) as platform, pytest.raises(Exception) as refused:
        platform.access.admit(created["key"])
    assert refused.value.code == "unauthorized"


def test_errors_on_postgres_name_the_option(run, db: str) -> None:
    _, boot, _ = run("init", "--db", db, "--org-name", "Acme")
    code, _, err = run("keys", "list", "--db", db, "--org", "org_00000000nothere")
    assert code == 1 and err["error"]["code"] == "not_found"
    code, _, err = run("org", "set-plan", "--db", db, "--org", boot["organizationId"], "--plan", "gold")
    assert code == 2 and err["error"]["details"]["field"] == "--plan"


def test_maintenance_purges_on_postgres(run, db: str, postgres_url: str) -> None:
    code, boot, _ = run("init", "--db", db, "--org-name", "Acme")
    day_and_a_bit_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=25)
    with Platform.open(postgres_url, clock=FrozenClock(day_and_a_bit_ago)) as old:
        owner = old.actor(boot["organizationId"])
        old.vendors.create(owner, NewVendor(name="Old Co"), idempotency_key="old-1")
        old.vendors.create(owner, NewVendor(name="Older Co"), idempotency_key="old-2")
    with Platform.open(postgres_url) as platform:
        platform.vendors.create(platform.actor(boot["organizationId"]), NewVendor(name="New"), idempotency_key="new")
    swept = {
        "purgedOutboxMessages": 0,
        "policiesDueForReview": 0,
        "lapsedRiskAcceptances": 0,
        "reopenedTasks": 0,
        "expiredEvidence": 0,
        "expiringEvidence": 0,
        "builtEvidenceExports": 0,
        "automationRuns": 0,
        "integrationCheckRuns": 0,
    }
    assert run("maintenance", "--db", db) == (0, {"purgedIdempotencyRecords": 2, **swept}, None)
    assert run("maintenance", "--db", db) == (0, {"purgedIdempotencyRecords": 0, **swept}, None)


def test_compliance_db_may_name_a_postgres_store(run, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPLIANCE_DB", db)
    code, boot, _ = run("init", "--org-name", "From env", "--plan", "starter")
    assert code == 0
    code, listed, _ = run("org", "list")
    assert code == 0 and [o["id"] for o in listed] == [boot["organizationId"]]


@pytest.mark.parametrize(
    "argv",
    [
        ["org", "list"],
        ["keys", "list", "--org", "org_1"],
        ["init", "--org-name", "x"],
        ["maintenance"],
        ["serve", "--port", "0", "--workers", "1"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_an_unreachable_postgres_is_a_db_error_without_the_password(run, argv: list[str]) -> None:
    unreachable = f"postgresql://app:{PASSWORD}@127.0.0.1:1/compliance?schema=x&password={PASSWORD}"
    code, out, err = run(*argv, "--db", unreachable)
    assert (code, out) == (2, None)
    details = err["error"]["details"]
    assert details["field"] == "--db" and "cannot connect to PostgreSQL" in details["reason"]


def test_a_mistyped_command_line_never_echoes_the_password(run) -> None:
    code, _, err = run("org", "lst", f"--db=postgresql://app:{PASSWORD}@db/c")
    assert code == 2 and err["error"]["code"] == "validation_error"
    code, _, err = run("org", "list", "--db", f"postgresq://app:{PASSWORD}@db/c")  # no such scheme
    assert code == 2 and err["error"]["details"]["field"] == "--db"
    assert "***" in err["error"]["details"]["value"]


def test_a_real_process_prints_one_json_error_when_postgres_refuses(postgres_server: str) -> None:
    """psycopg_pool's own "error connecting" warning must not reach stderr beside the JSON error."""
    refused = with_password(f"{postgres_server.rsplit('/', 1)[0]}/no_such_database_here")
    done = subprocess.run([COMPLIANCE, "org", "list", "--db", refused], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert PASSWORD not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert json.loads(line)["error"]["details"]["field"] == "--db"


@pytest.mark.slow
def test_serve_on_postgres_bootstraps_serves_and_hides_the_password(db: str, postgres_url: str) -> None:
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed below)
    env = {k: v for k, v in os.environ.items() if k != "COMPLIANCE_DB"}
    process = subprocess.Popen(
        [COMPLIANCE, "serve", "--db", db, "--port", "0", "--workers", "2", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        for line in process.stdout:
            lines.append(line)
            if found := LISTENING.search(line):
                url = found.group(1)
                break
        else:
            pytest.fail(f"the server did not start: {''.join(lines)}")
        startup = "".join(lines)
        assert PASSWORD not in startup and "PASSWORD@" in startup  # the hints say where to put it
        key = re.search(r"^\s+API key\s+(comp_[0-9a-f]{64})$", startup, re.M).group(1)
        headers = {"X-API-Key": key}
        created = httpx.post(f"{url}/v1/vendors", json={"name": "Served"}, headers=headers)
        assert created.status_code == 201
        listed = httpx.get(f"{url}/v1/vendors", headers=headers).json()
        assert [v["name"] for v in listed["data"]] == ["Served"]
        health = httpx.get(f"{url}/v1/health")
        assert health.status_code == 200 and PASSWORD not in health.text
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        rest = process.stdout.read()
        process.stdout.close()
        errors.seek(0)
        logged = errors.read()
        errors.close()
    assert process.returncode == 0, logged
    assert PASSWORD not in rest + logged
    with Platform.open(postgres_url) as platform, platform.uow.read() as session:
        [organization] = session[ORGANIZATIONS].list_all()
        assert (organization.name, organization.plan) == ("Default organization", Plan.PROFESSIONAL)
        assert session[VENDORS].list(organization.id, VendorFilter(), PageRequest())[1] == 1
