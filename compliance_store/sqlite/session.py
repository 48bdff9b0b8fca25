"""What one thread's connection hands out: a repository per area.

The ``Catalog`` (mappers, page queries, the result codec) is built once per store and shared by
every thread; a ``SqliteSession`` binds it to one connection and is reused for every transaction
on that connection, so opening a session allocates nothing.
"""

from __future__ import annotations

import sqlite3

import attrs

from compliance_core.api_keys import ApiKey
from compliance_core.events import OutboxMessage
from compliance_core.findings import Finding, FindingFilter
from compliance_core.organizations import Organization
from compliance_core.people import Person, PersonFilter
from compliance_core.vendors import Vendor, VendorFilter

from .api_keys import SqliteApiKeys
from .codec import Mapper, make_converter
from .idempotency import ResultCodec, SqliteIdempotency
from .listing import PagedQuery
from .organizations import SqliteOrganizations
from .outbox import SqliteOutbox
from .people import SqlitePeople
from .rate_limits import SqliteRateLimits
from .records import SqliteRecords

__all__ = ["Catalog", "SqliteSession"]

_SCOPED = ("organization_id", "id")
"""The key of organization-scoped tables, as the memory store keys them."""


@attrs.frozen(kw_only=True)
class Catalog:
    organizations: Mapper[Organization]
    api_keys: Mapper[ApiKey]
    vendors: Mapper[Vendor]
    people: Mapper[Person]
    findings: Mapper[Finding]
    outbox: Mapper[OutboxMessage]
    api_key_pages: PagedQuery[ApiKey]
    vendor_pages: PagedQuery[Vendor]
    people_pages: PagedQuery[Person]
    finding_pages: PagedQuery[Finding]
    results: ResultCodec

    @classmethod
    def build(cls) -> "Catalog":
        converter = make_converter()
        api_keys = Mapper(ApiKey, "api_keys", converter)
        vendors = Mapper(Vendor, "vendors", converter, _SCOPED)
        people = Mapper(Person, "people", converter, _SCOPED)
        findings = Mapper(Finding, "findings", converter, _SCOPED)
        return cls(
            organizations=Mapper(Organization, "organizations", converter),
            api_keys=api_keys,
            vendors=vendors,
            people=people,
            findings=findings,
            outbox=Mapper(OutboxMessage, "outbox", converter),
            api_key_pages=PagedQuery(api_keys),
            vendor_pages=PagedQuery(vendors, VendorFilter, counted=True),
            people_pages=PagedQuery(people, PersonFilter, counted=True),
            finding_pages=PagedQuery(findings, FindingFilter, counted=True),
            results=ResultCodec(converter),
        )

    def mappers(self) -> list[Mapper[object]]:
        return [self.organizations, self.api_keys, self.vendors, self.people, self.findings, self.outbox]


class SqliteSession:
    __slots__ = ("organizations", "api_keys", "vendors", "people", "findings", "idempotency",
                 "rate_limits", "outbox")

    def __init__(self, conn: sqlite3.Connection, catalog: Catalog) -> None:
        self.organizations = SqliteOrganizations(conn, catalog.organizations)
        self.api_keys = SqliteApiKeys(conn, catalog.api_keys, catalog.api_key_pages)
        self.vendors = SqliteRecords(conn, catalog.vendors, catalog.vendor_pages)
        self.people = SqlitePeople(conn, catalog.people, catalog.people_pages)
        self.findings = SqliteRecords(conn, catalog.findings, catalog.finding_pages)
        self.idempotency = SqliteIdempotency(conn, catalog.results)
        self.rate_limits = SqliteRateLimits(conn)
        self.outbox = SqliteOutbox(conn, catalog.outbox)
