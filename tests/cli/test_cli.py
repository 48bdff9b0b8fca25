"""The `compliance` command, run in-process through ``main`` (and twice as a real process)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from compliance_core import Platform
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.areas.policies import NewPolicy, PublishPolicy
from compliance_core.areas.vendors import NewVendor
from compliance_core.kernel.clock import FrozenClock
from compliance_http import cli
from compliance_http.cli import build_parser, first_run_banner, main, store_url

COMPLIANCE = str(Path(sys.executable).with_name("compliance"))


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "cli.db")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """Run one command; return (exit code, parsed stdout or None, parsed stderr or None)."""

    def run_command(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, json.loads(out) if out.strip() else None, json.loads(err) if err.strip() else None

    return run_command


@pytest.fixture
def org(run, db: str) -> dict:
    code, out, _ = run("init", "--db", db, "--org-name", "Acme")
    assert code == 0
    return out


def platform_for(db: str) -> Platform:
    return Platform.open(store_url(db))


def test_init_prints_one_json_object_whose_key_authenticates(run, db: str) -> None:
    code, out, err = run("init", "--db", db, "--org-name", "Acme Ltd")
    assert (code, err) == (0, None)
    assert set(out) == {"organizationId", "apiKey"}
    with platform_for(db) as platform:
        admission = platform.access.admit(out["apiKey"])
        assert admission.actor.organization_id == out["organizationId"]
        assert admission.actor.role == "owner"
        organization = platform.organizations.get(admission.actor)
    assert (organization.name, organization.plan) == ("Acme Ltd", Plan.PROFESSIONAL)


def test_init_takes_a_plan_and_enterprise_limits(run, db: str) -> None:
    code, out, _ = run(
        "init", "--db", db, "--org-name", "Big", "--plan", "enterprise", "--rpm", "100", "--burst", "250"
    )
    assert code == 0
    with platform_for(db) as platform:
        organization = platform.organizations.get(platform.actor(out["organizationId"]))
    assert (organization.plan, organization.rate_limit.requests_per_minute, organization.rate_limit.burst) == (
        "enterprise",
        100,
        250,
    )


@pytest.mark.parametrize(
    "argv, field, value",
    [
        (["--plan", "free", "--rpm", "100"], "--rpm", 100),
        (["--plan", "gold"], "--plan", "gold"),
        (["--plan", "enterprise", "--rpm", "100", "--burst", "50"], "--burst", 50),
    ],
)
def test_init_rejects_bad_plans_and_limits_with_a_json_error(run, db: str, argv, field, value) -> None:
    code, out, err = run("init", "--db", db, "--org-name", "Acme", *argv)
    assert (code, out) == (2, None)
    assert err["error"]["code"] == "validation_error"
    assert (err["error"]["details"]["field"], err["error"]["details"]["value"]) == (field, value)
    with platform_for(db) as platform, platform.uow.read() as session:
        assert session[ORGANIZATIONS].count() == 0


def test_set_plan_changes_the_rate_limits(run, db: str, org: dict) -> None:
    code, out, err = run("org", "set-plan", "--db", db, "--org", org["organizationId"], "--plan", "free")
    assert (code, err) == (0, None)
    assert (out["id"], out["plan"], out["rateLimit"]) == (
        org["organizationId"],
        "free",
        {"requestsPerMinute": 30, "burst": 60},
    )

    code, out, _ = run(
        "org",
        "set-plan",
        "--db",
        db,
        "--org",
        org["organizationId"],
        "--plan",
        "enterprise",
        "--rpm",
        "2000",
        "--burst",
        "5000",
    )
    assert code == 0 and out["rateLimit"] == {"requestsPerMinute": 2000, "burst": 5000}
    with platform_for(db) as platform:
        admission = platform.access.admit(org["apiKey"])
    assert admission.rate.limit == 5000


def test_set_plan_rejects_negotiated_limits_for_other_plans(run, db: str, org: dict) -> None:
    code, out, err = run(
        "org", "set-plan", "--db", db, "--org", org["organizationId"], "--plan", "starter", "--burst", "500"
    )
    assert (code, out) == (2, None)
    assert err["error"]["details"]["field"] == "--burst"
    with platform_for(db) as platform:
        assert platform.organizations.get(platform.actor(org["organizationId"])).plan == "professional"


def test_set_plan_for_an_unknown_organization_is_not_found(run, db: str, org: dict) -> None:
    code, _, err = run("org", "set-plan", "--db", db, "--org", "org_00000000nothere", "--plan", "free")
    assert code == 1
    assert err == {
        "error": {
            "code": "not_found",
            "message": "organization org_00000000nothere not found",
            "details": {"resource": "organization", "id": "org_00000000nothere"},
        }
    }


def test_keys_create_list_revoke(run, db: str, org: dict) -> None:
    org_id = org["organizationId"]
    code, created, _ = run(
        "keys",
        "create",
        "--db",
        db,
        "--org",
        org_id,
        "--name",
        "CI",
        "--role",
        "Auditor",
        "--expires-at",
        "2099-01-01T00:00:00Z",
    )
    assert code == 0 and set(created) == {"id", "key"}
    with platform_for(db) as platform:
        assert platform.access.admit(created["key"]).actor.role == "auditor"

    code, listed, _ = run("keys", "list", "--db", db, "--org", org_id)
    assert code == 0
    by_id = {k["id"]: k for k in listed}
    assert len(by_id) == 2
    ci = by_id[created["id"]]
    assert (ci["name"], ci["role"], ci["status"], ci["expiresAt"]) == (
        "CI",
        "auditor",
        "active",
        "2099-01-01T00:00:00Z",
    )
    assert created["key"].startswith(ci["prefix"])
    text = json.dumps(listed)
    assert created["key"] not in text and org["apiKey"] not in text and "hash" not in text.lower()

    code, revoked, _ = run("keys", "revoke", "--db", db, "--org", org_id, "--key", created["id"])
    assert code == 0 and revoked["status"] == "revoked" and revoked["revokedAt"]
    with platform_for(db) as platform, pytest.raises(Exception) as raised:
        platform.access.admit(created["key"])
    assert raised.value.code == "unauthorized"


@pytest.mark.parametrize(
    "argv, field",
    [
        (["--role", "superuser"], "--role"),
        (["--role", "auditor", "--expires-at", "next tuesday"], "--expires-at"),
        (["--role", "auditor", "--expires-at", "2001-01-01T00:00:00Z"], "--expires-at"),
        (["--role", "auditor", "--name", "   "], "--name"),
        (["--role", "employee"], "--person-id"),
        (["--role", "contractor", "--person-id", "mem_nobody"], "--person-id"),
    ],
)
def test_keys_create_rejects_bad_input(run, db: str, org: dict, argv, field) -> None:
    args = ["keys", "create", "--db", db, "--org", org["organizationId"], "--name", "k", *argv]
    code, out, err = run(*args)
    assert (code, out) == (2, None)
    assert err["error"]["code"] == "validation_error" and err["error"]["details"]["field"] == field


def test_revoking_a_missing_key_is_not_found(run, db: str, org: dict) -> None:
    code, _, err = run("keys", "revoke", "--db", db, "--org", org["organizationId"], "--key", "key_00000000gone")
    assert code == 1 and err["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "command",
    [
        ["keys", "list", "--org", "org_1"],
        ["keys", "revoke", "--org", "org_1", "--key", "key_1"],
        ["org", "set-plan", "--org", "org_1", "--plan", "free"],
        ["org", "list"],
        ["maintenance"],
    ],
)
def test_only_init_and_serve_create_a_database(run, tmp_path: Path, command) -> None:
    missing = tmp_path / "typo.db"
    code, _, err = run(*command, "--db", str(missing))
    assert code == 2
    assert (err["error"]["details"]["field"], err["error"]["details"]["value"]) == ("--db", str(missing))
    assert err["error"]["message"].startswith("--db: ")
    assert not missing.exists()


def test_the_db_defaults_to_compliance_db_from_the_environment(run, db: str, monkeypatch) -> None:
    monkeypatch.setenv("COMPLIANCE_DB", db)
    code, out, _ = run("init", "--org-name", "From env")
    assert code == 0
    code, listed, _ = run("keys", "list", "--org", out["organizationId"])
    assert code == 0 and len(listed) == 1


def test_store_urls() -> None:
    assert store_url("memory://") == "memory://"
    assert store_url("sqlite:///x.db") == "sqlite:///x.db"
    assert store_url("data/c.db", {}) == "sqlite:///" + os.path.abspath("data/c.db")
    assert store_url(None, {"COMPLIANCE_DB": "/srv/c.db"}) == "sqlite:////srv/c.db"
    assert store_url(None, {}) == "sqlite:///" + os.path.abspath("compliance.db")


@pytest.mark.parametrize(
    "argv, mentions",
    [
        (["init", "--org-name", "x", "--rpm", "many"], "--rpm"),
        (["keys", "create", "--org", "org_1", "--name", "x"], "--role"),
        (["serve", "--port", "70000"], "--port"),
        (["serve", "--workers", "0"], "--workers"),
        (["frobnicate"], "frobnicate"),
    ],
)
def test_bad_command_lines_give_a_json_error_with_the_usage(run, argv, mentions) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, None)
    assert err["error"]["code"] == "validation_error"
    assert mentions in err["error"]["message"] and err["error"]["details"]["usage"].startswith("usage: compliance")


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, path + (name,))


COMMANDS = list(_commands(build_parser()))


def test_every_command_is_covered() -> None:
    assert {" ".join(path) for path, _ in COMMANDS} == {
        "",
        "init",
        "org",
        "org set-plan",
        "org create",
        "keys",
        "keys create",
        "keys list",
        "keys revoke",
        "org list",
        "serve",
        "worker",
        "maintenance",
        "migrate-store",
        "import",
        "openapi",
    }


@pytest.mark.parametrize(
    "path, parser", COMMANDS, ids=lambda v: " ".join(v) or "compliance" if isinstance(v, tuple) else ""
)
def test_help_exits_0_and_documents_every_option(capsys, path, parser) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    for action in parser._actions:
        for option in action.option_strings:
            assert option in out, f"{' '.join(path)} --help does not mention {option}"
        if action.help is None:
            assert not action.option_strings, f"{action.option_strings} has no help text"


def test_openapi_prints_the_document(run) -> None:
    code, out, _ = run("openapi")
    assert code == 0
    assert out["openapi"].startswith("3.0") and "/v1/vendors" in out["paths"]


def test_a_real_process_prints_json_and_exits_non_zero_on_errors(tmp_path: Path) -> None:
    db = tmp_path / "real.db"
    done = subprocess.run(
        [COMPLIANCE, "init", "--db", str(db), "--org-name", "Real"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stderr == ""
    org_id = json.loads(done.stdout)["organizationId"]

    failed = subprocess.run(
        [COMPLIANCE, "keys", "create", "--db", str(db), "--org", org_id, "--name", "x", "--role", "nobody"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert failed.returncode == 2 and failed.stdout == ""
    assert "Traceback" not in failed.stderr
    assert json.loads(failed.stderr)["error"]["details"]["field"] == "--role"


# --- errors name the option the user typed --------------------------------------------------------


@pytest.mark.parametrize(
    "argv, option, value",
    [
        (["init", "--org-name", ""], "--org-name", ""),
        (["init", "--org-name", "x", "--db", "foo://nowhere"], "--db", "foo://nowhere"),
        (["init", "--org-name", "x", "--db", "sqlite://"], "--db", "sqlite://"),
        (["init", "--org-name", "x", "--plan", "enterprise", "--rpm", "2000000"], "--rpm", 2000000),
    ],
)
def test_core_fields_are_reported_as_the_options_the_user_typed(run, db: str, argv, option, value) -> None:
    if "--db" not in argv:
        argv = [*argv, "--db", db]
    code, out, err = run(*argv)
    assert (code, out) == (2, None)
    details = err["error"]["details"]
    assert (details["field"], details["value"]) == (option, value)
    assert err["error"]["message"] == f"{option}: {details['reason']}"


def test_a_missing_directory_for_the_database_is_reported_as_db(run, tmp_path: Path) -> None:
    code, _, err = run("init", "--org-name", "x", "--db", str(tmp_path / "no" / "such" / "dir.db"))
    assert code == 2 and err["error"]["details"]["field"] == "--db"


def test_serve_reports_a_busy_port_as_port(run, db: str) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = run("serve", "--db", db, "--port", str(port), "--workers", "1")
    assert code == 2
    assert (err["error"]["details"]["field"], err["error"]["details"]["value"]) == ("--port", port)


def test_an_option_to_field_map_leaves_unknown_fields_alone(run, db: str, org: dict) -> None:
    """The organization's id reaches core as a lookup: not found is not a field error."""
    code, _, err = run("keys", "list", "--db", db, "--org", "org_nothere")
    assert code == 1 and err["error"]["details"] == {"resource": "organization", "id": "org_nothere"}


# --- bare commands print their help -----------------------------------------------------------


@pytest.mark.parametrize(
    "argv, commands",
    [
        ([], ["init", "org", "keys", "serve", "maintenance", "openapi"]),
        (["org"], ["set-plan", "list"]),
        (["keys"], ["create", "list", "revoke"]),
    ],
)
def test_a_command_without_its_subcommand_prints_the_full_help(capsys, argv, commands) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: compliance")
    parser = dict(COMMANDS)[tuple(argv)]
    assert err.strip() == parser.format_help().strip()
    for command in commands:
        assert re.search(rf"^    {command}\b", err, re.MULTILINE), f"`compliance {' '.join(argv)}` help lacks {command}"


def test_bare_compliance_in_a_real_process_prints_the_help() -> None:
    done = subprocess.run([COMPLIANCE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: compliance") and "positional arguments" in done.stderr
    assert "Traceback" not in done.stderr and "serve the /v1 API" in done.stderr


# --- org list ---------------------------------------------------------------------------------


def test_org_list_shows_every_organization(run, db: str, org: dict) -> None:
    code, other, _ = run("init", "--db", db, "--org-name", "Beta", "--plan", "free")
    assert code == 0
    code, listed, err = run("org", "list", "--db", db)
    assert (code, err) == (0, None)
    assert [(o["id"], o["name"], o["plan"]) for o in listed] == [
        (org["organizationId"], "Acme", "professional"),
        (other["organizationId"], "Beta", "free"),
    ]
    assert org["apiKey"] not in json.dumps(listed)


def test_org_list_of_an_empty_database_is_an_empty_list(run, db: str) -> None:
    Platform.open(store_url(db)).close()
    assert run("org", "list", "--db", db) == (0, [], None)


# --- the first-run banner -------------------------------------------------------------------------


def test_the_banner_hints_work_as_printed(run, db: str, capsys) -> None:
    with platform_for(db) as platform:
        banner = first_run_banner(platform, "http://127.0.0.1:3333", store_url(db), program="compliance")
    assert banner is not None
    lines = [line.strip() for line in banner.splitlines()]
    key = next(line.split("=", 1)[1] for line in lines if line.startswith("export COMPLIANCE_API_KEY="))
    assert "export COMPLIANCE_URL=http://127.0.0.1:3333" in lines
    assert key.startswith("comp_")
    create = shlex.split(next(line for line in lines if line.startswith("More keys:")).split(":", 1)[1])
    listing = shlex.split(next(line for line in lines if line.startswith("Organizations:")).split(":", 1)[1])
    assert create[:3] == ["compliance", "keys", "create"] and listing[:3] == ["compliance", "org", "list"]
    assert create[create.index("--db") + 1] == listing[listing.index("--db") + 1] == str(Path(db).resolve())

    argv = [{"NAME": "CI", "ROLE": "admin"}.get(word, word) for word in create[1:]]
    code, created, err = run(*argv)
    assert (code, err) == (0, None) and created["key"].startswith("comp_")

    argv = listing[1:]
    code, listed, _ = run(*argv)
    assert code == 0 and [o["name"] for o in listed] == ["Default organization"]
    with platform_for(db) as platform:
        assert platform.access.admit(key).actor.organization_id == listed[0]["id"]


def test_the_banner_quotes_a_path_with_spaces(tmp_path: Path) -> None:
    path = tmp_path / "my data" / "c.db"
    path.parent.mkdir()
    with Platform.open("memory://") as platform:
        banner = first_run_banner(platform, "http://x", store_url(str(path)), program="compliance")
    assert banner is not None and f"--db '{path}'" in banner


def test_the_banner_never_prints_a_database_password() -> None:
    with Platform.open("memory://") as platform:
        banner = first_run_banner(platform, "http://x", "postgresql://app:s3cret@db:5432/c", program="compliance")
    assert banner is not None and "s3cret" not in banner
    assert "--db postgresql://app:PASSWORD@db:5432/c" in banner


def test_the_banner_of_a_memory_store_says_it_lives_in_the_server() -> None:
    with Platform.open("memory://") as platform:
        banner = first_run_banner(platform, "http://x", "memory://", program="compliance")
    assert banner is not None and "keys create" not in banner and "memory://" in banner


def test_the_banner_is_printed_only_on_an_empty_database(db: str) -> None:
    with platform_for(db) as platform:
        assert first_run_banner(platform, "http://x", store_url(db)) is not None
        assert first_run_banner(platform, "http://x", store_url(db)) is None


# --- maintenance ------------------------------------------------------------------------------


def test_maintenance_purges_idempotency_records_older_than_a_day(run, db: str, org: dict) -> None:
    owner = org["organizationId"]
    day_and_a_bit_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=25)
    with Platform.open(store_url(db), clock=FrozenClock(day_and_a_bit_ago)) as old:
        old.vendors.create(old.actor(owner), NewVendor(name="Old Co"), idempotency_key="old-1")
        old.vendors.create(old.actor(owner), NewVendor(name="Older Co"), idempotency_key="old-2")
    with platform_for(db) as platform:
        recent = platform.vendors.create(platform.actor(owner), NewVendor(name="New Co"), idempotency_key="new")

    assert run("maintenance", "--db", db) == (
        0,
        {
            "purgedIdempotencyRecords": 2,
            "purgedOutboxMessages": 0,  # nothing delivered them yet
            "policiesDueForReview": 0,
            "lapsedRiskAcceptances": 0,
            "reopenedTasks": 0,
            "expiredEvidence": 0,
            "expiringEvidence": 0,
            "builtEvidenceExports": 0,
            "automationRuns": 0,
            "integrationCheckRuns": 0,
            "analyzedTables": ["vendors", "audit_log"],
        },
        None,
    )
    assert run("maintenance", "--db", db) == (
        0,
        {
            "purgedIdempotencyRecords": 0,
            "purgedOutboxMessages": 0,
            "policiesDueForReview": 0,
            "lapsedRiskAcceptances": 0,
            "reopenedTasks": 0,
            "expiredEvidence": 0,
            "expiringEvidence": 0,
            "builtEvidenceExports": 0,
            "automationRuns": 0,
            "integrationCheckRuns": 0,
            "analyzedTables": [],
        },
        None,
    )
    with platform_for(db) as platform:  # the recent record still replays
        again = platform.vendors.create(platform.actor(owner), NewVendor(name="New Co"), idempotency_key="new")
    assert again.id == recent.id


def test_maintenance_sweeps_policies_past_their_review_date(run, db: str, org: dict) -> None:
    owner = org["organizationId"]
    long_ago = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
    with Platform.open(store_url(db), clock=FrozenClock(long_ago)) as old:
        policy = old.policies.create(old.actor(owner), NewPolicy(name="Monthly", content="x", frequency="monthly"))
        old.policies.publish(old.actor(owner), policy.id, PublishPolicy())
    code, report, _ = run("maintenance", "--db", db)
    assert code == 0 and report["policiesDueForReview"] == 1
    code, report, _ = run("maintenance", "--db", db)
    assert code == 0 and report["policiesDueForReview"] == 0
    with platform_for(db) as platform:
        assert platform.policies.get(platform.actor(owner), policy.id).status == "needs_review"


def test_maintenance_reports_an_areas_chore_by_its_registration_alone(run, db: str, org: dict, monkeypatch) -> None:
    from tally_area import WITH_A_JAM, WITH_TALLIES

    monkeypatch.setattr("compliance_core.platform.AREAS", WITH_TALLIES)
    code, report, err = run("maintenance", "--db", db)
    assert (code, err) == (0, None)
    assert report["countedOrganizations"] == 1 and report["purgedIdempotencyRecords"] == 0
    monkeypatch.setattr("compliance_core.platform.AREAS", WITH_A_JAM)
    code, report, err = run("maintenance", "--db", db)
    assert code == 1 and report["countedOrganizations"] == 1  # the others ran, and are reported
    assert err["error"]["code"] == "internal_error"
    assert err["error"]["details"] == {"failed": {"jammedTallies": "RuntimeError: the tally machine is jammed"}}


# --- serve --quiet ----------------------------------------------------------------------------


@pytest.mark.parametrize("argv, access_log", [([], True), (["--quiet"], False)])
def test_serve_quiet_turns_the_access_log_off(monkeypatch, db: str, argv, access_log) -> None:
    calls: list[dict] = []

    def serve_platform(url, host, port, workers, threads, **options) -> None:
        calls.append({"url": url, "host": host, "port": port, "workers": workers, "threads": threads, **options})

    monkeypatch.setattr(cli.serve, "serve_platform", serve_platform)
    assert main(["serve", "--db", db, "--port", "0", "--workers", "1", "--threads", "3", *argv]) == 0
    [call] = calls
    assert call["access_log"] is access_log
    assert (call["url"], call["port"], call["workers"], call["threads"]) == (store_url(db), 0, 1, 3)


def test_worker_needs_a_database_it_can_share(run, tmp_path: Path) -> None:
    code, _, err = run("worker", "--db", "memory://")
    assert code == 2 and err["error"]["details"]["field"] == "--db"
    code, _, err = run("worker", "--db", str(tmp_path / "missing.db"))
    assert code == 2 and "compliance init" in err["error"]["details"]["reason"]
    assert not (tmp_path / "missing.db").exists()
