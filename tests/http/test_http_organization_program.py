"""PATCH /v1/organization and POST /v1/organization/transfer-ownership/{personId} over HTTP."""

from __future__ import annotations

from typing import Any

from http_support import Api, error


def test_patch_changes_branding_and_settings(api: Api, as_role: Any) -> None:
    result = api.patch("/v1/organization", {"slug": "acme", "primaryColor": "#FF8800", "advancedModeEnabled": True})
    assert result.status_code == 200, result.text
    body = result.json
    assert (body["slug"], body["primaryColor"], body["advancedModeEnabled"]) == ("acme", "#ff8800", True)
    assert api.get("/v1/organization").json == body
    assert as_role("admin").patch("/v1/organization", {"website": "https://acme.example"}).status_code == 200
    error(as_role("auditor").patch("/v1/organization", {"name": "x"}), 403, "forbidden")
    error(api.patch("/v1/organization", {"primaryColor": "orange"}), 400, "validation_error", "primaryColor")
    error(api.patch("/v1/organization", {"plan": "free"}), 400, "validation_error", "plan")


def test_a_taken_slug_is_a_conflict(api: Api, other: Api) -> None:
    assert api.patch("/v1/organization", {"slug": "acme"}).status_code == 200
    error(other.patch("/v1/organization", {"slug": "acme"}), 409, "conflict", "slug")


def test_transfer_ownership(api: Api, as_role: Any, other: Api) -> None:
    ada = api.post("/v1/people", {"name": "Ada", "email": "ada@example.com"}).json
    bob = api.post("/v1/people", {"name": "Bob", "email": "bob@example.com", "role": "admin"}).json
    path = "/v1/organization/transfer-ownership/"
    error(as_role("admin").post(path + ada["id"]), 403, "forbidden")
    first = api.post(path + ada["id"])
    assert first.status_code == 200, first.text
    assert (first.json["previousOwnerId"], first.json["newOwnerId"]) == (None, ada["id"])
    assert first.json["roles"] == [{"personId": ada["id"], "previousRole": "employee", "role": "owner"}]
    assert first.json["organization"]["ownerPersonId"] == ada["id"]
    second = api.post(path + bob["id"]).json
    assert second["roles"] == [
        {"personId": ada["id"], "previousRole": "owner", "role": "admin"},
        {"personId": bob["id"], "previousRole": "admin", "role": "owner"},
    ]
    assert api.get(f"/v1/people/{ada['id']}").json["role"] == "admin"
    assert api.get(f"/v1/people/{bob['id']}").json["role"] == "owner"
    assert error(other.post(path + ada["id"]), 404, "not_found") == {"resource": "person", "id": ada["id"]}
    carl = api.post("/v1/people", {"name": "Carl", "email": "carl@example.com", "role": "contractor"}).json
    error(api.post(path + carl["id"]), 409, "conflict", "personId")
