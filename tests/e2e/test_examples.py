"""The programs in examples/ run as a newcomer would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
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
        "audit vendor.created by local: 13 fields set",
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
        [sys.executable, str(EXAMPLES / "over_http.py")], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 2 and "COMPLIANCE_API_KEY" in done.stderr
