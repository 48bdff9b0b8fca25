"""The organization's side of the frameworks: which frameworks it enabled, its controls, which
requirement each control serves (the working statement of applicability), what serves each
control, and the mappings it imported.

One control may serve requirements of several frameworks (enabling ISO 27001 after SOC 2 reuses
the controls a mapping says are equal), so the link from a requirement to a control is a row of
its own, ``ControlRequirement``. That row is also the working statement of applicability for its
requirement (applicable, justification, drivers), carrying its control's status, so a
framework's readiness and its statement are read from one table.
"""

from __future__ import annotations

import datetime as dt
import enum

import attrs

from ...kernel.events import Event
from ...kernel.links import LinkState
from ...kernel.permissions import MANAGERS, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.validation import (
    Patch,
    Unset,
    blank_text,
    optional_choice,
    optional_text,
    patch_field,
    text,
)

__all__ = [
    "ControlStatus",
    "ControlOrigin",
    "Driver",
    "EnabledFramework",
    "EnabledFrameworkFilter",
    "Control",
    "NewControl",
    "ControlPatch",
    "ControlFilter",
    "ControlRequirement",
    "ControlRequirementFilter",
    "ControlLink",
    "ControlLinkFilter",
    "ImportedMapping",
    "ImportedMappingFilter",
    "ENABLED_FRAMEWORKS",
    "CONTROLS",
    "CONTROL_REQUIREMENTS",
    "CONTROL_LINKS",
    "IMPORTED_MAPPINGS",
    "CONTROL_READ",
    "CONTROL_WRITE",
    "FRAMEWORK_ENABLE",
    "FrameworkEnabled",
    "FrameworkDisabled",
    "ControlCreated",
    "ControlUpdated",
    "ControlDeleted",
    "ControlStatusChanged",
    "MappingImported",
    "derive_status",
]


class ControlStatus(enum.StrEnum):
    NOT_STARTED = "not_started"
    """Nothing that would implement it is linked yet."""
    IN_PROGRESS = "in_progress"
    """Something is linked that has not done its part yet."""
    IMPLEMENTED = "implemented"
    """Everything linked to implement it does its part."""
    STALE = "stale"
    """Some of its evidence expired: it was implemented and cannot be shown to be now."""


class ControlOrigin(enum.StrEnum):
    CATALOGUE = "catalogue"
    """Made when a framework was enabled, for one of its requirements."""
    CUSTOM = "custom"
    """Made by a person."""


class Driver(enum.StrEnum):
    """Why a control is applied (the columns an auditor reads in a statement of applicability)."""

    RISK = "risk"
    LEGAL = "legal"
    CONTRACT = "contract"
    BEST_PRACTICE = "best_practice"


def derive_status(states: list[LinkState]) -> ControlStatus:
    """A control's status from the states of what is linked to implement it. Risks, which only
    explain a control, and to-dos nobody has begun (the upkeep enabling a framework plans) count
    for nothing: a published policy implements its control while next year's review waits."""
    counted = [state for state in states if state not in (LinkState.CONTEXT, LinkState.PLANNED)]
    if not counted:
        return ControlStatus.NOT_STARTED
    if LinkState.EXPIRED in counted:
        return ControlStatus.STALE
    if all(state is LinkState.DONE for state in counted):
        return ControlStatus.IMPLEMENTED
    return ControlStatus.IN_PROGRESS


@attrs.frozen(kw_only=True)
class EnabledFramework:
    id: str
    organization_id: str
    framework_id: str
    name: str
    """The framework's name when it was enabled."""
    requirement_count: int
    """How many of its requirements got a control (and a row of the statement)."""
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class EnabledFrameworkFilter(Filter):
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))


@attrs.frozen(kw_only=True)
class Control:
    id: str
    organization_id: str
    name: str
    code: str = ""
    """How people cite it: the requirement's label for a catalogue control (``A.5.15``), any
    code a person gives a custom one."""
    description: str = ""
    owner_id: str | None = None
    """The person answerable for it."""
    status: ControlStatus = ControlStatus.NOT_STARTED
    """Derived from what is linked to it, never set by hand."""
    status_changed_at: dt.datetime | None = None
    origin: ControlOrigin = ControlOrigin.CUSTOM
    framework_ids: tuple[str, ...] = ()
    """The enabled frameworks it serves a requirement of."""
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewControl:
    name: str = attrs.field(converter=text(255))
    code: str = attrs.field(default="", converter=blank_text(50))
    description: str = attrs.field(default="", converter=blank_text(5000))
    owner_id: str | None = attrs.field(default=None, converter=optional_text(100))


_NEW = attrs.fields(NewControl)


@attrs.frozen(kw_only=True)
class ControlPatch(Patch):
    name: str | Unset = patch_field(_NEW.name.converter)
    code: str | Unset = patch_field(_NEW.code.converter)
    description: str | None | Unset = patch_field(_NEW.description.converter)
    owner_id: str | None | Unset = patch_field(_NEW.owner_id.converter)


@attrs.frozen(kw_only=True)
class ControlFilter(Filter):
    status: ControlStatus | None = attrs.field(default=None, converter=optional_choice(ControlStatus))
    owner_id: str | None = attrs.field(default=None, converter=optional_text(100))
    origin: ControlOrigin | None = attrs.field(default=None, converter=optional_choice(ControlOrigin))


@attrs.frozen(kw_only=True)
class ControlRequirement:
    """One requirement of an enabled framework, the control serving it, and its row of the
    working statement of applicability."""

    id: str
    organization_id: str
    framework_id: str
    requirement_id: str
    label: str
    """The requirement's label (``A.5.15``), kept so the statement sorts and reads without the
    catalogue."""
    title: str
    control_id: str
    control_status: ControlStatus = ControlStatus.NOT_STARTED
    """Its control's status, kept with the row so a framework's readiness and its statement's
    filters read one table."""
    applicable: bool = True
    justification: str = ""
    """Why the requirement is excluded, or why it is applied with no risk or obligation driving it."""
    drivers: tuple[Driver, ...] = ()
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class ControlRequirementFilter(Filter):
    framework_id: str | None = attrs.field(default=None, converter=optional_text(100))
    control_status: ControlStatus | None = attrs.field(default=None, converter=optional_choice(ControlStatus))
    applicable: bool | None = None
    control_id: str | None = attrs.field(default=None, converter=optional_text(100))
    requirement_id: str | None = attrs.field(default=None, converter=optional_text(100))


@attrs.frozen(kw_only=True)
class ControlLink:
    """The controls area's index of one record that names a control (the record keeps the link)."""

    id: str
    organization_id: str
    control_id: str
    kind: str
    """What the record is (``policy``, ``risk``, ``task``, ``evidence``)."""
    target_id: str
    state: LinkState
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class ControlLinkFilter(Filter):
    control_id: str | None = attrs.field(default=None, converter=optional_text(100))
    kind: str | None = attrs.field(default=None, converter=optional_text(50))
    target_id: str | None = attrs.field(default=None, converter=optional_text(100))


@attrs.frozen(kw_only=True)
class ImportedMapping:
    """A mapping between two requirements that the organization imported (a licensed crosswalk,
    its own), used beside the catalogue's own when it enables a framework."""

    id: str
    organization_id: str
    source_framework: str
    source_requirement: str
    target_framework: str
    target_requirement: str
    relation: str
    publisher: str = ""
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class ImportedMappingFilter(Filter):
    source_framework: str | None = attrs.field(default=None, converter=optional_text(100))
    target_framework: str | None = attrs.field(default=None, converter=optional_text(100))


ENABLED_FRAMEWORKS: Records[EnabledFramework, EnabledFrameworkFilter] = Records(
    "enabled_frameworks",
    model=EnabledFramework,
    filters=EnabledFrameworkFilter,
    kind="enabled framework",
    prefix="frm",
)
CONTROLS: Records[Control, ControlFilter] = Records(
    "controls",
    model=Control,
    filters=ControlFilter,
    kind="control",
    prefix="ctl",
    facets=("status", "origin"),
    searchable=("name", "code", "description"),
    sortable=("name", "code", "status", "updated_at"),
    indexed=("code", "name", "status", "updated_at"),
)
CONTROL_REQUIREMENTS: Records[ControlRequirement, ControlRequirementFilter] = Records(
    "control_requirements",
    model=ControlRequirement,
    filters=ControlRequirementFilter,
    kind="requirement of an enabled framework",
    prefix="req",
    facets=("framework_id", "control_status", "applicable"),
    facet_pairs=(("framework_id", "control_status"), ("framework_id", "applicable")),
    searchable=("label", "title", "justification"),
    sortable=("label", "control_status"),
    indexed=("label", "control_status"),
    within="framework_id",
)
CONTROL_LINKS: Records[ControlLink, ControlLinkFilter] = Records(
    "control_links",
    model=ControlLink,
    filters=ControlLinkFilter,
    kind="control link",
    prefix="cln",
)
IMPORTED_MAPPINGS: Records[ImportedMapping, ImportedMappingFilter] = Records(
    "imported_mappings",
    model=ImportedMapping,
    filters=ImportedMappingFilter,
    kind="mapping",
    prefix="map",
    facets=("source_framework", "target_framework"),
)

CONTROL_READ = Action("control:read", READERS)
CONTROL_WRITE = Action("control:write", MANAGERS)
FRAMEWORK_ENABLE = Action("framework:enable", MANAGERS)
"""Enabling or disabling a framework makes or removes a whole set of controls: Owners and Admins."""


class FrameworkEnabled(Event):
    """The organization took on a framework: its controls, statement rows and task templates exist."""

    type = "framework.enabled"


class FrameworkDisabled(Event):
    """The organization dropped a framework; controls serving no other framework's requirement
    and linked to nothing went with it."""

    type = "framework.disabled"


class ControlCreated(Event):
    """A control was made: by a person, or for a requirement of a framework being enabled."""

    type = "control.created"


class ControlUpdated(Event):
    """Some of a control's own fields changed (its status is announced by ``control.status_changed``)."""

    type = "control.updated"


class ControlDeleted(Event):
    """A control was deleted (by a person, or with the framework it alone served); ``data`` is
    the control as it was."""

    type = "control.deleted"


class ControlStatusChanged(Event):
    """One of the spec's webhook occasions: a control's status changed, whatever changed it (a
    policy published, a task done, evidence expired, a link made); ``previous`` holds the old status."""

    type = "control.status_changed"


class MappingImported(Event):
    """The organization imported a mapping between two frameworks' requirements."""

    type = "mapping.imported"
