"""Records people talk about: the port through which an area lets its records be commented on
without the comments area knowing it.

The comments area keeps every comment, but the records they are about (a risk, a vendor, a
policy, a control, a task, a piece of evidence) belong to other areas, which it never imports.
Each of those areas declares its table as ``Commentable`` among its offered reads
(``Area(ports=(Commentable(kind="risk", records=RISKS, read=RISK_READ),))``); the comments area
collects them from the platform's ports, so a new area becomes commentable by that one line, and
a platform built without an area simply has no such kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import attrs

from .permissions import Action, Actor
from .records import Records

__all__ = ["Commentable", "commentables"]


@attrs.frozen(kw_only=True)
class Commentable:
    """A table whose records may be commented on.

    :param kind: what a comment's ``entityType`` calls such a record (``risk``); unique
    :param records: the table, read in the comment's own transaction to check the record exists
        in the caller's organization
    :param read: the action that reads such records: a caller whose role lacks it neither
        comments on them nor reads their comments (a contractor and a control)
    :param visible: whether ``actor`` may see this record when its role may read the kind (a
        draft policy is not an employee's to see); None: every record of the kind
    """

    kind: str
    records: Records[Any, Any]
    read: Action
    visible: Callable[[Any, Actor], bool] | None = None

    def sees(self, actor: Actor, record: Any) -> bool:
        """Whether ``actor`` may see ``record`` (its role reads the kind, and the record is one
        it sees)."""
        if actor.role not in self.read.roles:
            return False
        return self.visible is None or self.visible(record, actor)


def commentables(ports: Iterable[Any]) -> tuple[Commentable, ...]:
    """Every ``Commentable`` the platform's areas offer, refusing two areas that claim one kind
    (a comment's ``entityType`` must name one table)."""
    found = tuple(port for port in ports if isinstance(port, Commentable))
    kinds = [port.kind for port in found]
    repeated = sorted({kind for kind in kinds if kinds.count(kind) > 1})
    if repeated:
        raise ValueError(f"more than one area declares the commentable kind(s) {repeated}")
    return found
