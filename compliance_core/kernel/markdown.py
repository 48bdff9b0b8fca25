"""Markdown shown as HTML in a page (a comment's ``contentHtml``): a port, so core imports no
Markdown library; the ``compliance_markdown`` package fills it with markdown-it-py (CommonMark,
raw HTML off), found through the ``compliance.markdown`` entry point as the PDF and sheet
adapters are.

Without an adapter installed, the honest default shows the text as written: escaped, in
paragraphs, with its line breaks, and no Markdown rendered.
"""

from __future__ import annotations

import html
import importlib.metadata
from typing import Protocol

__all__ = ["MarkdownHtml", "PlainText", "MARKDOWN_ENTRY_POINTS", "markdown_html"]

MARKDOWN_ENTRY_POINTS = "compliance.markdown"


class MarkdownHtml(Protocol):
    def render(self, markdown: str) -> str:
        """``markdown`` as HTML that is safe in a page: raw HTML in it shown as text, links only
        to http, https and mailto addresses, no images (a comment cannot load anything)."""
        ...


class PlainText:
    """The text as written, escaped, paragraphs split at blank lines, lines kept."""

    def render(self, markdown: str) -> str:
        paragraphs = [part.strip("\n") for part in markdown.replace("\r\n", "\n").split("\n\n") if part.strip()]
        return "\n".join("<p>" + html.escape(part).replace("\n", "<br>\n") + "</p>" for part in paragraphs)


def markdown_html() -> MarkdownHtml:
    """The installed adapter, else ``PlainText``."""
    for entry in importlib.metadata.entry_points(group=MARKDOWN_ENTRY_POINTS):
        found: MarkdownHtml = entry.load()()
        return found
    return PlainText()
