"""Comments: what people say about a record (a risk, a vendor, a policy, a control, a task, a
piece of evidence), newest first, with the people they mention.

The records belong to other areas; each offers its table as a ``Commentable`` port
(``kernel.subjects``), so this area checks a comment's record exists, and that the caller sees
it, without importing any of them. The author is the caller's person; only the author edits a
comment, and the author, an Owner or an Admin deletes it. The text is Markdown, stored as
written and shown rendered as safe HTML in ``contentHtml``. See docs/comments.md.
"""

from __future__ import annotations

from ...kernel.markdown import markdown_html
from ...kernel.registry import Area
from ...kernel.subjects import commentables
from .markup import MENTION, to_html
from .models import (
    COMMENT_READ,
    COMMENT_WRITE,
    COMMENTS,
    MAX_CONTENT,
    MAX_MENTIONS,
    Comment,
    CommentCreated,
    CommentDeleted,
    CommentEdit,
    CommentFilter,
    CommentUpdated,
    NewComment,
)
from .service import CommentService

__all__ = [
    "Comment",
    "NewComment",
    "CommentEdit",
    "CommentFilter",
    "CommentService",
    "COMMENTS",
    "COMMENT_READ",
    "COMMENT_WRITE",
    "CommentCreated",
    "CommentUpdated",
    "CommentDeleted",
    "MAX_CONTENT",
    "MAX_MENTIONS",
    "MENTION",
    "to_html",
    "AREA",
]

AREA = Area(
    name="comments",
    tag="Comments",
    service=lambda context: CommentService(
        context.uow, context.pages, commentables(context.ports), context.share("markdown", markdown_html)
    ),
    api=CommentService,
    actions=(COMMENT_READ, COMMENT_WRITE),
    records=(COMMENTS,),
    events=(CommentCreated, CommentUpdated, CommentDeleted),
)
