"""SQLite runs ``q`` as a GLOB pattern, or ``instr`` of SQLite's ASCII ``lower``, instead of
calling core's ``fold`` per row: each must match exactly the texts whose fold contains the
folded ``q``, whatever the characters (case pairs that are not each other's upper, one-way folds
such as the Kelvin sign onto ``k``, GLOB's own metacharacters)."""

from __future__ import annotations

import sqlite3
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_core.kernel.pages import fold
from compliance_store.sqlite.listing import LAST_CASED, contains_term, glob_pattern, register_fold

TRICKY = "aAiIİıkKKsſßẞΣσςΩΩωÅÅåǄǅǆ*?[]^-\\%_ łŁ\ufffc" + chr(0x1E921) + chr(0x1E943) + chr(0x10400)
CHARS = st.sampled_from(TRICKY) | st.characters(blacklist_categories=("Cs", "Cc"))


def test_no_code_point_above_the_scanned_range_lowercases_to_another() -> None:
    assert all(chr(code).lower() == chr(code) for code in range(LAST_CASED, sys.maxunicode + 1))


@settings(max_examples=400, deadline=None)
@given(text=st.text(CHARS, max_size=8), q=st.text(CHARS, min_size=1, max_size=3))
def test_the_pattern_matches_what_fold_contains(text: str, q: str) -> None:
    needle = fold(q)
    pattern = glob_pattern(needle)
    if pattern is None:
        assert any(char in "\ufffd\ufffe\uffff" for char in needle)
        return
    with sqlite3.connect(":memory:") as conn:
        matched = conn.execute("SELECT ? GLOB ?", (text, pattern)).fetchone()[0]
    assert bool(matched) == (needle in fold(text))


def test_a_found_needle_keeps_its_place() -> None:
    """Each character of the needle becomes the set folding to it, in order (not anywhere)."""
    with sqlite3.connect(":memory:") as conn:
        pattern = glob_pattern(fold("ŁÓDŹ"))
        assert conn.execute("SELECT ? GLOB ?, ? GLOB ?", ("x Łódź", pattern, "źdół", pattern)).fetchone() == (1, 0)
        kelvin = glob_pattern(fold("k"))
        assert conn.execute("SELECT ? GLOB ?", ("\u212a", kelvin)).fetchone() == (1,)


ASCII = st.sampled_from("aAbBiIİkKKnN 12-*?[") | CHARS


@settings(max_examples=400, deadline=None)
@given(text=st.text(ASCII, max_size=8), q=st.text(ASCII, min_size=1, max_size=4))
def test_the_term_a_searched_page_runs_matches_what_fold_contains(text: str, q: str) -> None:
    needle = fold(q)
    term, values = contains_term(needle)
    with sqlite3.connect(":memory:") as conn:
        register_fold(conn)
        sql = "SELECT " + term.format(column="t", mark="?") + " FROM (SELECT ? AS t)"
        matched = conn.execute(sql, [*values, text]).fetchone()[0]
    assert bool(matched) == (needle in fold(text))
