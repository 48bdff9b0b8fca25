"""Cells survive a file: any text written by an export reads back as it was, in CSV and in XLSX,
and none is left for a spreadsheet program to run as a formula (properties); a vendor whose text
fields are anything the API accepts comes back equal through an export and an import."""

from __future__ import annotations

import string

import attrs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compliance_core import Platform, ValidationError
from compliance_core.areas.vendors import NewVendor
from compliance_core.kernel.registers import RegisterFile
from compliance_core.kernel.sheets import guard, read_csv, read_sheet, unguard, write_csv, write_sheet

ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60)
"""Any Unicode text a file can hold (lone surrogates cannot be written as UTF-8)."""
FORMULA_TEXT = st.one_of(ANY_TEXT, st.builds(lambda head, tail: head + tail, st.sampled_from("=+-@\t\r'\""), ANY_TEXT))
STORED_TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs", "Cc"), include_characters="\t\n\r"), max_size=60)
"""Text the API stores (no control characters but tab and line breaks), which XLSX can hold."""


@given(st.lists(st.lists(FORMULA_TEXT, min_size=1, max_size=5), min_size=1, max_size=5))
def test_any_text_comes_back_from_a_csv_file_unchanged(rows: list[list[str]]) -> None:
    data = b"".join(write_csv([[guard(cell) for cell in row] for row in rows]))
    assert [[unguard(cell) for cell in row] for row in read_csv(data)] == rows


@given(st.lists(FORMULA_TEXT, min_size=1, max_size=8))
def test_no_cell_starts_as_a_formula(cells: list[str]) -> None:
    for cell in cells:
        shown = guard(cell)
        assert not shown.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert unguard(shown) == cell


@settings(max_examples=40, deadline=None)
@given(st.lists(STORED_TEXT, min_size=1, max_size=5))
def test_stored_text_comes_back_from_an_xlsx_file_unchanged(cells: list[str]) -> None:
    data = b"".join(write_sheet("xlsx", "Sheet", [["header"] * len(cells), [guard(cell) for cell in cells]]))
    rows = list(read_sheet("xlsx", data))
    assert [unguard(cell) if cell is not None else "" for cell in rows[1]] == cells


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=STORED_TEXT,
    description=STORED_TEXT,
    category=st.text(alphabet=string.printable, max_size=20),
    file_format=st.sampled_from(["csv", "xlsx"]),
)
def test_a_vendor_of_any_accepted_text_comes_back_equal(
    name: str, description: str, category: str, file_format: str
) -> None:
    try:
        vendor = NewVendor(name=name, description=description, category=category)
    except ValidationError:
        assume(False)
        raise
    platform = Platform.open("memory://")
    source = platform.actor(platform.bootstrap("Source").organization.id)
    target = platform.actor(platform.bootstrap("Target").organization.id)
    platform.vendors.create(source, vendor)
    data = getattr(platform.vendors, f"export_{file_format}")(source).read()
    platform.vendors.import_file(target, RegisterFile.of(data, file_format))
    (copy,) = platform.vendors.list(target).items
    assert {f.name: getattr(copy, f.name) for f in attrs.fields(NewVendor)} == attrs.asdict(vendor, recurse=False)
