"""A register's file import, on what its header and size may be: every header problem is an
error on row 1, a cell a column cannot read is that row's error, and a file too long for one
transaction is refused before anything is checked."""

from __future__ import annotations

import pytest

from compliance_core import Platform, ValidationError
from compliance_core.areas.findings import FindingService
from compliance_core.areas.people import PeopleService
from compliance_core.areas.risks import RiskService
from compliance_core.areas.vendors import VendorService
from compliance_core.kernel.registers import MAX_IMPORT_ROWS, RegisterFile, register_of


@pytest.fixture
def platform() -> Platform:
    return Platform.open("memory://")


def _dry(platform: Platform, data: bytes):
    actor = platform.actor(platform.bootstrap("Acme").organization.id)
    return platform.vendors.import_file(actor, RegisterFile.of(data, "csv", dry_run=True))


def test_header_problems_are_errors_on_row_one(platform: Platform) -> None:
    report = _dry(platform, b"country,country,colour,id,createdAt\r\nIE,IE,red,vnd_1,2024-01-01\r\n")
    header = [(error.field, error.reason) for error in report.errors if error.row == 1]
    assert header == [
        ("country", "repeats an earlier column"),
        ("colour", "unknown column (see the register's export)"),
        ("name", "column is required"),
    ]


def test_a_cell_a_column_cannot_read_is_that_rows_error(platform: Platform) -> None:
    report = _dry(
        platform,
        b"name,subProcessors,ictService,inherentImpact\r\n"
        b"A,[not json,maybe,5\r\n"
        b'B,"[{""name"":""S"",""country"":""DE"",""purposeCategory"":""hosting""}]",YES,severe\r\n',
    )
    assert [(e.row, e.field) for e in report.errors] == [(2, "subProcessors"), (2, "ictService")]


def test_a_file_longer_than_one_import_is_refused_naming_the_content(platform: Platform) -> None:
    rows = b"name\r\n" + b"v\r\n" * (MAX_IMPORT_ROWS + 1)
    with pytest.raises(ValidationError) as refused:
        _dry(platform, rows)
    assert refused.value.details["field"] == "content"
    blank = b"name\r\nv\r\n" + b",\r\n" * (4 * MAX_IMPORT_ROWS)
    with pytest.raises(ValidationError) as refused:
        _dry(platform, blank)
    assert refused.value.details["field"] == "content"


def test_the_command_line_finds_the_registers_that_import() -> None:
    assert all(register_of(api) is not None for api in (VendorService, RiskService, PeopleService))
    assert register_of(FindingService) is None
