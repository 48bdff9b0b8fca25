"""/docs in a real browser: Swagger UI renders every tag's operations from our OpenAPI document,
with every asset from our server (its Content-Security-Policy allows nothing else), and the
page's console stays free of errors."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import BrowserPage
from compliance_core import Platform
from compliance_http.app import create_app


@pytest.fixture
def server(live_server: Callable[[Any], str]) -> Iterator[str]:
    with Platform.open("memory://") as platform:
        yield live_server(create_app(platform))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_reference_renders_the_operations_offline(server: str, browser_page: BrowserPage, tmp_path: Path) -> None:
    page = browser_page.page
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{server}/", wait_until="load")
    page.click("text=API reference")
    page.wait_for_url(f"{server}/docs")
    page.wait_for_selector(".opblock-summary", timeout=30_000)

    assert page.locator(".info .title").first.inner_text().startswith("Compliance API")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert len(paths) > 50 and "/v1/vendors" in {p.replace("\u200b", "") for p in paths}
    # "Try it out" calls the server the page came from, not the document's default address.
    assert page.locator(".servers select option").first.get_attribute("value") == server

    screenshot = tmp_path / "docs.png"
    page.screenshot(path=str(screenshot), full_page=False)
    data = screenshot.read_bytes()
    assert _png_size(data) == (1280, 900)
    assert len(data) > 20_000  # a rendered page, not a blank one

    assert all(url.startswith(f"{server}/") for url in requested), [u for u in requested if not u.startswith(server)]
    assert browser_page.console_errors == []


def test_an_operation_opens_with_its_parameters_and_responses(server: str, browser_page: BrowserPage) -> None:
    page = browser_page.page
    page.goto(f"{server}/docs")
    page.wait_for_selector(".opblock-summary", timeout=30_000)
    page.locator(".opblock-get .opblock-summary", has_text="/v1/vendors").first.click()
    page.wait_for_selector(".opblock-body .parameters", timeout=10_000)
    body = page.locator(".opblock.is-open").first.inner_text()
    assert "perPage" in body and "200" in body
    assert browser_page.console_errors == []
