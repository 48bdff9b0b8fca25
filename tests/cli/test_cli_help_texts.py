"""What `--help` says matches what the commands do: every count `maintenance` prints is named in
its help, and `serve --help` names the setting that lets webhooks reach a receiver on localhost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compliance_http.cli import main


def help_of(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert main([*command, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines anywhere


def test_maintenance_help_names_every_count_it_prints(capsys, tmp_path: Path) -> None:
    db = str(tmp_path / "chores.db")
    assert main(["init", "--db", db, "--org-name", "Acme"]) == 0
    capsys.readouterr()
    assert main(["maintenance", "--db", db]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert {"purgedIdempotencyRecords", "purgedOutboxMessages", "analyzedTables"} <= set(printed)
    said = help_of(capsys, "maintenance")
    for key, value in printed.items():
        # each count in the JSON the help shows, as the command prints it
        shown = f'"{key}": N' if isinstance(value, int) else f'"{key}"'
        assert shown in said, f"maintenance --help does not show {shown}"


def test_serve_help_documents_the_setting_for_private_webhook_targets(capsys) -> None:
    said = help_of(capsys, "serve")
    assert "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1" in said
    assert "https" in said and "loopback" in said


def test_the_worker_which_also_delivers_names_it_too(capsys) -> None:
    assert "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1" in help_of(capsys, "worker")


def test_serve_help_names_the_framework_catalogue_directory(capsys) -> None:
    assert "COMPLIANCE_FRAMEWORKS_DIR" in help_of(capsys, "serve")
