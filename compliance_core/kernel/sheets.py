"""Spreadsheet files of a register: CSV with the standard library's csv module, XLSX through an
adapter found by entry point (``compliance.sheets``, the openpyxl one in ``compliance_xlsx``), so
core imports no spreadsheet library, as it imports no PDF one.

A sheet is a header row and rows of cells. Cells are what a JSON answer holds: text, numbers,
booleans, None (an empty cell). Text that a spreadsheet program would run as a formula (starting
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written with a leading ``'``, and
so is text that starts with ``'`` itself; reading takes one such quote off again, so a value
exported and imported comes back unchanged, and opening an export never runs what a record
holds (CSV injection, OWASP).
"""

from __future__ import annotations

import csv
import importlib.metadata
import io
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from .errors import ValidationError

__all__ = [
    "CSV",
    "XLSX",
    "FORMATS",
    "SHEETS_ENTRY_POINTS",
    "Workbooks",
    "guard",
    "unguard",
    "write_csv",
    "read_csv",
    "write_sheet",
    "read_sheet",
]

CSV = "text/csv"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
FORMATS = {"csv": CSV, "xlsx": XLSX}
"""File format -> media type."""
SHEETS_ENTRY_POINTS = "compliance.sheets"

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")
_CHUNK_BYTES = 64 * 1024

Cell = str | int | float | bool | None


class Workbooks(Protocol):
    """The XLSX adapter: one sheet written from rows as they come, and read back row by row."""

    def write(self, title: str, rows: Iterable[Sequence[Cell]]) -> Iterator[bytes]:
        """The workbook's bytes, in chunks; ``rows`` is read once, header first."""
        ...

    def read(self, data: bytes) -> Iterator[tuple[Any, ...]]:
        """The first sheet's rows, header first (cells as the workbook typed them: text,
        numbers, booleans, dates, None); raises ``ValueError`` when ``data`` is no workbook."""
        ...


def _workbooks() -> Workbooks:
    for entry in importlib.metadata.entry_points(group=SHEETS_ENTRY_POINTS):
        found: Workbooks = entry.load()()
        return found
    raise RuntimeError(f"no XLSX adapter is installed (entry point group {SHEETS_ENTRY_POINTS!r})")


def guard(text: str) -> str:
    """``text`` as a cell: a leading ``'`` before anything a spreadsheet would run.

    >>> guard("=HYPERLINK(1)"), guard("plain"), guard("'quoted")
    ("'=HYPERLINK(1)", 'plain', "''quoted")
    """
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def unguard(text: str) -> str:
    """A cell's text as it was before ``guard``.

    >>> unguard("'=1+1"), unguard("'plain"), unguard("''quoted")
    ('=1+1', "'plain", "'quoted")
    """
    return text[1:] if text[:1] == "'" and text[1:2] and text[1:2] in _FORMULA_STARTS else text


def _csv_text(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, bool):
        return "true" if cell else "false"
    return str(cell)


def write_csv(rows: Iterable[Sequence[Cell]]) -> Iterator[bytes]:
    """UTF-8 CSV (with a byte-order mark, so spreadsheet programs read it as UTF-8), in chunks
    of about 64 KiB; cells are already guarded."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    buffer.write("\ufeff")
    for row in rows:
        writer.writerow([_csv_text(cell) for cell in row])
        if buffer.tell() >= _CHUNK_BYTES:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()


def read_csv(data: bytes) -> Iterator[list[str]]:
    """The rows of a UTF-8 CSV file (a byte-order mark is skipped), header first."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValidationError.field("content", f"byte {error.start}", "must be UTF-8 text") from None
    try:
        yield from csv.reader(io.StringIO(text, newline=""), strict=True)
    except csv.Error as error:
        raise ValidationError.field("content", str(error), "is not a well-formed CSV file") from None


def write_sheet(file_format: str, title: str, rows: Iterable[Sequence[Cell]]) -> Iterator[bytes]:
    """The file of ``rows`` (header first) in ``file_format`` (``csv`` or ``xlsx``)."""
    if file_format == "csv":
        return write_csv(rows)
    return _workbooks().write(title, rows)


def read_sheet(file_format: str, data: bytes) -> Iterator[Sequence[Any]]:
    """The rows of a file in ``file_format``, header first; a file that is not one is a
    ``ValidationError`` naming ``content``."""
    if file_format == "csv":
        return read_csv(data)
    return _read_workbook(data)


def _read_workbook(data: bytes) -> Iterator[tuple[Any, ...]]:
    try:
        yield from _workbooks().read(data)
    except ValueError as error:
        raise ValidationError.field("content", str(error)[:200], "is not an XLSX workbook") from None
