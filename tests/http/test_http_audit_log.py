"""/v1/audit-log over HTTP: the trail of every write, per organization and per record, read by
Owners, Admins and Auditors, changed by nobody. Driven by the declared operations where it can be, so a
new area's creates are covered by registration alone."""

from __future__ import annotations

import copy

import pytest

from compliance_core.platform import Bootstrap
from compliance_http.openapi import openapi_document
from compliance_http.routes import default_endpoints
from http_support import Api, check_answer, error, with_records

ROOT = "/v1/audit-log"
CREATES = [e for e in default_endpoints() if e.operation.method in ("create", "bulk_create") and e.status == 201]
DOCUMENT = openapi_document()


def _entries(api: Api, query: str = "") -> list[dict]:
    """The first page's entries in the order they happened (the log lists newest first)."""
    result = api.get(ROOT, query=query)
    assert result.status_code == 200, result.text
    check_answer(DOCUMENT, ROOT, "GET", 200, result.json)
    return list(reversed(result.json["data"]))


@pytest.mark.parametrize("create", CREATES, ids=lambda e: e.operation.name)
def test_every_create_leaves_one_entry_naming_the_callers_key(api: Api, boot: Bootstrap, create) -> None:
    assert api.post("/v1/frameworks/iso-27001-2022/enable").status_code == 201  # a statement's example names it
    made = api.post(create.path, with_records(api, copy.deepcopy(dict(create.operation.example or {}))))
    assert made.status_code == 201, made.text
    record = made.json["data"][0] if create.operation.batch is not None else made.json
    [entry] = _entries(api, f"entityId={record['id']}")
    assert entry["action"].endswith(".created")
    assert (entry["actorType"], entry["actorId"], entry["actorRole"]) == ("api_key", boot.owner_key.key.id, "owner")
    assert (entry["organizationId"], entry["entityId"]) == (boot.organization.id, record["id"])
    assert all(set(change) == {"new"} for change in entry["changes"].values())


def test_a_records_history_with_old_and_new_values(api: Api) -> None:
    vendor = api.post("/v1/vendors", {"name": "Cloud Co", "criticality": "standard"}).json
    assert api.patch(f"/v1/vendors/{vendor['id']}", {"criticality": "critical", "name": "Cloud Co"}).status_code == 200
    assert api.post(f"/v1/vendors/{vendor['id']}/archive").status_code == 200
    history = _entries(api, f"entityType=vendor&entityId={vendor['id']}")
    assert [e["action"] for e in history] == ["vendor.created", "vendor.updated", "vendor.archived"]
    assert history[1]["changes"] == {"criticality": {"old": "standard", "new": "critical"}}
    assert history[2]["changes"]["archived"] == {"old": False, "new": True}
    one = api.get(f"{ROOT}/{history[1]['id']}")
    assert one.status_code == 200 and one.json == history[1]
    assert one.json["eventId"].startswith("evt_")


def test_filters_by_action_and_actor_and_pages(api: Api, as_role, boot: Bootstrap) -> None:
    admin = as_role("admin")
    api.post("/v1/vendors", {"name": "A"})
    admin.post("/v1/vendors", {"name": "B"})
    mine = _entries(api, f"actorId={boot.owner_key.key.id}")
    assert [e["action"] for e in mine] == ["vendor.created"]
    assert len(_entries(api, "action=vendor.created")) == 2
    page = api.get(ROOT, query="perPage=1&page=2").json
    assert page["meta"]["perPage"] == 1 and page["meta"]["page"] == 2 and len(page["data"]) == 1
    assert page["count"] == len(_entries(api, "perPage=200"))


def test_bootstrap_and_key_issue_are_in_the_trail(api: Api, boot: Bootstrap) -> None:
    actions = [(e["action"], e["actorType"]) for e in _entries(api)]
    assert actions[:2] == [("organization.created", "system"), ("api_key.created", "system")]


def test_auditors_read_it_employees_and_contractors_do_not(as_role) -> None:
    assert as_role("auditor").get(ROOT).status_code == 200
    for role in ("employee", "contractor"):
        details = error(as_role(role).get(ROOT), 403, "forbidden")
        assert details == {"action": "audit_log:read", "role": role}


def test_nobody_can_change_an_entry(api: Api) -> None:
    entry = _entries(api)[0]
    for method in ("PATCH", "PUT", "DELETE", "POST"):
        result = api.request(method, f"{ROOT}/{entry['id']}", body={"action": "x"})
        assert result.status_code == 405, (method, result.text)
    assert api.request("POST", ROOT, body={"action": "x"}).status_code == 405
    assert api.get(f"{ROOT}/{entry['id']}").json == entry


def test_bad_filters_and_unknown_ids(api: Api, other: Api) -> None:
    error(api.get(ROOT, query="entityKind=vendor"), 400, "validation_error")
    error(api.get(f"{ROOT}/aud_missing"), 404, "not_found")
    theirs = _entries(other)[0]
    error(api.get(f"{ROOT}/{theirs['id']}"), 404, "not_found")
