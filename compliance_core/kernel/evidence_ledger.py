"""The evidence ledger as other areas read it: every version of the evidence of some tasks.

The evidence area keeps the items and their versions; an export lists and packs them without
importing that area. The evidence area offers its two tables through this port
(``Area(ports=(EvidenceLedger(items=EVIDENCE, versions=EVIDENCE_VERSIONS),))``) and a reader
finds it with ``port_of(context.ports, EvidenceLedger)``: a platform built without the evidence
area simply has no evidence to export. What a reader may rely on of those records is written
here (``LedgerItem``, ``LedgerVersion``), and ``versions_of`` gives it as ``LedgerEntry``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any, Protocol

import attrs

from .directory import every
from .records import Records
from .registry import Session

__all__ = ["LedgerEntry", "LedgerItem", "LedgerVersion", "EvidenceLedger"]


class LedgerItem(Protocol):
    """What a reader takes of an evidence item (its list filters take ``task_id``)."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def source(self) -> Any: ...
    @property
    def control_ids(self) -> tuple[str, ...]: ...


class LedgerVersion(Protocol):
    """What a reader takes of one version (its list filters take ``attachment_id``)."""

    @property
    def id(self) -> str: ...
    @property
    def attachment_id(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def kind(self) -> Any: ...
    @property
    def file_name(self) -> str | None: ...
    @property
    def media_type(self) -> str | None: ...
    @property
    def size(self) -> int | None: ...
    @property
    def sha256(self) -> str | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def note(self) -> str | None: ...
    @property
    def collected_at(self) -> dt.datetime: ...
    @property
    def valid_until(self) -> dt.datetime | None: ...
    @property
    def uploaded_at(self) -> dt.datetime: ...


@attrs.frozen(kw_only=True)
class LedgerEntry:
    """One version of one evidence item, as it was added.

    ``kind`` is ``file`` (its bytes are the organization's blob ``sha256``), ``link`` (a ``url``)
    or ``note`` (Markdown in ``note``)."""

    evidence_id: str
    version_id: str
    task_id: str
    version: int
    kind: str
    title: str
    source: str
    collected_at: dt.datetime
    valid_until: dt.datetime | None = None
    uploaded_at: dt.datetime
    control_ids: tuple[str, ...] = ()
    file_name: str | None = None
    media_type: str | None = None
    size: int | None = None
    sha256: str | None = None
    url: str | None = None
    note: str | None = None


@attrs.frozen(kw_only=True)
class EvidenceLedger:
    """The evidence area's items (``items``) and their versions (``versions``)."""

    items: Records[Any, Any]
    versions: Records[Any, Any]

    def versions_of(self, session: Session, organization_id: str, task_ids: Iterable[str]) -> list[LedgerEntry]:
        """Every version of every evidence item of those tasks, by task, item and version."""
        assert self.items.filters is not None and self.versions.filters is not None
        found: list[LedgerEntry] = []
        for task_id in sorted(set(task_ids)):
            items: list[LedgerItem] = every(session[self.items], organization_id, self.items.filters(task_id=task_id))
            for item in sorted(items, key=lambda i: i.id):
                versions: list[LedgerVersion] = every(
                    session[self.versions], organization_id, self.versions.filters(attachment_id=item.id)
                )
                found += (_entry(item, version) for version in sorted(versions, key=lambda v: v.version))
        return found


def _entry(item: LedgerItem, version: LedgerVersion) -> LedgerEntry:
    return LedgerEntry(
        evidence_id=item.id,
        version_id=version.id,
        task_id=version.task_id,
        version=version.version,
        kind=str(version.kind),
        title=item.title,
        source=str(item.source),
        collected_at=version.collected_at,
        valid_until=version.valid_until,
        uploaded_at=version.uploaded_at,
        control_ids=tuple(item.control_ids),
        file_name=version.file_name,
        media_type=version.media_type,
        size=version.size,
        sha256=version.sha256,
        url=version.url,
        note=version.note,
    )
