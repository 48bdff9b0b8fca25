"""`compliance org create`: the command a reader of `org list` and `org set-plan` looks for to add
an organization (the audit log and the events name it as the operator's way to create one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compliance_core import Platform
from compliance_core.areas.organizations import Plan
from compliance_http.cli import main, store_url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object, object]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, json.loads(err) if err.strip() else None


def test_org_create_adds_an_organization_whose_owner_key_authenticates(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "orgs.db")
    code, first, _ = run(capsys, "init", "--db", db, "--org-name", "Acme")
    assert code == 0
    code, second, err = run(capsys, "org", "create", "--db", db, "--name", "Beta", "--plan", "starter")
    assert (code, err) == (0, None)
    assert isinstance(second, dict) and set(second) == {"organizationId", "apiKey"}
    assert isinstance(first, dict) and second["organizationId"] != first["organizationId"]
    with Platform.open(store_url(db)) as platform:
        admission = platform.access.admit(second["apiKey"])
        assert (admission.actor.organization_id, admission.actor.role) == (second["organizationId"], "owner")
        organization = platform.organizations.get(admission.actor)
    assert (organization.name, organization.plan) == ("Beta", Plan.STARTER)
    code, listed, _ = run(capsys, "org", "list", "--db", db)
    assert code == 0 and isinstance(listed, list)
    assert sorted(o["name"] for o in listed) == ["Acme", "Beta"]


def test_org_create_on_postgresql(capsys, postgres_url: str) -> None:
    code, first, _ = run(capsys, "init", "--db", postgres_url, "--org-name", "Acme")
    assert code == 0
    code, second, err = run(capsys, "org", "create", "--db", postgres_url, "--name", "Beta")
    assert (code, err) == (0, None) and isinstance(second, dict)
    code, listed, _ = run(capsys, "org", "list", "--db", postgres_url)
    assert code == 0 and isinstance(listed, list)
    assert sorted(o["name"] for o in listed) == ["Acme", "Beta"]


def test_org_create_needs_an_existing_database(capsys, tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    code, out, err = run(capsys, "org", "create", "--db", str(missing), "--name", "Beta")
    assert (code, out) == (2, None)
    assert isinstance(err, dict) and err["error"]["details"]["field"] == "--db"
    assert "compliance init" in err["error"]["message"]
    assert not missing.exists()


def test_org_create_takes_enterprise_limits(capsys) -> None:
    code, out, err = run(
        capsys, "org", "create", "--db", "memory://", "--name", "Big", "--plan", "enterprise", "--rpm", "100"
    )
    assert (code, err) == (0, None)
    assert isinstance(out, dict) and out["apiKey"].startswith("comp_")
