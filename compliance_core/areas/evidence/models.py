"""What the evidence areas store and answer: evidence items, their versions, the commands, the
tables, actions and events."""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any, ClassVar

import attrs

from ...kernel.events import Event
from ...kernel.permissions import MANAGERS, READERS, Action
from ...kernel.records import Filter, Records
from ...kernel.uploads import Upload, file_content
from ...kernel.validation import (
    Checked,
    Patch,
    Unset,
    blank_text,
    choice,
    id_list,
    identifier,
    optional_choice,
    optional_id,
    optional_text,
    patch_field,
    register_schema,
    schema_of,
    text,
    timestamp,
)
from ...kernel.validation import url as optional_url

__all__ = [
    "EvidenceKind",
    "EvidenceSource",
    "Evidence",
    "EvidenceVersion",
    "NewEvidence",
    "NewAttachment",
    "NewVersion",
    "EvidencePatch",
    "EvidenceFilter",
    "TaskEvidenceFilter",
    "VersionFilter",
    "EvidenceSettings",
    "EVIDENCE",
    "EVIDENCE_VERSIONS",
    "EVIDENCE_READ",
    "EVIDENCE_WRITE",
    "MAX_INLINE_BYTES",
    "MAX_LINKS",
    "EvidenceCreated",
    "EvidenceUpdated",
    "EvidenceDeleted",
    "EvidenceVersionAdded",
    "EvidenceExpired",
    "EvidenceExpiring",
    "EVENTS",
]

MAX_INLINE_BYTES = 6 * 1024 * 1024
"""The largest file sent inline in a JSON body (base64 makes it 8 MiB of text, the HTTP layer's
body limit); larger files are sent as multipart/form-data, up to the blob store's limit."""
MAX_LINKS = 200
"""Controls one evidence item names."""
MAX_NOTE = 20_000


class EvidenceKind(enum.StrEnum):
    FILE = "file"
    """An uploaded file: its bytes are in the blob store, named by their SHA-256."""
    LINK = "link"
    """A URL where the evidence lives (a dashboard, a ticket, a shared document)."""
    NOTE = "note"
    """Text written here (Markdown), such as the record of a walkthrough."""


class EvidenceSource(enum.StrEnum):
    """Who or what collected it."""

    MANUAL = "manual"
    AUTOMATION = "automation"
    INTEGRATION_CHECK = "integration_check"
    DEVICE = "device"
    BROWSER = "browser"


@attrs.frozen(kw_only=True)
class Evidence:
    """One piece of evidence of a task, with the fields of its current version.

    A new upload (``POST .../versions``) makes a new version and moves these fields to it; the
    earlier versions stay readable (``GET .../versions``) and downloadable.
    """

    id: str
    organization_id: str
    task_id: str
    kind: EvidenceKind
    title: str
    description: str = ""
    source: EvidenceSource = EvidenceSource.MANUAL
    control_ids: tuple[str, ...] = ()
    """The controls it proves: valid evidence implements them, expired evidence makes them
    stale. Taken from its task when the evidence is added without them."""
    version: int = 1
    version_id: str
    """The current version's id (``evv_...``)."""
    file_name: str | None = None
    media_type: str | None = None
    """Sniffed from the file's bytes (``application/pdf``); ``text/markdown`` for a note."""
    size: int | None = None
    """Bytes of the file (or of the note, in UTF-8)."""
    sha256: str | None = None
    """Of the file's bytes (or of the note's): anyone can check a download against it."""
    url: str | None = None
    note: str | None = None
    collected_at: dt.datetime
    """The date the evidence speaks of (a screenshot taken last week), not the upload's."""
    valid_until: dt.datetime | None = None
    """When it stops proving anything (None: it does not expire)."""
    expired: bool = False
    """``valid_until`` has passed, as of the last write or expiry sweep: its controls are stale."""
    uploaded_by: str | None = None
    """The person (or, for a key acting as no person, the key) who added the current version."""
    uploaded_at: dt.datetime
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class EvidenceVersion:
    """One version of an evidence item, as it was added; kept when a later one replaces it."""

    id: str
    organization_id: str
    attachment_id: str
    task_id: str
    version: int
    kind: EvidenceKind
    file_name: str | None = None
    media_type: str | None = None
    size: int | None = None
    sha256: str | None = None
    url: str | None = None
    note: str | None = None
    collected_at: dt.datetime
    valid_until: dt.datetime | None = None
    uploaded_by: str | None = None
    uploaded_at: dt.datetime
    expiry_warned_at: dt.datetime | None = None
    """When ``evidence.expiring`` was recorded for this version (at most once: the sweep sets
    this in the same write as the event, and skips a version that has it)."""
    created_at: dt.datetime
    updated_at: dt.datetime


_FILE = file_content(MAX_INLINE_BYTES)
_CONTROL_IDS = id_list(MAX_LINKS)


def _task_controls(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...] | None:
    return None if value is None else _CONTROL_IDS.converter(value, field)  # type: ignore[attr-defined]


_OWN_CONTROLS = register_schema(
    Checked(_task_controls, takes_field=True),
    {**schema_of(_CONTROL_IDS), "description": "the controls it proves; left out or null: its task's controls"},
)


@attrs.frozen(kw_only=True)
class NewVersion:
    """What one version holds: a file (``fileData`` in base64, or the file part of a
    multipart/form-data request), a ``url`` or a ``note``, as the item's kind says, with its dates."""

    BODY_REQUIRED: ClassVar[bool] = True
    """Every field has a default, yet one of the file, the url or the note must come."""

    file_name: str | None = attrs.field(default=None, converter=optional_text(255))
    """The file's name; for a multipart upload, the part's filename when left out."""
    file_type: str | None = attrs.field(default=None, converter=optional_text(255))
    """The type the sender says the file is; the stored type is sniffed from the bytes."""
    file_data: str | Upload | None = attrs.field(default=None, converter=_FILE)
    """The file's bytes in base64 (over JSON); an ``Upload`` when streamed (multipart, or an
    in-process caller's open file)."""
    url: str | None = attrs.field(default=None, converter=optional_url)
    note: str | None = attrs.field(default=None, converter=optional_text(MAX_NOTE))
    collected_at: dt.datetime | None = attrs.field(default=None, converter=timestamp)
    """The date the evidence speaks of; now when left out."""
    valid_until: dt.datetime | None = attrs.field(default=None, converter=timestamp)


@attrs.frozen(kw_only=True)
class NewEvidence(NewVersion):
    """A new evidence item of a task with its first version. ``fileName``, ``fileType``,
    ``fileData`` and ``description`` are the reference's upload fields."""

    kind: EvidenceKind = attrs.field(default=EvidenceKind.FILE, converter=choice(EvidenceKind))
    title: str | None = attrs.field(default=None, converter=optional_text(255))
    """Defaults to the file's name, the URL or the note's first line."""
    description: str = attrs.field(default="", converter=blank_text(2000))
    source: EvidenceSource = attrs.field(default=EvidenceSource.MANUAL, converter=choice(EvidenceSource))
    control_ids: tuple[str, ...] | None = attrs.field(default=None, converter=_OWN_CONTROLS)
    """The controls it proves; left out (or null), its task's controls."""


@attrs.frozen(kw_only=True)
class NewAttachment(NewEvidence):
    """``POST /v1/attachments``: the same as adding evidence to a task, naming the task."""

    task_id: str = attrs.field(converter=identifier)


_NEW = attrs.fields(NewEvidence)


@attrs.frozen(kw_only=True)
class EvidencePatch(Patch):
    """What changes without a new version: the item's title, description, source and controls
    (the file, link or note and its dates belong to a version: add one)."""

    title: str | Unset = patch_field(text(255))
    description: str | Unset = patch_field(_NEW.description.converter)
    source: EvidenceSource | Unset = patch_field(_NEW.source.converter)
    control_ids: tuple[str, ...] | Unset = patch_field(_CONTROL_IDS)


@attrs.frozen(kw_only=True)
class EvidenceFilter(Filter):
    task_id: str | None = attrs.field(default=None, converter=optional_id)
    kind: EvidenceKind | None = attrs.field(default=None, converter=optional_choice(EvidenceKind))
    source: EvidenceSource | None = attrs.field(default=None, converter=optional_choice(EvidenceSource))
    expired: bool | None = None


@attrs.frozen(kw_only=True)
class TaskEvidenceFilter(Filter):
    """The filters of one task's evidence (the task is in the path)."""

    kind: EvidenceKind | None = attrs.field(default=None, converter=optional_choice(EvidenceKind))
    source: EvidenceSource | None = attrs.field(default=None, converter=optional_choice(EvidenceSource))
    expired: bool | None = None

    def under(self, task_id: str) -> EvidenceFilter:
        return EvidenceFilter(task_id=task_id, kind=self.kind, source=self.source, expired=self.expired)


@attrs.frozen(kw_only=True)
class VersionFilter(Filter):
    attachment_id: str | None = attrs.field(default=None, converter=optional_id)
    sha256: str | None = attrs.field(default=None, converter=optional_text(64))
    """The versions naming one blob: a blob is deleted only when none is left."""


def _days(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 365:
        raise ValueError(f"expiring_days must be a whole number of days from 0 to 365, not {value!r}")
    return value


@attrs.frozen(kw_only=True)
class EvidenceSettings:
    """``Platform(settings={"evidence": EvidenceSettings(expiring_days=14)})``."""

    expiring_days: int = attrs.field(default=30, converter=_days)
    """How many days before a version's ``validUntil`` its ``evidence.expiring`` is recorded."""


EVIDENCE: Records[Evidence, EvidenceFilter] = Records(
    "evidence",
    model=Evidence,
    filters=EvidenceFilter,
    kind="attachment",
    prefix="att",
    facets=("kind", "source", "expired"),
    searchable=("title", "description", "file_name"),
    sortable=("title", "collected_at", "valid_until", "updated_at"),
    ranged="valid_until",
    indexed=("collected_at", "valid_until"),
)
"""Ranged on ``validUntil``: ``?to=`` lists what expires before a date, and the expiry sweeps
read only the rows due."""
EVIDENCE_VERSIONS: Records[EvidenceVersion, VersionFilter] = Records(
    "evidence_versions",
    model=EvidenceVersion,
    filters=VersionFilter,
    kind="evidence version",
    prefix="evv",
    newest_first=True,
)
EVIDENCE_READ = Action("evidence:read", READERS)
EVIDENCE_WRITE = Action("evidence:write", MANAGERS)


class EvidenceCreated(Event):
    """Evidence was added to a task, with its first version."""

    type = "evidence.created"


class EvidenceUpdated(Event):
    """An evidence item's title, description, source or controls changed (by PATCH, or a link
    made or removed from a control); ``previous`` holds the old values."""

    type = "evidence.updated"


class EvidenceDeleted(Event):
    """An evidence item was deleted with all its versions (alone, or with its task); ``data`` is
    the item as it was."""

    type = "evidence.deleted"


class EvidenceVersionAdded(Event):
    """A new version of an evidence item was added; ``data`` shows it as the current one and
    ``previous`` the fields of the version it replaced."""

    type = "evidence.version_added"


class EvidenceExpired(Event):
    """An evidence item's ``validUntil`` passed (seen by the expiry sweep, once): the controls
    it proves are stale until a valid version is added."""

    type = "evidence.expired"


class EvidenceExpiring(Event):
    """An evidence version's ``validUntil`` is near (within the configured number of days,
    30 by default): recorded once per version, by the sweep. ``data`` is the item, whose
    ``versionId`` names the version."""

    type = "evidence.expiring"


EVENTS: tuple[type[Event], ...] = (
    EvidenceCreated,
    EvidenceUpdated,
    EvidenceDeleted,
    EvidenceVersionAdded,
    EvidenceExpired,
    EvidenceExpiring,
)
