"""Policies: the records (policy, frozen version, acknowledgement), the bodies callers send, the
tables, the permissions and the events.

A policy holds its working Markdown ``content``; publishing freezes that content into a numbered
``PolicyVersion`` that is never changed again (there is no update path for versions), and every
published version asks its signers anew: an ``Acknowledgement`` names one person and one version.
"""

from __future__ import annotations

import calendar
import datetime as dt
import enum
import re
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, MANAGERS, READERS, Action, Role
from ...kernel.records import Filter, Records
from ...kernel.validation import (
    UNSET,
    Checked,
    Patch,
    Unset,
    blank_text,
    boolean,
    date,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    text,
)

__all__ = [
    "PolicyStatus",
    "Frequency",
    "Policy",
    "PolicyVersion",
    "Acknowledgement",
    "SignerStatus",
    "PolicySignOff",
    "NewPolicy",
    "PolicyPatch",
    "PolicyFilter",
    "PolicyVersionFilter",
    "AcknowledgementFilter",
    "PublishPolicy",
    "SubmitForApproval",
    "ApprovePolicy",
    "RejectPolicy",
    "POLICIES",
    "POLICY_VERSIONS",
    "ACKNOWLEDGEMENTS",
    "STAFF",
    "POLICY_READ",
    "POLICY_AUDIT",
    "POLICY_WRITE",
    "POLICY_APPROVE",
    "POLICY_ACKNOWLEDGE",
    "EVENTS",
    "PolicyCreated",
    "PolicyUpdated",
    "PolicyPublished",
    "PolicySubmittedForApproval",
    "PolicyApproved",
    "PolicyRejected",
    "PolicyReviewDue",
    "PolicyArchived",
    "PolicyRestored",
    "PolicyAcknowledged",
    "next_review",
]

MAX_CONTENT = 100_000
"""Characters of Markdown a policy holds."""
MAX_SIGNERS = 1000
MAX_CONTROLS = 500


class PolicyStatus(enum.StrEnum):
    DRAFT = "draft"
    PUBLISHED = "published"
    NEEDS_REVIEW = "needs_review"
    """Overdue for its periodic review, or awaiting an approver's decision."""


class Frequency(enum.StrEnum):
    """How often a published policy is reviewed (the reference's values)."""

    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    YEARLY = "yearly"


_MONTHS = {Frequency.MONTHLY: 1, Frequency.QUARTERLY: 3, Frequency.YEARLY: 12}


def next_review(start: dt.date, frequency: Frequency | None) -> dt.date | None:
    """``start`` plus one period, the day clamped to the month's end (31 Jan + 1 month = 28 Feb)."""
    if frequency is None:
        return None
    months = start.month - 1 + _MONTHS[frequency]
    year, month = start.year + months // 12, months % 12 + 1
    return dt.date(year, month, min(start.day, calendar.monthrange(year, month)[1]))


@attrs.frozen(kw_only=True)
class Policy:
    id: str
    organization_id: str
    name: str
    description: str = ""
    content: str = ""
    """The working Markdown; what the next publication freezes."""
    status: PolicyStatus = PolicyStatus.DRAFT
    frequency: Frequency | None = None
    is_required_to_sign: bool = True
    """Whether the people must acknowledge each published version."""
    signer_ids: tuple[str, ...] = ()
    """Who must sign: these people, or every active person when empty."""
    assignee_id: str | None = None
    """The person who owns the policy's upkeep."""
    control_ids: tuple[str, ...] = ()
    """The controls the policy serves (many to many), controls of the organization; a policy in
    force implements them."""
    approver_id: str | None = None
    """The person named to decide the pending approval (None: any manager decides)."""
    pending_approval: bool = False
    review_comment: str | None = None
    """The comment of the last submission, approval or rejection."""
    current_version_id: str | None = None
    version: int = 0
    """The number of the version in force (0: never published)."""
    in_force: bool = False
    """A published version is in force (what staff see)."""
    last_published_at: dt.datetime | None = None
    last_approved_at: dt.datetime | None = None
    next_review_date: dt.date | None = None
    archived: bool = False
    archived_at: dt.datetime | None = None
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class PolicyVersion:
    """A published text, frozen: stores keep it and nothing ever updates it."""

    id: str
    organization_id: str
    policy_id: str
    version: int
    name: str
    content: str
    changelog: str | None = None
    published_by: str
    """The principal (key or user) that published it."""
    published_at: dt.datetime
    approved_by: str | None = None
    """The person, or the managing principal, whose approval published it (None: published directly)."""
    approved_at: dt.datetime | None = None
    approval_comment: str | None = None
    approval_key_issued_by: str | None = None
    """Who issued the key that approved it (the issuing principal): an approval through a key
    someone else bound to the approver shows who could have made it."""
    approval_key_issued_by_person_id: str | None = None
    """The person that issuing key acted as, if any."""
    approved_by_person_name: str | None = None
    """The name of the person who approved, when a person did (``approved_by`` is then their
    id), as it was when they approved."""
    created_at: dt.datetime
    updated_at: dt.datetime
    """Equal to ``created_at``: a version is never updated."""


@attrs.frozen(kw_only=True)
class Acknowledgement:
    """One person's sign-off of one policy version."""

    id: str
    organization_id: str
    policy_id: str
    version_id: str
    version: int
    person_id: str
    person_name: str | None = None
    """The signer's name when they signed (None: signed before names were recorded)."""
    acknowledged_by: str
    """The principal (key or user) that signed for the person."""
    key_issued_by: str | None = None
    """Who issued the signing key (the issuing principal; None: no key signed, or an older
    signature): a key a manager bound to the person signs, and the signature shows it."""
    key_issued_by_person_id: str | None = None
    """The person that issuing key acted as, if any."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class SignerStatus:
    """One signer of the version in force; a signature names the key that made it and who
    issued that key, so a signature made through a key someone else issued shows it."""

    person_id: str
    person_name: str | None = None
    """The signer's name (None: no longer a person of the organization)."""
    acknowledged_at: dt.datetime | None = None
    acknowledged_by: str | None = None
    """The key (or user) that signed, as the signer."""
    key_issued_by: str | None = None
    key_issued_by_person_id: str | None = None
    key_issued_by_person_name: str | None = None
    """The name of the person who issued the signing key, if a person did."""


@attrs.frozen(kw_only=True)
class PolicySignOff:
    """Who must sign the version in force and who has."""

    policy_id: str
    version_id: str | None
    version: int
    required: int
    acknowledged: int
    signers: tuple[SignerStatus, ...] = ()


_ID = re.compile(r"^[a-z]+(_[a-z]+)?_[0-9a-zA-Z]+$")


def _id_list(wire: str, example: str, limit: int, description: str) -> Checked:
    """A list of record ids (null: none), duplicates dropped, each named by its index when bad."""

    def check(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is UNSET:
            return value
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)):
            raise ValidationError.field(wire, value, "must be a list of identifiers")
        if len(value) > limit:
            raise ValidationError.field(wire, len(value), f"at most {limit} entries")
        seen: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str) or not _ID.match(item) or len(item) > 64:
                raise ValidationError.field(f"{wire}[{index}]", item, f"must be an identifier such as {example}")
            if item not in seen:
                seen.append(item)
        return tuple(seen)

    return register_schema(
        Checked(check, takes_field=True),
        {
            "type": "array",
            "maxItems": limit,
            "nullable": True,
            "description": description,
            "items": {"type": "string", "pattern": _ID.pattern, "maxLength": 64},
        },
    )


signer_ids = _id_list("signerIds", "mem_...", MAX_SIGNERS, "person ids; empty or null: every active person signs")
control_ids = _id_list(
    "controlIds", "ctl_...", MAX_CONTROLS, "the controls the policy serves, controls of the organization"
)


@attrs.frozen(kw_only=True)
class NewPolicy:
    name: str = attrs.field(converter=text(255))
    description: str = attrs.field(default="", converter=blank_text(5000))
    content: str = attrs.field(default="", converter=blank_text(MAX_CONTENT))
    frequency: Frequency | None = attrs.field(default=None, converter=optional_choice(Frequency))
    is_required_to_sign: bool = attrs.field(default=True, converter=boolean)
    signer_ids: tuple[str, ...] = attrs.field(default=(), converter=signer_ids)
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    control_ids: tuple[str, ...] = attrs.field(default=(), converter=control_ids)


_NEW = attrs.fields(NewPolicy)


@attrs.frozen(kw_only=True)
class PolicyPatch(Patch):
    """Published text never changes here: editing ``content`` edits the working copy, and the
    next publication freezes it."""

    name: str | Unset = patch_field(_NEW.name.converter)
    description: str | None | Unset = patch_field(_NEW.description.converter)
    content: str | None | Unset = patch_field(_NEW.content.converter)
    frequency: Frequency | None | Unset = patch_field(_NEW.frequency.converter)
    is_required_to_sign: bool | Unset = patch_field(_NEW.is_required_to_sign.converter)
    signer_ids: tuple[str, ...] | Unset = patch_field(_NEW.signer_ids.converter)
    assignee_id: str | None | Unset = patch_field(_NEW.assignee_id.converter)
    control_ids: tuple[str, ...] | Unset = patch_field(_NEW.control_ids.converter)
    next_review_date: dt.date | None | Unset = patch_field(date)


@attrs.frozen(kw_only=True)
class PolicyFilter(Filter):
    """List filters, combined with AND; ``archived`` defaults to the live policies."""

    status: PolicyStatus | None = attrs.field(default=None, converter=optional_choice(PolicyStatus))
    in_force: bool | None = None
    assignee_id: str | None = attrs.field(default=None, converter=optional_id)
    archived: bool = False


@attrs.frozen(kw_only=True)
class PolicyVersionFilter(Filter):
    """The store's filter of versions; the service sets it from the path."""

    policy_id: str | None = None


@attrs.frozen(kw_only=True)
class AcknowledgementFilter(Filter):
    policy_id: str | None = attrs.field(default=None, converter=optional_id)
    version_id: str | None = attrs.field(default=None, converter=optional_id)
    person_id: str | None = attrs.field(default=None, converter=optional_id)


@attrs.frozen(kw_only=True)
class PublishPolicy:
    changelog: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class SubmitForApproval:
    approver_id: str | None = attrs.field(default=None, converter=optional_id)
    """The person who decides; None leaves the decision to any manager."""
    comment: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class ApprovePolicy:
    comment: str | None = attrs.field(default=None, converter=optional_text(2000))


@attrs.frozen(kw_only=True)
class RejectPolicy:
    comment: str = attrs.field(converter=text(2000))
    """Why: a rejection always says what to change."""


POLICIES: Records[Policy, PolicyFilter] = Records(
    "policies",
    model=Policy,
    filters=PolicyFilter,
    kind="policy",
    prefix="pol",
    partition="archived",
    facets=("status", "in_force"),
    searchable=("name", "description"),
    sortable=("name", "version", "next_review_date", "last_published_at", "updated_at"),
    ranged="next_review_date",
)
POLICY_VERSIONS: Records[PolicyVersion, PolicyVersionFilter] = Records(
    "policy_versions",
    model=PolicyVersion,
    filters=PolicyVersionFilter,
    kind="policy version",
    prefix="pv",
    newest_first=True,
    searchable=("name", "changelog"),
    sortable=("version", "published_at"),
    ranged="published_at",
)
ACKNOWLEDGEMENTS: Records[Acknowledgement, AcknowledgementFilter] = Records(
    "policy_acknowledgements",
    model=Acknowledgement,
    filters=AcknowledgementFilter,
    kind="policy acknowledgement",
    prefix="pak",
    searchable=("person_name",),
    sortable=("version", "person_name"),
    ranged="created_at",
)

STAFF = frozenset({Role.EMPLOYEE, Role.CONTRACTOR})
"""Roles whose keys act as a person: they see the policies in force and their own sign-offs."""
POLICY_READ = Action("policy:read", EVERYONE)
POLICY_AUDIT = Action("policy_audit:read", READERS)
"""Versions and everyone's sign-off status: managers and auditors."""
POLICY_WRITE = Action("policy:write", MANAGERS)
POLICY_APPROVE = Action("policy:approve", MANAGERS)
POLICY_ACKNOWLEDGE = Action("policy:acknowledge", STAFF | MANAGERS)
"""Any key bound to a person signs what the policy asks that person to sign: staff, and an
owner or admin with their own key."""
"""Signing is done as a person: staff keys always act as one."""


class PolicyCreated(Event):
    """A policy was created (a draft: nothing is in force until it is published)."""

    type = "policy.created"


class PolicyUpdated(Event):
    """A policy's working copy or settings changed (a version in force never changes)."""

    type = "policy.updated"


class PolicyPublished(Event):
    """The working copy was frozen as a new version and put in force; every signer is asked again."""

    type = "policy.published"


class PolicySubmittedForApproval(Event):
    """The working copy was submitted to an approver (or any manager)."""

    type = "policy.submitted_for_approval"


class PolicyApproved(Event):
    """The submitted working copy was approved and published as a new version."""

    type = "policy.approved"


class PolicyRejected(Event):
    """The submitted working copy was rejected, with the approver's comment."""

    type = "policy.rejected"


class PolicyReviewDue(Event):
    """The review sweep found the policy past its next review date."""

    type = "policy.needs_review"


class PolicyArchived(Event):
    """The policy was taken out of force."""

    type = "policy.archived"


class PolicyRestored(Event):
    """An archived policy was brought back."""

    type = "policy.restored"


class PolicyAcknowledged(Event):
    """A person signed the version in force (the subject is the ``Acknowledgement``)."""

    type = "policy.acknowledged"


EVENTS: tuple[type[Event], ...] = (
    PolicyCreated,
    PolicyUpdated,
    PolicyPublished,
    PolicySubmittedForApproval,
    PolicyApproved,
    PolicyRejected,
    PolicyReviewDue,
    PolicyArchived,
    PolicyRestored,
    PolicyAcknowledged,
)
