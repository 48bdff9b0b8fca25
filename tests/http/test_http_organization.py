"""/v1/organization and the X-Organization-Id header."""

from __future__ import annotations

from typing import Any

from compliance_core import Platform
from compliance_core.platform import Bootstrap
from compliance_http.app import create_app
from http_support import Api, error


def test_organization_shape(api: Api, boot: Bootstrap) -> None:
    result = api.get("/v1/organization")
    assert result.status_code == 200
    assert result.json == {
        "id": boot.organization.id,
        "name": "Acme",
        "plan": "professional",
        "slug": None,
        "website": None,
        "logo": None,
        "primaryColor": None,
        "evidenceApprovalEnabled": False,
        "deviceAgentStepEnabled": True,
        "securityTrainingStepEnabled": True,
        "advancedModeEnabled": False,
        "ownerPersonId": None,
        "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
        "rateLimit": {"requestsPerMinute": 300, "burst": 600},
    }


def test_enterprise_shows_negotiated_limits(platform: Platform) -> None:
    boot = platform.bootstrap("Big", "enterprise", rpm=5000)
    body = Api(create_app(platform), boot.owner_key.secret).get("/v1/organization").json
    assert body["plan"] == "enterprise"
    assert body["rateLimit"] == {"requestsPerMinute": 5000, "burst": 10000}


def test_matching_organization_header_is_accepted(api: Api, boot: Bootstrap) -> None:
    result = api.get("/v1/organization", headers={"X-Organization-Id": boot.organization.id})
    assert result.status_code == 200


def test_other_organization_header_is_403(api: Api, other: Api) -> None:
    other_id = other.get("/v1/organization").json["id"]
    details = error(
        api.get("/v1/vendors", headers={"X-Organization-Id": other_id}), 403, "forbidden", "X-Organization-Id"
    )
    assert details["value"] == other_id
    error(api.post("/v1/vendors", {"name": "x"}, headers={"X-Organization-Id": "org_nope"}), 403, "forbidden")
    assert api.get("/v1/vendors").json["count"] == 0


def test_every_role_reads_the_organization_but_contractors(as_role: Any) -> None:
    for role in ("admin", "auditor", "employee"):
        assert as_role(role).get("/v1/organization").status_code == 200
    error(as_role("contractor").get("/v1/organization"), 403, "forbidden")
