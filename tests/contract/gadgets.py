"""A test-only area, declared as a new area would be (model, filter, ``Records`` table), for the
migration-helper tests of each SQL store: each store writes the table's migration with its own
helper, and both hold the table served from it to the same behaviour (``check_served``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from compliance_core import PageRequest
from compliance_core.areas import AREAS
from compliance_core.kernel.records import Filter, Records
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store

from . import samples

__all__ = ["Gadget", "GadgetFilter", "GADGETS", "WITH_GADGETS", "check_served"]


@attrs.frozen(kw_only=True)
class Gadget:
    id: str
    organization_id: str
    kind: str
    order: int = 0
    archived: bool = False
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class GadgetFilter(Filter):
    kind: str | None = None
    order: int | None = None
    archived: bool = False


GADGETS: Records[Gadget, GadgetFilter] = Records(
    "gadgets", model=Gadget, filters=GadgetFilter, kind="gadget", prefix="gdg", partition="archived"
)
WITH_GADGETS = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(GADGETS,)))


def check_served(store: Store) -> None:
    """Records of the table round-trip, and its counters (per partition, and its facet counts
    of one and two filters) and its revision follow every add, update and delete; closes
    ``store``."""

    def gadget(id: str, **changes: Any) -> Gadget:
        return Gadget(id=id, organization_id="org_a", kind="lamp", order=len(id), created_at=samples.T0, **changes)

    def state() -> tuple[int, int, int, int, int]:
        with store.session(write=False) as session:
            gadgets = session[GADGETS]
            return (
                gadgets.list("org_a", GadgetFilter(), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(archived=True), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(kind="lamp"), PageRequest())[1],
                gadgets.list("org_a", GadgetFilter(kind="lamp", order=6), PageRequest())[1],
                gadgets.revision("org_a"),
            )

    try:
        with store.session(write=True) as session:
            for id in ("gdg_1", "gdg_22", "gdg_333"):
                session[GADGETS].add(gadget(id))
        assert state() == (3, 0, 3, 1, 3)
        with store.session(write=True) as session:
            session[GADGETS].update(gadget("gdg_22", archived=True))
        assert state() == (2, 1, 2, 0, 4)
        with store.session(write=True) as session:
            assert session[GADGETS].delete("org_a", "gdg_22") is True
            assert session[GADGETS].delete("org_a", "gdg_22") is False
        assert state() == (2, 0, 2, 0, 5)
        with store.session(write=False) as session:
            assert session[GADGETS].get("org_a", "gdg_333") == gadget("gdg_333")
    finally:
        store.close()
