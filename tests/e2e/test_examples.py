"""The programs in examples/ run as a newcomer would run them: by the command each one's
docstring shows, from the checkout."""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import os
import re
import shlex
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def documented_command(name: str) -> list[str]:
    """The command line the example's docstring gives to run it (its comment dropped)."""
    docstring = ast.get_docstring(ast.parse((EXAMPLES / name).read_text())) or ""
    [line] = [line for line in docstring.splitlines() if f"examples/{name}" in line]
    return shlex.split(line.split("#", 1)[0])


@pytest.mark.parametrize("name", sorted(path.name for path in EXAMPLES.glob("*.py")))
def test_each_example_says_how_to_run_it_with_the_virtual_environment_s_python(name: str) -> None:
    # a bare `python` is not the one `make serve` installed the platform into
    assert documented_command(name)[:2] == [".venv/bin/python", f"examples/{name}"]
    assert (ROOT / ".venv" / "bin" / "python").exists()


def run_example(name: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        documented_command(name), cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )


def test_in_process_example() -> None:
    done = run_example("in_process.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "2 vendors process personal data:",
        "  - Cloud Hosting GmbH (DE, critical)",
        "  - Mail Delivery Inc (US, important)",
        "rejected: transferMechanism is required for a vendor outside the EEA (US) that processes personal data",
    ]


def test_subscribe_to_events_example() -> None:
    done = run_example("subscribe_to_events.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "event vendor.created: Cloud Hosting GmbH",
        "event vendor.updated: Cloud Hosting GmbH",
        "event finding.created: TLS 1.0 enabled",
        "event finding.updated: TLS 1.0 enabled",
        "event finding.severity_changed: TLS 1.0 enabled",
        "  severity of 'TLS 1.0 enabled': medium -> high",
        "rejected, no event: transferMechanism",
        "audit vendor.updated by local: {'criticality': {'old': 'standard', 'new': 'critical'}}",
        "audit vendor.created by local: 10 fields set",  # unrated: no ratings, scores or levels
    ]


def test_webhooks_example() -> None:
    done = run_example("webhooks.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["finding.created: MFA not enforced", "finding.updated: MFA not enforced"]


def test_policies_example() -> None:
    done = run_example("policies.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"version 1 published; next review \d{4}-\d{2}-\d{2}", lines[0]), lines
    assert lines[1:] == [
        "signed by 1 of 1",
        "version 2 published; signed by 0 of 1",
        "refused: role employee may not policy:write",
        "PDF starts with %PDF-",
    ]


@pytest.mark.slow
def test_over_http_example_against_a_real_server(serve, tmp_path: Path) -> None:
    server = serve(tmp_path / "example.db", workers=1)
    key = re.search(r"API key\s+(comp_[0-9a-f]+)", server.startup)
    assert key, server.startup
    done = run_example("over_http.py", COMPLIANCE_URL=server.url, COMPLIANCE_API_KEY=key.group(1))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "created Cloud Hosting GmbH once: True",
        "  critical: Cloud Hosting GmbH (DE)",
        "rejected: transferMechanism is required for a vendor outside the EEA (US) that processes personal data",
    ]


def test_over_http_example_asks_for_a_key() -> None:
    env = {k: v for k, v in os.environ.items() if k != "COMPLIANCE_API_KEY"}
    done = subprocess.run(
        documented_command("over_http.py"), cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 2 and "COMPLIANCE_API_KEY" in done.stderr


def test_webhook_receiver_example_prints_signed_events_and_refuses_others() -> None:
    with socket.socket() as probe:  # a free port, as a reader picks one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [*documented_command("webhook_receiver.py")[:2], "--port", str(port), "--count", "1", "--timeout", "30"]
    secret = "whsec_dGVzdA=="
    receiver = subprocess.Popen(
        argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "WEBHOOK_SECRET": secret},
    )
    try:
        body = json.dumps({"id": "evt_1", "type": "finding.created", "data": {"id": "fnd_1", "title": "MFA"}}).encode()
        signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        for _ in range(100):  # until it listens
            try:
                forged = httpx.post(
                    f"http://127.0.0.1:{port}/", content=body, headers={"X-Service-Signature": "0" * 64}
                )
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert forged.status_code == 401
        signed = httpx.post(f"http://127.0.0.1:{port}/", content=body, headers={"X-Service-Signature": signature})
        assert signed.status_code == 204
        out, err = receiver.communicate(timeout=30)
    finally:
        receiver.kill()
    assert receiver.returncode == 0, err
    assert out.splitlines() == ["finding.created evt_1: MFA"]
    assert "signature does not match" in err
