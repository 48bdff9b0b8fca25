"""PATCH /v1/organization in-process: profile, branding and settings."""

from __future__ import annotations

import pytest

from compliance_core import Conflict, Forbidden, Role, ValidationError
from compliance_core.areas.organizations import OrganizationPatch
from compliance_core.kernel.events import OUTBOX


def _events(platform, kind: str):
    with platform.uow.read() as session:
        return [m for m in session[OUTBOX].pending(1000) if m.type == kind]


def test_profile_branding_and_settings_change_and_are_announced(platform, owner, clock) -> None:
    clock.advance(hours=1)
    updated = platform.organizations.update(
        owner,
        OrganizationPatch(
            name="Acme Europe",
            slug="acme-eu",
            website="https://acme.example",
            logo="https://cdn.acme.example/logo.svg",
            primary_color="#0A7C5A",
            evidence_approval_enabled=True,
            device_agent_step_enabled=False,
        ),
    )
    assert (updated.name, updated.slug, updated.primary_color) == ("Acme Europe", "acme-eu", "#0a7c5a")
    assert updated.evidence_approval_enabled and not updated.device_agent_step_enabled
    assert updated.security_training_step_enabled and not updated.advanced_mode_enabled  # untouched defaults
    assert updated.updated_at == clock.now() and platform.organizations.get(owner) == updated
    [event] = _events(platform, "organization.updated")
    assert event.payload["previous"]["name"] == "Acme" and event.payload["previous"]["slug"] is None
    assert platform.organizations.update(owner, OrganizationPatch(name="Acme Europe")) == updated
    assert len(_events(platform, "organization.updated")) == 1  # nothing changed, nothing recorded
    cleared = platform.organizations.update(owner, OrganizationPatch(logo=None, slug=None))
    assert (cleared.logo, cleared.slug) == (None, None)


@pytest.mark.parametrize(
    ("fields", "field", "value"),
    [
        ({"slug": "Acme EU"}, "slug", "Acme EU"),
        ({"slug": "-acme"}, "slug", "-acme"),
        ({"primary_color": "green"}, "primaryColor", "green"),
        ({"website": "ftp://acme.example"}, "website", "ftp://acme.example"),
        ({"logo": "logo.png"}, "logo", "logo.png"),
        ({"logo": "https://\x0f\u00a9h"}, "logo", "https://\x0f\u00a9h"),
        ({"name": ""}, "name", ""),
        ({"advanced_mode_enabled": "yes"}, "advancedModeEnabled", "yes"),
    ],
)
def test_bad_values_name_the_field(fields, field, value) -> None:
    with pytest.raises(ValidationError) as caught:
        OrganizationPatch(**fields)
    assert (caught.value.details["field"], caught.value.details["value"]) == (field, value)


def test_a_slug_belongs_to_one_organization(platform, owner, other_org) -> None:
    platform.organizations.update(owner, OrganizationPatch(slug="acme"))
    with pytest.raises(Conflict) as caught:
        platform.organizations.update(other_org, OrganizationPatch(slug="acme"))
    assert caught.value.details["field"] == "slug"
    assert platform.organizations.update(owner, OrganizationPatch(slug="acme", name="Same slug")).slug == "acme"


def test_owners_and_admins_edit_the_profile_only_owners_change_the_plan(platform, actor_as) -> None:
    admin = actor_as(Role.ADMIN)
    assert platform.organizations.update(admin, OrganizationPatch(website="https://a.example")).website
    with pytest.raises(Forbidden):
        platform.organizations.set_plan(admin, "free")
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        with pytest.raises(Forbidden):
            platform.organizations.update(actor_as(role), OrganizationPatch(name="x"))
