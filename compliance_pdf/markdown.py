"""A policy's Markdown as the blocks the PDF prints: headings, paragraphs, list items, code and
tables (GitHub-flavoured pipe tables, markdown-it-py's ``table`` rule).

Parsed with markdown-it-py (CommonMark), whose block and inline rules run in time linear in the
text: the hand-written patterns this replaces backtracked in cubic time on runs of spaces (a
heading of 3,200 spaces held a server thread for 54 s). Raw HTML is not interpreted (it prints as
written), since a policy's PDF has no use for it and it would only be another way to hide text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = ["Block", "Span", "blocks"]

_BLANKS = re.compile(r"[ \t]{2,}")
"""Runs of blanks in prose print as one, as a browser shows them: 20,000 spaces are not two
pages of nothing (a code span or block keeps its own)."""


class Span(NamedTuple):
    """A run of text in one style (CommonMark's strong emphasis is bold, emphasis italic)."""

    text: str
    bold: bool = False
    italic: bool = False


class Block(NamedTuple):
    """One printed block.

    ``kind`` is ``heading`` (``mark`` its level, 1-6), ``item`` (``mark`` its marker: ``-``, ``3.``,
    or ``""`` for an item's further paragraphs; ``depth`` its list nesting from 0), ``paragraph``,
    ``code`` (``source`` only) or ``table`` (``rows``). ``source`` is the block as written; ``markers`` counts its
    style changes, which the renderer budgets (see ``compliance_pdf.policies``).
    """

    kind: str
    mark: int | str | None
    spans: tuple[Span, ...]
    source: str
    markers: int = 0
    depth: int = 0
    rows: tuple[tuple[str, ...], ...] = ()
    """A ``table``'s cells, row by row, the header row first (``source`` is the table as written,
    ``mark`` its columns' alignments: ``L``, ``C`` or ``R`` each)."""

    @property
    def text(self) -> str:
        return "".join(span.text for span in self.spans)


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _spans(children: Sequence[Token]) -> tuple[tuple[Span, ...], int]:
    """The inline tokens as spans of one style each (neighbours of one style merged), and how
    many style changes they hold."""
    spans: list[Span] = []
    bold = italic = 0
    markers = 0

    def add(text: str) -> None:
        if not text:
            return
        style = (bold > 0, italic > 0)
        if spans and (spans[-1].bold, spans[-1].italic) == style:
            spans[-1] = spans[-1]._replace(text=spans[-1].text + text)
        else:
            spans.append(Span(text, *style))

    for token in children:
        kind = token.type
        if kind == "strong_open":
            bold += 1
            markers += 1
        elif kind == "strong_close":
            bold -= 1
            markers += 1
        elif kind == "em_open":
            italic += 1
            markers += 1
        elif kind == "em_close":
            italic -= 1
            markers += 1
        elif kind == "softbreak":
            add(" ")
        elif kind == "hardbreak":
            add("\n")
        elif kind in ("link_open", "link_close"):
            continue  # the link's text is printed; a PDF reader needs no hidden target
        elif kind == "text":
            add(_BLANKS.sub(" ", token.content))
        else:  # code_inline, image (its alt text), and anything a later rule adds
            add(token.content)
    return tuple(spans), markers


def blocks(markdown: str) -> Iterator[Block]:
    """The Markdown's blocks in order. Thematic breaks print nothing; a block quote's content
    prints as the blocks it holds.

    The parser stops descending at ``MAX_NESTING`` nested lists or quotes (its guard against
    deep recursion) and drops what lies deeper; those lines are printed as written, in their
    place, so no text of a policy is lost from its PDF."""
    parser = _parser()
    tokens = parser.parse(markdown)
    found = list(_blocks(tokens))
    if not any(token.level >= parser.options["maxNesting"] - 1 for token in tokens):
        yield from (block for _, block in found)
        return
    lines = markdown.splitlines()
    covered = bytearray(len(lines))
    for token in tokens:
        if token.map and token.type in _LEAVES:
            covered[token.map[0] : token.map[1]] = b"\1" * (token.map[1] - token.map[0])
    dropped = [
        (number, Block("paragraph", None, (Span(line.strip()),), line.strip()))
        for number, line in enumerate(lines)
        if not covered[number] and line.strip()
    ]
    yield from (block for _, block in sorted(found + dropped, key=lambda pair: pair[0]))


_LEAVES = frozenset({"inline", "code_block", "fence", "html_block", "hr"})
_ALIGN = {"text-align:left": "L", "text-align:center": "C", "text-align:right": "R"}


def _blocks(tokens: Sequence[Token]) -> Iterator[tuple[int, Block]]:
    """Each block with the source line it starts on."""
    lists: list[list[int | None]] = []  # per open list: the next number (None for bullets)
    pending: list[str | None] = []  # per open item: its marker until its first block prints
    heading: int | None = None
    table: list[list[str]] | None = None  # the open table's rows
    aligns: list[str] = []
    start = 0
    line = 0
    for token in tokens:
        kind = token.type
        if token.map:
            line = token.map[0]
        if table is not None:
            if kind == "tr_open":
                table.append([])
            elif kind in ("th_open", "td_open") and len(table) == 1:
                aligns.append(_ALIGN.get(str(token.attrs.get("style", "")), "L"))
            elif kind == "inline":
                spans, _ = _spans(token.children or ())
                table[-1].append("".join(span.text for span in spans))
            elif kind == "table_close":
                rows = tuple(tuple(row) for row in table)
                source = "\n".join(" | ".join(row) for row in rows)
                yield start, Block("table", "".join(aligns), (Span(source),), source, rows=rows)
                table = None
            continue
        if kind == "table_open":
            table, aligns, start = [], [], line
        elif kind == "bullet_list_open":
            lists.append([None])
        elif kind == "ordered_list_open":
            lists.append([int(token.attrs.get("start", 1) or 1)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            number = lists[-1][0] if lists else None
            pending.append("-" if number is None else f"{token.info or number}.")
            if lists and number is not None:
                lists[-1][0] = number + 1
        elif kind == "list_item_close":
            mark = pending.pop()
            if mark is not None:  # an empty item still shows its marker
                yield line, Block("item", mark, (), "", 0, len(lists) - 1)
        elif kind == "heading_open":
            heading = int(token.tag[1:])
        elif kind == "heading_close":
            heading = None
        elif kind == "inline":
            spans, markers = _spans(token.children or ())
            source = token.content.replace("\n", " ")
            if heading is not None:
                yield line, Block("heading", heading, spans, source, markers)
            elif pending:
                mark, pending[-1] = pending[-1], None
                yield line, Block("item", mark or "", spans, source, markers, len(lists) - 1)
            else:
                yield line, Block("paragraph", None, spans, source, markers)
        elif kind in ("code_block", "fence", "html_block"):
            source = token.content.rstrip("\n")
            if pending:
                mark, pending[-1] = pending[-1], None
                yield line, Block("item", mark or "", (Span(source),), source, 0, len(lists) - 1)
            else:
                yield line, Block("code", None, (Span(source),), source)
