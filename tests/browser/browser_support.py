"""What the browser fixtures hand a test (a module of its own so tests can import the type)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["BrowserPage"]


@attrs.frozen
class BrowserPage:
    """A Playwright page and what its console reported as errors (messages of type ``error``, and
    uncaught exceptions as ``pageerror: ...``), in order."""

    page: Page
    console_errors: list[str]
