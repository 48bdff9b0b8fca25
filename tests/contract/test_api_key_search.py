"""The API key list's search, sorts and range (issue 18) on every store: API keys are a kernel
table, not a ``Records`` one, and declare their list with ``Listed``; each page, numbered or
walked with a cursor, equals core's ``Listing.select`` of the same keys, with the same total,
and the SQL stores read a ``q`` through the search index ``make migration`` gave the table."""

from __future__ import annotations

import datetime as dt
import itertools

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import PageRequest, Role, ValidationError
from compliance_core.areas.api_keys import API_KEYS, NewApiKey
from compliance_core.kernel.pages import Position, check_position
from compliance_core.kernel.permissions import Actor
from compliance_core.kernel.uow import Store
from compliance_core.platform import Platform

from . import samples

NAMES = ["Łódź CI", "łÓDŹ deploy", "acme backup", "ACME", "Zeta", "σας", "beta"]
LISTING = API_KEYS.listing
SORTS = [None, *LISTING.sorts, *("-" + name for name in LISTING.sorts)]
_instant = st.integers(-1, 5).map(lambda day: samples.T0 + dt.timedelta(days=day, minutes=day))
_key = st.fixed_dictionaries(
    {
        "name": st.sampled_from(NAMES),
        "role": st.sampled_from([Role.OWNER, Role.ADMIN, Role.AUDITOR]),
        "prefix": st.sampled_from(["comp_acme0001", "comp_0123abcd", "comp_beta9999"]),
        "expires_at": st.none() | _instant,
        "last_used_at": st.none() | _instant,
        "minute": st.integers(0, 3 * 24 * 60),
    }
)


def test_the_declaration_is_what_the_list_offers() -> None:
    assert LISTING.searchable == ("name", "prefix")
    assert set(LISTING.sorts) == {"created_at", "name", "role", "expires_at", "last_used_at"}
    assert LISTING.ranged == "created_at" and not LISTING.ranged_date


def test_searched_sorted_ranged_pages_equal_the_python_reference(store: Store) -> None:
    organizations = itertools.count()

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        specs=st.lists(_key, max_size=12),
        q=st.none() | st.sampled_from(["łódź", "ACM", "a", "Σ", "zz", "comp_0123", "BETA9"]),
        sort=st.sampled_from(SORTS),
        since=st.none() | _instant,
        until=st.none() | _instant,
        per_page=st.integers(1, 5),
    )
    def check(
        specs: list[dict[str, object]],
        q: str | None,
        sort: str | None,
        since: dt.datetime | None,
        until: dt.datetime | None,
        per_page: int,
    ) -> None:
        organization_id = f"org_{next(organizations):05d}"
        keys = []
        for n, spec in enumerate(specs):
            fields = dict(spec)
            minute = fields.pop("minute")
            assert isinstance(minute, int)
            key_id = f"key_{organization_id}_{n:03d}"
            keys.append(
                samples.api_key(
                    organization_id=organization_id,
                    id=key_id,
                    secret_hash=f"{organization_id}{n:03d}".ljust(64, "0"),
                    created_at=samples.T0 + dt.timedelta(minutes=minute),
                    **fields,
                )
            )
        other = samples.api_key(
            organization_id="org_other", id=f"key_x{organization_id}", secret_hash="f" * 59 + organization_id[-5:]
        )
        with store.session(write=True) as session:
            for key in [*keys, other]:
                session[API_KEYS].add(key)
        search = {"q": q, "sort": sort, "since": since, "until": until}
        everything, total = LISTING.select(keys, PageRequest(per_page=200, **search))
        for number in range(1, max(1, -(-total // per_page)) + 2):
            with store.session(write=False) as session:
                items, counted = session[API_KEYS].list(
                    organization_id, PageRequest(page=number, per_page=per_page, **search)
                )
            assert counted == total
            assert [k.id for k in items] == [k.id for k in everything[(number - 1) * per_page : number * per_page]]
        walked: list[str] = []
        request: PageRequest | None = PageRequest.walking(per_page, **search)
        while request is not None:
            with store.session(write=False) as session:
                repository = session[API_KEYS]
                after = check_position(repository, organization_id, request.after)
                items, _ = repository.list(organization_id, attrs.evolve(request, after=after))
            walked.extend(k.id for k in items)
            request = None
            if len(items) == per_page:
                last = items[-1]
                key = None if sort is None else getattr(last, sort.lstrip("-"))
                position = Position(last.created_at, last.id, len(walked), sort, key)
                request = PageRequest.walking(per_page, position, **search)
        assert walked == [k.id for k in everything]

    check()


def test_the_service_lists_keys_by_search_sort_and_range(platform: Platform, owner: Actor) -> None:
    for name in ("Deploy bot", "backup job", "Backup nightly"):
        platform.api_keys.create(owner, NewApiKey(name=name, role="auditor"))
    found = platform.api_keys.list(owner, PageRequest(q="BACKUP", sort="-name"))
    assert [k.name for k in found.items] == ["backup job", "Backup nightly"]
    assert found.total == 2
    by_name = platform.api_keys.list(owner, PageRequest(sort="name"))
    assert [k.name for k in by_name.items] == sorted(k.name for k in by_name.items)
    later = platform.api_keys.list(owner, PageRequest(since=samples.T0 + dt.timedelta(days=3650)))
    assert later.total == 0


def test_a_sort_the_list_does_not_offer_is_refused(platform: Platform, owner: Actor) -> None:
    with pytest.raises(ValidationError) as refused:
        platform.api_keys.list(owner, PageRequest(sort="secret_hash"))
    assert refused.value.details["field"] == "sort"
