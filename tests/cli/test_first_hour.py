"""A newcomer's first hour, with real processes: `compliance serve` on an empty database, its
banner's hints, the README's curl examples run as written, and the access log (and --quiet)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import attrs
import httpx
import pytest

COMPLIANCE = str(Path(sys.executable).with_name("compliance"))
ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LISTENING = re.compile(r"listening on (http://\S+)/v1")
ACCESS_LINE = re.compile(r'^\{"time":.*"requestId":"req_[0-9a-f]+"', re.MULTILINE)

pytestmark = pytest.mark.slow


@attrs.define
class Server:
    process: subprocess.Popen[str]
    url: str
    startup: str
    errors: IO[str]

    def stop(self) -> str:
        """Stop as Ctrl+C would; return everything it wrote on stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.errors.seek(0)
        return self.errors.read()


def start(db: Path, *options: str) -> Server:
    errors = tempfile.TemporaryFile("w+")  # noqa: SIM115 (closed with the test's tmp files)
    env = {k: v for k, v in os.environ.items() if k != "COMPLIANCE_DB"}
    process = subprocess.Popen(
        [COMPLIANCE, "serve", "--db", str(db), "--port", "0", "--workers", "1", *options],
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line)
        found = LISTENING.search(line)
        if found:
            return Server(process, found.group(1), "".join(lines), errors)
    process.wait(10)
    errors.seek(0)
    pytest.fail(f"the server did not start: {''.join(lines)}{errors.read()}")


@pytest.fixture
def first_run(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    db = tmp_path / "first run.db"
    server = start(db, "--quiet")
    try:
        yield server, db
    finally:
        server.stop()


def _json_values(text: str) -> list[object]:
    decoder, values, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        values.append(value)
    return values


def hint(banner: str, label: str) -> list[str]:
    """The command a banner line labelled ``label`` shows, as argv (the program as the server
    was started: `compliance` when that is on PATH, else its path)."""
    [line] = [line.strip() for line in banner.splitlines() if line.strip().startswith(label)]
    argv = shlex.split(line[len(label) :])
    assert Path(argv[0]).name == "compliance"
    return argv


def readme_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README.read_text(), re.DOTALL)


def banner_exports(banner: str) -> dict[str, str]:
    """The ``export NAME=value`` lines of the banner, which the README has the reader paste."""
    return dict(re.findall(r"^\s*export ([A-Z_]+)=(\S+)\s*$", banner, re.MULTILINE))


def test_the_banner_gives_the_key_as_an_export_and_hints_that_work(first_run) -> None:
    server, db = first_run
    banner = server.startup
    exports = banner_exports(banner)
    assert exports["COMPLIANCE_URL"] == server.url
    key = exports["COMPLIANCE_API_KEY"]
    response = httpx.get(f"{server.url}/v1/vendors", headers={"X-API-Key": key})
    assert response.status_code == 200

    argv = hint(banner, "More keys:")
    assert argv[argv.index("--db") + 1] == str(db.resolve())
    argv = [{"NAME": "CI", "ROLE": "auditor"}.get(word, word) for word in argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    auditor = json.loads(done.stdout)["key"]
    assert httpx.get(f"{server.url}/v1/vendors", headers={"X-API-Key": auditor}).status_code == 200

    argv = hint(banner, "Organizations:")
    assert argv[1:3] == ["org", "list"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [o["name"] for o in json.loads(done.stdout)] == ["Default organization"]


def test_the_readme_curl_examples_run_as_written(first_run) -> None:
    server, _ = first_run
    exports = banner_exports(server.startup)
    key = exports["COMPLIANCE_API_KEY"]
    [script] = [b for b in readme_blocks() if "Idempotency-Key: create-cloud-co-1" in b]
    assert "uuidgen" not in script

    def run_block() -> list[object]:
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **exports},
        )
        assert done.returncode == 0, done.stderr
        return _json_values(done.stdout)

    first = run_block()
    assert first[0]["status"] == "ok"  # type: ignore[index]
    created = first[-1]
    assert isinstance(created, dict) and created["name"] == "Cloud Co", created
    again = run_block()  # the same Idempotency-Key: the same vendor, not a second one
    assert again[-1]["id"] == created["id"]  # type: ignore[index]
    listing = httpx.get(f"{server.url}/v1/vendors", headers={"X-API-Key": key}).json()
    assert listing["count"] == 1


def test_quiet_writes_no_access_log_and_the_default_does(first_run, tmp_path: Path) -> None:
    quiet, _ = first_run
    assert httpx.get(f"{quiet.url}/v1/health").status_code == 200

    loud = start(tmp_path / "loud.db")
    try:
        assert httpx.get(f"{loud.url}/v1/health").status_code == 200
        assert httpx.get(f"{loud.url}/v1/vendors").status_code == 401
    finally:
        written = loud.stop()
    assert len(ACCESS_LINE.findall(written)) >= 2, written

    written = quiet.stop()
    assert not ACCESS_LINE.search(written), written
