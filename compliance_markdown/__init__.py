"""Markdown to safe HTML with markdown-it-py, for core's ``MarkdownHtml`` port (entry point
group ``compliance.markdown``).

CommonMark with raw HTML off (``<script>`` in a comment is shown as text), tables on, images
off (a comment loads nothing from elsewhere), and links only to http, https and mailto
addresses: any other link is shown as its text. Every link gets ``rel="nofollow noopener
noreferrer"``; markdown-it escapes every attribute it writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

__all__ = ["MarkdownItHtml"]

_SCHEMES = ("http://", "https://", "mailto:")


def _allowed(url: str) -> bool:
    return url.strip().lower().startswith(_SCHEMES)


class MarkdownItHtml:
    def __init__(self) -> None:
        parser = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table").disable("image")
        parser.validateLink = _allowed  # type: ignore[method-assign]  # markdown-it-py documents replacing it
        parser.add_render_rule("link_open", self._link_open)
        parser.add_render_rule("fence", self._fence)
        self._parser = parser

    @staticmethod
    def _fence(renderer: Any, tokens: Sequence[Token], index: int, options: Any, env: Any) -> str:
        """A fenced block as plain ``<pre><code>``: its info string (```` ```python ````) would
        become a ``class`` attribute, which a comment does not carry (nothing highlights it)."""
        return f"<pre><code>{escapeHtml(tokens[index].content)}</code></pre>\n"

    @staticmethod
    def _link_open(renderer: Any, tokens: Sequence[Token], index: int, options: Any, env: Any) -> str:
        tokens[index].attrSet("rel", "nofollow noopener noreferrer")
        return str(renderer.renderToken(tokens, index, options, env))

    def render(self, markdown: str) -> str:
        return str(self._parser.render(markdown)).strip("\n")
