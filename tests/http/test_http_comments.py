"""/v1/comments over HTTP: the area's own rules (the generic suites cover the rest)."""

from __future__ import annotations

from collections.abc import Callable

import falcon
import pytest

from compliance_core import Actor, Platform, Role
from compliance_core.areas.people import NewPerson
from compliance_core.platform import Bootstrap
from http_support import Api, error, issue_key

ROOT = "/v1/comments"


@pytest.fixture
def person_api(app: falcon.App, platform: Platform, boot: Bootstrap) -> Callable[[str, str], tuple[str, Api]]:
    """A new person with ``role`` and an API key bound to them."""
    owner = Actor(organization_id=boot.organization.id, role=Role.OWNER, auth_type="local")

    def make(role: str, name: str) -> tuple[str, Api]:
        email = f"{name.split()[0].lower()}@acme.example"
        person = platform.people.create(owner, NewPerson(name=name, email=email, role=role))
        return person.id, Api(app, issue_key(platform, boot.organization.id, role, person_id=person.id))

    return make


@pytest.fixture
def risk_id(api: Api) -> str:
    made = api.post("/v1/risks", {"title": "Backups are not restored in tests"})
    assert made.status_code == 201, made.text
    return str(made.json["id"])


def test_post_list_edit_and_delete_a_thread(api: Api, person_api, risk_id: str) -> None:
    ada_id, ada = person_api("employee", "Ada Lovelace")
    grace_id, grace = person_api("employee", "Grace Hopper")
    body = {"content": f"Restore test **overdue**, @[Grace]({grace_id})", "entityType": "risk", "entityId": risk_id}
    posted = ada.post(ROOT, body)
    assert posted.status_code == 201, posted.text
    comment = posted.json
    assert (comment["authorId"], comment["authorName"]) == (ada_id, "Ada Lovelace")
    assert comment["mentionedPersonIds"] == [grace_id]
    assert comment["contentHtml"] == (
        f'<p>Restore test <strong>overdue</strong>, <span class="mention" data-person-id="{grace_id}">@Grace</span></p>'
    )
    assert "postedBy" not in comment
    reply = grace.post(ROOT, {"content": "On it.", "entityType": "risk", "entityId": risk_id}).json
    listed = grace.get(ROOT, query=f"entityType=risk&entityId={risk_id}")
    assert listed.status_code == 200
    assert [c["id"] for c in listed.json["data"]] == [reply["id"], comment["id"]]  # newest first
    assert listed.json["count"] == listed.json["meta"]["total"] == 2

    one = f"{ROOT}/{comment['id']}"
    error(grace.request("PUT", one, body={"content": "Hijacked"}), 403, "forbidden", "authorId")
    edited = ada.request("PUT", one, body={"content": "Restore test done."})
    assert edited.status_code == 200, edited.text
    assert (edited.json["content"], edited.json["mentionedPersonIds"]) == ("Restore test done.", [])
    error(grace.request("DELETE", one), 403, "forbidden", "authorId")
    assert api.request("DELETE", f"{ROOT}/{reply['id']}").status_code == 204  # the owner deletes any
    assert ada.request("DELETE", one).status_code == 204
    assert api.get(ROOT).json["count"] == 0
    error(ada.request("DELETE", one), 404, "not_found")


def test_refusals_name_the_field(api: Api, risk_id: str) -> None:
    base = {"content": "Hi", "entityType": "risk", "entityId": risk_id}
    details = error(api.post(ROOT, {**base, "content": "x" * 2001}), 400, "validation_error", "content")
    assert "2000" in details["reason"]
    details = error(api.post(ROOT, {**base, "entityType": "spaceship"}), 400, "validation_error", "entityType")
    assert "risk" in details["reason"] and "vendor" in details["reason"]
    details = error(api.post(ROOT, {**base, "entityId": "rsk_nothing"}), 400, "validation_error", "entityId")
    assert details["value"] == "rsk_nothing"
    error(api.post(ROOT, {**base, "attachments": []}), 400, "validation_error", "attachments")
    error(api.get(ROOT, query="entityType=spaceship"), 400, "validation_error", "entityType")
    assert api.get(ROOT).json["count"] == 0


def test_html_is_escaped_over_the_wire(api: Api, risk_id: str) -> None:
    content = "<script>alert(1)</script> [x](javascript:alert(1))"
    made = api.post(ROOT, {"content": content, "entityType": "risk", "entityId": risk_id}).json
    assert made["content"] == content
    assert "<script>" not in made["contentHtml"] and "&lt;script&gt;" in made["contentHtml"]
    assert "href" not in made["contentHtml"]


def test_another_organizations_record_and_comment_look_missing(api: Api, other: Api, risk_id: str) -> None:
    made = api.post(ROOT, {"content": "Ours", "entityType": "risk", "entityId": risk_id}).json
    refused = other.post(ROOT, {"content": "Theirs", "entityType": "risk", "entityId": risk_id})
    error(refused, 400, "validation_error", "entityId")
    error(other.request("PUT", f"{ROOT}/{made['id']}", body={"content": "x"}), 404, "not_found")
    error(other.request("DELETE", f"{ROOT}/{made['id']}"), 404, "not_found")
    assert other.get(ROOT, query=f"entityType=risk&entityId={risk_id}").json["count"] == 0


def test_a_contractor_does_not_comment_on_controls(api: Api, person_api) -> None:
    control = api.post("/v1/controls", {"name": "Access review", "code": "AC-1"}).json
    _, carl = person_api("contractor", "Carl Contractor")
    refused = carl.post(ROOT, {"content": "Hi", "entityType": "control", "entityId": control["id"]})
    assert error(refused, 403, "forbidden") == {"action": "control:read", "role": "contractor"}
    auditor = person_api("auditor", "Audrey Auditor")[1]
    made = auditor.post(ROOT, {"content": "Evidence?", "entityType": "control", "entityId": control["id"]})
    assert made.status_code == 201, made.text
