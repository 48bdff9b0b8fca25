"""What only a real `compliance serve` shows: limits shared by its processes, and the first run."""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from compliance_core.areas.organizations import Plan
from e2e_support import start_server

pytestmark = pytest.mark.slow


def test_rate_limits_hold_across_two_worker_processes(harnesses) -> None:
    harness = harnesses("server")
    server = harness.server
    pid = server.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        assert len(children.read_text().split()) == 2
    boot = harness.platform.bootstrap("Free Org", Plan.FREE)  # 30 requests/minute, burst 60

    def call(_: int) -> httpx.Response:
        # a new connection per request, so the two processes share the work
        return httpx.get(
            f"{server.url}/v1/vendors", headers={"X-API-Key": boot.owner_key.secret, "Connection": "close"}
        )

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(call, range(75)))
    elapsed = time.monotonic() - started

    allowed = [r for r in responses if r.status_code == 200]
    limited = [r for r in responses if r.status_code == 429]
    assert len(allowed) + len(limited) == len(responses)
    # One bucket for the key whichever process answers: 60 at once, then one more per 2 s.
    # (A bucket per process would have let up to 120 through.)
    assert 60 <= len(allowed) <= 60 + int(elapsed / 2)
    assert limited
    assert {r.headers["X-RateLimit-Limit"] for r in responses} == {"60"}
    body = limited[0].json()
    assert body["error"]["code"] == "rate_limited" and body["requestId"]
    assert int(limited[0].headers["Retry-After"]) >= 1


def test_the_first_serve_prints_an_owner_key_once(tmp_path: Path) -> None:
    db = tmp_path / "first-run.db"
    first = start_server(db, workers=1)
    try:
        key = re.search(r"^\s+API key\s+(comp_[0-9a-f]{64})$", first.startup, re.M).group(1)
        org_id = re.search(r"^\s+organizationId\s+(org_\w+)$", first.startup, re.M).group(1)
        assert f"{first.url}/v1" in first.startup
        answer = httpx.get(f"{first.url}/v1/organization", headers={"X-API-Key": key})
        assert answer.status_code == 200 and answer.json()["id"] == org_id
    finally:
        rest = first.stop()
    assert first.process.returncode == 0
    assert "comp_" not in rest

    second = start_server(db, workers=1)
    output = second.startup + second.stop()
    assert second.process.returncode == 0
    assert "comp_" not in output and "First run" not in output
    assert "listening on" in output
