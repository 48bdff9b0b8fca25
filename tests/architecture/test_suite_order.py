"""The suite hands its longest files to the xdist workers first (tests/conftest.py), so the
minutes-long fuzz overlaps the many short files instead of running alone at the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_long_then_slow_then_the_rest_with_more_tests_first() -> None:
    files = [
        "tests/unit/test_pagination.py",
        "tests/cli/test_readme.py",
        "tests/e2e/test_real_server.py",
        "tests/e2e/test_fuzz.py",
    ]
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=", "-p", "no:randomly", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert collected.returncode == 0, collected.stdout + collected.stderr
    order = list(dict.fromkeys(line.split("::", 1)[0] for line in collected.stdout.splitlines() if "::" in line))
    counts = {f: sum(line.startswith(f"{f}::") for line in collected.stdout.splitlines()) for f in files[:2]}
    rest = sorted(files[:2], key=lambda f: -counts[f])
    assert order == ["tests/e2e/test_fuzz.py", "tests/e2e/test_real_server.py", *rest]
