"""The XLSX adapter of core's spreadsheet port (``compliance_core.kernel.sheets.Workbooks``), on
openpyxl: written in write-only mode, so rows go to disk as they come and a large export is never
held in memory, and read in read-only mode, which parses the sheet row by row. Core finds it
through the ``compliance.sheets`` entry point."""

from __future__ import annotations

import io
import re
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import openpyxl

__all__ = ["OpenpyxlWorkbooks"]

_CHUNK_BYTES = 64 * 1024
_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")
_TO_ESCAPE = re.compile(r"\r|_(?=x[0-9A-Fa-f]{4}_)")
_SPILL_BYTES = 8 * 1024 * 1024
"""A workbook up to this size is assembled in memory, a bigger one in a temporary file."""


class OpenpyxlWorkbooks:
    """``Workbooks`` on openpyxl."""

    def write(self, title: str, rows: Iterable[Sequence[Any]]) -> Iterator[bytes]:
        workbook = openpyxl.Workbook(write_only=True)
        sheet = workbook.create_sheet(title=title[:31])
        for row in rows:
            sheet.append([_escape(cell) if isinstance(cell, str) else cell for cell in row])
        with tempfile.SpooledTemporaryFile(max_size=_SPILL_BYTES) as file:
            workbook.save(file)
            file.seek(0)
            while chunk := file.read(_CHUNK_BYTES):
                yield chunk

    def read(self, data: bytes) -> Iterator[tuple[Any, ...]]:
        try:
            workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        except Exception as error:  # a zip, XML or workbook error: the file is not a workbook
            raise ValueError(f"{type(error).__name__}: {error}") from None
        try:
            if not workbook.worksheets:
                raise ValueError("the workbook has no sheet")
            rows = workbook.worksheets[0].iter_rows(values_only=True)
            while True:
                try:
                    row = next(rows)
                except StopIteration:
                    return
                except Exception as error:  # a broken sheet found while reading it
                    raise ValueError(f"{type(error).__name__}: {error}") from None
                yield tuple(_unescape(cell) if isinstance(cell, str) else cell for cell in row)
        finally:
            workbook.close()


def _escape(text: str) -> str:
    """A carriage return as ``_x000D_`` (XML would read it back as a plain line feed), and a
    literal ``_xHHHH_`` with its underscore escaped (``_x005F_``): the ECMA-376 escape that Excel
    reads too."""
    return _TO_ESCAPE.sub(lambda found: "_x000D_" if found.group() == "\r" else "_x005F_", text)


def _unescape(text: str) -> str:
    return _ESCAPED.sub(lambda found: chr(int(found.group(1), 16)), text)
