"""The comments service: posting on a record another area keeps, reading a record's thread, and
the author's edit and delete.

The records commented on are found through the ``Commentable`` ports the platform's areas offer
(``kernel.subjects``); nothing here names an area. A caller comments as the person its key is
bound to (``actor.person_id``), and a key that acts for no person comments as the organization:
its comments carry no author, and only that key edits them.
"""

from __future__ import annotations

import attrs

from ...kernel.directory import Directory, acting_name
from ...kernel.errors import Forbidden, ValidationError
from ...kernel.markdown import MarkdownHtml, PlainText
from ...kernel.operations import Once, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import MANAGERS, Actor, Role, authorize
from ...kernel.records import changed, fetch
from ...kernel.registry import Route
from ...kernel.subjects import Commentable
from ...kernel.uow import Tx, UnitOfWork
from .markup import MENTION, to_html
from .models import (
    COMMENT_READ,
    COMMENT_WRITE,
    COMMENTS,
    MAX_MENTIONS,
    Comment,
    CommentCreated,
    CommentDeleted,
    CommentEdit,
    CommentFilter,
    CommentUpdated,
    NewComment,
)

__all__ = ["CommentService", "STAFF"]

STAFF = frozenset({Role.EMPLOYEE, Role.CONTRACTOR})
"""Roles that read the comments on the records they see, not every comment of the organization."""

_ALL = "/v1/comments"
_ONE = "/v1/comments/{comment_id}"
_CANDIDATES = 2 * MAX_MENTIONS
"""Distinct ids a comment's mentions are looked up for, at most (each is one read)."""


@attrs.define
class CommentService:
    uow: UnitOfWork
    pages: PageCache
    subjects: tuple[Commentable, ...] = ()
    """The kinds of record the platform's areas let people comment on."""
    markdown: MarkdownHtml = attrs.field(factory=PlainText)

    @operation(
        COMMENT_READ,
        Route("GET", _ALL, "List comments, newest first: a record's thread with entityType and entityId"),
        filters=CommentFilter,
        paged=True,
        result=Comment,
        lists=COMMENTS,
    )
    def list(
        self, actor: Actor, filters: CommentFilter | None = None, page: PageRequest | None = None
    ) -> Page[Comment]:
        """Owner, Admin and Auditor read every comment. Staff read the whole thread of a record
        they see (named by both ``entityType`` and ``entityId``), and otherwise only their own
        comments: a list across records must not show what is said about a record they may not
        see (a draft policy)."""
        filters = filters or CommentFilter()
        subject = None if filters.entity_type is None else self._kind("entityType", filters.entity_type)
        if actor.role in STAFF and not self._sees_thread(actor, subject, filters.entity_id):
            person_id = _person_of(actor)
            if filters.author_id not in (None, person_id):
                raise ValidationError.field(
                    "authorId", filters.author_id, "staff read others' comments only on a record they name and see"
                )
            filters = attrs.evolve(filters, author_id=person_id)
        return page_of(self, COMMENTS, actor, filters, page)

    @operation(
        COMMENT_WRITE,
        Route("POST", _ALL, "Post a comment on a record (Markdown, at most 2000 characters)", 201),
        body=NewComment,
        idempotent=True,
        result=Comment,
        example={
            "content": "Reviewed with the vendor: **likelihood stays possible** until the new backups run.",
            "entityType": "risk",
            "entityId": "rsk_...",
            "contextUrl": "https://app.example.com/risks",
        },
    )
    def create(self, actor: Actor, data: NewComment, once: Once) -> Comment:
        """The record must be one the caller sees in its organization; the author is the
        caller's person; the people its mentions name are recorded on it."""
        now = self.uow.clock.now()
        with self.uow.write(actor) as tx:

            def post() -> Comment:
                subject = self._kind("entityType", data.entity_type)
                _check_subject(tx, actor, subject, data.entity_id)
                mentions = _mentions(tx, actor.organization_id, data.content)
                comment = Comment(
                    id=self.uow.ids.new(COMMENTS.prefix),
                    organization_id=actor.organization_id,
                    entity_type=subject.kind,
                    entity_id=data.entity_id,
                    content=data.content,
                    content_html=to_html(data.content, mentions, self.markdown),
                    author_id=_author(actor, data.user_id),
                    author_name=acting_name(tx, actor),
                    posted_by=actor.principal,
                    mentioned_person_ids=mentions,
                    context_url=data.context_url,
                    created_at=now,
                    updated_at=now,
                )
                tx[COMMENTS].add(comment)
                tx.record(CommentCreated(organization_id=actor.organization_id, subject=comment))
                return comment

            return once(tx, data, now, post)

    @operation(
        COMMENT_WRITE,
        Route("PUT", _ONE, "Edit a comment's text (its author only)"),
        body=CommentEdit,
        result=Comment,
        example={"content": "Reviewed with the vendor: likelihood goes down to **unlikely**."},
        authored=True,
    )
    def update(self, actor: Actor, comment_id: str, data: CommentEdit) -> Comment:
        """Only the comment's author edits it; its mentions are read again from the new text.
        The same text changes nothing and records nothing."""
        with self.uow.write(actor) as tx:
            current = fetch(tx, COMMENTS, actor.organization_id, comment_id)
            if not _wrote(actor, current):
                raise _not_author(current, "edit")
            _author(actor, data.user_id)
            mentions = _mentions(tx, actor.organization_id, data.content)
            changes: dict[str, object] = {
                "content": data.content,
                "content_html": to_html(data.content, mentions, self.markdown),
                "mentioned_person_ids": mentions,
            }
            if data.context_url is not None:
                changes["context_url"] = data.context_url
            previous = changed(current, changes)
            if not previous:
                return current
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())  # type: ignore[arg-type]
            tx[COMMENTS].update(updated)
            tx.record(CommentUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    @operation(
        COMMENT_WRITE,
        Route("DELETE", _ONE, "Delete a comment (its author; an Owner or Admin deletes any)"),
        result=None,
        authored=True,
    )
    def delete(self, actor: Actor, comment_id: str) -> None:
        with self.uow.write(actor) as tx:
            current = fetch(tx, COMMENTS, actor.organization_id, comment_id)
            if actor.role not in MANAGERS and not _wrote(actor, current):
                raise _not_author(current, "delete")
            tx[COMMENTS].delete(actor.organization_id, comment_id)
            tx.record(CommentDeleted(organization_id=actor.organization_id, subject=current))

    # -- helpers -------------------------------------------------------------------------------

    def _kind(self, field: str, kind: str) -> Commentable:
        """The declared kind ``kind`` names, or a ``validation_error`` on ``field`` listing them."""
        for subject in self.subjects:
            if subject.kind == kind:
                return subject
        kinds = ", ".join(sorted(subject.kind for subject in self.subjects))
        raise ValidationError.field(
            field, kind, f"must be one of {kinds}" if kinds else "no record takes comments here"
        )

    def _sees_thread(self, actor: Actor, subject: Commentable | None, entity_id: str | None) -> bool:
        """Whether ``actor`` sees the one record the list names (so reads its whole thread)."""
        if subject is None or entity_id is None:
            return False
        with self.uow.read() as session:
            record = session[subject.records].get(actor.organization_id, entity_id)
        return record is not None and subject.sees(actor, record)


def _check_subject(tx: Tx, actor: Actor, subject: Commentable, entity_id: str) -> None:
    """A caller whose role does not read the kind is refused as its read would be (403); a
    record that is not there, is another organization's or is one the caller may not see is a
    ``validation_error`` on ``entityId``, the same for all three (existence never leaks)."""
    authorize(actor, subject.read)
    record = tx[subject.records].get(actor.organization_id, entity_id)
    if record is None or not subject.sees(actor, record):
        raise ValidationError.field("entityId", entity_id, f"is not a {subject.kind} of this organization")


def _author(actor: Actor, user_id: str | None) -> str | None:
    """The author of what the caller writes: its person. ``userId``, which the reference
    platform's clients send, may only name that same person: a key speaks for the person it is
    bound to, never for another."""
    if user_id is not None and user_id != actor.person_id:
        reason = (
            "must be the caller's own person"
            if actor.person_id is not None
            else "the caller acts for no person; bind its key to the person to comment as them"
        )
        raise ValidationError.field("userId", user_id, reason)
    return actor.person_id


def _wrote(actor: Actor, comment: Comment) -> bool:
    """Whether ``actor`` is the comment's author: its person, or, for a comment no person
    wrote, the very key (or in-process caller) that posted it."""
    if comment.author_id is not None:
        return actor.person_id == comment.author_id
    return actor.person_id is None and actor.principal == comment.posted_by


def _not_author(comment: Comment, verb: str) -> Forbidden:
    return Forbidden(
        f"only the author of comment {comment.id} may {verb} it",
        {"field": "authorId", "value": comment.author_id, "reason": f"only the comment's author may {verb} it"},
    )


def _person_of(actor: Actor) -> str:
    if actor.person_id is None:
        raise Forbidden(
            "this caller acts as no person",
            {"field": "personId", "value": None, "reason": "a person-bound key is needed"},
        )
    return actor.person_id


def _mentions(tx: Tx, organization_id: str, content: str) -> tuple[str, ...]:
    """The active people of the organization the content's ``@[Name](mem_...)`` mentions name,
    in order of first mention and at most ``MAX_MENTIONS``. A mention of anyone else (a typo, a
    person since removed, another organization's) stays text and is not recorded: a mention
    is a hint to notify, and a stale one must not refuse the comment."""
    candidates = list(dict.fromkeys(match[2] for match in MENTION.finditer(content)))[:_CANDIDATES]
    directory = Directory(tx)
    found: list[str] = []
    for person_id in candidates:
        person = directory.person(organization_id, person_id)
        if person is not None and person.is_active:
            found.append(person_id)
            if len(found) == MAX_MENTIONS:
                break
    return tuple(found)
