"""A comment's Markdown as HTML that is safe to put in a page, with its mentions.

The Markdown itself is rendered by the platform's ``MarkdownHtml`` port (markdown-it-py through
``compliance_markdown``: raw HTML shown as text, links to http, https and mailto only, no
images). Mentions (``@[Name](mem_...)``) are not Markdown: each is set aside before rendering
and put back after it, as a ``<span class="mention">`` for a person the comment recorded, and as
the name alone for anything else.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection

from ...kernel.markdown import MarkdownHtml, PlainText

__all__ = ["MENTION", "to_html"]

_NAME = r"[^\[\]\n]{1,100}"
_PERSON = r"[a-z]{1,20}(?:_[a-z]{1,20})?_[0-9A-Za-z]{1,64}"
MENTION = re.compile(rf"@\[({_NAME})\]\(({_PERSON})\)")
"""``@[Ada Lovelace](mem_42)``: the name as the writer's editor showed it, and the person's id."""

_OPEN, _CLOSE = "\ue000", "\ue001"
"""Private-use characters marking where a mention was set aside (taken out of the text first,
so a comment cannot forge one)."""
_PLACED = re.compile(f"{_OPEN}([0-9]{{1,4}}){_CLOSE}")


def to_html(markdown: str, mentioned: Collection[str] = (), renderer: MarkdownHtml | None = None) -> str:
    """The comment as HTML.

    :param mentioned: the ids of the people its mentions name (the ones the comment recorded)
    :param renderer: the platform's Markdown port (default: the text as written, escaped)
    """
    text = markdown.replace(_OPEN, "").replace(_CLOSE, "")
    mentions: list[str] = []

    def aside(match: re.Match[str]) -> str:
        name = html.escape(match[1])
        if match[2] in mentioned:
            mentions.append(f'<span class="mention" data-person-id="{html.escape(match[2])}">@{name}</span>')
        else:  # not a person of the organization: the name as written, without the id
            mentions.append(f"@{name}")
        return f"{_OPEN}{len(mentions) - 1}{_CLOSE}"

    rendered = (renderer or PlainText()).render(MENTION.sub(aside, text))
    return _PLACED.sub(lambda match: mentions[int(match[1])], rendered)
