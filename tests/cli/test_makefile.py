"""The Makefile's two commands, run by real `make` against a stand-in Python that records what it
is asked to do (no network, no real install): `make serve` installs only what serving needs,
`make test` adds the test extras, and neither installs twice what the other already installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")

# `python3 -m venv DIR` makes a venv whose tools only log their arguments.
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
    mkdir -p "$3/bin"
    for tool in python compliance ruff mypy; do
        printf '#!/bin/sh\\necho "%s $*" >> "$MAKE_LOG"\\n' "$tool" > "$3/bin/$tool"
        chmod +x "$3/bin/$tool"
    done
    echo "venv $3" >> "$MAKE_LOG"
    exit 0
fi
exec {python} "$@"
"""


class Checkout:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.log = root / "make.log"
        shutil.copy(ROOT / "Makefile", root / "Makefile")
        shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
        old = 1_600_000_000
        os.utime(root / "pyproject.toml", (old, old))
        self.python = root / "python3"
        self.python.write_text(FAKE_PYTHON.format(python=sys.executable))
        self.python.chmod(0o755)

    def run(self, target: str) -> subprocess.CompletedProcess[str]:
        """Run `make target` (what the venv's tools are asked to do goes to ``self.log``)."""
        self.log.write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "COMPLIANCE_"))}
        return subprocess.run(
            ["make", "--no-print-directory", target, f"PYTHON={self.python}"],
            cwd=self.root,
            env={**env, "MAKE_LOG": str(self.log)},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def make(self, target: str) -> list[str]:
        """Run `make target`; return what the venv's tools were asked to do, in order."""
        done = self.run(target)
        assert done.returncode == 0, done.stdout + done.stderr
        return [line.strip() for line in self.log.read_text().splitlines()]


def installs(log: list[str]) -> list[str]:
    return [line for line in log if " pip install " in f" {line} " and "--upgrade pip" not in line]


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    return Checkout(tmp_path)


def test_make_serve_installs_only_what_serving_needs(checkout: Checkout) -> None:
    log = checkout.make("serve")
    assert installs(log) == ["python -m pip install --quiet -e .[oscal]"]
    assert log[-1] == "compliance serve --db compliance.db --host 127.0.0.1 --port 3333"


def test_make_serve_then_make_test_installs_the_extras_once(checkout: Checkout) -> None:
    checkout.make("serve")
    log = checkout.make("test")
    assert installs(log) == ["python -m pip install --quiet -e .[test]"]
    assert "venv .venv" not in log
    assert log[-4:] == [
        "ruff check .",
        "ruff format --check .",
        "mypy",
        "python -m pytest -n auto --dist loadfile --no-loadscope-reorder",
    ]

    assert installs(checkout.make("test")) == []
    assert installs(checkout.make("serve")) == []


def _summary(output: str) -> list[list[str]]:
    """The rows of the phase summary that ends ``output``: name, result, duration."""
    lines = output.splitlines()
    return [line.split() for line in lines[lines.index("phase   result  time") + 1 :]]


def test_make_test_prints_each_phase_with_its_result_and_duration(checkout: Checkout) -> None:
    done = checkout.run("test")
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _summary(done.stdout)
    assert [(name, result) for name, result, _ in rows] == [
        ("lint", "passed"),
        ("format", "passed"),
        ("mypy", "passed"),
        ("tests", "passed"),
    ]
    assert all(re.fullmatch(r"\d+\.\ds", duration) for _, _, duration in rows)


def test_a_failing_phase_fails_make_test_after_every_phase_ran(checkout: Checkout) -> None:
    checkout.make("test")
    mypy = checkout.root / ".venv" / "bin" / "mypy"
    mypy.write_text('#!/bin/sh\necho "mypy $*" >> "$MAKE_LOG"\nexit 1\n')
    done = checkout.run("test")
    assert done.returncode != 0
    assert [(name, result) for name, result, _ in _summary(done.stdout)] == [
        ("lint", "passed"),
        ("format", "passed"),
        ("mypy", "FAILED"),
        ("tests", "passed"),
    ]


def test_make_check_runs_the_fast_subset(checkout: Checkout) -> None:
    log = checkout.make("check")
    assert log[-4:-1] == ["ruff check .", "ruff format --check .", "mypy"]
    assert (
        log[-1].startswith("python -m pytest ")
        and "-m not slow" in log[-1]
        and "-k not sqlite and not postgresql" in log[-1]
    )


def test_make_test_then_make_serve_installs_nothing_more(checkout: Checkout) -> None:
    assert len(installs(checkout.make("test"))) == 1
    log = checkout.make("serve")
    assert installs(log) == [] and log == ["compliance serve --db compliance.db --host 127.0.0.1 --port 3333"]


def test_a_changed_pyproject_reinstalls(checkout: Checkout) -> None:
    checkout.make("test")
    (checkout.root / "pyproject.toml").touch()
    assert installs(checkout.make("serve")) == ["python -m pip install --quiet -e .[oscal]"]
    assert installs(checkout.make("test")) == ["python -m pip install --quiet -e .[test]"]


def test_ci_runs_make_test() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert [line for line in script.splitlines() if line.startswith("make")] == ["make test"]
