"""Links from an area's records to controls: the port through which controls learn what serves
them without importing the areas that hold it.

A policy, a risk, a task or a piece of evidence names the controls it serves in its own
``control_ids``: the linking record is where a link is kept, so the area that owns it stays the
one that writes it. Its area declares the table as ``Linkable`` (``Area(links=...)``), saying how
far the record goes toward implementing a control (``LinkState``). The controls area reacts to
every write of such a record in the same transaction (``UnitOfWork.react``), keeps its own index
of the links, and derives each control's status from it, so a control's status changes exactly
when what serves it changes, whatever caused the change.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable
from typing import Any

import attrs

from .events import Event
from .records import Records

__all__ = ["LinkState", "Linkable"]


class LinkState(enum.StrEnum):
    """How far one linked record goes toward implementing a control."""

    DONE = "done"
    """It does its part: a policy in force, a task done, evidence that is valid."""
    PENDING = "pending"
    """It will: a policy not yet published, a task still open."""
    PLANNED = "planned"
    """It is planned and nobody has begun it: a to-do, such as the tasks enabling a framework
    makes; like context, it moves no status until someone starts it."""
    EXPIRED = "expired"
    """It did, and no longer does: evidence past its expiry."""
    CONTEXT = "context"
    """It explains the control and implements nothing (a risk the control treats)."""


@attrs.frozen(kw_only=True)
class Linkable:
    """A table whose records name the controls they serve.

    :param kind: what a link calls such a record (``policy``)
    :param records: the table
    :param state: how far a record goes toward its controls at ``now``; None when it no longer
        counts at all (archived)
    :param updated: the event its area records when a record's fields change: the controls area
        records it when it links or unlinks a record, with ``previous`` holding the old ids
    :param field: the record's field holding the control ids, or the one control's id (a
        finding concerns one control: linking it to another moves it)
    """

    kind: str
    records: Records[Any, Any]
    state: Callable[[Any, dt.datetime], LinkState | None]
    updated: type[Event]
    field: str = "control_ids"

    def control_ids(self, record: Any) -> tuple[str, ...]:
        value = getattr(record, self.field)
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else tuple(value)

    def holding(self, record: Any, control_ids: tuple[str, ...]) -> Any:
        """The value of ``field`` that names ``control_ids`` (for a one-control field, the last)."""
        if isinstance(getattr(record, self.field), tuple):
            return control_ids
        return control_ids[-1] if control_ids else None
