"""Copy everything one store holds into another, verified: ``compliance migrate-store``.

    from compliance_core.platform import open_store
    source, target = open_store("sqlite:///compliance.db"), open_store("postgresql://app@db/compliance")
    report = copy_store(source, target)          # or source.copy_to(target)
    print(report.as_json())

What is copied
--------------
Every table a store keeps, in the order ``tables()`` gives: the kernel's (organizations, API keys,
their per-day usage, rate-limit buckets, idempotency records, the outbox, published or not) and
one per ``Records`` declaration of the areas (``AREAS``, from which the stores' own registries
are derived), archived rows included. A new area is therefore copied as soon as it is registered;
nothing here names it. What the stores derive (the list counters and revisions, the memory
store's indexes) is not copied: the target's triggers and repositories keep it as rows arrive,
so its totals come out right and its revisions only ever grow.

How
---
Rows travel as models: each repository's ``dump()`` reads its rows in key order (an area's records
in list order, by organization, ``created_at`` and id, so the target's triggers cut them into even
blocks as they arrive) and the target's own repository writes them (``add``/``put``), so each store
keeps its own encodings (SQLite's ISO text, PostgreSQL's ``timestamptz`` and ``json``) and checks
its own constraints (unique API-key hashes and e-mails) on the way in. The whole copy reads one
session on the source (a snapshot: SQLite's WAL read transaction, PostgreSQL's ``REPEATABLE
READ``), so it is a copy of one moment: first hashing every table (which gives the row count the
progress bar needs), then copying.

An empty target is written in chunks of ``chunk_rows`` rows (``CHUNK_ROWS``), one transaction
each: a transaction of a whole register holds the target's write lock for minutes and grows
SQLite's WAL (or PostgreSQL's memory for the transaction) with every row, and 200,000 vendors
went from one transaction to chunks. If anything fails after the first chunk committed, the
copied tables are emptied again, so the target ends as empty as it began. A target whose rows
are replaced is written in one transaction (its old rows are deleted in the same one), so that a
failed copy leaves it as it was. A bar on standard error shows the rows written when that is a
terminal (``compliance_store.progress``).

Verification
------------
Each table's rows are counted and hashed: SHA-256 over a canonical rendering of every row
(``canonical``: compact JSON with sorted keys, times as UTC ISO text, enums as their values), one
line per row, in key order. Once written, the target's rows are read back (in the write
transaction of a replaced target, else in a read session after the last chunk) and hashed the
same way. Any difference raises ``CopyMismatch`` and nothing of the copy stays.

Once committed, a target that keeps planner state of its own (``BulkLoaded``) is told: PostgreSQL
vacuums and analyses the copied tables (the lists' counts are index-only scans, which need the
visibility map, and a freshly filled table has neither it nor statistics until autovacuum comes
round), SQLite refreshes its statistics (``compliance_store.sqlite.statistics``).

A target that already holds a row is refused (``Conflict``) unless ``replace=True``, which first
deletes every row of every copied table, in the same transaction. An empty source is refused too
(``ValidationError``, field ``source``): it is almost always a mistyped URL (a PostgreSQL schema
or a SQLite file is created empty when opened), and with ``replace`` it would empty the target.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

import attrs

from compliance_core.areas import AREAS
from compliance_core.areas.api_keys import API_KEYS, DailyUsage
from compliance_core.areas.organizations import ORGANIZATIONS
from compliance_core.kernel.clock import utc
from compliance_core.kernel.errors import Conflict, InternalError, ValidationError
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.idempotency import IDEMPOTENCY
from compliance_core.kernel.ratelimit import RATE_LIMITS
from compliance_core.kernel.records import Records
from compliance_core.kernel.registry import Area, Repo, Session
from compliance_core.kernel.uow import Store

from .progress import Progress, progress_on

__all__ = [
    "BulkLoaded",
    "Table",
    "tables",
    "TableReport",
    "CopyReport",
    "CopyMismatch",
    "copy_store",
    "canonical",
    "Digest",
    "digest_store",
    "CHUNK_ROWS",
]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@runtime_checkable
class BulkLoaded(Protocol):
    """A store that brings its planner statistics (and PostgreSQL's visibility map) up to date
    after a bulk load, rather than waiting for its own maintenance to notice."""

    def after_bulk_load(self) -> None: ...


class Dumps(Protocol[T_co]):
    """What every repository offers for copying a store (besides its own ``add``/``put``)."""

    def dump(self) -> Iterator[T_co]:
        """Every row it keeps, as models, in key order, read lazily."""
        ...

    def clear(self) -> int:
        """Delete every row; returns how many."""
        ...


class KeyUsage(Protocol):
    """The API-key repository's per-day request counts, for copying a store."""

    def dump_usage(self) -> Iterator[tuple[str, DailyUsage]]: ...

    def add_usage(self, key_id: str, usage: DailyUsage) -> None: ...

    def clear_usage(self) -> int: ...


@attrs.frozen(kw_only=True)
class Table:
    """One table as the copy sees it.

    :param name: the table's name (the SQL stores' table; the report's key)
    :param dump: its rows in a session, in key order
    :param load: writes one row in a session
    :param clear: deletes every row in a session; returns how many
    :param key: a row's key (``dump`` must give strictly increasing keys)
    """

    name: str
    dump: Callable[[Session], Iterable[Any]]
    load: Callable[[Session, Any], None]
    clear: Callable[[Session], int]
    key: Callable[[Any], tuple[Any, ...]]


def _dumps(repo: Repo[Any]) -> Repo[Dumps[Any]]:
    """The same repository (by name) seen through ``Dumps``."""
    return Repo(repo.name)


_USAGE: Repo[KeyUsage] = Repo(API_KEYS.name)


def _kernel_tables() -> tuple[Table, ...]:
    return (
        Table(
            name="organizations",
            dump=lambda s: s[_dumps(ORGANIZATIONS)].dump(),
            load=lambda s, organization: s[ORGANIZATIONS].add(organization),
            clear=lambda s: s[_dumps(ORGANIZATIONS)].clear(),
            key=lambda organization: (organization.id,),
        ),
        Table(
            name="api_keys",
            dump=lambda s: s[_dumps(API_KEYS)].dump(),
            load=lambda s, key: s[API_KEYS].add(key),
            clear=lambda s: s[_dumps(API_KEYS)].clear(),
            key=lambda key: (key.id,),
        ),
        Table(
            name="key_usage",
            dump=lambda s: s[_USAGE].dump_usage(),
            load=lambda s, row: s[_USAGE].add_usage(*row),
            clear=lambda s: s[_USAGE].clear_usage(),
            key=lambda row: (row[0], row[1].date),
        ),
        Table(
            name="rate_limit_buckets",
            dump=lambda s: s[_dumps(RATE_LIMITS)].dump(),
            load=lambda s, row: s[RATE_LIMITS].put(*row),
            clear=lambda s: s[_dumps(RATE_LIMITS)].clear(),
            key=lambda row: (row[0],),
        ),
        Table(
            name="idempotency",
            dump=lambda s: s[_dumps(IDEMPOTENCY)].dump(),
            load=lambda s, record: s[IDEMPOTENCY].put(record),
            clear=lambda s: s[_dumps(IDEMPOTENCY)].clear(),
            key=lambda record: (record.organization_id, record.principal, record.key),
        ),
        Table(
            name="outbox",
            dump=lambda s: s[_dumps(OUTBOX)].dump(),
            load=lambda s, message: s[OUTBOX].add(message),
            clear=lambda s: s[_dumps(OUTBOX)].clear(),
            key=lambda message: (message.id,),
        ),
    )


def _records_table(records: Records[Any, Any]) -> Table:
    handle = _dumps(records)
    return Table(
        name=records.name,
        dump=lambda s: s[handle].dump(),
        load=lambda s, item: s[records].add(item),
        clear=lambda s: s[handle].clear(),
        # list order: the target's triggers cut blocks of rows as they arrive (a new block once
        # the last is full and a row comes after it), so rows arriving in any other order would
        # pile into the first blocks and deep pages would skip through them
        key=lambda item: (item.organization_id, item.created_at, item.id),
    )


def tables(areas: Sequence[Area[Any]] = AREAS) -> tuple[Table, ...]:
    """The kernel's tables, then one per ``Records`` declaration of ``areas``.

    >>> [table.name for table in tables(areas=())]
    ['organizations', 'api_keys', 'key_usage', 'rate_limit_buckets', 'idempotency', 'outbox']
    >>> tables()[-1].name == AREAS[-1].records[-1].name
    True
    """
    return (*_kernel_tables(), *(_records_table(records) for area in areas for records in area.records))


# --- canonical rows and checksums -------------------------------------------------------------


def canonical(value: Any) -> Any:
    """``value`` as plain JSON data that is equal for equal rows whichever store read them: a
    model as its fields (and its type), an enum as its value, a time as UTC ISO text with
    microseconds, a date as ISO text, tuples as lists, a whole float as an int (SQLite gives 60.0
    for a bucket that held 60).

    >>> canonical(dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    '2025-01-02T03:04:05.000000+00:00'
    >>> canonical((1.0, 2.5, None))
    [1, 2.5, None]
    """
    if isinstance(value, enum.Enum):
        return canonical(value.value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dt.datetime):
        return utc(value).isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    kind = type(value)
    if attrs.has(kind):
        fields = {field.name: canonical(getattr(value, field.name)) for field in attrs.fields(kind)}
        return {"$type": f"{kind.__module__}:{kind.__qualname__}", **fields}
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, dict):
        return {str(key): canonical(item) for key, item in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(item) for item in value), key=repr)
    raise TypeError(f"no canonical form for {kind.__module__}.{kind.__qualname__}")


class Digest:
    """A table's row count and SHA-256 over its canonical rows, one JSON line each, fed in key
    order (a row out of order is an error: both sides must hash the same sequence)."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._hash = hashlib.sha256()
        self._last: tuple[Any, ...] | None = None
        self.rows = 0

    def add(self, row: Any) -> None:
        key = self._table.key(row)
        if self._last is not None and not key > self._last:
            raise InternalError(
                f"the rows of {self._table.name} did not come in key order ({self._last!r} then {key!r})",
                {"table": self._table.name},
            )
        self._last = key
        line = json.dumps(canonical(row), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self._hash.update(line.encode())
        self._hash.update(b"\n")
        self.rows += 1

    @property
    def checksum(self) -> str:
        return f"sha256:{self._hash.hexdigest()}"


def _digest(table: Table, session: Session) -> Digest:
    digest = Digest(table)
    for row in table.dump(session):
        digest.add(row)
    return digest


def digest_store(store: Store, areas: Sequence[Area[Any]] = AREAS) -> dict[str, tuple[int, str]]:
    """Each table's ``(rows, checksum)`` in one read session of ``store`` (what ``copy_store``
    reports), e.g. to compare two stores later."""
    figures = {}
    with store.session(write=False) as session:
        for table in tables(areas):
            digest = _digest(table, session)
            figures[table.name] = (digest.rows, digest.checksum)
    return figures


# --- the copy ---------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class TableReport:
    """What the copy read from one table of the source and found in the target afterwards.

    :param deleted: the rows the target's table held before (with ``replace``; else 0)
    """

    table: str
    source_rows: int
    source_checksum: str
    target_rows: int
    target_checksum: str
    deleted: int = 0

    @property
    def match(self) -> bool:
        return (self.source_rows, self.source_checksum) == (self.target_rows, self.target_checksum)

    def as_json(self) -> dict[str, Any]:
        report: dict[str, Any] = {
            "table": self.table,
            "rows": {"source": self.source_rows, "target": self.target_rows},
            "checksum": {"source": self.source_checksum, "target": self.target_checksum},
            "match": self.match,
        }
        if self.deleted:
            report["deletedFromTarget"] = self.deleted
        return report


@attrs.frozen(kw_only=True)
class CopyReport:
    """The outcome of ``copy_store``: one ``TableReport`` per table, in copy order.

    :param source: the source's URL (any password masked)
    :param target: the target's URL (any password masked)
    :param replaced: whether the target's rows were deleted first
    :param seconds: how long the copy took, verification included
    """

    source: str
    target: str
    replaced: bool
    tables: tuple[TableReport, ...]
    seconds: float

    @property
    def verified(self) -> bool:
        """Every table's count and checksum are the same on both sides."""
        return all(table.match for table in self.tables)

    @property
    def rows(self) -> int:
        return sum(table.source_rows for table in self.tables)

    def as_json(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "to": self.target,
            "replaced": self.replaced,
            "verified": self.verified,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "tables": [table.as_json() for table in self.tables],
        }


class CopyMismatch(InternalError):
    """The target did not read back what was written (nothing was committed); ``report`` says
    which tables differ."""

    def __init__(self, report: CopyReport) -> None:
        differing = [table.table for table in report.tables if not table.match]
        super().__init__(
            f"the copy does not match its source in {', '.join(differing)}; nothing was written",
            {"tables": differing},
        )
        self.report = report


def _display(store: Store) -> str:
    return str(getattr(store, "display_url", None) or store.url)


def _location(store: Store) -> tuple[Any, ...]:
    """What two stores share when they are the same data (a SQLite file, a PostgreSQL schema)."""
    return (type(store).__name__, getattr(store, "path", None) or store.url, getattr(store, "schema", None))


CHUNK_ROWS = 5_000
"""Rows written per transaction of a copy into an empty target."""


def copy_store(
    source: Store,
    target: Store,
    *,
    replace: bool = False,
    areas: Sequence[Area[Any]] = AREAS,
    chunk_rows: int = CHUNK_ROWS,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy every row of every table of ``source`` into ``target`` and verify it (see the module
    docstring); returns the report. On any error nothing of the copy stays.

    :param replace: delete every row of the target's tables first (in the same transaction as
        the whole copy); without it a target holding any row is refused with ``Conflict``
    :param areas: the areas whose ``Records`` tables are copied (default: every registered area)
    :param chunk_rows: rows per write transaction into an empty target (the rows of a target
        that is replaced go in one transaction, so that a failed copy leaves its old rows)
    :param progress: where to report rows written (default: a bar on standard error when it is
        a terminal, else nothing)
    :raises Conflict: the target is not empty (and ``replace`` is False)
    :raises ValidationError: the source holds nothing (field ``source``), or source and target
        are the same store (field ``target``); nothing was written
    :raises CopyMismatch: the target's counts or checksums differ from the source's (nothing
        of the copy stays)
    """
    if source is target or _location(source) == _location(target):
        raise ValidationError.field("target", _display(target), "is the source itself")
    if chunk_rows < 1:
        raise ValidationError.field("chunk_rows", chunk_rows, "must be at least 1")
    started = time.perf_counter()
    plan = tables(areas)
    shown = progress_on() if progress is None else progress
    with source.session(write=False) as reading:
        read = {table.name: _digest(table, reading) for table in plan}
        total = sum(digest.rows for digest in read.values())
        if total == 0:
            raise ValidationError.field("source", _display(source), "holds no data: there is nothing to copy")
        rows = _rows(plan, reading)
        shown.start(f"copying {total:,} rows to {_display(target)}", total)
        try:
            with target.session(write=True) as writing:
                deleted = _make_room(plan, writing, replace)
                at_once = any(deleted.values())
                _load(writing, rows, None if at_once else chunk_rows, shown)
                if at_once:
                    report = _report(source, target, replace, plan, read, writing, deleted, started)
                    if not report.verified:
                        raise CopyMismatch(report)
            if not at_once:
                try:
                    while _load_chunk(target, rows, chunk_rows, shown):
                        pass
                    with target.session(write=False) as checking:
                        report = _report(source, target, replace, plan, read, checking, deleted, started)
                    if not report.verified:
                        raise CopyMismatch(report)
                except BaseException:
                    _undo(target, plan)
                    raise
        finally:
            shown.finish()
    if isinstance(target, BulkLoaded):
        target.after_bulk_load()
    return attrs.evolve(report, seconds=time.perf_counter() - started)


def _rows(plan: Sequence[Table], session: Session) -> Iterator[tuple[Table, Any]]:
    for table in plan:
        for row in table.dump(session):
            yield table, row


def _load(session: Session, rows: Iterator[tuple[Table, Any]], limit: int | None, progress: Progress) -> int:
    """Write the next ``limit`` rows (None: all that are left); returns how many."""
    written = 0
    for table, row in rows:
        table.load(session, row)
        written += 1
        progress.advance(1)
        if written == limit:
            break
    return written


def _load_chunk(target: Store, rows: Iterator[tuple[Table, Any]], limit: int, progress: Progress) -> bool:
    """One transaction of up to ``limit`` rows; False once there was nothing left."""
    with target.session(write=True) as writing:
        return _load(writing, rows, limit, progress) > 0


def _undo(target: Store, plan: Sequence[Table]) -> None:
    """Empty the tables again after a failed chunked copy (the target was empty before it)."""
    with target.session(write=True) as writing:
        for table in reversed(plan):
            table.clear(writing)


def _report(
    source: Store,
    target: Store,
    replace: bool,
    plan: Sequence[Table],
    read: dict[str, Digest],
    session: Session,
    deleted: dict[str, int],
    started: float,
) -> CopyReport:
    written = {table.name: _digest(table, session) for table in plan}
    return CopyReport(
        source=_display(source),
        target=_display(target),
        replaced=replace,
        tables=tuple(
            TableReport(
                table=table.name,
                source_rows=read[table.name].rows,
                source_checksum=read[table.name].checksum,
                target_rows=written[table.name].rows,
                target_checksum=written[table.name].checksum,
                deleted=deleted.get(table.name, 0),
            )
            for table in plan
        ),
        seconds=time.perf_counter() - started,
    )


def _make_room(plan: Sequence[Table], session: Session, replace: bool) -> dict[str, int]:
    """Empty the target's tables (``replace``), or refuse a target that holds anything."""
    if replace:
        return {table.name: table.clear(session) for table in reversed(plan)}
    held = {table.name: rows for table in plan if (rows := sum(1 for _ in table.dump(session)))}
    if held:
        raise Conflict(
            "the target already holds data: copy into an empty store, or replace its contents "
            "(every row of every table is deleted first, in the same transaction)",
            {"reason": "target_not_empty", "tables": held},
        )
    return {}
