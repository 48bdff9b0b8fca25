"""Guard rails on every operation, in core: the last Owner key, free-text vendor categories,
strict dates, visible names, bounded error echoes, idempotency purge, converter schemas and
the page bound."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import attrs
import pytest

from compliance_core import Conflict, NotFound, PageRequest, Role, ValidationError
from compliance_core.areas.api_keys import LAST_OWNER_KEY, NewApiKey
from compliance_core.areas.finding_templates import NewFindingTemplate
from compliance_core.areas.people import NewPerson, parse_members
from compliance_core.areas.vendors import (
    VENDOR_CATEGORY_SUGGESTIONS,
    NewVendor,
    VendorFilter,
    VendorPatch,
)
from compliance_core.kernel.chores import IDEMPOTENCY_PURGE
from compliance_core.kernel.errors import MAX_ECHO_CHARS, bounded
from compliance_core.kernel.pages import MAX_PAGE, MAX_PER_PAGE
from compliance_core.kernel.permissions import Role as RoleEnum
from compliance_core.kernel.validation import (
    COUNTRIES,
    blank_text,
    boolean,
    choice,
    country,
    date,
    email,
    integer,
    optional_choice,
    optional_country,
    optional_id,
    optional_text,
    page_schemas,
    register_schema,
    schema_of,
    text,
    timestamp,
    url,
)

# 1. The last active Owner key


def test_the_last_owner_key_cannot_revoke_itself(platform, boot, owner) -> None:
    key_id = boot.owner_key.key.id
    with pytest.raises(Conflict) as caught:
        platform.api_keys.revoke(owner, key_id)
    assert caught.value.message == LAST_OWNER_KEY
    assert "create another owner key first" in caught.value.message
    assert caught.value.details == {
        "field": "keyId",
        "value": key_id,
        "reason": "is the organization's last active owner key",
    }
    assert platform.api_keys.get(owner, key_id).revoked_at is None
    assert platform.access.admit(boot.owner_key.secret).actor.role is Role.OWNER


def test_an_owner_key_can_be_revoked_once_another_is_active(platform, boot, owner) -> None:
    second = platform.api_keys.create(owner, NewApiKey(name="second owner", role="owner"))
    revoked = platform.api_keys.revoke(owner, boot.owner_key.key.id)
    assert revoked.revoked_at is not None
    with pytest.raises(Conflict):
        platform.api_keys.revoke(owner, second.key.id)
    assert platform.api_keys.revoke(owner, boot.owner_key.key.id) == revoked  # already revoked: unchanged


def test_an_expired_owner_key_does_not_count_as_another_owner(platform, boot, owner, clock) -> None:
    expiring = platform.api_keys.create(
        owner, NewApiKey(name="temp owner", role="owner", expires_at=clock.now() + dt.timedelta(days=1))
    )
    clock.advance(days=2)
    with pytest.raises(Conflict):
        platform.api_keys.revoke(owner, boot.owner_key.key.id)
    assert platform.api_keys.revoke(owner, expiring.key.id).revoked_at == clock.now()  # not active itself


def test_other_keys_and_other_organizations_are_unaffected(platform, boot, owner, other_org) -> None:
    admin = platform.api_keys.create(owner, NewApiKey(name="admin", role="admin"))
    assert platform.api_keys.revoke(owner, admin.key.id).revoked_at is not None
    other_owner = platform.api_keys.create(other_org, NewApiKey(name="theirs", role="owner"))
    with pytest.raises(Conflict):  # the other organization's owner keys do not count here
        platform.api_keys.revoke(owner, boot.owner_key.key.id)
    assert platform.api_keys.revoke(other_org, other_owner.key.id).revoked_at is not None


# 2. Vendor category is free text


def test_vendor_category_is_free_text_with_suggestions(platform, owner) -> None:
    assert {"cloud", "other"} <= set(VENDOR_CATEGORY_SUGGESTIONS)
    assert NewVendor(name="A").category == "other"
    hosted = platform.vendors.create(owner, NewVendor(name="Hosting", category="  Cloud hosting "))
    assert hosted.category == "Cloud hosting" and type(hosted.category) is str
    platform.vendors.create(owner, NewVendor(name="Lower", category="cloud hosting"))
    platform.vendors.create(owner, NewVendor(name="Plain", category="cloud"))
    found = platform.vendors.list(owner, VendorFilter(category="Cloud hosting"))
    assert [v.name for v in found.items] == ["Hosting"]
    patched = platform.vendors.update(owner, hosted.id, VendorPatch(category="Edge CDN"))
    assert patched.category == "Edge CDN"
    assert platform.vendors.list(owner, VendorFilter(category="Cloud hosting")).total == 0


@pytest.mark.parametrize("value", ["", "   ", "x" * 101, 7, None])
def test_vendor_category_bounds(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        NewVendor(name="A", category=value)
    assert caught.value.details["field"] == "category"


# 3. Dates are YYYY-MM-DD only


@pytest.mark.parametrize(
    "value",
    [
        "2025-01-02T23:30:00-05:00",
        "2025-01-02T00:00:00Z",
        "2025-01-02 10:00",
        "20250102",
        "2025-1-2",
        "2025-02-30",
        " 2025-01-02",
        "２０２５-０１-０２",  # full-width digits
        dt.datetime(2025, 1, 2, 23, 30, tzinfo=dt.UTC),
        20250102,
    ],
)
def test_a_date_field_takes_only_a_calendar_date(value: Any) -> None:
    with pytest.raises(ValidationError) as caught:
        NewVendor(name="A", dpa_signed_at=value)
    assert caught.value.details["field"] == "dpaSignedAt"
    assert caught.value.details["reason"] == "must be a date in the form YYYY-MM-DD"


def test_a_date_field_keeps_a_date() -> None:
    assert NewVendor(name="A", dpa_signed_at="2025-01-02").dpa_signed_at == dt.date(2025, 1, 2)
    assert NewVendor(name="A", dpa_signed_at=dt.date(2025, 1, 2)).dpa_signed_at == dt.date(2025, 1, 2)
    assert NewVendor(name="A", dpa_signed_at=None).dpa_signed_at is None


# 4. Names need a visible character; no bidi overrides


INVISIBLE = [
    "\u200b",  # zero-width space
    "\u200c\u200d",  # ZWNJ, ZWJ
    "\u2060",  # word joiner
    "\ufeff",  # BOM
    "\u00ad",  # soft hyphen
    "\u200e\u200f",  # LRM, RLM
    "\u2061\u2062\u2063\u2064",  # invisible operators (Cf)
    "\u3164",  # Hangul filler
    "\u2800",  # blank Braille pattern
    "\ufe0f",  # variation selector
    "\U000e0041",  # tag letter (Cf)
    " \u200b \u00a0\u3000\u200b ",  # with spaces of every kind
]


@pytest.mark.parametrize("value", INVISIBLE)
def test_a_required_name_of_invisible_characters_is_refused(value: str) -> None:
    for make in (
        lambda: NewVendor(name=value),
        lambda: NewPerson(name=value, email="a@example.com"),
        lambda: NewFindingTemplate(category=value, title="t"),
    ):
        with pytest.raises(ValidationError) as caught:
            make()
        assert caught.value.details["reason"] in ("must contain a visible character", "must not be empty")
    with pytest.raises(ValidationError) as caught:
        NewVendor(name=value)
    if value.strip():
        assert caught.value.details["reason"] == "must contain a visible character"


@pytest.mark.parametrize(
    "value", ["\u202eexe.txt", "Acme\u202d", "a\u202ab", "\u2066Acme\u2069", "\u2067x", "x\u2068y", "x\u202cy"]
)
def test_bidi_embeddings_overrides_and_isolates_are_refused_in_names(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        NewVendor(name=value)
    assert caught.value.details["field"] == "name"
    assert "bidirectional" in caught.value.details["reason"]
    with pytest.raises(ValidationError):
        NewPerson(name="A", email="a@example.com", job_title=value)
    # Long-form prose keeps them: mixed-direction text uses isolates, and it names nothing.
    assert NewVendor(name="A", description=value).description == value.strip()


@pytest.mark.parametrize(
    "value",
    [
        "Café Ünïcode",
        "株式会社テスト",
        "🚀",
        "👩\u200d💻 Dev team",  # an emoji ZWJ sequence
        "Ελληνικά",
        "مرحبا\u200f",  # Arabic with a right-to-left mark
        "می\u200cخواهم",  # Persian with a ZWNJ
        "O'Brien & Søn",
        "x",
    ],
)
def test_visible_text_in_any_script_is_kept(value: str) -> None:
    assert NewVendor(name=value).name == value
    assert NewPerson(name=value, email="a@example.com").name == value


def test_optional_and_blank_text_may_still_be_empty() -> None:
    assert NewVendor(name="A", description="").description == ""
    assert NewPerson(name="A", email="a@example.com", job_title="").job_title == ""


# 5. Echoed values are bounded


def _nested(depth: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(depth):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def test_a_long_id_is_not_echoed_twice_in_full(platform, owner) -> None:
    long_id = "v" * 100_000
    with pytest.raises(NotFound) as caught:
        platform.vendors.get(owner, long_id)
    error = caught.value
    assert len(error.message) < 120 and error.message.endswith("… not found")
    assert error.details["id"] == "v" * MAX_ECHO_CHARS + "…"
    assert error.details["truncated"] is True
    assert len(json.dumps(error.details)) < 300
    short = NotFound.resource("vendor", "vnd_1")
    assert short.message == "vendor vnd_1 not found" and short.details == {"resource": "vendor", "id": "vnd_1"}


def test_validation_error_details_are_bounded() -> None:
    error = ValidationError.field("name", "x" * 100_000, "too long")
    assert error.details == {"field": "name", "value": "x" * 100 + "…", "reason": "too long", "truncated": True}
    small = ValidationError.field("name", "x", "bad")
    assert small.details == {"field": "name", "value": "x", "reason": "bad"}
    named = ValidationError.field("k" * 10_000, 1, "unknown field")
    assert len(named.details["field"]) == 101 and len(named.message) < 150


ECHOES: dict[str, Any] = {
    "1,000 deep": lambda: _nested(1000),
    "100,000 deep": lambda: _nested(100_000),
    "a million items": lambda: list(range(1_000_000)),
    "10,000 long keys": lambda: {str(n): "y" * 1000 for n in range(10_000)},
    "wide and deep": lambda: [{"a": ["b" * 10_000] * 1000}] * 1000,
    "5,000 digits": lambda: 10**5000,
    "beyond 64 bits": lambda: -(2**64),
    "bytes": lambda: b"\x00" * 10_000,
    "an object": object,
}


@pytest.mark.parametrize("kind", sorted(ECHOES))
def test_any_echoed_value_renders_small_without_recursion(kind: str) -> None:
    error = ValidationError.field("subProcessors", ECHOES[kind](), "must be a list")
    rendered = json.dumps(error.details, default=str)
    assert len(rendered) < 3000
    assert error.details["truncated"] is True


def test_bounded_keeps_small_values_as_they_are() -> None:
    for value in (None, True, 3, 2.5, "text", [1, "a"], {"a": [1, 2]}, dt.date(2026, 1, 1), Role.OWNER):
        assert bounded(value) == (value, False)
    assert bounded(list(range(20)))[0][-1] == "… 10 more"


def test_a_deep_sub_processor_entry_is_reported_bounded() -> None:
    with pytest.raises(ValidationError) as caught:
        NewVendor(name="A", sub_processors=[_nested(1000)])
    assert caught.value.details["field"] == "subProcessors[0]"
    json.dumps(caught.value.details)
    with pytest.raises(ValidationError) as caught:
        NewVendor(name="A", sub_processors=[{"name": "n" * 5000, "country": "DE", "purpose_category": "hosting"}])
    assert caught.value.details["field"] == "subProcessors[0].name"
    assert len(caught.value.details["value"]) == 101 and caught.value.details["truncated"] is True


def test_bulk_entry_errors_are_bounded() -> None:
    members = [{"name": "A", "email": "a@example.com", "k" * 5000: _nested(1000)}, _nested(1000)]
    with pytest.raises(ValidationError) as caught:
        parse_members(
            members, extra_errors=[{"index": 0, "field": "x", "value": "v" * 5000, "reason": "unknown field"}]
        )
    rendered = json.dumps(caught.value.details)
    assert len(rendered) < 3000
    assert all(len(str(e["field"] or "")) <= 101 for e in caught.value.details["errors"])


# 6. Idempotency purge (every store: tests/contract/test_guard_rails_store.py)


def test_purge_idempotency_drops_records_past_the_retention(platform, owner, clock) -> None:
    first = platform.vendors.create(owner, NewVendor(name="Once"), idempotency_key="k1")
    assert platform.run_chore(IDEMPOTENCY_PURGE) == 0
    clock.advance(hours=25)
    assert platform.run_chore(IDEMPOTENCY_PURGE) == 1
    again = platform.vendors.create(owner, NewVendor(name="Once"), idempotency_key="k1")
    assert again.id != first.id


# 7. schema_of


@pytest.mark.parametrize(
    ("converter", "expected"),
    [
        (text(100), {"type": "string", "minLength": 1, "maxLength": 100}),
        (text(50, min_length=3), {"type": "string", "minLength": 3, "maxLength": 50}),
        (optional_text(20), {"type": "string", "maxLength": 20, "nullable": True}),
        (blank_text(5000), {"type": "string", "maxLength": 5000, "nullable": True}),
        (boolean, {"type": "boolean"}),
        (integer(0, 10_000), {"type": "integer", "minimum": 0, "maximum": 10_000}),
        (choice(RoleEnum), {"type": "string", "enum": [r.value for r in RoleEnum]}),
        (optional_choice(RoleEnum), {"type": "string", "enum": [r.value for r in RoleEnum], "nullable": True}),
        (country, {"type": "string", "enum": sorted(COUNTRIES) + sorted(c.lower() for c in COUNTRIES)}),
        (
            optional_country,
            {"type": "string", "enum": sorted(COUNTRIES) + sorted(c.lower() for c in COUNTRIES), "nullable": True},
        ),
        (url, {"type": "string", "format": "uri", "maxLength": 2048, "nullable": True}),
        (email, {"type": "string", "format": "email", "maxLength": 254}),
        (date, {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "nullable": True}),
        (timestamp, {"type": "string", "format": "date-time", "nullable": True}),
        (optional_id, {"type": "string", "maxLength": 64, "nullable": True}),
    ],
)
def test_schema_of_reports_what_each_converter_enforces(converter: Any, expected: dict[str, Any]) -> None:
    schema = schema_of(converter)
    assert {key: schema[key] for key in expected} == expected
    assert set(schema) - set(expected) <= {"description", "pattern"}


def test_schema_of_text_describes_the_rules_no_keyword_expresses() -> None:
    required = schema_of(text(10))["description"]
    assert "no control characters" in required and "must contain a visible character" in required
    assert "bidirectional" in required
    assert "must contain a visible character" not in schema_of(optional_text(10))["description"]
    assert "bidirectional" not in schema_of(blank_text(10))["description"]
    assert "case-insensitive" in schema_of(choice(RoleEnum, fold_case=True))["description"]
    assert "ISO 3166-1 alpha-2" in schema_of(country)["description"]


def test_schema_patterns_agree_with_the_converters() -> None:
    @attrs.frozen
    class Probe:
        home: str | None = attrs.field(default=None, converter=url)
        land: str = attrs.field(default="DE", converter=country)
        ref: str | None = attrs.field(default=None, converter=optional_id)

    for good in ("https://a.example", "http://b.example/x", "HTTPS://C.EXAMPLE"):
        Probe(home=good)
        assert re.search(schema_of(url)["pattern"], good)
    for good in ("de", "FR"):
        Probe(land=good)
        assert good in schema_of(country)["enum"]
    with pytest.raises(ValidationError):
        Probe(land="dE")  # neither spelling the document lists
    assert "dE" not in schema_of(country)["enum"]
    Probe(ref="mem_abc123")
    assert re.search(schema_of(optional_id)["pattern"], "mem_abc123")


def test_schema_of_real_model_fields_and_unknown_converters() -> None:
    fields = attrs.fields(NewVendor)
    category = schema_of(fields.category.converter)
    assert category["maxLength"] == 100 and category["minLength"] == 1
    assert all(value in category["description"] for value in VENDOR_CATEGORY_SUGGESTIONS)
    assert schema_of(fields.sub_processors.converter)["maxItems"] == 200
    assert schema_of(attrs.fields(VendorPatch).name.converter) == schema_of(fields.name.converter)
    assert schema_of(attrs.fields(NewApiKey).role.converter)["enum"] == [r.value for r in RoleEnum]
    assert schema_of(lambda value: value) == {}
    assert schema_of(attrs.Converter(lambda value: value)) == {}
    assert schema_of(None) == {}
    assert schema_of("text") == {}


def test_schema_of_returns_a_copy_and_registration_appends() -> None:
    made = text(10)
    schema_of(made)["maxLength"] = 1
    assert schema_of(made)["maxLength"] == 10
    register_schema(made, {"description": "extra note"})
    assert schema_of(made)["description"].endswith("; extra note")


def test_page_schemas_state_the_page_bounds() -> None:
    schemas = page_schemas()
    assert schemas["page"] == {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1}
    assert schemas["perPage"] == {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": 50}
    assert schemas["cursor"]["type"] == "string" and schemas["cursor"]["maxLength"] == 200


# 8. An absurd page


def test_an_absurd_page_is_too_large() -> None:
    assert MAX_PAGE == 10_000_000
    assert PageRequest(page=MAX_PAGE).page == MAX_PAGE
    for page in (MAX_PAGE + 1, 1_000_000_000_000, 10**100):
        with pytest.raises(ValidationError) as caught:
            PageRequest(page=page)
        assert caught.value.details["field"] == "page"
        assert caught.value.details["reason"] == "is too large (at most 10000000)"
    with pytest.raises(ValidationError) as caught:
        PageRequest(per_page=201)
    assert caught.value.details["reason"] == "must be an integer from 1 to 200"
