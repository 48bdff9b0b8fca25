"""The kernel's own chores, and what running every chore once reports.

The idempotency records and the outbox are the kernel's tables, not an area's, so the kernel
declares their purges here, the same way areas declare theirs in ``Area(chores=...)``: an
expired idempotency record is never replayed and a published outbox message is never sent
again, and without the purges both tables would keep a row for every write ever made.
"""

from __future__ import annotations

import datetime as dt

import attrs

from .events import OUTBOX, OUTBOX_RETENTION
from .idempotency import IDEMPOTENCY, RETENTION
from .registry import Chore
from .uow import Context

__all__ = ["KERNEL_CHORES", "IDEMPOTENCY_PURGE", "OUTBOX_PURGE", "ChoreReport"]

PURGE_EVERY = dt.timedelta(minutes=10)


def _purge_idempotency(context: Context, now: dt.datetime) -> int:
    with context.uow.write(None) as tx:
        return tx[IDEMPOTENCY].purge(now - RETENTION)


def _purge_outbox(context: Context, now: dt.datetime) -> int:
    # Unpublished messages stay whatever their age: they are still owed to a receiver.
    with context.uow.write(None) as tx:
        return tx[OUTBOX].purge(now - OUTBOX_RETENTION)


IDEMPOTENCY_PURGE: Chore[Context] = Chore(
    name="purge expired idempotency records",
    every=PURGE_EVERY,
    run=_purge_idempotency,
    report="purgedIdempotencyRecords",
    done="purged %d expired idempotency record(s)",
    log_zero=True,
)
"""Deletes the idempotency records older than the 24-hour retention (``RETENTION``); a record
exactly 24 hours old stays."""

OUTBOX_PURGE: Chore[Context] = Chore(
    name="purge published outbox messages",
    every=PURGE_EVERY,
    run=_purge_outbox,
    report="purgedOutboxMessages",
    done="purged %d outbox message(s) published over a week ago",
)
"""Deletes the outbox messages published more than ``OUTBOX_RETENTION`` (a week) ago."""

KERNEL_CHORES: tuple[Chore[Context], ...] = (IDEMPOTENCY_PURGE, OUTBOX_PURGE)


@attrs.frozen(kw_only=True)
class ChoreReport:
    """Every chore run once (``Platform.run_chores``): a failing chore does not keep the others
    from running, so both what was done and what failed are reported."""

    counts: dict[str, int]
    """Each chore that ran, by its ``report`` key: how many things it did."""
    failures: dict[str, Exception]
    """Each chore that raised, by its ``report`` key."""
