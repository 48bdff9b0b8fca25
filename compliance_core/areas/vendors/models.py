"""What the vendor register stores and answers: the vendor and its sub-processors, its commands
and filter, its table, actions and events, and the rules across its fields."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, MANAGERS, Action
from ...kernel.records import Filter, Records
from ...kernel.scales import Impact, Likelihood, rated_filter, rating
from ...kernel.validation import (
    EEA_COUNTRIES,
    UNSET,
    Checked,
    Patch,
    Unset,
    blank_text,
    boolean,
    choice,
    country,
    date,
    optional_choice,
    optional_country,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    text,
    url,
    wire_name,
)

__all__ = [
    "VendorCategory",
    "VENDOR_CATEGORY_SUGGESTIONS",
    "DEFAULT_VENDOR_CATEGORY",
    "MAX_CATEGORY_LENGTH",
    "VendorStatus",
    "Criticality",
    "DpaStatus",
    "TransferMechanism",
    "PurposeCategory",
    "SubProcessor",
    "MAX_SUB_PROCESSORS",
    "Vendor",
    "NewVendor",
    "VendorPatch",
    "VendorFilter",
    "VENDORS",
    "VENDOR_READ",
    "VENDOR_CREATE",
    "VENDOR_UPDATE",
    "VENDOR_ARCHIVE",
    "VendorCreated",
    "VendorUpdated",
    "VendorArchived",
    "VendorRestored",
    "EVENTS",
    "check_vendor",
    "shaped",
]


class VendorCategory(enum.StrEnum):
    """Suggested vendor categories, nothing more: the spec makes ``category`` free-form text, so
    ``Vendor.category`` is a ``str`` (1 to 100 characters) and any text is accepted ("Cloud
    hosting"). These values are what the OpenAPI description suggests; a member still works
    wherever a category string does."""

    CLOUD = "cloud"
    INFRASTRUCTURE = "infrastructure"
    SOFTWARE_AS_A_SERVICE = "software_as_a_service"
    FINANCE = "finance"
    MARKETING = "marketing"
    SALES = "sales"
    HR = "hr"
    OTHER = "other"


VENDOR_CATEGORY_SUGGESTIONS: tuple[str, ...] = tuple(member.value for member in VendorCategory)
"""Categories to suggest (documentation, forms); ``category`` accepts any text."""
DEFAULT_VENDOR_CATEGORY = "other"
MAX_CATEGORY_LENGTH = 100


class VendorStatus(enum.StrEnum):
    NOT_ASSESSED = "not_assessed"
    IN_PROGRESS = "in_progress"
    ASSESSED = "assessed"


class Criticality(enum.StrEnum):
    CRITICAL = "critical"
    IMPORTANT = "important"
    STANDARD = "standard"


class DpaStatus(enum.StrEnum):
    SIGNED = "signed"
    PENDING = "pending"
    NOT_REQUIRED = "not_required"


class TransferMechanism(enum.StrEnum):
    """GDPR Chapter V grounds for sending personal data outside the EEA (Art. 45-46, 49)."""

    ADEQUACY_DECISION = "adequacy_decision"
    STANDARD_CONTRACTUAL_CLAUSES = "standard_contractual_clauses"
    BINDING_CORPORATE_RULES = "binding_corporate_rules"
    CODE_OF_CONDUCT = "code_of_conduct"
    CERTIFICATION = "certification"
    DEROGATION = "derogation"


class PurposeCategory(enum.StrEnum):
    HOSTING = "hosting"
    DATA_STORAGE = "data_storage"
    ANALYTICS = "analytics"
    COMMUNICATIONS = "communications"
    PAYMENTS = "payments"
    CUSTOMER_SUPPORT = "customer_support"
    SECURITY = "security"
    SOFTWARE_DEVELOPMENT = "software_development"
    MARKETING = "marketing"
    HUMAN_RESOURCES = "human_resources"
    OTHER = "other"


# Input is checked by _SubProcessorInput on the way in, so reading stored entries never
# re-runs validation.
@attrs.frozen(kw_only=True)
class SubProcessor:
    """A company the vendor engages to process personal data for the organization (GDPR Art. 28(2))."""

    name: str
    country: str
    purpose_category: PurposeCategory


@attrs.frozen(kw_only=True)
class _SubProcessorInput:
    name: str = attrs.field(converter=text(255))
    country: str = attrs.field(converter=country)
    purpose_category: PurposeCategory = attrs.field(converter=choice(PurposeCategory))


MAX_SUB_PROCESSORS = 200
_SUB_FIELDS = frozenset(f.name for f in attrs.fields(SubProcessor))


def _sub_processor(where: str, item: Any) -> SubProcessor:
    if isinstance(item, SubProcessor):
        item = attrs.asdict(item, recurse=False)
    if not isinstance(item, Mapping):
        raise ValidationError.field(where, item, "must be an object with name, country, purposeCategory")
    for key in item:
        if key not in _SUB_FIELDS:
            raise ValidationError.field(f"{where}.{wire_name(str(key))}", item[key], "unknown field")
    for key in sorted(_SUB_FIELDS - set(item)):
        raise ValidationError.field(f"{where}.{wire_name(key)}", None, "is required")
    try:
        checked = _SubProcessorInput(**item)
    except ValidationError as error:
        details = {**error.details, "field": f"{where}.{error.details['field']}"}  # value already bounded
        raise ValidationError(f"{details['field']}: {details['reason']}", details) from None
    return SubProcessor(name=checked.name, country=checked.country, purpose_category=checked.purpose_category)


def _sub_processors(value: Any, field: attrs.Attribute[Any]) -> Any:
    if value is UNSET:
        return value
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ValidationError.field("subProcessors", value, "must be a list")
    if len(value) > MAX_SUB_PROCESSORS:
        raise ValidationError.field("subProcessors", len(value), f"at most {MAX_SUB_PROCESSORS} entries")
    return tuple(_sub_processor(f"subProcessors[{index}]", item) for index, item in enumerate(value))


sub_processors = register_schema(
    Checked(_sub_processors, takes_field=True),
    {
        "type": "array",
        "maxItems": MAX_SUB_PROCESSORS,
        "nullable": True,
        "description": "null means none",
        "items": _SubProcessorInput,
    },
)


@attrs.frozen(kw_only=True)
class Vendor:
    id: str
    organization_id: str
    name: str
    description: str = ""
    category: str = DEFAULT_VENDOR_CATEGORY
    """Free text (see ``VENDOR_CATEGORY_SUGGESTIONS``)."""
    status: VendorStatus = VendorStatus.NOT_ASSESSED
    inherent_probability: Likelihood | None = None
    """None until rated: an unassessed vendor is not the lowest risk."""
    inherent_impact: Impact | None = None
    residual_probability: Likelihood | None = None
    residual_impact: Impact | None = None
    rated: bool = False
    """Whether the inherent probability and impact are both rated; set on every write
    (``shaped``), so a list can find the unassessed vendors (``rated=false``)."""
    website: str | None = None
    assignee_id: str | None = None
    country: str | None = None
    criticality: Criticality = Criticality.STANDARD
    ict_service: bool = False
    processes_personal_data: bool = False
    is_sub_processor: bool = False
    dpa_status: DpaStatus | None = None
    dpa_signed_at: dt.date | None = None
    dpa_url: str | None = None
    last_reviewed_at: dt.date | None = None
    next_review_due: dt.date | None = None
    sub_processors: tuple[SubProcessor, ...] = ()
    transfer_mechanism: TransferMechanism | None = None
    archived: bool = False
    archived_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


_CATEGORY = register_schema(
    text(MAX_CATEGORY_LENGTH),
    {"description": f"free text; suggested values: {', '.join(VENDOR_CATEGORY_SUGGESTIONS)}"},
)


@attrs.frozen(kw_only=True)
class NewVendor:
    name: str = attrs.field(converter=text(255))
    description: str = attrs.field(default="", converter=blank_text(5000))
    category: str = attrs.field(default=DEFAULT_VENDOR_CATEGORY, converter=_CATEGORY)
    status: VendorStatus = attrs.field(default=VendorStatus.NOT_ASSESSED, converter=choice(VendorStatus))
    inherent_probability: Likelihood | None = attrs.field(default=None, converter=rating(Likelihood))
    inherent_impact: Impact | None = attrs.field(default=None, converter=rating(Impact))
    residual_probability: Likelihood | None = attrs.field(default=None, converter=rating(Likelihood))
    residual_impact: Impact | None = attrs.field(default=None, converter=rating(Impact))
    website: str | None = attrs.field(default=None, converter=url)
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    country: str | None = attrs.field(default=None, converter=optional_country)
    criticality: Criticality = attrs.field(default=Criticality.STANDARD, converter=choice(Criticality))
    ict_service: bool = attrs.field(default=False, converter=boolean)
    processes_personal_data: bool = attrs.field(default=False, converter=boolean)
    is_sub_processor: bool = attrs.field(default=False, converter=boolean)
    dpa_status: DpaStatus | None = attrs.field(default=None, converter=optional_choice(DpaStatus))
    dpa_signed_at: dt.date | None = attrs.field(default=None, converter=date)
    dpa_url: str | None = attrs.field(default=None, converter=url)
    last_reviewed_at: dt.date | None = attrs.field(default=None, converter=date)
    next_review_due: dt.date | None = attrs.field(default=None, converter=date)
    sub_processors: tuple[SubProcessor, ...] = attrs.field(default=(), converter=sub_processors)
    transfer_mechanism: TransferMechanism | None = attrs.field(
        default=None, converter=optional_choice(TransferMechanism)
    )


_NEW = attrs.fields(NewVendor)


@attrs.frozen(kw_only=True)
class VendorPatch(Patch):
    """A partial update: only fields that are not UNSET change; nullable ones accept None."""

    name: str | Unset = patch_field(_NEW.name.converter)
    description: str | None | Unset = patch_field(_NEW.description.converter)
    category: str | Unset = patch_field(_NEW.category.converter)
    status: VendorStatus | Unset = patch_field(_NEW.status.converter)
    inherent_probability: Likelihood | None | Unset = patch_field(_NEW.inherent_probability.converter)
    inherent_impact: Impact | None | Unset = patch_field(_NEW.inherent_impact.converter)
    residual_probability: Likelihood | None | Unset = patch_field(_NEW.residual_probability.converter)
    residual_impact: Impact | None | Unset = patch_field(_NEW.residual_impact.converter)
    website: str | None | Unset = patch_field(_NEW.website.converter)
    assignee_id: str | None | Unset = patch_field(_NEW.assignee_id.converter)
    country: str | None | Unset = patch_field(_NEW.country.converter)
    criticality: Criticality | Unset = patch_field(_NEW.criticality.converter)
    ict_service: bool | Unset = patch_field(_NEW.ict_service.converter)
    processes_personal_data: bool | Unset = patch_field(_NEW.processes_personal_data.converter)
    is_sub_processor: bool | Unset = patch_field(_NEW.is_sub_processor.converter)
    dpa_status: DpaStatus | None | Unset = patch_field(_NEW.dpa_status.converter)
    dpa_signed_at: dt.date | None | Unset = patch_field(_NEW.dpa_signed_at.converter)
    dpa_url: str | None | Unset = patch_field(_NEW.dpa_url.converter)
    last_reviewed_at: dt.date | None | Unset = patch_field(_NEW.last_reviewed_at.converter)
    next_review_due: dt.date | None | Unset = patch_field(_NEW.next_review_due.converter)
    sub_processors: tuple[SubProcessor, ...] | Unset = patch_field(_NEW.sub_processors.converter)
    transfer_mechanism: TransferMechanism | None | Unset = patch_field(_NEW.transfer_mechanism.converter)


@attrs.frozen(kw_only=True)
class VendorFilter(Filter):
    """List filters, combined with AND; None means "any". ``archived`` defaults to the live
    register; pass True for the archive."""

    criticality: Criticality | None = attrs.field(default=None, converter=optional_choice(Criticality))
    processes_personal_data: bool | None = None
    ict_service: bool | None = None
    category: str | None = attrs.field(default=None, converter=optional_text(MAX_CATEGORY_LENGTH))
    """Exact match on the stored (trimmed) text."""
    country: str | None = attrs.field(default=None, converter=optional_country)
    dpa_status: DpaStatus | None = attrs.field(default=None, converter=optional_choice(DpaStatus))
    status: VendorStatus | None = attrs.field(default=None, converter=optional_choice(VendorStatus))
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    rated: bool | None = attrs.field(
        default=None,
        converter=rated_filter(
            "false: the unassessed vendors (inherentProbability or inherentImpact not rated); true: the rated ones"
        ),
    )
    archived: bool = False


VENDORS: Records[Vendor, VendorFilter] = Records(
    "vendors",
    model=Vendor,
    filters=VendorFilter,
    kind="vendor",
    prefix="vnd",
    partition="archived",
    cached=True,
    facets=("criticality", "processes_personal_data", "ict_service", "category", "country", "dpa_status", "status"),
    facet_pairs=(("criticality", "processes_personal_data"),),
    searchable=("name", "description", "website"),
    sortable=("name", "category", "country", "next_review_due", "last_reviewed_at", "updated_at"),
    ranged="next_review_due",
    indexed=("name", "next_review_due"),
)
VENDOR_READ = Action("vendor:read", EVERYONE)
VENDOR_CREATE = Action("vendor:create", MANAGERS)
VENDOR_UPDATE = Action("vendor:update", MANAGERS)
VENDOR_ARCHIVE = Action("vendor:archive", MANAGERS)


class VendorCreated(Event):
    """A vendor was added to the register."""

    type = "vendor.created"


class VendorUpdated(Event):
    """Some of a vendor's fields changed; ``previous`` holds their old values."""

    type = "vendor.updated"


class VendorArchived(Event):
    """A vendor left the register for the archive."""

    type = "vendor.archived"


class VendorRestored(Event):
    """An archived vendor came back to the register."""

    type = "vendor.restored"


EVENTS = (VendorCreated, VendorUpdated, VendorArchived, VendorRestored)


def shaped(vendor: Vendor) -> Vendor:
    """The vendor with ``rated`` worked out from its inherent ratings."""
    rated = vendor.inherent_probability is not None and vendor.inherent_impact is not None
    return vendor if vendor.rated == rated else attrs.evolve(vendor, rated=rated)


def check_vendor(vendor: Vendor) -> None:
    """Rules across fields, checked on the record as it will be stored (after a PATCH too)."""
    if (
        vendor.processes_personal_data
        and vendor.country is not None
        and vendor.country not in EEA_COUNTRIES
        and vendor.transfer_mechanism is None
    ):
        raise ValidationError.field(
            "transferMechanism",
            None,
            f"is required for a vendor outside the EEA ({vendor.country}) that processes personal data",
        )
    if (
        vendor.last_reviewed_at is not None
        and vendor.next_review_due is not None
        and vendor.next_review_due < vendor.last_reviewed_at
    ):
        raise ValidationError.field(
            "nextReviewDue", vendor.next_review_due.isoformat(), "must not be before lastReviewedAt"
        )
