"""The README a newcomer reads first: two commands, examples that run from a fresh checkout
without anything else installed, every `compliance` command, and the limits as the code sets
them. (Its curl examples are run against a real server in test_first_hour.py.)"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from compliance_core.areas.organizations import PLAN_LIMITS, Plan
from compliance_http.cli import build_parser
from compliance_http.resources import MAX_BODY_BYTES
from compliance_http.wire import MAX_JSON_DEPTH

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SHELL = "\n".join(re.findall(r"```sh\n(.*?)```", README, re.DOTALL))


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command that runs something (not the groups), with its parser."""
    groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not groups:
        yield path, parser
    for group in groups:
        for name, sub in group.choices.items():
            yield from commands(sub, (*path, name))


COMMANDS = dict(commands(build_parser()))


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.DOTALL | re.MULTILINE)
    assert found, f"README has no section {title!r}"
    return found.group(1)


def test_the_two_commands_are_make_serve_and_make_test() -> None:
    [block] = re.findall(r"```sh\n(.*?)```", section("Two commands"), re.DOTALL)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    assert [c for c in commands if c] == ["make serve", "make test"]


def test_the_key_and_address_from_the_banner_are_exported_before_they_are_used() -> None:
    for name in ("COMPLIANCE_API_KEY", "COMPLIANCE_URL"):
        uses = SHELL.index(f"${name}")
        assert f"export {name}=" in SHELL[:uses]
    # the names examples/over_http.py reads, so the banner's lines serve both
    example = (ROOT / "examples" / "over_http.py").read_text()
    assert 'os.environ.get("COMPLIANCE_API_KEY")' in example and 'os.environ.get("COMPLIANCE_URL"' in example


def test_shell_examples_need_nothing_beyond_the_checkout() -> None:
    assert "uuidgen" not in README
    assert "Idempotency-Key:" in SHELL
    # the command lives in .venv after `make serve`: every example says where (or activates it)
    for line in SHELL.splitlines():
        words = line.split("#", 1)[0].split()
        if "compliance" in words:
            assert "source .venv/bin/activate" in SHELL[: SHELL.index(line)], f"`compliance` not on PATH: {line}"


def test_every_command_and_each_of_its_options_is_in_the_readme() -> None:
    table = section("The `compliance` command")
    cells = (re.split(r"(?<!\\)\|", row) for row in table.splitlines() if row.startswith("| `compliance "))
    rows = {cell[1].strip() for cell in cells}  # the command's cell (a `\|` inside it is not a column)
    for path, parser in COMMANDS.items():
        name = " ".join(path)
        [row] = [row for row in rows if row.startswith((f"`compliance {name} ", f"`compliance {name}`"))]
        for action in parser._actions:
            for option in action.option_strings:
                if option.startswith("--") and option != "--help":
                    assert option in row, f"README's row of `compliance {name}` does not mention {option}"


def test_the_default_plan_and_how_to_change_it() -> None:
    limits = PLAN_LIMITS[Plan.PROFESSIONAL]
    assert f"professional: {limits.requests_per_minute} requests/minute, burst {limits.burst}" in README
    assert "org set-plan" in SHELL


def test_the_request_limits_are_the_code_s() -> None:
    assert MAX_BODY_BYTES == 8 * 1024 * 1024
    assert "8 MiB" in README and "413" in README
    assert f"{MAX_JSON_DEPTH} levels" in README


def test_the_api_notes_give_the_same_limits_and_the_purge() -> None:
    notes = (ROOT / "docs" / "api.md").read_text()
    assert "| 413 | validation_error |" in notes and "8 MiB" in notes
    assert f"{MAX_JSON_DEPTH} levels" in notes
    assert "compliance maintenance" in notes and "purgedIdempotencyRecords" in notes


def test_the_api_notes_say_keys_may_act_as_a_person() -> None:
    notes = (ROOT / "docs" / "api.md").read_text()
    assert "not bound to people" not in notes  # employee and contractor keys must be
    assert "`personId` is required" in notes and "bound to the previous Owner" in notes
