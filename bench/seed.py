"""A realistic tenant to measure against: one Enterprise organization whose rate limit the
benchmark can never exhaust, twenty people and ten thousand varied vendors.

Vendors go in through the unit of work in chunks of ``IMPORT_CHUNK``, one transaction each (the
service's one-transaction-per-call would make seeding the slowest part of the run); each is still validated by ``NewVendor`` and
the cross-field rules, so the rows are exactly what the API could have written.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence

import attrs

from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import VENDORS, NewVendor, PurposeCategory, SubProcessor, Vendor, check_vendor
from compliance_core.platform import Platform
from compliance_store.progress import Progress, progress_on

__all__ = ["Seeded", "seed", "seed_url", "sqlite_url", "import_vendors", "IMPORT_CHUNK", "MAX_LIMIT"]

# The core's ceiling for negotiated Enterprise limits: one million a minute is ~16.7k req/s and a
# bucket of one million tokens, far above what two cores can serve in a bounded run.
MAX_LIMIT = 1_000_000

_PREFIXES = (
    "North",
    "Blue",
    "Silver",
    "Quantum",
    "Atlas",
    "Nimbus",
    "Vertex",
    "Harbor",
    "Lumen",
    "Crest",
    "Pioneer",
    "Summit",
    "Orbit",
    "Cobalt",
    "Meridian",
    "Beacon",
    "Falcon",
    "Granite",
    "Juniper",
    "Kestrel",
)
_CORES = (
    "wind",
    "stack",
    "ledger",
    "forge",
    "grid",
    "path",
    "scale",
    "sense",
    "works",
    "point",
    "bridge",
    "field",
    "mark",
    "flow",
    "gate",
    "line",
    "shift",
    "cloud",
    "base",
    "data",
)
_SUFFIXES = ("GmbH", "Ltd", "Inc.", "SAS", "B.V.", "AB", "S.p.A.", "Oy", "LLC", "A/S")
_SERVICES = (
    "payroll processing",
    "cloud hosting",
    "e-mail delivery",
    "CRM",
    "product analytics",
    "customer support ticketing",
    "identity and access management",
    "log management",
    "payment processing",
    "HR information system",
    "source code hosting",
    "backup storage",
    "marketing automation",
    "video conferencing",
    "endpoint security",
)
_COUNTRIES = (
    "DE",
    "FR",
    "NL",
    "IE",
    "SE",
    "ES",
    "IT",
    "PL",
    "AT",
    "DK",
    "US",
    "US",
    "US",
    "GB",
    "GB",
    "CH",
    "IN",
    "CA",
    "JP",
    "AU",
)
_TEAMS = ("IT", "engineering", "finance", "HR", "legal", "operations", "sales", "marketing")
_DEPARTMENTS = ("admin", "gov", "hr", "it", "itsm", "qms")
_FIRST = ("Ada", "Ben", "Chloe", "Dario", "Elif", "Farah", "Gustav", "Hana", "Ivo", "Jonas")
_LAST = ("Schmidt", "Moreau", "Jansen", "Kowalski", "Rossi", "Lindqvist")


@attrs.frozen(kw_only=True)
class Seeded:
    url: str
    organization_id: str
    api_key: str
    vendors: int
    records: tuple[Vendor, ...] = attrs.field(default=(), repr=False, eq=False)
    """The vendors written, in seeding order (the same attributes for the same ``rng_seed`` and
    count on every store; only the ids differ)."""


def sqlite_url(path: str) -> str:
    return f"sqlite:///{path}"


def seed(path: str, vendors: int = 10_000, *, rng_seed: int = 2024) -> Seeded:
    """Create the SQLite database at ``path`` and return what a client needs to reach the tenant."""
    return seed_url(sqlite_url(path), vendors, rng_seed=rng_seed)


def seed_url(url: str, vendors: int = 10_000, *, rng_seed: int = 2024) -> Seeded:
    """Seed the empty store at ``url`` (any store URL: ``sqlite:///...``,
    ``postgresql://...?schema=...``) and return what a client needs to reach the tenant."""
    rng = random.Random(rng_seed)
    with Platform.open(url) as platform:
        boot = platform.bootstrap("Benchmark Holdings", "enterprise", rpm=MAX_LIMIT, burst=MAX_LIMIT)
        actor = platform.actor(boot.organization.id)
        people = [
            platform.people.create(
                actor,
                NewPerson(
                    name=f"{first} {rng.choice(_LAST)}",
                    email=f"{first.lower()}.{index}@bench.example",
                    department=rng.choice(_DEPARTMENTS),
                    job_title=rng.choice(("Vendor Manager", "DPO", "CISO", "Procurement Lead", "Engineer")),
                ),
            )
            for index, first in enumerate(_FIRST * 2)
        ]
        assignees = [person.id for person in people]
        start = platform.clock.now() - dt.timedelta(days=365)
        records = [
            _vendor(
                rng,
                index,
                boot.organization.id,
                platform.ids.new("vnd"),
                assignees,
                start + dt.timedelta(seconds=index * 3100 + rng.randrange(3000)),
            )
            for index in range(vendors)
        ]
        import_vendors(platform, records)
    secret = boot.owner_key.secret
    if secret is None:
        raise RuntimeError("bootstrap returned no Owner key secret")
    return Seeded(
        url=url,
        organization_id=boot.organization.id,
        api_key=secret,
        vendors=vendors,
        records=tuple(records),
    )


IMPORT_CHUNK = 5_000
"""Vendors per transaction of an import."""


def import_vendors(
    platform: Platform, vendors: Sequence[Vendor], *, chunk: int = IMPORT_CHUNK, progress: Progress | None = None
) -> None:
    """Write validated ``vendors`` through the unit of work, ``chunk`` to a transaction (one
    transaction for all would hold the write lock throughout and grow SQLite's WAL with every
    row), with a bar on standard error when it is a terminal."""
    shown = progress_on() if progress is None else progress
    shown.start(f"importing {len(vendors):,} vendors", len(vendors))
    try:
        for start in range(0, len(vendors), chunk):
            part = vendors[start : start + chunk]
            with platform.uow.write(None) as tx:
                repository = tx[VENDORS]
                for vendor in part:
                    repository.add(vendor)
            shown.advance(len(part))
    finally:
        shown.finish()


def _vendor(
    rng: random.Random, index: int, organization_id: str, vendor_id: str, assignees: list[str], created_at: dt.datetime
) -> Vendor:
    name = f"{rng.choice(_PREFIXES)}{rng.choice(_CORES)} {rng.choice(_SUFFIXES)} {index:05d}"
    slug = name.split()[0].lower()
    country = rng.choice(_COUNTRIES)
    personal = rng.random() < 0.6
    outside_eea = country in ("US", "GB", "CH", "IN", "CA", "JP", "AU")
    reviewed = created_at.date() + dt.timedelta(days=rng.randrange(0, 90)) if rng.random() < 0.7 else None
    service = rng.choice(_SERVICES)
    data = NewVendor(
        name=name,
        description=f"Provides {service} for {rng.choice(_TEAMS)}; contract renewed yearly.",
        category=rng.choice(
            ("cloud", "infrastructure", "software_as_a_service", "finance", "marketing", "sales", "hr", "other")
        ),
        status=rng.choice(("not_assessed", "in_progress", "assessed")),
        inherent_probability=rng.choice(("very_unlikely", "unlikely", "possible", "likely", "very_likely")),
        inherent_impact=rng.choice(("insignificant", "minor", "moderate", "major", "severe")),
        residual_probability=rng.choice(("very_unlikely", "unlikely", "possible")),
        residual_impact=rng.choice(("insignificant", "minor", "moderate")),
        website=f"https://{slug}-{index}.example.com",
        assignee_id=rng.choice(assignees) if rng.random() < 0.8 else None,
        country=country,
        criticality=rng.choice(("critical", "important", "standard", "standard")),
        ict_service=rng.random() < 0.5,
        processes_personal_data=personal,
        is_sub_processor=personal and rng.random() < 0.3,
        dpa_status=rng.choice(("signed", "pending", "not_required")) if personal else None,
        dpa_signed_at=reviewed if personal and reviewed else None,
        dpa_url=f"https://{slug}-{index}.example.com/dpa" if personal else None,
        last_reviewed_at=reviewed,
        next_review_due=reviewed + dt.timedelta(days=365) if reviewed else None,
        sub_processors=[
            SubProcessor(
                name=f"{rng.choice(_PREFIXES)} {rng.choice(_SERVICES).title()}",
                country=rng.choice(_COUNTRIES),
                purpose_category=PurposeCategory(rng.choice(("hosting", "data_storage", "analytics", "payments"))),
            )
            for _ in range(rng.randrange(0, 4) if personal else 0)
        ],
        transfer_mechanism=rng.choice(("standard_contractual_clauses", "adequacy_decision"))
        if personal and outside_eea
        else None,
    )
    vendor = Vendor(
        id=vendor_id,
        organization_id=organization_id,
        created_at=created_at,
        updated_at=created_at,
        **attrs.asdict(data, recurse=False),
    )
    check_vendor(vendor)
    return vendor
