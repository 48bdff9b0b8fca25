"""What every store does for every declared ``Records`` table (vendors, people, findings and any
area added later): the generic part of the contract, driven by ``compliance_core.areas.AREAS``
and the samples in ``samples.TABLES``."""

from __future__ import annotations

import datetime as dt
import enum
import itertools
import typing
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest, ValidationError
from compliance_core.areas.people import EMAILS, PEOPLE
from compliance_core.kernel.uow import Store

from . import samples
from .samples import Table

TABLES = list(samples.TABLES.values())


class Boom(Exception):
    pass


@pytest.fixture(params=TABLES, ids=[table.name for table in TABLES])
def table(request: pytest.FixtureRequest) -> Table:
    return request.param  # type: ignore[no-any-return]


def _all(store: Store, table: Table, organization_id: str = "org_a") -> tuple[list[str], int]:
    """Ids and total of every record of the organization, whatever the filter's default."""
    filters = table.records.filters
    partition = {table.records.partition: None} if table.records.partition else {}
    with store.session(write=False) as session:
        items, total = session[table.records].list(organization_id, filters(**partition), PageRequest(per_page=200))
    return [item.id for item in items], total


def test_a_record_round_trips_and_deletes_within_its_organization(store: Store, table: Table) -> None:
    """One store per table walks the rules in turn (a SQL store opened per rule and table cost
    most of this file's time)."""
    kept = table.make()
    with store.session(write=True) as session:
        session[table.records].add(kept)
    with store.session(write=False) as session:
        assert session[table.records].get(kept.organization_id, kept.id) == kept, "round trip with every field"
        assert session[table.records].get("org_b", kept.id) is None

    gone, theirs = table.other("second"), table.make("org_b", f"{table.records.prefix}_theirs")
    with store.session(write=True) as session:
        for item in (gone, theirs):
            session[table.records].add(item)
    with store.session(write=True) as session:
        assert session[table.records].delete("org_a", gone.id) is True
        assert session[table.records].get("org_a", gone.id) is None  # seen inside its own transaction
    with store.session(write=True) as session:
        assert session[table.records].delete("org_a", gone.id) is False
        assert session[table.records].delete("org_a", "missing_1") is False
        assert session[table.records].delete("org_a", theirs.id) is False  # another organization's
    with store.session(write=False) as session:
        assert session[table.records].get("org_a", gone.id) is None
        assert session[table.records].get("org_a", kept.id) == kept
        assert session[table.records].get("org_b", theirs.id) == theirs
    assert _all(store, table) == ([kept.id], 1)
    assert _all(store, table, "org_b") == ([theirs.id], 1)

    with pytest.raises(Boom):
        with store.session(write=True) as session:
            assert session[table.records].delete("org_a", kept.id)
            raise Boom
    with store.session(write=False) as session:
        assert session[table.records].get("org_a", kept.id) == kept, "a rolled-back delete keeps the record"
    assert _all(store, table) == ([kept.id], 1)


def test_a_deleted_persons_email_is_free_again(store: Store) -> None:
    person = samples.person()
    with store.session(write=True) as session:
        session[PEOPLE].add(person)
    with store.session(write=True) as session:
        assert session[PEOPLE].delete(person.organization_id, person.id)
    with store.session(write=True) as session:
        assert session[EMAILS].find_emails(person.organization_id, [person.email]) == set()
        session[PEOPLE].add(samples.person(id="mem_again"))
    with store.session(write=False) as session:
        assert session[PEOPLE].get(person.organization_id, "mem_again") is not None


# -- property: every table's pages are Python's AND of its filters, in (created_at, id) order ----

_CANDIDATES = ("DE", "US", "mem_00000001", "mem_00000002", None)
"""Text tried for a text filter field, kept when the filter's converter accepts it (a country,
an id, free text)."""


def _filter_values(filters: type, field: attrs.Attribute, hint: Any) -> list[Any]:
    """Values a record may hold in a filtered field, as the filter converts them."""
    options = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
    kind = options[0]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return list(kind)[:3]
    if kind is bool:
        return [True, False]
    accepted = []
    for candidate in _CANDIDATES:
        try:
            accepted.append(getattr(filters(**{field.name: candidate}), field.name))
        except ValidationError:
            continue
    return list(dict.fromkeys(accepted))[:3]


def _strategies(table: Table) -> tuple[st.SearchStrategy[dict[str, Any]], st.SearchStrategy[dict[str, Any]]]:
    """(the filtered fields of one record, a filter) for the table."""
    filters = table.records.filters
    hints = typing.get_type_hints(filters)
    model_hints = typing.get_type_hints(table.records.model)
    record_fields, filter_fields = {}, {}
    for field in attrs.fields(filters):
        values = _filter_values(filters, field, hints[field.name])
        assert len([v for v in values if v is not None]) >= 2, f"{table.name}.{field.name}: no values to filter"
        nullable = type(None) in typing.get_args(model_hints[field.name])
        record_fields[field.name] = st.sampled_from([v for v in values if v is not None or nullable])
        filter_fields[field.name] = st.sampled_from(
            values if field.name == table.records.partition else [None, *values]
        )
    return st.fixed_dictionaries(record_fields), st.fixed_dictionaries(filter_fields)


@pytest.fixture
def organization_numbers() -> itertools.count:
    return itertools.count()


@pytest.mark.parametrize("table", [t for t in TABLES if t.records.filters is not None], ids=lambda t: t.name)
def test_pages_equal_pythons_and_of_the_filters(
    store: Store, table: Table, organization_numbers: itertools.count
) -> None:
    rows, chosen = _strategies(table)

    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        specs=st.lists(st.tuples(rows, st.integers(0, 3)), max_size=20),
        wanted=chosen,
        per_page=st.integers(1, 6),
        ids=st.randoms(use_true_random=False),
    )
    def check(specs: list[tuple[dict[str, Any], int]], wanted: dict[str, Any], per_page: int, ids: Any) -> None:
        # One database for every example: each example gets a new organization.
        organization_id = f"org_{next(organization_numbers):05d}"
        numbers = ids.sample(range(10_000), len(specs))
        records = [
            table.make(
                organization_id,
                f"{table.records.prefix}_{number:05d}",
                created_at=samples.T0 + dt.timedelta(minutes=minute),
                **fields,
            )
            for number, (fields, minute) in zip(numbers, specs)
        ]
        with store.session(write=True) as session:
            for record in records:
                session[table.records].add(record)
        filters = table.records.filters(**wanted)
        expected = sorted(
            (r for r in records if filters.matches(r)),
            key=lambda r: (r.created_at, r.id),
            reverse=table.records.newest_first,
        )
        seen: list[Any] = []
        for page in itertools.count(1):
            with store.session(write=False) as session:
                items, total = session[table.records].list(
                    organization_id, filters, PageRequest(page=page, per_page=per_page)
                )
            assert total == len(expected)
            seen.extend(items)
            if page >= max(1, -(-total // per_page)):
                break
        assert seen == expected

    check()
