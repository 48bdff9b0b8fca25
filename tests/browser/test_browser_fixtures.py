"""The browser fixtures themselves: a page served by ``live_server`` renders in Chromium, and what
its console reports as an error reaches ``console_errors`` (a page test relying on an empty list
would otherwise pass by never listening)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from browser_support import BrowserPage


class _Page:
    def __init__(self, script: str) -> None:
        self._script = script

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = falcon.MEDIA_HTML
        resp.text = f"<!doctype html><title>t</title><link rel='icon' href='data:,'><h1 id='greeting'>hello</h1><script>{self._script}</script>"


def _app() -> falcon.App:
    app = falcon.App()
    app.add_route("/quiet", _Page("document.title = 'quiet';"))
    app.add_route("/noisy", _Page("console.error('something broke'); undefinedFunction();"))
    return app


def test_a_served_page_renders_and_a_quiet_console_has_no_errors(
    live_server: Callable[[Any], str], browser_page: BrowserPage
) -> None:
    base = live_server(_app())
    response = browser_page.page.goto(f"{base}/quiet")
    assert response is not None and response.status == 200
    assert browser_page.page.text_content("#greeting") == "hello"
    assert browser_page.page.title() == "quiet"
    assert browser_page.console_errors == []


def test_console_errors_and_uncaught_exceptions_are_recorded(
    live_server: Callable[[Any], str], browser_page: BrowserPage
) -> None:
    base = live_server(_app())
    browser_page.page.goto(f"{base}/noisy")
    browser_page.page.wait_for_load_state("load")
    assert browser_page.console_errors[0].startswith("something broke [http://127.0.0.1:")
    assert any(e.startswith("pageerror:") and "undefinedFunction" in e for e in browser_page.console_errors)
