"""Headless Chromium for the pages a user opens in a browser.

The browser is Debian's ``chromium`` at /usr/bin/chromium, which ``make setup`` installs (apt-get,
when it is missing), driven through Playwright's Python package: no ``playwright install``
download. Without it the browser tests fail, saying how to install it; they never skip, so a CI
machine without a browser cannot pass them silently.

``browser_page`` is a fresh page (its own context) that records every console error and every
uncaught exception of the page in ``console_errors`` (with the URL it came from, so a failed asset
names itself); ``live_server`` serves a WSGI app (a
Falcon app) on a loopback port from a thread for the length of a test.
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from browser_support import BrowserPage

CHROMIUM = Path("/usr/bin/chromium")


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    """A thread per request: a browser loads a page's assets over several connections at once."""

    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def live_server() -> Iterator[Callable[[Any], str]]:
    """``serve(app)`` starts ``app`` on 127.0.0.1 (a free port) in a thread and returns its base
    URL (``http://127.0.0.1:PORT``); every server started is shut down after the test."""
    servers: list[tuple[_ThreadingServer, threading.Thread]] = []

    def serve(app: Any) -> str:
        server = make_server("127.0.0.1", 0, app, server_class=_ThreadingServer, handler_class=_QuietHandler)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        servers.append((server, thread))
        return f"http://127.0.0.1:{server.server_port}"

    yield serve
    for server, thread in servers:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium per test process (launching takes about a second)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium (`make setup` installs it,"
            " or `apt-get install chromium`)",
            pytrace=False,
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright's Python package is missing: `make setup` installs the test extras", pytrace=False)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_page(chromium: Any) -> Iterator[BrowserPage]:
    """A new page in a context of its own, recording console errors and uncaught exceptions."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []

    def on_console(message: Any) -> None:
        if message.type == "error":
            url = message.location.get("url")
            errors.append(f"{message.text} [{url}]" if url else message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: errors.append(f"pageerror: {error}"))
    try:
        yield BrowserPage(page=page, console_errors=errors)
    finally:
        context.close()
