"""/v1/policies over HTTP: the area's own rules and person-bound keys (the generic suites cover
the rest)."""

from __future__ import annotations

import io

import pypdf

from compliance_core import Platform
from compliance_core.platform import Bootstrap
from http_support import Api, error, issue_key

ROOT = "/v1/policies"
AUP = {
    "name": "Acceptable use",
    "content": "# Acceptable use\n\nUse devices for **work**.\n\n- Lock your screen",
    "frequency": "monthly",
}


def _person(api: Api, name: str, role: str = "employee") -> str:
    made = api.post("/v1/people", {"name": name, "email": f"{name.lower()}@acme.example", "role": role})
    assert made.status_code == 201, made.text
    return str(made.json["id"])


def _key(api: Api, role: str, person_id: str | None) -> Api:
    body = {"name": f"{role} key", "role": role}
    if person_id is not None:
        body["personId"] = person_id
    made = api.post("/v1/api-keys", body)
    assert made.status_code == 201, made.text
    assert made.json["personId"] == person_id
    return Api(api.app, made.json["key"])


def test_publish_acknowledge_and_republish(api: Api) -> None:
    ann = _person(api, "Ann")
    staff = _key(api, "employee", ann)
    policy = api.post(ROOT, AUP)
    assert policy.status_code == 201, policy.text
    one = f"{ROOT}/{policy.json['id']}"
    assert policy.json["status"] == "draft" and policy.json["signerIds"] == []
    error(staff.post(f"{one}/acknowledge"), 404, "not_found")
    published = api.post(f"{one}/versions/publish", {"changelog": "First"})
    assert published.status_code == 200, published.text
    assert (published.json["status"], published.json["version"], published.json["nextReviewDate"]) == (
        "published",
        1,
        "2026-02-01",
    )
    signed = staff.post(f"{one}/acknowledge")
    assert signed.status_code == 200, signed.text
    assert (signed.json["personId"], signed.json["version"]) == (ann, 1)
    assert api.get(f"{one}/sign-off").json["acknowledged"] == 1
    api.post(f"{one}/versions/publish", {})
    sign_off = api.get(f"{one}/sign-off").json
    assert (sign_off["version"], sign_off["required"], sign_off["acknowledged"]) == (2, 1, 0)
    assert sign_off["signers"] == [
        {
            "personId": ann,
            "personName": "Ann",
            "acknowledgedAt": None,
            "acknowledgedBy": None,
            "keyIssuedBy": None,
            "keyIssuedByPersonId": None,
            "keyIssuedByPersonName": None,
        }
    ]
    versions = api.get(f"{one}/versions").json
    assert [v["version"] for v in versions["data"]] == [2, 1] and versions["count"] == 2


def test_staff_keys_read_their_own_items(api: Api) -> None:
    ann, bob = _person(api, "Ann"), _person(api, "Bob", "contractor")
    as_ann, as_bob = _key(api, "employee", ann), _key(api, "contractor", bob)
    draft = api.post(ROOT, {**AUP, "name": "Draft"}).json
    live = api.post(ROOT, AUP).json
    api.post(f"{ROOT}/{live['id']}/versions/publish", {})
    assert [p["id"] for p in as_ann.get(ROOT).json["data"]] == [live["id"]]
    error(as_ann.get(f"{ROOT}/{draft['id']}"), 404, "not_found")
    for staff in (as_ann, as_bob):
        assert staff.post(f"{ROOT}/{live['id']}/acknowledge").status_code == 200
    error(as_bob.get("/v1/policy-acknowledgements", query=f"personId={ann}"), 403, "forbidden", "personId")
    mine = as_bob.get("/v1/policy-acknowledgements").json
    assert [a["personId"] for a in mine["data"]] == [bob]
    assert api.get("/v1/policy-acknowledgements", query=f"policyId={live['id']}").json["count"] == 2
    error(as_ann.get(f"{ROOT}/{live['id']}/sign-off"), 403, "forbidden")


def test_staff_keys_need_a_person_of_the_organization(api: Api, other: Api) -> None:
    error(api.post("/v1/api-keys", {"name": "x", "role": "employee"}), 400, "validation_error", "personId")
    details = error(
        api.post("/v1/api-keys", {"name": "x", "role": "contractor", "personId": "mem_nobody"}),
        400,
        "validation_error",
        "personId",
    )
    assert details["value"] == "mem_nobody"
    theirs = _person(other, "Zed")
    error(api.post("/v1/api-keys", {"name": "x", "role": "employee", "personId": theirs}), 400, "validation_error")
    admin = _key(api, "admin", None)
    assert admin.get(ROOT).status_code == 200


def test_only_the_person_asked_signs(api: Api) -> None:
    ann, bob = _person(api, "Ann"), _person(api, "Bob")
    policy = api.post(ROOT, {**AUP, "signerIds": [ann]}).json
    api.post(f"{ROOT}/{policy['id']}/versions/publish", {})
    error(_key(api, "employee", bob).post(f"{ROOT}/{policy['id']}/acknowledge"), 403, "forbidden", "personId")
    error(api.post(f"{ROOT}/{policy['id']}/acknowledge"), 403, "forbidden")
    details = error(api.post(ROOT, {**AUP, "signerIds": ["mem_nobody"]}), 400, "validation_error", "signerIds[0]")
    assert details["value"] == "mem_nobody"


def test_approval_by_the_named_approver_over_http(api: Api, platform: Platform, boot: Bootstrap) -> None:
    boss = _person(api, "Boss", "admin")
    as_boss = Api(api.app, issue_key(platform, boot.organization.id, "admin", person_id=boss))  # from the operator
    policy = api.post(ROOT, AUP).json
    one = f"{ROOT}/{policy['id']}"
    error(api.post(f"{one}/approve", {}), 409, "conflict", "pendingApproval")
    submitted = api.post(f"{one}/submit-for-approval", {"approverId": boss, "comment": "Please"})
    assert (submitted.json["status"], submitted.json["approverId"]) == ("needs_review", boss)
    error(api.post(f"{one}/approve", {}), 403, "forbidden", "approverId")
    error(as_boss.post(f"{one}/reject", {}), 400, "validation_error", "comment")
    approved = as_boss.post(f"{one}/approve", {"comment": "Fine"})
    assert approved.status_code == 200, approved.text
    assert (approved.json["status"], approved.json["version"]) == ("published", 1)
    version = api.get(f"{one}/versions").json["data"][0]
    assert (version["approvedBy"], version["approvalComment"]) == (boss, "Fine")


def test_pdf_downloads(api: Api) -> None:
    policy = api.post(ROOT, AUP).json
    one = f"{ROOT}/{policy['id']}"
    error(api.get(f"{one}/pdf"), 404, "not_found")
    api.post(f"{one}/versions/publish", {})
    single = api.get(f"{one}/pdf")
    assert single.status_code == 200 and single.headers["Content-Type"] == "application/pdf"
    assert "Acceptable use.pdf" in single.headers["Content-Disposition"]
    text = pypdf.PdfReader(io.BytesIO(single.content)).pages[0].extract_text()
    assert "Version 1" in text and "Lock your screen" in text and "Published: 2026-01-01" in text
    everything = api.get(f"{ROOT}/download-all")
    assert everything.status_code == 200
    assert "Lock your screen" in "".join(
        p.extract_text() for p in pypdf.PdfReader(io.BytesIO(everything.content)).pages
    )


def test_archived_policies_leave_the_register(api: Api) -> None:
    policy = api.post(ROOT, AUP).json
    archived = api.post(f"{ROOT}/{policy['id']}/archive")
    assert archived.json["archived"] is True
    assert api.get(ROOT).json["count"] == 0
    assert api.get(ROOT, query="archived=true").json["count"] == 1
    error(api.post(f"{ROOT}/{policy['id']}/versions/publish", {}), 409, "conflict", "archived")


def test_nobody_binds_a_key_to_an_owner_or_admin_but_their_own_key(
    api: Api, platform: Platform, boot: Bootstrap
) -> None:
    """Issue 16: the Owner key bound an admin key to another admin and approved as them; an admin
    bound a key to the Owner."""
    boss, owner_person = _person(api, "Boss", "admin"), _person(api, "Olga", "owner")
    for person in (boss, owner_person):
        details = error(
            api.post("/v1/api-keys", {"name": "as them", "role": "admin", "personId": person}),
            403,
            "forbidden",
            "personId",
        )
        assert details["value"] == person
    as_boss = Api(api.app, issue_key(platform, boot.organization.id, "admin", person_id=boss))
    mine = as_boss.post("/v1/api-keys", {"name": "Boss signs", "role": "employee", "personId": boss})
    assert mine.status_code == 201, mine.text
    assert (mine.json["selfIssued"], mine.json["issuedByPersonId"]) == (True, boss)
    error(as_boss.post("/v1/api-keys", {"name": "x", "role": "auditor", "personId": owner_person}), 403, "forbidden")


def test_a_signature_shows_who_issued_its_key(api: Api, platform: Platform, boot: Bootstrap) -> None:
    boss, ann = _person(api, "Boss", "admin"), _person(api, "Ann")
    boss_key = issue_key(platform, boot.organization.id, "admin", person_id=boss)
    as_boss = Api(api.app, boss_key)
    made = as_boss.post("/v1/api-keys", {"name": "Ann", "role": "employee", "personId": ann})
    assert (made.json["createdBy"], made.json["issuedByPersonId"], made.json["selfIssued"]) == (
        platform.access.admit(boss_key).actor.key_id,
        boss,
        False,
    )
    policy = api.post(ROOT, {**AUP, "signerIds": [ann]}).json
    api.post(f"{ROOT}/{policy['id']}/versions/publish", {})
    signed = Api(api.app, made.json["key"]).post(f"{ROOT}/{policy['id']}/acknowledge")
    assert (signed.json["keyIssuedBy"], signed.json["keyIssuedByPersonId"]) == (made.json["createdBy"], boss)
    (signer,) = api.get(f"{ROOT}/{policy['id']}/sign-off").json["signers"]
    assert (signer["acknowledgedBy"], signer["keyIssuedBy"], signer["keyIssuedByPersonId"]) == (
        made.json["id"],
        made.json["createdBy"],
        boss,
    )
    (entry,) = api.get("/v1/audit-log", query=f"entityId={signed.json['id']}").json["data"]
    assert (entry["keyIssuedBy"], entry["keyIssuedByPersonId"]) == (made.json["createdBy"], boss)


def test_a_deactivated_persons_key_answers_401(api: Api) -> None:
    ann = _person(api, "Ann")
    as_ann = _key(api, "employee", ann)
    assert as_ann.get(ROOT).status_code == 200
    assert api.patch(f"/v1/people/{ann}", {"isActive": False}).status_code == 200
    assert error(as_ann.get(ROOT), 401, "unauthorized") == {"reason": "person_inactive"}
    error(
        api.post("/v1/api-keys", {"name": "x", "role": "employee", "personId": ann}),
        400,
        "validation_error",
        "personId",
    )
    contractor = _person(api, "Cid", "contractor")
    details = error(
        api.post("/v1/api-keys", {"name": "x", "role": "employee", "personId": contractor}),
        400,
        "validation_error",
        "personId",
    )
    assert details["value"] == contractor
    employee = _person(api, "Eve")
    error(api.post("/v1/api-keys", {"name": "x", "role": "contractor", "personId": employee}), 400, "validation_error")


def test_an_archived_policy_is_not_in_force_and_staff_filters_are_refused(api: Api) -> None:
    as_ann = _key(api, "employee", _person(api, "Ann"))
    policy = api.post(ROOT, AUP).json
    api.post(f"{ROOT}/{policy['id']}/versions/publish", {})
    archived = api.post(f"{ROOT}/{policy['id']}/archive")
    assert (archived.json["archived"], archived.json["inForce"]) == (True, False)
    for query, field in (("inForce=false", "inForce"), ("archived=true", "archived")):
        assert error(as_ann.get(ROOT, query=query), 403, "forbidden", field)["field"] == field
    assert as_ann.get(ROOT, query="inForce=true").json["count"] == 0
    assert api.post(f"{ROOT}/{policy['id']}/restore").json["inForce"] is True


def test_people_not_key_ids(api: Api, platform: Platform, boot: Bootstrap) -> None:
    """Issue 18: an owner bound to a person signs what is asked of that person with the same
    key, and the sign-off, the approval, an acceptance and the audit log name the person behind
    a person-bound key beside the key itself."""
    org = boot.organization.id
    boss, ann = _person(api, "Boss", "owner"), _person(api, "Ann")
    boss_key = issue_key(platform, org, "owner", person_id=boss)
    boss_key_id = platform.access.admit(boss_key).actor.key_id
    as_boss = Api(api.app, boss_key)
    policy = api.post(ROOT, {**AUP, "signerIds": [boss, ann]}).json
    one = f"{ROOT}/{policy['id']}"
    assert api.post(f"{one}/submit-for-approval", {"approverId": boss}).status_code == 200
    assert as_boss.post(f"{one}/approve", {"comment": "Fine"}).status_code == 200
    version = api.get(f"{one}/versions").json["data"][0]
    assert (version["approvedBy"], version["approvedByPersonName"]) == (boss, "Boss")
    signed = as_boss.post(f"{one}/acknowledge")
    assert signed.status_code == 200, signed.text
    assert (signed.json["personId"], signed.json["personName"], signed.json["acknowledgedBy"]) == (
        boss,
        "Boss",
        boss_key_id,
    )
    listed = api.get("/v1/policy-acknowledgements", query=f"policyId={policy['id']}").json["data"]
    assert [(a["personId"], a["personName"]) for a in listed] == [(boss, "Boss")]
    signers = api.get(f"{one}/sign-off").json["signers"]
    assert [(s["personId"], s["personName"], s["acknowledgedBy"]) for s in signers] == [
        (boss, "Boss", boss_key_id),
        (ann, "Ann", None),
    ]
    (entry,) = api.get("/v1/audit-log", query=f"entityId={signed.json['id']}").json["data"]
    assert (entry["actorId"], entry["actorPersonId"], entry["actorPersonName"]) == (boss_key_id, boss, "Boss")
    risk = api.post("/v1/risks", {"title": "Laptop theft", "residualLikelihood": 2, "residualImpact": 2}).json
    accepted = as_boss.post(f"/v1/risks/{risk['id']}/accept", {"expiresOn": "2026-06-30"})
    assert accepted.status_code == 200, accepted.text
    assert (
        accepted.json["acceptedBy"],
        accepted.json["acceptedByPersonId"],
        accepted.json["acceptedByPersonName"],
    ) == (boss_key_id, boss, "Boss")
    other = api.post("/v1/risks", {"title": "Flood", "residualLikelihood": 2, "residualImpact": 2}).json
    by_key = api.post(f"/v1/risks/{other['id']}/accept", {"expiresOn": "2026-06-30"}).json
    assert (by_key["acceptedBy"], by_key["acceptedByPersonId"], by_key["acceptedByPersonName"]) == (
        boot.owner_key.key.id,
        None,
        None,
    )
