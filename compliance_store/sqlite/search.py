"""``q`` through the search index on SQLite: which rows may contain a ``q``, read from the
``<table>_search`` FTS5 table that ``migrations.helpers.search_index`` keeps beside each searchable
table, before the exact test (``listing.contains_term``) decides.

The index holds every run of three characters of the searched columns, folded by SQLite's case
folding (after ``İ`` became ``i``). A row whose ``fold``-ed text contains the folded ``q`` holds,
at that place, characters each folding to the ``q`` character there; the index finds the row
through a trigram of ``q`` only if SQLite's folding also takes each of those characters to the
same character as the ``q`` character. That holds for most characters but not all: SQLite's
tables are older Unicode than Python's (Georgian Mtavruli, Cherokee small letters, Latin letters
added since 6.1 fold in Python only). Which characters are safe is read once per process from
the library itself (``unsafe_characters``: the helper's own triggers fill an in-memory table of
every character that folds to another, and each target is searched for), so the answer follows
the SQLite and the Python the process runs on.

``match_expression`` then asks for the trigrams of the runs of safe characters only (each one the
rows must hold, ``AND``-ed: ``detail=none`` keeps no positions). A ``q`` without a run of three
safe characters has no expression and is tested row by row as before. The candidates are a
superset of the answer and the exact test stays, so the index changes what a page costs, never
what it holds.
"""

from __future__ import annotations

import functools
import sqlite3

from sqlite_utils import Database

from . import listing
from .migrations.helpers import SEARCH_TOKENIZER, search_index

__all__ = ["search_table", "index_tables", "unsafe_characters", "match_expression", "indexed_columns"]

MIN_RUN = 3
"""The trigram tokenizer finds nothing shorter."""


def search_table(table: str) -> str:
    """The FTS5 table indexing ``table``'s searchable columns."""
    return f"{table}_search"


_SHADOWS = ("_data", "_idx", "_config", "_docsize", "_content")
"""The tables FTS5 keeps a virtual table's index in (``<table>_search_data``...)."""


def index_tables(conn: sqlite3.Connection) -> frozenset[str]:
    """The file's virtual tables and the shadow tables FTS5 keeps them in: derived data, kept by
    the triggers (a copy or a count of rows passes them by; a contentless table cannot even be
    scanned)."""
    virtual = [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
        )
    ]
    return frozenset((*virtual, *(f"{name}{suffix}" for name in virtual for suffix in _SHADOWS)))


@functools.cache
def unsafe_characters() -> frozenset[str]:
    """The folded characters some character folding to them is indexed apart from (see the
    module): a ``q`` run through one of them cannot be narrowed by the index."""
    sources = listing.folding_to()
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE probe (t TEXT)")
        search_index(Database(conn), "probe", ("t",))
        characters = {char for target, found in sources.items() for char in (target, *found)}
        conn.executemany("INSERT INTO probe (rowid, t) VALUES (?, ?)", [(ord(char), char * 3) for char in characters])
        unsafe = set()
        for target, found in sources.items():
            query = '"' + (target * 3).replace('"', '""') + '"'
            hits = {chr(code) for (code,) in conn.execute("SELECT rowid FROM probe_search(?)", (query,))}
            if set(found) - hits:
                unsafe.add(target)
        return frozenset(unsafe)
    finally:
        conn.close()


def match_expression(needle: str) -> str | None:
    """The FTS5 query for the rows that may contain the folded ``needle``: every distinct trigram
    of its runs of safe characters, each quoted, joined by ``AND``; None when no run is long
    enough (then no index can narrow it)."""
    unsafe = unsafe_characters()
    runs: list[str] = []
    run: list[str] = []
    for char in needle:
        if char in unsafe:
            runs.append("".join(run))
            run = []
        else:
            run.append(char)
    runs.append("".join(run))
    trigrams = dict.fromkeys(
        found[start : start + MIN_RUN] for found in runs for start in range(len(found) - MIN_RUN + 1)
    )
    if not trigrams:
        return None
    return " AND ".join('"' + trigram.replace('"', '""') + '"' for trigram in trigrams)


def indexed_columns(conn: sqlite3.Connection, table: str) -> tuple[str, ...] | None:
    """The columns ``table``'s search index covers, as the file holds it (the start-up check and
    the migration generator read it); None when there is none. An index whose tokenizer is not
    ``SEARCH_TOKENIZER`` or that lacks one of its three triggers covers ``()``: it serves no
    ``q`` and must be made again."""
    search = search_table(table)
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (search,)).fetchone()
    if row is None:
        return None
    triggers = {
        name
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,))
    }
    if (
        f"'{SEARCH_TOKENIZER}'" not in (row[0] or "")
        or not {f"{search}_{event}" for event in ("insert", "delete", "update")} <= triggers
    ):
        return ()
    return tuple(name for (name,) in conn.execute("SELECT name FROM pragma_table_info(?)", (search,)))
