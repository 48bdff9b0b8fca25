"""/v1/api-keys over HTTP: issue once, list, revoke, usage; who may do what."""

from __future__ import annotations

from typing import Any

from compliance_core import FrozenClock
from http_support import Api, error

ROOT = "/v1/api-keys"
KEY_FIELDS = {
    "id",
    "organizationId",
    "name",
    "role",
    "prefix",
    "status",
    "createdAt",
    "expiresAt",
    "revokedAt",
    "lastUsedAt",
    "createdBy",
    "personId",
    "issuedByPersonId",
    "selfIssued",
}


def issue(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, {"name": "CI", "role": "auditor", **fields})
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def test_create_shows_the_key_once_and_it_works(api: Api) -> None:
    issued = issue(api)
    assert set(issued) == KEY_FIELDS | {"key"}
    assert issued["key"].startswith("comp_") and issued["key"].startswith(issued["prefix"])
    assert issued["role"] == "auditor" and issued["status"] == "active"
    fetched = api.get(f"{ROOT}/{issued['id']}").json
    assert set(fetched) == KEY_FIELDS
    assert "secretHash" not in fetched and "key" not in fetched
    assert Api(api.app, issued["key"]).get("/v1/vendors").status_code == 200


def test_display_role_names_are_accepted(api: Api) -> None:
    assert issue(api, role="Admin")["role"] == "admin"


def test_idempotent_replay_hides_the_secret(api: Api) -> None:
    headers = {"Idempotency-Key": "issue-ci-key"}
    first = api.post(ROOT, {"name": "CI", "role": "auditor"}, headers=headers)
    again = api.post(ROOT, {"name": "CI", "role": "auditor"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json["key"] is not None and again.json["key"] is None
    assert {k: v for k, v in first.json.items() if k != "key"} == {k: v for k, v in again.json.items() if k != "key"}
    assert api.get(ROOT).json["count"] == 2  # the owner key and this one


def test_list_is_paged(api: Api) -> None:
    for i in range(3):
        issue(api, name=f"key {i}")
    body = api.get(ROOT, query="perPage=2&page=2").json
    assert body["meta"] == {"total": 4, "page": 2, "perPage": 2, "totalPages": 2}
    assert all(set(key) == KEY_FIELDS for key in body["data"])
    error(api.get(ROOT, query="role=admin"), 400, "validation_error", "role")


def test_revoke_then_the_key_is_refused(api: Api, clock: FrozenClock) -> None:
    issued = issue(api)
    clock.advance(minutes=1)
    revoked = api.post(f"{ROOT}/{issued['id']}/revoke")
    assert revoked.status_code == 200
    assert revoked.json["status"] == "revoked" and revoked.json["revokedAt"] == "2026-01-01T00:01:00Z"
    assert api.post(f"{ROOT}/{issued['id']}/revoke").json == revoked.json
    details = error(Api(api.app, issued["key"]).get("/v1/vendors"), 401, "unauthorized")
    assert details == {"reason": "revoked"}


def test_expired_key_is_refused(api: Api, clock: FrozenClock) -> None:
    issued = issue(api, expiresAt="2026-01-02T00:00:00Z")
    assert issued["expiresAt"] == "2026-01-02T00:00:00Z"
    caller = Api(api.app, issued["key"])
    assert caller.get("/v1/vendors").status_code == 200
    clock.advance(days=1)
    assert error(caller.get("/v1/vendors"), 401, "unauthorized") == {"reason": "expired"}
    assert api.get(f"{ROOT}/{issued['id']}").json["status"] == "expired"


def test_expiry_must_be_a_future_timestamp(api: Api) -> None:
    error(
        api.post(ROOT, {"name": "x", "role": "auditor", "expiresAt": "2025-01-01T00:00:00Z"}),
        400,
        "validation_error",
        "expiresAt",
    )
    error(api.post(ROOT, {"name": "x", "role": "auditor", "expiresAt": "soon"}), 400, "validation_error", "expiresAt")
    error(api.post(ROOT, {"name": "x"}), 400, "validation_error", "role")


def test_usage_counts_requests_per_day(api: Api, clock: FrozenClock) -> None:
    issued = issue(api)
    caller = Api(api.app, issued["key"])
    for _ in range(3):
        caller.get("/v1/vendors")
    clock.advance(days=1)
    caller.get("/v1/vendors")
    usage = api.get(f"{ROOT}/{issued['id']}/usage").json
    assert usage == {
        "keyId": issued["id"],
        "lastUsedAt": "2026-01-02T00:00:00Z",
        "totalRequests": 4,
        "days": [{"date": "2026-01-01", "requests": 3}, {"date": "2026-01-02", "requests": 1}],
    }


def test_who_may_manage_keys(api: Api, as_role: Any) -> None:
    employee = as_role("employee")
    error(employee.post(ROOT, {"name": "x", "role": "employee"}), 403, "forbidden")
    error(employee.get(ROOT), 403, "forbidden")
    auditor = as_role("auditor")
    error(auditor.post(ROOT, {"name": "x", "role": "auditor"}), 403, "forbidden")
    admin = as_role("admin")
    details = error(admin.post(ROOT, {"name": "x", "role": "owner"}), 403, "forbidden")
    assert details == {"role": "owner", "actorRole": "admin"}
    assert admin.post(ROOT, {"name": "x", "role": "admin"}).status_code == 201
    owner_key = api.get(ROOT).json["data"][0]
    error(admin.post(f"{ROOT}/{owner_key['id']}/revoke"), 403, "forbidden")


def test_other_organizations_key_is_404(api: Api, other: Api) -> None:
    theirs = issue(other)
    for result in (
        api.get(f"{ROOT}/{theirs['id']}"),
        api.post(f"{ROOT}/{theirs['id']}/revoke"),
        api.get(f"{ROOT}/{theirs['id']}/usage"),
    ):
        assert error(result, 404, "not_found") == {"resource": "api key", "id": theirs["id"]}
    assert Api(api.app, theirs["key"]).get("/v1/vendors").status_code == 200
