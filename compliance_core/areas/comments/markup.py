"""A comment's Markdown as HTML that is safe to put in a page.

A comment is stored as written; ``contentHtml`` shows it rendered. Core may not import a
Markdown library (import-linter keeps ``markdown_it`` out of ``compliance_core``, where only the
PDF adapter reads it), so this is a small subset of CommonMark written for comments: paragraphs
with line breaks, ``#`` headings, bullet and numbered lists, ``>`` quotes, fenced code blocks,
inline code, ``**strong**``, ``*emphasis*`` and ``_emphasis_``, links to http, https and mailto
addresses, and mentions (``@[Name](mem_...)``).

It is safe by construction rather than by filtering: every piece of the text is HTML-escaped
before it is placed, and the only markup in the result is the handful of tags written here. Raw
HTML in a comment (``<script>``) is shown as text, a link to any other scheme (``javascript:``)
stays text, and quotes are escaped so no attribute can be broken out of. Every pattern is
matched in one pass with bounded repetition, on at most the 2,000 characters a comment holds.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection

__all__ = ["MENTION", "to_html"]

_NAME = r"[^\[\]\n]{1,100}"
_PERSON = r"[a-z]{1,20}(?:_[a-z]{1,20})?_[0-9A-Za-z]{1,64}"
MENTION = re.compile(rf"@\[({_NAME})\]\(({_PERSON})\)")
"""``@[Ada Lovelace](mem_42)``: the name as the writer's editor showed it, and the person's id."""

_INLINE = re.compile(
    r"`(?P<code>[^`\n]{1,2000})`"
    rf"|@\[(?P<name>{_NAME})\]\((?P<person>{_PERSON})\)"
    r"|\[(?P<label>[^\[\]\n]{1,300})\]\((?P<href>(?:https?://|mailto:)[^\s()<>]{1,2048})\)"
)
_STRONG = re.compile(r"\*\*(?=\S)([^*\n]{1,2000}?)(?<=\S)\*\*")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)([^*\n]{1,2000}?)(?<=\S)\*(?![\w*])|(?<!\w)_(?=\S)([^_\n]{1,2000}?)(?<=\S)_(?!\w)"
)
_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*$")
_BULLET = re.compile(r"[ \t]{0,3}[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"[ \t]{0,3}[0-9]{1,9}[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"[ \t]{0,3}>[ \t]?(.*)$")
_FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")


def _emphasis(escaped: str) -> str:
    """Strong and emphasis on already escaped text (they add tags around it, nothing else)."""
    strong = _STRONG.sub(r"<strong>\1</strong>", escaped)
    return _EMPHASIS.sub(lambda m: f"<em>{m[1] if m[1] is not None else m[2]}</em>", strong)


def _inline(text: str, mentioned: Collection[str]) -> str:
    """One line of text as HTML: code spans, mentions and links are found on the raw text and
    each piece is escaped as it is placed."""
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        out.append(_emphasis(html.escape(text[position : match.start()])))
        if match["code"] is not None:
            out.append(f"<code>{html.escape(match['code'])}</code>")
        elif match["person"] is not None:
            name = html.escape(match["name"])
            if match["person"] in mentioned:
                out.append(f'<span class="mention" data-person-id="{html.escape(match["person"])}">@{name}</span>')
            else:  # not a person of the organization: the text as written, without the id
                out.append(f"@{name}")
        else:
            label = _emphasis(html.escape(match["label"]))
            out.append(f'<a href="{html.escape(match["href"])}" rel="nofollow noopener noreferrer">{label}</a>')
        position = match.end()
    out.append(_emphasis(html.escape(text[position:])))
    return "".join(out)


def to_html(markdown: str, mentioned: Collection[str] = ()) -> str:
    """The comment as HTML.

    :param markdown: the comment as written
    :param mentioned: the ids of the people its mentions name (the ones the comment recorded):
        those mentions become ``<span class="mention" data-person-id="...">``, any other shows
        its name only

    >>> to_html("**Done**, see <script>x</script>")
    '<p><strong>Done</strong>, see &lt;script&gt;x&lt;/script&gt;</p>'
    """
    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    list_tag = ""
    quote: list[str] = []

    def flush() -> None:
        nonlocal list_tag
        if paragraph:
            blocks.append("<p>" + "<br>\n".join(_inline(line, mentioned) for line in paragraph) + "</p>")
            paragraph.clear()
        if items:
            body = "".join(f"<li>{_inline(item, mentioned)}</li>" for item in items)
            blocks.append(f"<{list_tag}>{body}</{list_tag}>")
            items.clear()
            list_tag = ""
        if quote:
            blocks.append(
                "<blockquote><p>" + "<br>\n".join(_inline(line, mentioned) for line in quote) + "</p></blockquote>"
            )
            quote.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        fence = _FENCE.match(line)
        if fence is not None:
            flush()
            code: list[str] = []
            while index < len(lines) and not lines[index].strip().startswith(fence[1]):
                code.append(lines[index])
                index += 1
            index += 1  # the closing fence (or the end of the comment)
            blocks.append("<pre><code>" + html.escape("\n".join(code)) + "</code></pre>")
            continue
        if not line.strip():
            flush()
            continue
        if (heading := _HEADING.match(line)) is not None:
            flush()
            level = len(heading[1])
            blocks.append(f"<h{level}>{_inline(heading[2], mentioned)}</h{level}>")
            continue
        if (quoted := _QUOTE.match(line)) is not None:
            if not quote:
                flush()
            quote.append(quoted[1])
            continue
        bullet, numbered = _BULLET.match(line), _NUMBERED.match(line)
        if bullet is not None or numbered is not None:
            tag = "ul" if bullet is not None else "ol"
            if paragraph or quote or (items and list_tag != tag):
                flush()
            list_tag = tag
            items.append((bullet or numbered)[1])  # type: ignore[index]
            continue
        if items or quote:
            flush()
        paragraph.append(line.strip())
    flush()
    return "\n".join(blocks)
