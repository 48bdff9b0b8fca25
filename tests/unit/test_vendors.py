from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import UNSET, NotFound, PageRequest, ValidationError
from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import (
    VENDOR_CATEGORY_SUGGESTIONS,
    Criticality,
    DpaStatus,
    NewVendor,
    VendorFilter,
    VendorPatch,
)


def _invalid(field: str, value, **fields) -> None:
    with pytest.raises(ValidationError) as caught:
        NewVendor(**{"name": "Acme Hosting", **fields})
    assert caught.value.details["field"] == field
    assert caught.value.details["value"] == value
    assert caught.value.details["reason"]


@pytest.mark.parametrize(
    "fields, field, value",
    [
        ({"name": ""}, "name", ""),
        ({"name": 5}, "name", 5),
        ({"country": "XX"}, "country", "XX"),
        ({"country": "USA"}, "country", "USA"),
        ({"criticality": "huge"}, "criticality", "huge"),
        ({"dpa_status": "maybe"}, "dpaStatus", "maybe"),
        ({"category": ""}, "category", ""),
        ({"category": 5}, "category", 5),
        ({"status": "done"}, "status", "done"),
        ({"inherent_probability": "possibly"}, "inherentProbability", "possibly"),
        ({"residual_impact": 6}, "residualImpact", 6),
        ({"inherent_impact": True}, "inherentImpact", True),
        ({"inherent_probability": "2"}, "inherentProbability", "2"),
        ({"website": "ftp://files.example.com"}, "website", "ftp://files.example.com"),
        ({"website": "not a url"}, "website", "not a url"),
        ({"dpa_url": "javascript:alert(1)"}, "dpaUrl", "javascript:alert(1)"),
        ({"dpa_signed_at": "31/01/2026"}, "dpaSignedAt", "31/01/2026"),
        ({"next_review_due": "2026-13-01"}, "nextReviewDue", "2026-13-01"),
        ({"ict_service": "true"}, "ictService", "true"),
        ({"processes_personal_data": 1}, "processesPersonalData", 1),
        ({"transfer_mechanism": "handshake"}, "transferMechanism", "handshake"),
        ({"assignee_id": "Robert'); DROP TABLE"}, "assigneeId", "Robert'); DROP TABLE"),
    ],
)
def test_every_field_is_validated_with_its_wire_name(fields, field, value) -> None:
    _invalid(field, value, **fields)


@pytest.mark.parametrize(
    "entry, field, value",
    [
        ({"name": "S3", "country": "ZZ", "purpose_category": "hosting"}, "subProcessors[0].country", "ZZ"),
        ({"name": "S3", "country": "US", "purpose_category": "fun"}, "subProcessors[0].purposeCategory", "fun"),
        ({"name": "S3", "country": "US"}, "subProcessors[0].purposeCategory", None),
        ({"name": "S3", "country": "US", "purpose_category": "hosting", "extra": 1}, "subProcessors[0].extra", 1),
        ("S3", "subProcessors[0]", "S3"),
    ],
)
def test_sub_processor_entries_name_their_position(entry, field, value) -> None:
    _invalid(field, value, sub_processors=[entry])


def test_valid_vendor_is_normalised() -> None:
    vendor = NewVendor(
        name="  Cloud Co ",
        country="us",
        website="https://cloud.example.com",
        dpa_signed_at="2026-01-31",
        last_reviewed_at=dt.date(2026, 2, 1),
        criticality="critical",
        dpa_status="signed",
        sub_processors=[{"name": "Mail", "country": "de", "purpose_category": "communications"}],
    )
    assert vendor.name == "Cloud Co"
    assert vendor.country == "US"
    assert vendor.dpa_signed_at == dt.date(2026, 1, 31)
    assert vendor.last_reviewed_at == dt.date(2026, 2, 1)
    assert vendor.sub_processors[0].country == "DE"


def test_a_vendor_created_without_ratings_is_unassessed_and_ratings_take_numbers(platform, owner) -> None:
    unrated = platform.vendors.create(owner, NewVendor(name="Unrated"))
    ratings = (
        unrated.inherent_probability,
        unrated.inherent_impact,
        unrated.residual_probability,
        unrated.residual_impact,
    )
    assert ratings == (None, None, None, None) and not unrated.rated
    numbered = platform.vendors.create(owner, NewVendor(name="Numbered", inherent_probability=3, inherent_impact=5))
    assert (numbered.inherent_probability, numbered.inherent_impact, numbered.rated) == ("possible", "severe", True)
    assert {v.name for v in platform.vendors.list(owner, VendorFilter(rated=False)).items} == {"Unrated"}
    rated = platform.vendors.update(owner, unrated.id, VendorPatch(inherent_probability=1, inherent_impact="minor"))
    assert (rated.inherent_probability, rated.rated) == ("very_unlikely", True)
    assert platform.vendors.list(owner, VendorFilter(rated=False)).total == 0
    unrated_again = platform.vendors.update(owner, unrated.id, VendorPatch(inherent_impact=None))
    assert (unrated_again.inherent_impact, unrated_again.rated) == (None, False)
    assert {v.name for v in platform.vendors.list(owner, VendorFilter(rated=True)).items} == {"Numbered"}


def test_non_eea_personal_data_needs_a_transfer_mechanism(platform, owner) -> None:
    with pytest.raises(ValidationError) as caught:
        platform.vendors.create(owner, NewVendor(name="US Mail", country="US", processes_personal_data=True))
    assert caught.value.details["field"] == "transferMechanism"
    platform.vendors.create(owner, NewVendor(name="EU Mail", country="FR", processes_personal_data=True))
    ok = platform.vendors.create(
        owner,
        NewVendor(
            name="US Mail",
            country="US",
            processes_personal_data=True,
            transfer_mechanism="standard_contractual_clauses",
        ),
    )
    with pytest.raises(ValidationError):  # the rule holds after a PATCH too
        platform.vendors.update(owner, ok.id, VendorPatch(transfer_mechanism=None))
    assert platform.vendors.get(owner, ok.id).transfer_mechanism == "standard_contractual_clauses"


def test_review_due_cannot_precede_last_review(platform, owner) -> None:
    with pytest.raises(ValidationError) as caught:
        platform.vendors.create(owner, NewVendor(name="X", last_reviewed_at="2026-05-01", next_review_due="2026-04-01"))
    assert caught.value.details["field"] == "nextReviewDue"


def test_create_get_update_archive_restore(platform, owner, clock) -> None:
    vendor = platform.vendors.create(owner, NewVendor(name="Cloud Co", category="cloud"))
    assert platform.vendors.get(owner, vendor.id) == vendor
    assert vendor.created_at == vendor.updated_at == clock.now()
    clock.advance(minutes=5)
    updated = platform.vendors.update(
        owner, vendor.id, VendorPatch(criticality="critical", website=None, description=None)
    )
    assert updated.criticality is Criticality.CRITICAL
    assert updated.name == "Cloud Co" and updated.description == ""
    assert updated.updated_at == clock.now() and updated.created_at == vendor.created_at
    archived = platform.vendors.archive(owner, vendor.id)
    assert archived.archived and archived.archived_at == clock.now()
    assert platform.vendors.list(owner).total == 0
    assert [v.id for v in platform.vendors.list(owner, VendorFilter(archived=True)).items] == [vendor.id]
    assert platform.vendors.archive(owner, vendor.id) == archived  # archiving twice changes nothing
    restored = platform.vendors.restore(owner, vendor.id)
    assert not restored.archived and restored.archived_at is None
    assert platform.vendors.list(owner).total == 1


def test_patch_rejects_null_for_required_fields(platform, owner) -> None:
    with pytest.raises(ValidationError) as caught:
        VendorPatch(name=None)
    assert caught.value.details["field"] == "name"
    assert VendorPatch().changes() == {}
    assert VendorPatch(country=None).changes() == {"country": None}
    assert VendorPatch(name=UNSET).changes() == {}


def test_assignee_must_be_a_person_of_the_organization(platform, owner, other_org) -> None:
    stranger = platform.people.create(other_org, NewPerson(name="Eve", email="eve@globex.test"))
    with pytest.raises(ValidationError) as caught:
        platform.vendors.create(owner, NewVendor(name="X", assignee_id=stranger.id))
    assert caught.value.details == {
        "field": "assigneeId",
        "value": stranger.id,
        "reason": "is not a person in this organization",
    }
    colleague = platform.people.create(owner, NewPerson(name="Ann", email="ann@acme.test"))
    assert platform.vendors.create(owner, NewVendor(name="X", assignee_id=colleague.id)).assignee_id == colleague.id


def test_another_organizations_vendor_is_not_found(platform, owner, other_org) -> None:
    theirs = platform.vendors.create(other_org, NewVendor(name="Secret Vendor"))
    for call in (
        lambda: platform.vendors.get(owner, theirs.id),
        lambda: platform.vendors.update(owner, theirs.id, VendorPatch(name="Mine")),
        lambda: platform.vendors.archive(owner, theirs.id),
    ):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value == NotFound.resource("vendor", theirs.id)
    assert platform.vendors.get(other_org, theirs.id).name == "Secret Vendor"
    assert platform.vendors.list(owner).total == 0


vendor_fields = st.fixed_dictionaries(
    {
        "criticality": st.sampled_from(list(Criticality)),
        "category": st.sampled_from([*VENDOR_CATEGORY_SUGGESTIONS, "Cloud hosting"]),
        "country": st.sampled_from(["DE", "FR", "IE", "CH"]),
        "dpa_status": st.sampled_from([None, *DpaStatus]),
        "ict_service": st.booleans(),
        "processes_personal_data": st.booleans(),
        "archive": st.booleans(),
        "transfer_mechanism": st.just("standard_contractual_clauses"),  # CH is outside the EEA
    }
)
filters = st.fixed_dictionaries(
    {},
    optional={
        "criticality": st.sampled_from(list(Criticality)),
        "category": st.sampled_from([*VENDOR_CATEGORY_SUGGESTIONS, "Cloud hosting"]),
        "country": st.sampled_from(["DE", "FR", "CH"]),
        "dpa_status": st.sampled_from(list(DpaStatus)),
        "ict_service": st.booleans(),
        "processes_personal_data": st.booleans(),
        "archived": st.booleans(),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(vendor_fields, max_size=25), chosen=filters)
def test_filters_equal_the_and_of_each_filter_in_python(platform, rows, chosen) -> None:
    actor = platform.actor(platform.bootstrap("Filters Inc").organization.id)
    vendors = []
    for n, row in enumerate(rows):
        archive = row.pop("archive")
        vendor = platform.vendors.create(actor, NewVendor(name=f"V{n}", **row))
        vendors.append(platform.vendors.archive(actor, vendor.id) if archive else vendor)
    wanted = {"archived": False, **chosen}
    expected = [v.id for v in vendors if all(getattr(v, k) == want for k, want in wanted.items())]
    page = platform.vendors.list(actor, VendorFilter(**chosen), PageRequest(per_page=200))
    assert [v.id for v in page.items] == expected
    assert page.total == len(expected)
