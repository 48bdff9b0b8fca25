"""/v1/people over HTTP, including the all-or-nothing bulk create."""

from __future__ import annotations

from typing import Any

import pytest

from http_support import Api, error

ROOT = "/v1/people"


def person(i: int = 1, **fields: Any) -> dict[str, Any]:
    return {"name": f"Person {i}", "email": f"person{i}@example.com", **fields}


def create(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, person(**fields))
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def test_create_and_get(api: Api) -> None:
    created = create(api, jobTitle="CISO", department="it", role="Admin")
    assert created["id"].startswith("mem_")
    assert created["email"] == "person1@example.com"
    assert created["role"] == "admin" and created["department"] == "it"
    assert created["jobTitle"] == "CISO" and created["isActive"] is True
    assert api.get(f"{ROOT}/{created['id']}").json == created


def test_list_filters(api: Api) -> None:
    create(api, i=1, role="admin", department="it")
    create(api, i=2, department="hr", isActive=False)
    create(api, i=3, department="it")
    assert api.get(ROOT).json["count"] == 3
    names = lambda q: {p["name"] for p in api.get(ROOT, query=q).json["data"]}  # noqa: E731
    assert names("role=admin") == {"Person 1"}
    assert names("department=it") == {"Person 1", "Person 3"}
    assert names("isActive=false") == {"Person 2"}
    assert names("department=it&role=employee") == {"Person 3"}
    error(api.get(ROOT, query="isActive=0"), 400, "validation_error", "isActive")
    error(api.get(ROOT, query="role=boss"), 400, "validation_error", "role")


def test_duplicate_email_is_409(api: Api) -> None:
    create(api)
    details = error(api.post(ROOT, person(name="Someone else")), 409, "conflict", "email")
    assert details["value"] == "person1@example.com"


def test_patch(api: Api) -> None:
    created = create(api, jobTitle="Dev")
    result = api.patch(f"{ROOT}/{created['id']}", {"isActive": False, "jobTitle": None})
    assert result.status_code == 200, result.text
    assert result.json["isActive"] is False and result.json["jobTitle"] is None
    assert result.json["email"] == created["email"]
    error(api.patch(f"{ROOT}/{created['id']}", {"isActive": "no"}), 400, "validation_error", "isActive")
    error(api.patch(f"{ROOT}/{created['id']}", {"is_active": False}), 400, "validation_error", "is_active")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "A"}, "email"),
        (person(email="not-an-email"), "email"),
        (person(role="king"), "role"),
        (person(name=""), "name"),
        (person(extra=1), "extra"),
    ],
)
def test_create_rejects_bad_fields(api: Api, body: dict[str, Any], field: str) -> None:
    error(api.post(ROOT, body), 400, "validation_error", field)


def test_admin_cannot_create_an_owner(as_role: Any) -> None:
    admin = as_role("admin")
    details = error(admin.post(ROOT, person(role="owner")), 403, "forbidden")
    assert details["role"] == "owner"
    assert admin.post(ROOT, person(role="admin")).status_code == 201


def test_bulk_creates_all(api: Api) -> None:
    result = api.post(f"{ROOT}/bulk", {"members": [person(i) for i in range(5)]})
    assert result.status_code == 201, result.text
    assert result.json["count"] == 5
    assert [p["email"] for p in result.json["data"]] == [f"person{i}@example.com" for i in range(5)]
    assert api.get(ROOT).json["count"] == 5


def test_bulk_is_all_or_nothing_and_lists_each_bad_entry(api: Api) -> None:
    members = [person(0), person(1, email="nope"), person(2), person(3, isActive="yes"), person(0)]
    details = error(api.post(f"{ROOT}/bulk", {"members": members}), 400, "validation_error", "members")
    assert [(e["index"], e["field"]) for e in details["errors"]] == [(1, "email"), (3, "isActive"), (4, "email")]
    assert details["errors"][0]["value"] == "nope"
    assert api.get(ROOT).json["count"] == 0


def test_bulk_names_unknown_keys_of_entries(api: Api) -> None:
    members = [person(0), person(1, team="red"), person(2, job_title="x")]
    details = error(api.post(f"{ROOT}/bulk", {"members": members}), 400, "validation_error", "members")
    assert details["errors"] == [
        {"index": 1, "field": "team", "value": "red", "reason": "unknown field"},
        {"index": 2, "field": "job_title", "value": "x", "reason": "unknown field"},
    ]
    assert api.get(ROOT).json["count"] == 0


def test_bulk_lists_unknown_keys_with_the_other_errors_in_order(api: Api) -> None:
    members = [person(0, email="bad"), person(1, team="red"), person(2, isActive=1)]
    details = error(api.post(f"{ROOT}/bulk", {"members": members}), 400, "validation_error", "members")
    assert [(e["index"], e["field"]) for e in details["errors"]] == [(0, "email"), (1, "team"), (2, "isActive")]


def test_bulk_conflict_on_existing_email(api: Api) -> None:
    create(api, i=1)
    details = error(api.post(f"{ROOT}/bulk", {"members": [person(0), person(1)]}), 409, "conflict", "members")
    assert details["errors"][0]["index"] == 1
    assert api.get(ROOT).json["count"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "members"),
        ({"members": []}, "members"),
        ({"members": "everyone"}, "members"),
        ({"members": [person()], "notify": True}, "notify"),
        ({"members": [person(i) for i in range(1001)]}, "members"),
    ],
)
def test_bulk_body_shape(api: Api, body: dict[str, Any], field: str) -> None:
    error(api.post(f"{ROOT}/bulk", body), 400, "validation_error", field)


def test_bulk_entry_that_is_not_an_object(api: Api) -> None:
    details = error(api.post(f"{ROOT}/bulk", {"members": [person(), 7]}), 400, "validation_error", "members")
    assert details["errors"][0]["index"] == 1


def test_bulk_of_a_thousand(api: Api) -> None:
    result = api.post(f"{ROOT}/bulk", {"members": [person(i) for i in range(1000)]})
    assert result.status_code == 201 and result.json["count"] == 1000


def test_other_organizations_person_is_404(api: Api, other: Api) -> None:
    theirs = create(other)
    error(api.get(f"{ROOT}/{theirs['id']}"), 404, "not_found")
    error(api.patch(f"{ROOT}/{theirs['id']}", {"name": "x"}), 404, "not_found")


def test_roles_on_people(as_role: Any) -> None:
    employee = as_role("employee")
    assert employee.get(ROOT).status_code == 200
    error(employee.post(ROOT, person()), 403, "forbidden")
    error(employee.post(f"{ROOT}/bulk", {"members": [person()]}), 403, "forbidden")
    contractor = as_role("contractor")
    error(contractor.get(ROOT), 403, "forbidden")
