"""``compliance import``: a register's file into a store, with the report as JSON, a dry run
that lists every row's errors and writes nothing, a refusal that names each bad row, and a
progress bar only on a terminal (migrate-store's too)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import openpyxl
import pytest

from compliance_core import Platform
from compliance_http.cli import main
from compliance_http.cli.progress import copy_bar, progress_bar


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    def run_command(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, json.loads(out) if out.strip() else None, json.loads(err) if err.strip() else None

    return run_command


@pytest.fixture
def org(run, tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "cli.db")
    code, out, _ = run("init", "--db", db, "--org-name", "Acme")
    assert code == 0
    return db, out["organizationId"]


def test_a_csv_file_is_imported_and_its_records_listed(run, org, tmp_path: Path) -> None:
    db, organization = org
    file = tmp_path / "vendors.csv"
    file.write_text("name,criticality,country\nCloud Co,critical,IE\nMail Co,,\n")
    code, report, _ = run("import", "vendors", str(file), "--db", db, "--org", organization)
    assert code == 0 and report["created"] == 2 and report["dryRun"] is False
    with Platform.open(f"sqlite:///{db}") as platform:
        vendors = platform.vendors.list(platform.actor(organization)).items
    assert sorted((v.name, v.criticality.value) for v in vendors) == [("Cloud Co", "critical"), ("Mail Co", "standard")]


def test_an_xlsx_file_is_read_by_its_extension(run, org, tmp_path: Path) -> None:
    db, organization = org
    workbook = openpyxl.Workbook()
    workbook.active.append(["title", "likelihood", "impact"])
    workbook.active.append(["Flood", 2, "major"])
    file = tmp_path / "risks.xlsx"
    workbook.save(file)
    code, report, _ = run("import", "risks", str(file), "--db", db, "--org", organization)
    assert code == 0 and report["created"] == 1


def test_a_dry_run_lists_every_error_and_a_real_import_refuses_naming_each_row(run, org, tmp_path: Path) -> None:
    db, organization = org
    file = tmp_path / "people.csv"
    file.write_text("name,email\nAda,ada@example.com\n,no-name@example.com\nBob,not-an-email\n")
    code, report, _ = run("import", "people", str(file), "--db", db, "--org", organization, "--dry-run")
    assert code == 0 and report["created"] == 0
    assert [(e["row"], e["field"]) for e in report["errors"]] == [(3, "name"), (4, "email")]
    code, _, refused = run("import", "people", str(file), "--db", db, "--org", organization)
    assert code == 2 and refused["error"]["code"] == "validation_error"
    assert [(e["row"], e["field"]) for e in refused["error"]["details"]["errors"]] == [(3, "name"), (4, "email")]
    with Platform.open(f"sqlite:///{db}") as platform:
        emails = [p.email for p in platform.people.list(platform.actor(organization)).items]
    assert "ada@example.com" not in emails


def test_a_missing_file_or_an_unknown_format_is_refused(run, org, tmp_path: Path) -> None:
    db, organization = org
    code, _, refused = run("import", "vendors", str(tmp_path / "none.csv"), "--db", db, "--org", organization)
    assert code == 2 and refused["error"]["details"]["field"] == "file"
    odd = tmp_path / "vendors.ods"
    odd.write_text("x")
    code, _, refused = run("import", "vendors", str(odd), "--db", db, "--org", organization)
    assert code == 2 and refused["error"]["details"]["field"] == "--format"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_is_drawn_on_a_terminal_only() -> None:
    terminal, pipe = Terminal(), io.StringIO()
    with progress_bar("import vendors", terminal) as update:
        assert update is not None
        update(3, 4)
        update(4, 4)
    assert "import vendors" in terminal.getvalue() and "4/4" in terminal.getvalue()
    with progress_bar("import vendors", pipe) as update:
        assert update is None
    assert pipe.getvalue() == ""


def test_migrate_stores_bar_is_drawn_on_a_terminal_only() -> None:
    terminal = Terminal()
    bar = copy_bar(terminal)
    assert bar is not None and copy_bar(io.StringIO()) is None
    bar.start("copying 10 rows", 10)
    bar.advance(4)
    bar.advance(6)
    bar.finish()
    assert "copying 10 rows" in terminal.getvalue() and "10/10" in terminal.getvalue()
