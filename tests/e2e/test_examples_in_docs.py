"""Every shell block of README.md and docs/*.md, run as a reader pastes it, so a documented
command cannot rot: against a real `compliance serve` on a new SQLite file, in a shell holding
what the server's first-run banner tells the reader to export (and nothing else), from a folder
that looks like the checkout after `make serve` (`.venv`, `examples/`, and `compliance.db`, the
database being served). Each block runs under `bash -euo pipefail`, so an undefined variable or a
failing command fails it, and curl fails on an HTTP error (its `fail-with-body` option, set in a
curlrc of the test's own), so a refused request fails it too.

A block that cannot run here (one that serves until Ctrl+C, reaches the reader's own database
host, or writes into the checkout) is marked in the markdown by an HTML comment on the line right
before it, ``<!-- not-run: why -->``, and listed in ``NOT_RUN`` below, so the exceptions cannot
grow unnoticed. README's Python blocks run too: they are whole programs a reader copies.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest

from e2e_support import ServerProcess

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"sh", "bash", "shell", "console"}
NOT_RUN_MARK = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.*?)\s*-->$")
EXPORT = re.compile(r"^\s*export (?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>\S+)\s*$", re.MULTILINE)

NOT_RUN = {
    ("README.md", "make serve"),
    ("README.md", "export COMPLIANCE_URL=http://127.0.0.1:3333"),
    ("docs/deploy.md", "compliance serve --host 0.0.0.0 --port 3333 --workers 4"),
    ("docs/deploy.md", "pg_dump --format=custom --schema=compliance --file=compliance-$(date +%F).dump"),
    ("docs/deploy.md", "compliance migrate-store --from /srv/compliance/compliance.db"),
    ("docs/migrations.md", "make migration NAME=vendor_owner"),
    ("docs/performance.md", "make bench"),
    ("docs/webhooks.md", "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1 make serve"),
}
"""(document, first command) of each block marked not-run: a new one must be added here on purpose."""


@attrs.frozen
class Block:
    document: str
    line: int
    language: str
    code: str
    not_run: str | None
    """The reason its marker gives, or None for a block that runs."""

    @property
    def first_command(self) -> str:
        """Its first line that is not only a comment, without its comment or continuation."""
        commands = (line.split("#", 1)[0].strip() for line in self.script.splitlines())
        return next((command.removesuffix("\\").strip() for command in commands if command), "")

    @property
    def script(self) -> str:
        """What a reader pastes: a console block's ``$ `` lines without their prompt."""
        if self.language != "console":
            return self.code
        return "\n".join(line[2:] for line in self.code.splitlines() if line.startswith("$ "))


def blocks_of(path: Path) -> Iterator[Block]:
    """The fenced blocks of a markdown file, indented ones (inside a list item) dedented."""
    lines = path.read_text().splitlines()
    document = str(path.relative_to(ROOT))
    at = 0
    while at < len(lines):
        opening = re.match(r"^(?P<indent>\s*)```(?P<language>[\w-]*)", lines[at])
        if not opening:
            at += 1
            continue
        indent = opening.group("indent")
        end = next(i for i in range(at + 1, len(lines)) if lines[i].strip() == "```")
        body = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in lines[at + 1 : end]]
        before = lines[at - 1].strip() if at > 0 else ""
        mark = NOT_RUN_MARK.match(before)
        yield Block(
            document, at + 1, opening.group("language"), "\n".join(body), mark.group("reason") if mark else None
        )
        at = end + 1


BLOCKS = [block for path in DOCUMENTS for block in blocks_of(path)]
SHELL_BLOCKS = [block for block in BLOCKS if block.language in SHELLS]
RUNNABLE = [block for block in SHELL_BLOCKS if block.not_run is None]
README_PROGRAMS = [block for block in BLOCKS if block.document == "README.md" and block.language == "python"]


def block_id(block: Block) -> str:
    return f"{block.document}:{block.line}"


def test_the_blocks_not_run_are_the_listed_ones_each_with_its_reason() -> None:
    marked = [block for block in SHELL_BLOCKS if block.not_run is not None]
    assert {(block.document, block.first_command) for block in marked} == NOT_RUN
    assert all(block.not_run for block in marked), "a not-run mark says why"


def test_every_not_run_mark_stands_right_before_a_shell_block() -> None:
    for path in DOCUMENTS:
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines):
            if NOT_RUN_MARK.match(line.strip()):
                following = lines[number + 1].strip() if number + 1 < len(lines) else ""
                language = following[3:].strip()
                assert following.startswith("```") and language in SHELLS, f"{path.name}:{number + 1}: {following!r}"


def test_there_are_shell_blocks_to_run() -> None:
    documents = {block.document for block in RUNNABLE}
    assert {"README.md", "docs/api.md", "docs/deploy.md", "docs/webhooks.md"} <= documents


@attrs.frozen
class Reader:
    """The shell a reader pastes into: its folder and environment, and the server it talks to."""

    server: ServerProcess
    folder: Path
    env: dict[str, str]

    def run(self, script: str, program: tuple[str, ...] = ("bash", "-euo", "pipefail", "-c"), where: str = "") -> str:
        done = subprocess.run(
            [*program, script], cwd=self.folder, env=self.env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (
            f"{where} exit {done.returncode}\n{script}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )
        return done.stdout

    def organizations(self) -> list[str]:
        listed = self.run(".venv/bin/compliance org list --db compliance.db")
        return sorted(organization["id"] for organization in json.loads(listed))


def banner_exports(startup: str) -> dict[str, str]:
    """The variables the first-run banner tells the reader to export."""
    return {found.group("name"): found.group("value") for found in EXPORT.finditer(startup)}


def reader_environment(exports: dict[str, str], curl_home: Path) -> dict[str, str]:
    """This process's environment without anything of ours (no COMPLIANCE_* variable, no .venv on
    PATH: a reader has neither before pasting), plus the banner's exports."""
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPLIANCE_", "VIRTUAL_ENV", "PYTHON"))}
    return {**env, "PATH": path, "CURL_HOME": str(curl_home), **exports}


@pytest.fixture(scope="module")
def reader(serve: Callable[..., ServerProcess], tmp_path_factory: pytest.TempPathFactory) -> Reader:
    folder = tmp_path_factory.mktemp("checkout")
    (folder / ".venv").symlink_to(ROOT / ".venv")
    (folder / "examples").symlink_to(ROOT / "examples")
    curl_home = tmp_path_factory.mktemp("curl")
    # a refused request (4xx, 5xx) fails the block (`fail`, not `fail-with-body`: a block may say -f)
    (curl_home / ".curlrc").write_text("fail\nshow-error\n")
    # docs/webhooks.md has the reader start the server so, to try a receiver on localhost
    server = serve(folder / "compliance.db", workers=1, env={"COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS": "1"})
    exports = banner_exports(server.startup)
    assert set(exports) == {"COMPLIANCE_URL", "COMPLIANCE_API_KEY"}, server.startup
    return Reader(server, folder, reader_environment(exports, curl_home))


@pytest.mark.parametrize("document", sorted({block.document for block in RUNNABLE}))
def test_the_shell_blocks_run_as_pasted(reader: Reader, document: str) -> None:
    """In the order a reader meets them, each in its own shell, all in one folder (a file one
    block writes, a later one of the same page may read)."""
    for block in RUNNABLE:
        if block.document == document:
            reader.run(block.script, where=block_id(block))


def test_a_refused_request_fails_a_block(reader: Reader) -> None:
    """The check above would pass a curl that the server refused, without the curlrc."""
    with pytest.raises(AssertionError, match="401"):
        reader.run('curl -s "$COMPLIANCE_URL/v1/vendors" -H "X-API-Key: comp_wrong"')
    with pytest.raises(AssertionError, match="unbound variable"):
        reader.run('curl -s "$URL/v1/health"')


@pytest.mark.parametrize("block", README_PROGRAMS, ids=block_id)
def test_the_readme_programs_run_and_leave_the_served_database_alone(reader: Reader, block: Block) -> None:
    before = reader.organizations()
    files = sorted(path.name for path in reader.folder.iterdir())
    reader.run(block.code, program=(".venv/bin/python", "-c"))
    assert reader.organizations() == before
    assert sorted(path.name for path in reader.folder.iterdir()) == files
