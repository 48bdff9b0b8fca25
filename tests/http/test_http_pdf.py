"""Policy PDFs over HTTP while rendering is slow or busy (issue 16): a render past its time limit
and a full render queue answer 503 in the spec's error shape with Retry-After, and health and
other requests keep answering while renders are under way."""

from __future__ import annotations

import io
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import falcon.testing
import pypdf
import pytest

from compliance_core import Platform
from compliance_http.openapi import openapi_document
from compliance_pdf.pool import RenderPool
from http_support import Api, check_answer, error

ROOT = "/v1/policies"
GATED = Path(__file__).resolve().parents[1] / "pdf_gated_worker.py"
POLICY = {"name": "Acceptable use", "content": "# Rules\n\n- Lock your **screen**", "frequency": "yearly"}


class Gate:
    """Workers that hold each job until ``release``: renders kept busy for as long as a test needs."""

    def __init__(self, folder: Path) -> None:
        self.started, self.released = folder / "started", folder / "release"
        self.pools: list[RenderPool] = []

    def pool(self, **options) -> RenderPool:
        made = RenderPool(command=[sys.executable, str(GATED), str(self.started), str(self.released)], **options)
        self.pools.append(made)
        return made

    def wait_started(self, count: int) -> None:
        for _ in range(3000):  # a bounded wait for the workers to hold the jobs
            if self.started.exists() and len(self.started.read_text().splitlines()) >= count:
                return
            time.sleep(0.01)
        raise AssertionError(f"{count} jobs never reached the workers")

    def release(self) -> None:
        self.released.touch()


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    made = Gate(tmp_path)
    yield made
    made.release()
    for pool in made.pools:
        pool.close()


def _published(api: Api) -> str:
    policy = api.post(ROOT, POLICY).json
    assert api.post(f"{ROOT}/{policy['id']}/versions/publish", {}).status_code in (200, 201)
    return f"{ROOT}/{policy['id']}/pdf"


def _use(platform: Platform, pool: RenderPool) -> None:
    platform.policies.renderer = lambda: pool


def _in_background(call) -> tuple[threading.Thread, list[falcon.testing.Result]]:
    results: list[falcon.testing.Result] = []
    thread = threading.Thread(target=lambda: results.append(call()))
    thread.start()
    return thread, results


def test_a_render_past_the_time_limit_answers_503(api: Api, platform: Platform, gate: Gate) -> None:
    _use(platform, gate.pool(time_limit=0.5))
    pdf = _published(api)
    result = api.get(pdf)
    details = error(result, 503, "internal_error")
    assert details == {"retryAfter": 1, "reason": "render time limit", "limitSeconds": 0.5}
    assert result.headers["Retry-After"] == "1"
    assert result.json["requestId"] == result.headers["X-Request-Id"]
    document = openapi_document()
    check_answer(document, f"{ROOT}/{{policyId}}/pdf", "GET", 503, result.json)
    every = api.get(f"{ROOT}/download-all")
    error(every, 503, "internal_error")
    check_answer(document, f"{ROOT}/download-all", "GET", 503, every.json)
    gate.release()
    again = api.get(pdf)
    assert again.status_code == 200, again.text
    assert "Lock your screen" in pypdf.PdfReader(io.BytesIO(again.content)).pages[0].extract_text()


def test_health_and_other_requests_answer_while_renders_are_busy(api: Api, platform: Platform, gate: Gate) -> None:
    _use(platform, gate.pool(time_limit=60, workers=1, queue=0))
    pdf = _published(api)
    thread, results = _in_background(lambda: api.get(pdf))
    try:
        gate.wait_started(1)
        assert Api(api.app, None).get("/v1/health").status_code == 200
        assert api.get(ROOT).status_code == 200
        busy = api.get(pdf)  # the one worker is held and nothing may wait: refused at once
        details = error(busy, 503, "internal_error")
        assert details == {"retryAfter": 1, "reason": "every PDF worker is busy", "workers": 1, "queue": 0}
        assert busy.headers["Retry-After"] == "1"
    finally:
        gate.release()
        thread.join(60)
    assert [r.status_code for r in results] == [200]
    assert api.get(pdf).status_code == 200


def test_a_full_queue_answers_503_and_the_queued_render_completes(api: Api, platform: Platform, gate: Gate) -> None:
    pool = gate.pool(time_limit=60, workers=1, queue=1)
    _use(platform, pool)
    pdf = _published(api)
    first, first_results = _in_background(lambda: api.get(pdf))
    gate.wait_started(1)
    second, second_results = _in_background(lambda: api.get(pdf))
    try:
        for _ in range(3000):  # a bounded wait for the second render to be queued
            if pool.admitted == 2:
                break
            time.sleep(0.01)
        assert pool.admitted == 2
        error(api.get(pdf), 503, "internal_error")
        assert Api(api.app, None).get("/v1/health").status_code == 200
    finally:
        gate.release()
        first.join(60)
        second.join(60)
    assert [r.status_code for r in first_results + second_results] == [200, 200]
