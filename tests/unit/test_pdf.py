"""The policy PDF: Markdown read by a real parser (linear on any input), rendering on worker
processes with a time limit and a bounded queue (issue 16: a crafted policy stalled the server)."""

from __future__ import annotations

import datetime as dt
import io
import re
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pypdf
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core.areas.policies import PolicyDocument
from compliance_core.kernel.errors import InternalError, ServiceUnavailable, ValidationError
from compliance_pdf.markdown import Block, Span, blocks
from compliance_pdf.policies import FpdfPolicies
from compliance_pdf.pool import DEFAULT_QUEUE, DEFAULT_TIME_LIMIT, DEFAULT_WORKERS, RenderPool

AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
GATED = Path(__file__).resolve().parents[1] / "pdf_gated_worker.py"
GENEROUS = 30.0
"""A time limit far above what these inputs take once rendering is linear (milliseconds); the
patterns this replaces took 54 s for the 3,200-space heading, so it fails the test, not a clock."""


def _document(content: str, name: str = "Policy") -> PolicyDocument:
    return PolicyDocument(name=name, description="", version=1, content=content, published_at=AT)


def _text(data: bytes) -> str:
    """The PDF's text without the page footers (which would cut a long run in two)."""
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(data)).pages)
    return "\n".join(line for line in text.splitlines() if not re.fullmatch(r"Page \d+", line.strip()))


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture
def pool() -> Iterator[RenderPool]:
    """The real renderer on its worker process, as a server runs it."""
    renderer = RenderPool(time_limit=GENEROUS)
    yield renderer
    renderer.close()


@pytest.fixture(scope="module")
def shared_pool() -> Iterator[RenderPool]:
    """One such pool for the tests that only render: its worker process loads the fonts once
    (a new worker per test cost more than the renders)."""
    renderer = RenderPool(time_limit=GENEROUS)
    yield renderer
    renderer.close()


@pytest.fixture(scope="module")
def policies() -> FpdfPolicies:
    """The renderer in this process, made once (making one loads the fonts)."""
    return FpdfPolicies()


@pytest.fixture
def gate(tmp_path: Path):
    """A pool factory over workers that hold each job until ``release`` is called."""
    started, release = tmp_path / "started", tmp_path / "release"
    pools: list[RenderPool] = []

    class Gate:
        def pool(self, **options) -> RenderPool:
            made = RenderPool(command=[sys.executable, str(GATED), str(started), str(release)], **options)
            pools.append(made)
            return made

        def wait_started(self, count: int) -> None:
            for _ in range(3000):  # a bounded wait for the worker to say it holds the jobs
                if started.exists() and len(started.read_text().splitlines()) >= count:
                    return
                time.sleep(0.01)
            raise AssertionError(f"{count} jobs never reached the workers")

        def release(self) -> None:
            release.touch()

    yield Gate()
    release.touch()
    for made in pools:
        made.close()


# -- the Markdown ----------------------------------------------------------------------------


def test_blocks_keep_the_kinds_the_pdf_prints() -> None:
    content = (
        "# Title **bold**\n\nA *soft*\nbreak and __strong__.\n\n- one\n- two **b**\n  - nested\n\n"
        "3. three\n4. four\n\n---\n\n```\nraw **code**\n```\n\n[a link](http://x) `x**y`\n"
    )
    assert list(blocks(content)) == [
        Block("heading", 1, (Span("Title "), Span("bold", bold=True)), "Title **bold**", 2),
        Block(
            "paragraph",
            None,
            (Span("A "), Span("soft", italic=True), Span(" break and "), Span("strong", bold=True), Span(".")),
            "A *soft* break and __strong__.",
            4,
        ),
        Block("item", "-", (Span("one"),), "one", 0, 0),
        Block("item", "-", (Span("two "), Span("b", bold=True)), "two **b**", 2, 0),
        Block("item", "-", (Span("nested"),), "nested", 0, 1),
        Block("item", "3.", (Span("three"),), "three", 0, 0),
        Block("item", "4.", (Span("four"),), "four", 0, 0),
        Block("code", None, (Span("raw **code**"),), "raw **code**"),
        Block("paragraph", None, (Span("a link x**y"),), "[a link](http://x) `x**y`", 0),
    ]


ADVERSARIAL = {
    "a heading of 3,200 spaces": ("#" + " " * 3200 + "x", "x"),
    "a heading ending in spaces and hashes": ("# T" + " #" * 3000 + " " * 3000, "T"),
    "a line of spaces between words": ("a" + " " * 20000 + "b", "ab"),
    "a run of hashes": ("#" * 20000, "#" * 20000),
    "a run of stars": ("x " + "*" * 20000, "x" + "*" * 20000),
    "a run of underscores": ("x " + "_" * 20000, "x" + "_" * 20000),
    "nested markers": ("**_" * 5000 + "core" + "_**" * 5000, "core"),
    "unclosed emphasis": ("*a " * 5000, "*a" * 5000),
    "brackets": ("[" * 10000 + "x", "[" * 10000 + "x"),
    "list markers": ("- " * 5000 + "deep", "deep"),
    "quotes": (">" * 5000 + " q", "q"),
}


@pytest.mark.parametrize("content, expected", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_adversarial_markdown_renders_within_the_limit(shared_pool: RenderPool, content: str, expected: str) -> None:
    text = _squeezed(_text(shared_pool.render("Policy", [_document(content)], AT)))
    assert _squeezed(expected) in text


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)


@st.composite
def _markdown(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A policy of headings, paragraphs and list items whose words may be bold or italic, and
    every word it holds."""
    lines: list[str] = []
    words: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        line_words = draw(st.lists(_WORD, min_size=1, max_size=10))
        words += line_words
        styled = [
            draw(st.sampled_from(["{}", "**{}**", "*{}*", "_{}_", "__{}__", "***{}***"])).format(w) for w in line_words
        ]
        prefix = draw(st.sampled_from(["", "# ", "### ", "- ", "* ", "1. ", "> ", "  "]))
        lines.append(prefix + " ".join(styled))
        lines.append(draw(st.sampled_from(["", "\n"])))
    return "\n".join(lines), words


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_markdown())
def test_every_word_of_generated_markdown_survives_into_the_pdf(
    policies: FpdfPolicies, policy: tuple[str, list[str]]
) -> None:
    content, words = policy
    text = _text(policies.render("Policy", [_document(content)], AT))
    printed = set(re.findall(r"[A-Za-z0-9]+", text))
    assert set(words) <= printed


def test_an_approval_names_the_person_beside_their_id() -> None:
    """People, not key ids (issue 18): the approval line names the approver."""
    approved = attrs.evolve(
        _document("Text"), approved_at=AT, approved_by="mem_boss", approval_key_issued_by="key_boss"
    )
    named = _text(FpdfPolicies().render("Policy", [attrs.evolve(approved, approved_by_person_name="Boss")], AT))
    assert "Approved: 2026-01-01 by Boss (mem_boss) (key issued by key_boss)" in named
    by_key = _text(FpdfPolicies().render("Policy", [attrs.evolve(approved, approved_by="key_other")], AT))
    assert "Approved: 2026-01-01 by key_other (key issued by key_boss)" in by_key


# -- the pool --------------------------------------------------------------------------------


def test_the_pool_renders_on_a_worker_process(pool: RenderPool) -> None:
    text = _text(pool.render("Policy", [_document("# Rules\n\n- Lock your **screen**")], AT))
    assert "Rules" in text and "Lock your screen" in text
    assert "Lock your screen" in _text(pool.render("Policy", [_document("- Lock your screen")], AT))  # reused


def test_a_render_past_the_time_limit_is_stopped(gate) -> None:
    pool = gate.pool(time_limit=2)  # a render with embedded fonts takes a tenth of a second or more
    with pytest.raises(ServiceUnavailable) as raised:
        pool.render("Policy", [_document("held")], AT)
    assert raised.value.code == "internal_error" and raised.value.retry_after == 2
    assert raised.value.details == {"retryAfter": 2, "reason": "render time limit", "limitSeconds": 2}
    gate.release()
    assert "held" in _text(pool.render("Policy", [_document("held")], AT))  # a fresh worker


def test_a_real_render_past_a_tiny_limit_is_stopped() -> None:
    pool = RenderPool(time_limit=0.001)
    try:
        with pytest.raises(ServiceUnavailable):
            pool.render("Dense", [_document("**a** __b__ " * 8000)], AT)
    finally:
        pool.close()


def test_a_full_queue_refuses_at_once(gate) -> None:
    pool = gate.pool(time_limit=GENEROUS, workers=1, queue=1)
    results: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: results.append(pool.render("P", [_document("first")], AT))) for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    gate.wait_started(1)
    for _ in range(3000):
        if pool.admitted == 2:
            break
        time.sleep(0.01)
    assert pool.admitted == 2  # one rendering, one waiting
    with pytest.raises(ServiceUnavailable) as raised:
        pool.render("P", [_document("third")], AT)
    assert raised.value.details == {
        "retryAfter": 1,
        "reason": "every PDF worker is busy",
        "workers": 1,
        "queue": 1,
    }
    gate.release()
    for thread in threads:
        thread.join(GENEROUS)
    assert len(results) == 2 and pool.admitted == 0


def test_a_worker_that_cannot_start_is_an_internal_error() -> None:
    pool = RenderPool(command=[sys.executable, "-c", "pass"])
    with pytest.raises(InternalError) as raised:
        pool.render("P", [_document("x")], AT)
    assert not isinstance(raised.value, ServiceUnavailable)
    assert raised.value.details == {"reason": "worker did not start"}


def test_a_closed_pool_renders_nothing(pool: RenderPool) -> None:
    pool.render("P", [_document("x")], AT)
    pool.close()
    with pytest.raises(ServiceUnavailable):
        pool.render("P", [_document("x")], AT)


def test_settings_come_from_the_environment() -> None:
    pool = RenderPool.from_environ({})
    assert (pool.time_limit, pool.workers, pool.queue) == (DEFAULT_TIME_LIMIT, DEFAULT_WORKERS, DEFAULT_QUEUE)
    pool = RenderPool.from_environ(
        {"COMPLIANCE_PDF_TIME_LIMIT": "2.5", "COMPLIANCE_PDF_WORKERS": "2", "COMPLIANCE_PDF_QUEUE": "3"}
    )
    assert (pool.time_limit, pool.workers, pool.queue) == (2.5, 2, 3)


@pytest.mark.parametrize(
    "environ, field, value",
    [
        ({"COMPLIANCE_PDF_TIME_LIMIT": "soon"}, "COMPLIANCE_PDF_TIME_LIMIT", "soon"),
        ({"COMPLIANCE_PDF_TIME_LIMIT": "0"}, "time_limit", 0.0),
        ({"COMPLIANCE_PDF_TIME_LIMIT": "inf"}, "time_limit", float("inf")),
        ({"COMPLIANCE_PDF_WORKERS": "0"}, "workers", 0),
        ({"COMPLIANCE_PDF_WORKERS": "1.5"}, "COMPLIANCE_PDF_WORKERS", "1.5"),
        ({"COMPLIANCE_PDF_QUEUE": "-1"}, "queue", -1),
    ],
)
def test_bad_settings_name_the_setting(environ: dict[str, str], field: str, value: object) -> None:
    with pytest.raises(ValidationError) as raised:
        RenderPool.from_environ(environ)
    assert (raised.value.details["field"], raised.value.details["value"]) == (field, value)
