"""One small repository per area over the memory store's tables."""

from __future__ import annotations

import builtins
import datetime as dt
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import attrs

from compliance_core.areas.api_keys import API_KEYS, ApiKey, DailyUsage
from compliance_core.areas.organizations import Organization
from compliance_core.areas.people import PEOPLE, Person
from compliance_core.areas.webhooks import DELIVERIES, DeliveryState, WebhookDelivery
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.events import OutboxMessage
from compliance_core.kernel.idempotency import IdempotencyRecord
from compliance_core.kernel.pages import Listing, PageRequest
from compliance_core.kernel.permissions import Role
from compliance_core.kernel.ratelimit import Bucket
from compliance_core.kernel.records import Records

if TYPE_CHECKING:
    from .store import Tables

T = TypeVar("T")


def _page(
    items: Iterable[T], matches: Callable[[T], bool], page: PageRequest, newest_first: bool = False
) -> tuple[list[T], int]:
    hits = sorted((i for i in items if matches(i)), key=lambda i: (i.created_at, i.id), reverse=newest_first)  # type: ignore[attr-defined]
    if page.walk:
        after = page.after
        if after is None:
            return hits[: page.per_page], len(hits)
        key = (after.created_at, after.id)
        rest = [i for i in hits if ((i.created_at, i.id) < key if newest_first else (i.created_at, i.id) > key)]  # type: ignore[attr-defined]
        return rest[: page.per_page], len(hits)
    return hits[page.offset : page.offset + page.per_page], len(hits)


class _Repo:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    def _sorted(self, table: str) -> Iterator[Any]:
        """The rows of ``table`` by key (what ``dump`` gives, as the SQL stores order theirs)."""
        rows = self.t.data[table]
        return (rows[key] for key in sorted(rows))  # type: ignore[type-var]

    def _clear(self, *tables: str) -> int:
        """Delete every row of ``tables`` (journalled); returns how many the first held."""
        removed = len(self.t.data[tables[0]])
        for table in tables:
            for key in list(self.t.data[table]):
                self.t.delete(table, key)
        return removed


class MemoryRecords(_Repo):
    """A declared ``Records`` table: records that belong to one organization, in ``table``."""

    def __init__(self, tables: Tables, table: str, newest_first: bool = False, listing: Listing | None = None) -> None:
        super().__init__(tables)
        self.table = table
        self.newest_first = newest_first
        self.listing = Listing(newest_first=newest_first) if listing is None else listing
        """Search, sort and range as the table declares them (``Listing.select`` is their
        reference semantics, which this store runs)."""

    def get(self, organization_id: str, item_id: str) -> Any:
        return self.t.get(self.table, (organization_id, item_id))

    def add(self, item: Any) -> None:
        self.t.set(self.table, (item.organization_id, item.id), item)
        key = (self.table, item.organization_id)
        self.t.set("revisions", key, (self.t.get("revisions", key) or 0) + 1)

    def update(self, item: Any) -> None:
        self.add(item)

    def delete(self, organization_id: str, item_id: str) -> bool:
        if self.get(organization_id, item_id) is None:
            return False
        self.t.delete(self.table, (organization_id, item_id))
        key = (self.table, organization_id)
        self.t.set("revisions", key, (self.t.get("revisions", key) or 0) + 1)
        return True

    def revision(self, organization_id: str) -> int:
        return self.t.get("revisions", (self.table, organization_id)) or 0

    def list(
        self,
        organization_id: str,
        filters: Any,
        page: PageRequest,
        total: int | None = None,
        revision: int | None = None,
    ) -> tuple[list[Any], int]:
        """The page and the total; a ``total`` the caller knows is not needed here (the matches
        are gathered to sort them anyway) and the one counted is returned, which equals it;
        nothing is kept, so the ``revision`` is not needed either."""
        mine = (i for i in self.t.values(self.table) if i.organization_id == organization_id)
        if page.searched:
            return self.listing.select((i for i in mine if filters.matches(i)), page)
        return _page(mine, filters.matches, page, self.newest_first)

    def dump(self) -> Iterator[Any]:
        """Every record of every organization in list order, by (organization_id, created_at, id)
        (``compliance_store.copy``)."""
        return iter(
            sorted(self.t.values(self.table), key=lambda item: (item.organization_id, item.created_at, item.id))
        )

    def clear(self) -> int:
        """Delete every record (each deletion bumps its organization's revision, as on the SQL
        stores); returns how many (``compliance_store.copy``)."""
        items = list(self.t.values(self.table))
        for item in items:
            self.delete(item.organization_id, item.id)
        return len(items)


class MemoryDeliveries(MemoryRecords):
    """The webhook deliveries table, with the engine's ``due`` query."""

    serves: ClassVar[Records[Any, Any]] = DELIVERIES

    def __init__(self, tables: Tables) -> None:
        super().__init__(tables, DELIVERIES.name, DELIVERIES.newest_first, DELIVERIES.listing)

    def due(self, now: dt.datetime, limit: int, skip: Collection[str] = ()) -> builtins.list[WebhookDelivery]:
        due = [
            d
            for d in self.t.values(self.table)
            if d.webhook_id not in skip
            and (
                (d.state == DeliveryState.PENDING and d.due_at <= now)
                or (d.state == DeliveryState.SENDING and d.lease_expires_at is not None and d.lease_expires_at <= now)
            )
        ]
        return sorted(due, key=lambda d: (d.due_at, d.id))[:limit]

    def in_flight(self, now: dt.datetime) -> dict[str, int]:
        flying: dict[str, int] = {}
        for d in self.t.values(self.table):
            if d.state == DeliveryState.SENDING and d.lease_expires_at is not None and d.lease_expires_at > now:
                flying[d.webhook_id] = flying.get(d.webhook_id, 0) + 1
        return flying


class MemoryOrganizations(_Repo):
    def add(self, organization: Organization) -> None:
        self.t.set("organizations", organization.id, organization)

    update = add

    def get(self, organization_id: str) -> Organization | None:
        found: Organization | None = self.t.get("organizations", organization_id)
        return found

    def count(self) -> int:
        return len(self.t.data["organizations"])

    def find_slug(self, slug: str) -> Organization | None:
        return next((o for o in self.t.values("organizations") if o.slug == slug), None)

    def list_all(self) -> list[Organization]:
        return sorted(self.t.values("organizations"), key=lambda o: (o.created_at, o.id))

    def dump(self) -> Iterator[Organization]:
        """Every organization, by id (``compliance_store.copy``)."""
        return self._sorted("organizations")

    def clear(self) -> int:
        return self._clear("organizations")


class MemoryApiKeys(_Repo):
    """Keys by id, an index by hash, and one of each organization's key ids (``org_keys``, a
    frozenset replaced on each add, so the journal can undo it), so listing or counting an
    organization's keys reads only that organization's."""

    def add(self, key: ApiKey) -> None:
        if self.t.get("key_hashes", key.secret_hash) is not None:
            raise Conflict("an API key with this value already exists")
        self.t.set("api_keys", key.id, key)
        self.t.set("key_hashes", key.secret_hash, key.id)
        mine = self.t.get("org_keys", key.organization_id) or frozenset()
        self.t.set("org_keys", key.organization_id, mine | {key.id})

    def _keys_of(self, organization_id: str) -> builtins.list[ApiKey]:
        ids = self.t.get("org_keys", organization_id) or frozenset()
        return [self.t.get("api_keys", key_id) for key_id in ids]

    def update(self, key: ApiKey) -> None:
        self.t.set("api_keys", key.id, key)

    def get(self, organization_id: str, key_id: str) -> ApiKey | None:
        key = self.t.get("api_keys", key_id)
        return key if key is not None and key.organization_id == organization_id else None

    def find_by_hash(self, secret_hash: str) -> ApiKey | None:
        key_id = self.t.get("key_hashes", secret_hash)
        return None if key_id is None else self.t.get("api_keys", key_id)

    def list(self, organization_id: str, page: PageRequest) -> tuple[list[ApiKey], int]:
        return API_KEYS.listing.select(self._keys_of(organization_id), page)

    def count_active(self, organization_id: str, role: Role, now: dt.datetime) -> int:
        return sum(
            1
            for k in self._keys_of(organization_id)
            if k.organization_id == organization_id and k.role == role and k.status(now) == "active"
        )

    def record_use(self, key_id: str, at: dt.datetime, count: int = 1) -> None:
        day = (key_id, at.date())
        self.t.set("usage", day, (self.t.get("usage", day) or 0) + count)
        key = self.t.get("api_keys", key_id)
        if key.last_used_at is None or key.last_used_at < at:
            self.t.set("api_keys", key_id, attrs.evolve(key, last_used_at=at))

    def usage(self, key_id: str, since: dt.date) -> builtins.list[DailyUsage]:
        usage: dict[tuple[str, dt.date], int] = self.t.data["usage"]  # type: ignore[assignment]
        days = [(day, n) for (kid, day), n in usage.items() if kid == key_id and day >= since]
        return [DailyUsage(date=day, requests=n) for day, n in sorted(days)]

    # --- copying a store (``compliance_store.copy``) ---

    def dump(self) -> Iterator[ApiKey]:
        """Every key of every organization, by id."""
        return self._sorted("api_keys")

    def clear(self) -> int:
        """Delete every key (not their usage: see ``clear_usage``); returns how many."""
        return self._clear("api_keys", "key_hashes", "org_keys")

    def dump_usage(self) -> Iterator[tuple[str, DailyUsage]]:
        usage: dict[tuple[str, dt.date], int] = self.t.data["usage"]  # type: ignore[assignment]
        for key_id, day in sorted(usage):
            yield key_id, DailyUsage(date=day, requests=usage[(key_id, day)])

    def add_usage(self, key_id: str, usage: DailyUsage) -> None:
        if self.t.get("usage", (key_id, usage.date)) is not None:
            raise Conflict(f"key {key_id} already has a count for {usage.date}")
        self.t.set("usage", (key_id, usage.date), usage.requests)

    def clear_usage(self) -> int:
        return self._clear("usage")


class MemoryPeople(MemoryRecords):
    serves: ClassVar[Records[Any, Any]] = PEOPLE

    def __init__(self, tables: Tables) -> None:
        super().__init__(tables, PEOPLE.name, PEOPLE.newest_first, PEOPLE.listing)

    def add(self, person: Person) -> None:
        if self.t.get("emails", (person.organization_id, person.email)) is not None:
            raise Conflict(
                "a person with this e-mail already exists in the organization",
                {"field": "email", "value": person.email},
            )
        super().add(person)
        self.t.set("emails", (person.organization_id, person.email), person.id)

    def update(self, person: Person) -> None:
        old = self.get(person.organization_id, person.id)
        if old is not None and old.email != person.email:
            if self.t.get("emails", (person.organization_id, person.email)) is not None:
                raise Conflict(
                    "a person with this e-mail already exists in the organization",
                    {"field": "email", "value": person.email},
                )
            self.t.delete("emails", (person.organization_id, old.email))
            self.t.set("emails", (person.organization_id, person.email), person.id)
        super().add(person)

    def delete(self, organization_id: str, item_id: str) -> bool:
        person = self.get(organization_id, item_id)
        if person is not None:
            self.t.delete("emails", (organization_id, person.email))
        return super().delete(organization_id, item_id)

    def find_emails(self, organization_id: str, emails: Sequence[str]) -> set[str]:
        return {e for e in emails if self.t.get("emails", (organization_id, e)) is not None}


class MemoryIdempotency(_Repo):
    def get(self, organization_id: str, principal: str, key: str) -> IdempotencyRecord | None:
        found: IdempotencyRecord | None = self.t.get("idempotency", (organization_id, principal, key))
        return found

    def put(self, record: IdempotencyRecord) -> None:
        self.t.set("idempotency", (record.organization_id, record.principal, record.key), record)

    def purge(self, before: dt.datetime) -> int:
        old = [k for k, r in self.t.data["idempotency"].items() if r.created_at < before]
        for k in old:
            self.t.delete("idempotency", k)
        return len(old)

    def dump(self) -> Iterator[IdempotencyRecord]:
        """Every record, by (organization, principal, key) (``compliance_store.copy``)."""
        return self._sorted("idempotency")

    def clear(self) -> int:
        return self._clear("idempotency")


class MemoryRateLimits(_Repo):
    def get(self, key_id: str) -> Bucket | None:
        found: Bucket | None = self.t.get("buckets", key_id)
        return found

    def put(self, key_id: str, bucket: Bucket) -> None:
        self.t.set("buckets", key_id, bucket)

    def dump(self) -> Iterator[tuple[str, Bucket]]:
        """Every key's bucket, by key id (``compliance_store.copy``)."""
        buckets: dict[str, Bucket] = self.t.data["buckets"]  # type: ignore[assignment]
        return ((key_id, buckets[key_id]) for key_id in sorted(buckets))

    def clear(self) -> int:
        return self._clear("buckets")


class MemoryOutbox(_Repo):
    def add(self, message: OutboxMessage) -> None:
        self.t.set("outbox", message.id, message)

    def pending(self, limit: int = 100) -> list[OutboxMessage]:
        waiting = [m for m in self.t.values("outbox") if m.published_at is None]
        return sorted(waiting, key=lambda m: (m.occurred_at, m.id))[:limit]

    def mark_published(self, message_ids: Iterable[str], at: dt.datetime) -> None:
        for message_id in message_ids:
            message = self.t.get("outbox", message_id)
            if message is not None:
                self.t.set("outbox", message_id, attrs.evolve(message, published_at=at))

    def purge(self, before: dt.datetime) -> int:
        gone = [m.id for m in self.t.values("outbox") if m.published_at is not None and m.published_at < before]
        for message_id in gone:
            self.t.delete("outbox", message_id)
        return len(gone)

    def dump(self) -> Iterator[OutboxMessage]:
        """Every message, published or not, by id (``compliance_store.copy``)."""
        return self._sorted("outbox")

    def clear(self) -> int:
        return self._clear("outbox")
