"""The risk heat map's SVG in a real browser: Chromium opens it (shown inline, not saved), draws
both matrices with the counts and the unassessed line, and its console stays free of errors."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import BrowserPage
from compliance_core import Platform
from compliance_core.areas.risks import NewRisk
from compliance_http.app import create_app


@pytest.fixture
def served(live_server: Callable[[Any], str]) -> Iterator[tuple[str, str]]:
    """A server whose register holds three rated risks and one unassessed; its URL and key."""
    with Platform.open("memory://") as platform:
        boot = platform.bootstrap("Heat Map Ltd")
        owner = platform.actor(boot.organization.id)
        for likelihood, impact in ((4, 4), (4, 4), (1, 5)):
            platform.risks.create(
                owner,
                NewRisk(title="Rated", likelihood=likelihood, impact=impact, residual_likelihood=2, residual_impact=2),
            )
        platform.risks.create(owner, NewRisk(title="Not rated yet"))
        assert boot.owner_key.secret is not None
        yield live_server(create_app(platform)), boot.owner_key.secret


_VIEW = """<!doctype html>
<html><head><meta charset="utf-8"><title>Risks</title><link rel="icon" href="data:,"></head>
<body><img id="picture" alt="risk heat map" src="/v1/risks/heat-map.svg"><div id="drawn"></div></body></html>"""
"""A page of the server's origin showing the SVG as a dashboard would: as an image, and inline."""


def test_chromium_shows_the_heat_map_svg(served: tuple[str, str], browser_page: BrowserPage, tmp_path: Path) -> None:
    url, key = served
    page = browser_page.page
    page.set_extra_http_headers({"X-API-Key": key})  # every request of the page, the image's too
    page.route(f"{url}/view.html", lambda route: route.fulfill(body=_VIEW, content_type="text/html"))
    page.goto(f"{url}/view.html", wait_until="load")

    size = page.evaluate(
        "[document.getElementById('picture').naturalWidth, document.getElementById('picture').naturalHeight]"
    )
    assert size == [1264, 472]  # the image decoded at the SVG's own size
    answer = page.evaluate(
        """async () => {
            const response = await fetch('/v1/risks/heat-map.svg');
            document.getElementById('drawn').innerHTML = await response.text();
            return [response.status, response.headers.get('content-type')];
        }"""
    )
    assert answer == [200, "image/svg+xml"]
    drawn = page.locator("#drawn svg")
    assert drawn.locator("g[data-matrix] > rect").count() == 50
    counts = drawn.locator("g[data-matrix=inherent] rect[data-count='2']")
    assert counts.count() == 1 and counts.first.get_attribute("data-likelihood") == "likely"
    assert drawn.locator("g[data-matrix=residual] rect[data-count='3']").count() == 1
    box = drawn.bounding_box()
    assert box is not None and (box["width"], box["height"]) == (1264, 472)
    unassessed = [text.strip() for text in drawn.locator("text.unassessed").all_text_contents()]
    assert unassessed == ["assessed: 3 \u00b7 unassessed (not in a cell): 1"] * 2

    screenshot = tmp_path / "heat-map.png"
    page.screenshot(path=str(screenshot), full_page=True)
    data = screenshot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height >= 2 * 472  # the image above, the inline drawing below
    assert len(data) > 20_000  # coloured cells, not a blank page
    assert browser_page.console_errors == []
