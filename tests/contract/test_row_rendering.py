"""Every declared ``Records`` table renders the same bytes from a SQL store's rows as from its
models: the fast list path (``Renderer.row_function``: no model built) and the model path meet
on every field, nested models included. Memory keeps models, so its pages take the model path."""

from __future__ import annotations

import datetime as dt

import attrs
import pytest

from compliance_core import FrozenClock, PageRequest
from compliance_core.kernel.pages import Page, RowItems
from compliance_core.kernel.permissions import Actor, Role
from compliance_core.kernel.rendering import Renderer
from compliance_core.kernel.uow import Store
from compliance_http.wire import Wire

from . import samples
from .test_records import TABLES

ACTOR = Actor(organization_id="org_a", role=Role.OWNER, key_id="key_1")


def _records(table: samples.Table) -> list[object]:
    """A record with every field set, one with every optional field empty, and one in between."""
    full = table.make("org_a", f"{table.records.prefix}_00001")
    empty = {
        field.name: None
        for field in attrs.fields(type(full))
        if field.default is None and field.name not in ("id", "organization_id")
    }
    bare = attrs.evolve(table.other(f"{table.records.prefix}_00002"), **empty)
    later = attrs.evolve(
        table.other(f"{table.records.prefix}_00003"), created_at=samples.T0 + dt.timedelta(microseconds=1)
    )
    return [full, bare, later]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.name)
def test_rows_and_models_render_the_same_bytes(store: Store, table: samples.Table) -> None:
    records = _records(table)
    with store.session(write=True) as session:
        for record in records:
            session[table.records].add(record)
    filters = table.records.filters() if table.records.filters is not None else None
    if table.records.partition is not None and filters is not None:
        filters = attrs.evolve(filters, **{table.records.partition: None})
    with store.session(write=False) as session:
        items, total = session[table.records].list("org_a", filters, PageRequest(per_page=10))
    page = Page.of(items, total, PageRequest(per_page=10))
    assert sorted(page.items, key=lambda r: r.id) == sorted(records, key=lambda r: r.id)  # type: ignore[attr-defined]
    from_rows = Wire(Renderer(FrozenClock(), from_rows=True))
    from_models = Wire(Renderer(FrozenClock(), from_rows=False))
    body = from_rows.page(page, ACTOR)
    assert body == from_models.page(Page.of(tuple(page.items), total, PageRequest(per_page=10)), ACTOR)
    if isinstance(page.items, RowItems):  # a SQL store: the fast path really ran, on every row
        render = Renderer(FrozenClock()).row_function(page.items.source)
        view = getattr(table.records.model, "WIRE_VIEW", None)
        if view is None or (view.extra is None and not view.inline):
            assert render is not None
            assert [render(row) for row in page.items.rows]
    else:
        assert store.__class__.__name__ == "MemoryStore"
