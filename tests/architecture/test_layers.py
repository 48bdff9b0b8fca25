"""The dependency rule of ARCHITECTURE.md, enforced by import-linter's contracts in pyproject.toml."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_import_linter_contracts_hold() -> None:
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_core_modules_do_no_work_at_import_time() -> None:
    """Module bodies in core hold definitions only: nothing opens a store, reads the clock, makes
    a signal or a logger handler, or registers a receiver when core is imported."""
    forbidden = {
        "open",
        "open_store",
        "now",
        "today",
        "connect",
        "Platform",
        "Signal",
        "Namespace",
        "signal",
        "basicConfig",
        "addHandler",
        "SystemClock",
        "RandomIds",
        "time",
    }
    for path in sorted((ROOT / "compliance_core").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                name = ast.unparse(call.func).split(".")[-1]
                assert name not in forbidden, f"{path.relative_to(ROOT)}:{call.lineno}: module-level call {name}()"
