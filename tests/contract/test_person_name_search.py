"""Lists of what people did, searched by the person (issue 18): a policy's acknowledgements by
the signer's name (and sorted by it), the context's history by the writer's name, on every store
(the SQL stores through the search index their migrations made)."""

from __future__ import annotations

import datetime as dt

from compliance_core import PageRequest
from compliance_core.areas.context.models import CONTEXT_SNAPSHOTS
from compliance_core.areas.policies.models import ACKNOWLEDGEMENTS
from compliance_core.kernel.uow import Store

from . import samples

NAMES = ["Jan Kowalski", "Anna Nowak", "JANINA Wiśniewska", None]


def test_acknowledgements_are_searched_and_sorted_by_the_signers_name(store: Store) -> None:
    table = samples.Table(ACKNOWLEDGEMENTS)
    signed = [
        table.make("org_a", f"pak_{n}", person_name=name, created_at=samples.T0 + dt.timedelta(minutes=n))
        for n, name in enumerate(NAMES)
    ]
    with store.session(write=True) as session:
        for record in [*signed, table.make("org_b", "pak_other", person_name="Jan Other")]:
            session[ACKNOWLEDGEMENTS].add(record)
    filters = ACKNOWLEDGEMENTS.filters()  # type: ignore[misc]
    with store.session(write=False) as session:
        found, total = session[ACKNOWLEDGEMENTS].list("org_a", filters, PageRequest(q="jan", sort="-person_name"))
        by_name, _ = session[ACKNOWLEDGEMENTS].list("org_a", filters, PageRequest(sort="person_name"))
    assert total == 2 and [a.person_name for a in found] == ["Jan Kowalski", "JANINA Wiśniewska"]
    assert [a.person_name for a in by_name] == ["Anna Nowak", "JANINA Wiśniewska", "Jan Kowalski", None]


def test_the_context_history_is_searched_by_the_writers_name(store: Store) -> None:
    table = samples.Table(CONTEXT_SNAPSHOTS)
    with store.session(write=True) as session:
        for n, name in enumerate(NAMES):
            created_at = samples.T0 + dt.timedelta(minutes=n)
            session[CONTEXT_SNAPSHOTS].add(
                table.make("org_a", f"ctxs_{n}", changed_by_person_name=name, created_at=created_at)
            )
    with store.session(write=False) as session:
        found, total = session[CONTEXT_SNAPSHOTS].list(
            "org_a",
            CONTEXT_SNAPSHOTS.filters(),
            PageRequest(q="NOWAK"),  # type: ignore[misc]
        )
    assert total == 1 and [s.changed_by_person_name for s in found] == ["Anna Nowak"]
