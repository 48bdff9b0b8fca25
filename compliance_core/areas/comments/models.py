"""What a comment is, what a caller sends to post or edit one, and who may do which."""

from __future__ import annotations

import datetime as dt
from typing import ClassVar

import attrs

from ...kernel.events import Event
from ...kernel.permissions import EVERYONE, Action
from ...kernel.records import Filter, Records
from ...kernel.rendering import WireView
from ...kernel.validation import optional_id, optional_text, register_schema, text, url

__all__ = [
    "MAX_CONTENT",
    "MAX_MENTIONS",
    "Comment",
    "NewComment",
    "CommentEdit",
    "CommentFilter",
    "COMMENTS",
    "COMMENT_READ",
    "COMMENT_WRITE",
    "CommentCreated",
    "CommentUpdated",
    "CommentDeleted",
]

MAX_CONTENT = 2000
"""Characters a comment may hold, as the reference platform allows."""
MAX_MENTIONS = 50
"""People one comment records as mentioned (further mentions stay text and notify nobody)."""


@attrs.frozen(kw_only=True)
class Comment:
    id: str
    organization_id: str
    entity_type: str
    """The kind of record it is about (``risk``, ``vendor``, ``policy``, ``control``, ...)."""
    entity_id: str
    content: str
    """Markdown, exactly as written."""
    content_html: str = ""
    """The content rendered as HTML that is safe to show (``markup.to_html``): raw HTML in the
    text is escaped, only http, https and mailto links are links, and recorded mentions are
    marked. Set on every write, so lists render it straight from the store."""
    author_id: str | None = None
    """The person who wrote it: the caller's person. None when a key that acts for no person
    posted it (the organization speaking, as the audit trail records it)."""
    author_name: str | None = None
    """The author's name when they wrote it."""
    posted_by: str
    """The key (or user) that posted it: who may edit a comment no person wrote."""
    mentioned_person_ids: tuple[str, ...] = ()
    """The people of the organization its ``@[Name](mem_...)`` mentions name, in order of first
    mention: what a notifier reads from ``comment.created`` and ``comment.updated``."""
    context_url: str | None = None
    """Where the writer was when commenting (the page of the record), for a notification's link."""
    created_at: dt.datetime
    updated_at: dt.datetime

    WIRE_VIEW: ClassVar[WireView] = WireView(omit=frozenset({"posted_by"}))


_CONTENT = register_schema(
    text(MAX_CONTENT),
    {"description": "Markdown, stored as written; `@[Name](mem_...)` mentions a person of the organization"},
)
_KIND = text(40)


@attrs.frozen(kw_only=True)
class NewComment:
    content: str = attrs.field(converter=_CONTENT)
    entity_type: str = attrs.field(converter=_KIND)
    """One of the kinds the platform's areas declare commentable."""
    entity_id: str = attrs.field(converter=text(64))
    context_url: str | None = attrs.field(default=None, converter=url)
    user_id: str | None = attrs.field(default=None, converter=optional_id)
    """The reference platform's clients send their user's id; here a key acts as its person, so
    it may only name the caller's own person."""


@attrs.frozen(kw_only=True)
class CommentEdit:
    """A comment's new text (PUT): ``contextUrl`` left out keeps the one it has."""

    content: str = attrs.field(converter=_CONTENT)
    context_url: str | None = attrs.field(default=None, converter=url)
    user_id: str | None = attrs.field(default=None, converter=optional_id)


@attrs.frozen(kw_only=True)
class CommentFilter(Filter):
    entity_type: str | None = attrs.field(default=None, converter=optional_text(40))
    entity_id: str | None = attrs.field(default=None, converter=optional_id)
    author_id: str | None = attrs.field(default=None, converter=optional_id)


COMMENTS: Records[Comment, CommentFilter] = Records(
    "comments",
    model=Comment,
    filters=CommentFilter,
    kind="comment",
    prefix="cmt",
    newest_first=True,
)
COMMENT_READ = Action("comment:read", EVERYONE)
"""Reading comments; what a caller reads is further limited to the records it sees."""
COMMENT_WRITE = Action("comment:write", EVERYONE)
"""Posting, editing and deleting comments; further limited to the records the caller sees, and
editing and deleting to the author (Owner and Admin delete any)."""


class CommentCreated(Event):
    """A comment was posted on a record; ``data.mentionedPersonIds`` lists the people it
    mentions, for a notifier to tell."""

    type = "comment.created"


class CommentUpdated(Event):
    """A comment's text was edited by its author; ``previous`` holds the old content (and the
    old ``mentionedPersonIds`` when the mentions changed: the people mentioned now and not
    before are the ones to tell)."""

    type = "comment.updated"


class CommentDeleted(Event):
    """A comment was deleted (by its author, or an Owner or Admin); ``data`` is the comment as
    it was."""

    type = "comment.deleted"
