"""/v1/context over HTTP: answers and their snapshots (the generic suites cover the rest)."""

from __future__ import annotations

from compliance_core import Platform, Role
from compliance_core.areas.people import NewPerson
from http_support import Api, error, issue_key

ROOT = "/v1/context"
REMOTE = {"question": "How does your team work?", "answer": "Fully remote.", "tags": ["people", "people", "ops"]}


def test_answers_and_the_snapshot_each_write_keeps(api: Api, clock) -> None:
    created = api.post(ROOT, REMOTE)
    assert created.status_code == 201, created.text
    assert created.json["tags"] == ["people", "ops"]
    one = f"{ROOT}/{created.json['id']}"
    assert api.get(one).json == created.json
    clock.advance(seconds=1)
    assert api.patch(one, {"answer": "Remote, with an office."}).json["answer"] == "Remote, with an office."
    clock.advance(seconds=1)
    assert api.request("DELETE", one).status_code == 204
    error(api.get(one), 404, "not_found")
    assert api.get(ROOT).json["count"] == 0

    snapshots = api.get(f"{ROOT}/snapshots").json
    assert snapshots["count"] == 3
    removed, changed, added = snapshots["data"]
    assert [c["kind"] for s in snapshots["data"] for c in s["changes"]] == ["removed", "changed", "added"]
    assert changed["changes"] == [
        {
            "contextId": created.json["id"],
            "kind": "changed",
            "question": REMOTE["question"],
            "answer": "Remote, with an office.",
            "tags": ["people", "ops"],
            "previous": {"question": None, "answer": "Fully remote.", "tags": None},
        }
    ]
    assert [added["answers"], changed["answers"], removed["answers"]] == [1, 1, 0]
    assert added["changedBy"].startswith("key_") and added["createdAt"] < changed["createdAt"]
    assert api.get(f"{ROOT}/snapshots/{changed['id']}").json == changed


def test_a_snapshot_names_the_person_behind_the_key(api: Api, platform: Platform, boot) -> None:
    operator = platform.actor(boot.organization.id)
    ada = platform.people.create(operator, NewPerson(name="Ada Admin", email="ada@acme.example", role=Role.ADMIN))
    as_ada = Api(api.app, issue_key(platform, boot.organization.id, "admin", person_id=ada.id))
    assert as_ada.post(ROOT, REMOTE).status_code == 201
    (snapshot,) = api.get(f"{ROOT}/snapshots").json["data"]
    assert (snapshot["changedByPersonId"], snapshot["changedByPersonName"]) == (ada.id, "Ada Admin")
    assert snapshot["keyIssuedBy"] is not None


def test_refusals_name_the_field_and_write_nothing(api: Api, as_role) -> None:
    error(api.post(ROOT, {**REMOTE, "tags": [f"t{n}" for n in range(21)]}), 400, "validation_error", "tags")
    error(api.post(ROOT, {**REMOTE, "tags": ["ok", "t" * 51]}), 400, "validation_error", "tags[1]")
    error(api.post(ROOT, {**REMOTE, "question": "q" * 1001}), 400, "validation_error", "question")
    error(api.patch(f"{ROOT}/ctx_nope", {"answer": "x"}), 404, "not_found")
    error(as_role("auditor").post(ROOT, REMOTE), 403, "forbidden")
    assert api.get(f"{ROOT}/snapshots").json["count"] == 0
    assert as_role("employee").get(ROOT).status_code == 200


def test_a_replayed_create_keeps_one_snapshot(api: Api) -> None:
    key = {"Idempotency-Key": "context-1"}
    first = api.post(ROOT, REMOTE, headers=key)
    again = api.post(ROOT, REMOTE, headers=key)
    assert (first.status_code, again.json["id"]) == (201, first.json["id"])
    assert api.get(f"{ROOT}/snapshots").json["count"] == 1


def test_every_operation_is_tagged_context(api: Api) -> None:
    paths = api.get("/v1/openapi.json").json["paths"]
    tags = {
        tag
        for path, operations in paths.items()
        if path.startswith(ROOT)
        for operation in operations.values()
        for tag in operation.get("tags", [])
    }
    assert tags == {"Context"}


def test_one_update_adds_changes_and_removes_and_refuses_unknown_ids(api: Api) -> None:
    first, second = (api.post(ROOT, REMOTE).json for _ in range(2))
    body = {
        "add": [{"question": "Where is data hosted?", "answer": "In the EU."}],
        "change": [{"id": first["id"], "tags": []}],
        "remove": [second["id"]],
    }
    details = error(api.patch(ROOT, {**body, "remove": ["ctx_nope"]}), 400, "validation_error", "remove[0]")
    assert details["value"] == "ctx_nope"
    error(api.patch(ROOT, {"change": [{"id": "ctx_nope"}]}), 400, "validation_error", "change[0].id")
    error(api.patch(ROOT, {"change": [{"answer": "x"}]}), 400, "validation_error", "change[0].id")
    assert api.get(ROOT).json["count"] == 2

    snapshot = api.patch(ROOT, body)
    assert snapshot.status_code == 200, snapshot.text
    assert [c["kind"] for c in snapshot.json["changes"]] == ["added", "changed", "removed"]
    assert snapshot.json["changes"][1]["previous"]["tags"] == ["people", "ops"]
    assert api.get(f"{ROOT}/snapshots").json["data"][0]["id"] == snapshot.json["id"]
    assert api.get(f"{ROOT}/snapshots/{snapshot.json['id']}").json["changes"] == snapshot.json["changes"]
    assert sorted(e["question"] for e in api.get(ROOT).json["data"]) == [REMOTE["question"], "Where is data hosted?"]
