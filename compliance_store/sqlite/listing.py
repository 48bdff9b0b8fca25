"""SQLite's page queries: the shared ``compliance_store.listing.PagedQuery`` with SQLite's name for
the block counts' partition column (``list_facet_blocks.archived``, as migration 0012 made it), and
``q`` as a ``GLOB`` pattern run in C.

Core's ``fold`` lowercases one character at a time, each to one character, so the folded text
contains the folded ``q`` exactly when, at some place, each character of the text is one that
folds to the ``q`` character at that place: the pattern ``*[Łł][Óó][Dd][Źź]*`` for ``łódź``, each
set the characters folding to one character of ``q`` (``folding_to``, read once from Python's own
case mappings). SQLite's ``lower`` folds ASCII letters only and calling ``fold`` per row costs a
Python call per column and row (about 60 ms for 10,000 vendors); the pattern gives the same rows
for the price of SQLite's ``GLOB``. A ``q`` of ASCII letters but ``i`` and ``k``, digits and
caseless characters is cheaper still, ``instr(lower(column), q)``, and any other with such a run
tests it first (``_ascii_foldable_runs``; this store's connections have no ICU ``lower``). A ``q``
with a character GLOB reads otherwise (U+FFFD to U+FFFF, which SQLite reads alike) still calls
the ``fold`` function every connection has (``register_fold``).

These terms are the exact test. Which rows they test comes first from the table's search index
when it can narrow the ``q`` (``PagedQuery.narrowed``, ``search``): its candidates by rowid, so
that a rare ``q`` reads a few rows instead of the organization's.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from compliance_core.kernel.pages import fold

from .. import listing
from ..codec import quote
from . import search

__all__ = ["PagedQuery", "register_fold", "contains_term", "glob_pattern", "folding_to"]

M = TypeVar("M")


class PagedQuery(listing.PagedQuery[M]):
    COUNTER_COLUMN: ClassVar[str] = "archived"
    CONTAINS: ClassVar[str] = "instr(fold({column}), {mark}) > 0"
    ROW_KEY: ClassVar[str | None] = "rowid"
    PICK_KEY: ClassVar[str | None] = "rowid"

    def contains(self, needle: str) -> tuple[str, list[Any]]:
        return contains_term(needle)

    def narrowed(self, terms: list[str], params: list[Any], needle: str) -> tuple[list[str], list[Any]] | None:
        """The rows of the table's search index that may contain ``needle`` (``search``), by
        rowid; the organization's term is written ``+organization_id`` so that no index of the
        organization's rows competes with the candidates for the planner."""
        match = search.match_expression(needle)
        if match is None:
            return None
        table = quote(search.search_table(self.mapper.table))
        candidates = f"rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH {self.mapper.mark})"
        return ["+" + terms[0], *terms[1:], candidates], [*params, match]


def contains_term(needle: str) -> tuple[str, list[Any]]:
    """``PagedQuery.contains`` on SQLite (see the module)."""
    pattern = glob_pattern(needle)
    if pattern is None:
        return PagedQuery.CONTAINS, [needle]
    run = max(_ascii_foldable_runs(needle), key=len, default="")
    if run == needle:
        return "instr(lower({column}), {mark}) > 0", [needle]
    if len(run) >= 2:
        return "(instr(lower({column}), {mark}) > 0 AND {column} GLOB {mark})", [run, pattern]
    return "{column} GLOB {mark}", [pattern]


def _ascii_foldable_runs(needle: str) -> list[str]:
    """The runs of ``needle`` whose characters only themselves or their ASCII capital fold to:
    SQLite's ``lower`` (ASCII letters only) folds a text to hold such a run exactly where
    ``fold`` does, so ``instr(lower(text), run)`` is the whole test for a needle of one run, and
    a cheap first test for any other (not ``i`` nor ``k``: ``İ`` and the Kelvin sign fold to
    them too)."""
    sources = folding_to()
    runs, run = [], []
    for char in needle:
        folding = set(sources.get(char, char))
        if folding == {char, char.upper()} if "a" <= char <= "z" else folding == {char}:
            run.append(char)
        else:
            runs.append("".join(run))
            run = []
    runs.append("".join(run))
    return [found for found in runs if found]


LAST_CASED = 0x1F000
"""Above every code point Python lowercases to another (the last is U+1E921, Adlam; a unit test
checks the whole range)."""

_GLOB_UNREADABLE = frozenset("\ufffd\ufffe\uffff")
"""Characters SQLite's UTF-8 reader turns into U+FFFD: a pattern with one would match the others."""


@functools.cache
def folding_to() -> Mapping[str, str]:
    """Each character that another folds to (``fold``), with every character folding to it,
    itself included when it folds to itself. Read once per process from Python's lowercase
    mappings, in C (one ``lower`` of all cased code points joined by NUL, which lowers to itself)."""
    chars = [chr(code) for code in range(1, LAST_CASED)]
    lowered = "\0".join(chars).lower().split("\0")
    sources: dict[str, list[str]] = {}
    for char, lower in zip(chars, lowered, strict=True):
        if char != lower:
            sources.setdefault(lower[:1], []).append(char)
    return {
        target: "".join(sorted({*found, *([target] if fold(target) == target else [])}))
        for target, found in sources.items()
    }


def glob_pattern(needle: str) -> str | None:
    """The GLOB pattern matching a text whose ``fold`` contains ``needle`` (itself folded); None
    for a needle GLOB cannot spell exactly (see ``_GLOB_UNREADABLE``) or no folded text holds."""
    if not needle or any(char in _GLOB_UNREADABLE or char == "\0" for char in needle):
        return None
    sources = folding_to()
    parts = ["*"]
    for char in needle:
        found = sources.get(char)
        if found is None:
            if fold(char) != char:  # no folded needle holds it (nothing folds to it)
                return None
            parts.append(f"[{char}]" if char in "*?[" else char)
        else:
            # in a set, "]" reads as itself first only and "^" negates first; none of them is cased
            parts.append("[" + "".join(sorted(found, key=lambda c: (c != "]", c == "^"))) + "]")
    parts.append("*")
    return "".join(parts)


def _fold(value: Any) -> Any:
    return fold(value) if isinstance(value, str) else None


def register_fold(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the ``fold`` SQL function the searched pages call."""
    conn.create_function("fold", 1, _fold, deterministic=True)
