"""People: the members of an organization, unique by e-mail within it."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from ..kernel.directory import Directory
from ..kernel.errors import MAX_ECHO_CHARS, Conflict, Forbidden, ValidationError, bounded, cut_text
from ..kernel.events import Event
from ..kernel.operations import Once, Standard, operation
from ..kernel.page_cache import PageCache
from ..kernel.permissions import MANAGERS, MEMBERS, Action, Actor, Role, ensure_can_grant
from ..kernel.records import Filter, Records, changed, fetch
from ..kernel.registers import Register
from ..kernel.registry import Area, Repo, Route, Session
from ..kernel.uow import Tx, UnitOfWork
from ..kernel.validation import (
    Patch,
    Unset,
    boolean,
    choice,
    email,
    optional_choice,
    optional_text,
    patch_field,
    text,
    wire_name,
)

__all__ = [
    "Department",
    "Person",
    "NewPerson",
    "PersonPatch",
    "PersonFilter",
    "EmailIndex",
    "PeopleService",
    "PEOPLE",
    "EMAILS",
    "PERSON_READ",
    "PERSON_CREATE",
    "PERSON_UPDATE",
    "PersonCreated",
    "PersonUpdated",
    "AREA",
    "MAX_BULK",
    "parse_members",
]

MAX_BULK = 1000
"""The most people one bulk-create call takes; it is all-or-nothing."""


class Department(enum.StrEnum):
    NONE = "none"
    ADMIN = "admin"
    GOV = "gov"
    HR = "hr"
    IT = "it"
    ITSM = "itsm"
    QMS = "qms"


@attrs.frozen(kw_only=True)
class Person:
    id: str
    organization_id: str
    name: str
    email: str
    role: Role = Role.EMPLOYEE
    department: Department = Department.NONE
    job_title: str | None = None
    is_active: bool = True
    created_at: dt.datetime
    updated_at: dt.datetime


@attrs.frozen(kw_only=True)
class NewPerson:
    name: str = attrs.field(converter=text(200))
    email: str = attrs.field(converter=email)
    role: Role = attrs.field(default=Role.EMPLOYEE, converter=choice(Role, fold_case=True))
    department: Department = attrs.field(default=Department.NONE, converter=choice(Department))
    job_title: str | None = attrs.field(default=None, converter=optional_text(200))
    is_active: bool = attrs.field(default=True, converter=boolean)


_NEW = attrs.fields(NewPerson)


@attrs.frozen(kw_only=True)
class PersonPatch(Patch):
    name: str | Unset = patch_field(_NEW.name.converter)
    email: str | Unset = patch_field(_NEW.email.converter)
    role: Role | Unset = patch_field(_NEW.role.converter)
    department: Department | Unset = patch_field(_NEW.department.converter)
    job_title: str | None | Unset = patch_field(_NEW.job_title.converter)
    is_active: bool | Unset = patch_field(_NEW.is_active.converter)


@attrs.frozen(kw_only=True)
class PersonFilter(Filter):
    role: Role | None = attrs.field(default=None, converter=optional_choice(Role))
    department: Department | None = attrs.field(default=None, converter=optional_choice(Department))
    is_active: bool | None = None


class EmailIndex(Protocol):
    """E-mails are unique within an organization; the people repository also answers this, and
    its ``add``/``update`` raise ``Conflict`` for a taken e-mail."""

    def find_emails(self, organization_id: str, emails: Sequence[str]) -> set[str]:
        """Which of these e-mails already belong to someone in the organization."""
        ...


PEOPLE: Records[Person, PersonFilter] = Records(
    "people",
    model=Person,
    filters=PersonFilter,
    kind="person",
    prefix="mem",
    cached=True,
    facets=("role", "department", "is_active"),
    queries=EmailIndex,
    searchable=("name", "email", "job_title"),
    sortable=("name", "email", "updated_at"),
    ranged="created_at",
)


EMAILS: Repo[EmailIndex] = Repo("people")
PERSON_READ = Action("person:read", MEMBERS)
PERSON_CREATE = Action("person:create", MANAGERS)
PERSON_UPDATE = Action("person:update", MANAGERS)


class PersonCreated(Event):
    """A person was added (one event per person of a bulk add)."""

    type = "person.created"


class PersonUpdated(Event):
    """Some of a person's fields changed; ``previous`` holds their old values."""

    type = "person.updated"


def _entry_error(index: int, field: str | None, value: Any, reason: str) -> dict[str, Any]:
    """One bad entry, its field and value echoed bounded like ``ValidationError.field``'s."""
    shown, truncated = bounded(value)
    name = None if field is None else cut_text(str(field), MAX_ECHO_CHARS)
    error: dict[str, Any] = {"index": index, "field": name, "value": shown, "reason": reason}
    if truncated or (field is not None and name != str(field)):
        error["truncated"] = True
    return error


def _entry(index: int, item: Any) -> NewPerson:
    """One bulk entry, with the entry's index in any error."""
    if isinstance(item, NewPerson):
        return item
    if not isinstance(item, Mapping):
        raise ValidationError("entry must be an object", _entry_error(index, None, item, "must be an object"))
    known = {f.name for f in _NEW}
    for key in item:
        if key not in known:
            raise ValidationError("unknown field", _entry_error(index, wire_name(str(key)), item[key], "unknown field"))
    for key in ("name", "email"):
        if key not in item:
            raise ValidationError("missing field", _entry_error(index, key, None, "is required"))
    try:
        return NewPerson(**item)
    except ValidationError as error:
        raise ValidationError(error.message, {"index": index, **error.details}) from None


def parse_members(members: Any, extra_errors: Sequence[dict[str, Any]] = ()) -> list[NewPerson]:
    """Check every entry of a bulk request without writing anything.

    Raises one ValidationError listing each bad entry's index, field, value and reason, so a
    caller fixes the whole batch at once. ``extra_errors`` are entry errors a transport found
    first (such as unknown wire fields); they are merged in index order.
    """
    if not isinstance(members, Sequence) or isinstance(members, (str, bytes)):
        raise ValidationError.field("members", members, "must be a list")
    if not 1 <= len(members) <= MAX_BULK:
        raise ValidationError.field("members", len(members), f"must hold 1 to {MAX_BULK} entries")
    entries: list[NewPerson] = []
    errors = [_entry_error(e["index"], e.get("field"), e.get("value"), e.get("reason", "")) for e in extra_errors]
    seen: dict[str, int] = {}
    for index, item in enumerate(members):
        try:
            entry = _entry(index, item)
        except ValidationError as error:
            listed = error.details.get("errors")  # every bad field of the entry
            errors += [{"index": index, **entry} for entry in listed] if listed else [error.details]
            continue
        if entry.email in seen:
            errors.append(
                {"index": index, "field": "email", "value": entry.email, "reason": f"repeats entry {seen[entry.email]}"}
            )
        seen.setdefault(entry.email, index)
        entries.append(entry)
    if errors:
        errors.sort(key=lambda e: e["index"])
        bad = len({e["index"] for e in errors})
        raise ValidationError(
            f"{bad} of {len(members)} entries are invalid; none were created", {"field": "members", "errors": errors}
        )
    return entries


def _check_new(service: object, tx: Tx, actor: Actor, person: Person) -> None:
    ensure_can_grant(actor, person.role)
    if tx[EMAILS].find_emails(actor.organization_id, [person.email]):
        raise _taken(person.email)


_TABLE = Standard(PEOPLE, id="person_id")
_REGISTER = Register(PEOPLE, new=NewPerson, event=PersonCreated, check=_check_new, unique=("email",))
_ALL = "/v1/people"
_ONE = "/v1/people/{person_id}"


@attrs.define
class PeopleService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(PERSON_READ, Route("GET", _ALL, "List the organization's people"))

    @operation(
        PERSON_CREATE,
        Route("POST", _ALL, "Add a person", 201),
        body=NewPerson,
        idempotent=True,
        result=Person,
        example={"name": "Ada Lovelace", "email": "ada@example.com"},
    )
    def create(self, actor: Actor, data: NewPerson, once: Once) -> Person:
        ensure_can_grant(actor, data.role)
        now = self.uow.clock.now()

        def create() -> Person:
            if tx[EMAILS].find_emails(actor.organization_id, [data.email]):
                raise _taken(data.email)
            person = self._new(actor, data, now)
            tx[PEOPLE].add(person)
            tx.record(PersonCreated(organization_id=actor.organization_id, subject=person))
            return person

        with self.uow.write(actor) as tx:
            return once(tx, data, now, create)

    @operation(
        PERSON_CREATE,
        Route("POST", _ALL + "/bulk", "Add up to 1000 people at once; any invalid entry rejects the whole batch", 201),
        body=NewPerson,
        batch=parse_members,
        idempotent=True,
        result=Person,
        example={"members": [{"name": "Grace Hopper", "email": "grace@example.com"}]},
    )
    def bulk_create(
        self, actor: Actor, members: Sequence[NewPerson | Mapping[str, Any]], once: Once
    ) -> tuple[Person, ...]:
        """All or nothing: any invalid entry rejects the whole batch, and the error's
        ``details.errors`` lists each bad entry's index, field, value and reason."""
        entries = parse_members(members)
        above = [
            {"index": i, "field": "role", "value": e.role.value, "reason": "above the caller's role"}
            for i, e in enumerate(entries)
            if e.role.rank > actor.role.rank
        ]
        if above:
            raise Forbidden(
                f"role {actor.role.value} may not grant these roles; none were created",
                {"field": "members", "errors": above},
            )
        now = self.uow.clock.now()

        def create() -> tuple[Person, ...]:
            taken = tx[EMAILS].find_emails(actor.organization_id, [e.email for e in entries])
            if taken:
                raise Conflict(
                    f"{len(taken)} e-mail(s) already belong to people in this organization; none were created",
                    {
                        "field": "members",
                        "errors": [
                            {"index": i, "field": "email", "value": e.email, "reason": "already exists"}
                            for i, e in enumerate(entries)
                            if e.email in taken
                        ],
                    },
                )
            people = tuple(self._new(actor, entry, now) for entry in entries)
            for person in people:
                tx[PEOPLE].add(person)
                tx.record(PersonCreated(organization_id=actor.organization_id, subject=person))
            return people

        with self.uow.write(actor) as tx:
            return once(tx, entries, now, create)

    get = _TABLE.get(PERSON_READ, Route("GET", _ONE, "Read one person"))
    export_csv, export_xlsx = _REGISTER.exports(PERSON_READ, _ALL, "people")
    import_file = _REGISTER.importer(
        PERSON_CREATE,
        Route("POST", _ALL + "/import", "Import people from a CSV or XLSX file: a dry run lists every row's errors"),
        example={
            "format": "csv",
            "content": "bmFtZSxlbWFpbA0KSW1wb3J0ZWQgUGVyc29uLGltcG9ydGVkQGV4YW1wbGUuY29tDQo=",
            "dryRun": True,
        },
    )

    @operation(
        PERSON_UPDATE,
        Route("PATCH", _ONE, "Change some of a person's fields"),
        body=PersonPatch,
        result=Person,
        example={"jobTitle": "Engineer"},
    )
    def update(self, actor: Actor, person_id: str, patch: PersonPatch) -> Person:
        changes = patch.changes()
        if "role" in changes:
            ensure_can_grant(actor, changes["role"])
        with self.uow.write(actor) as tx:
            current = fetch(tx, PEOPLE, actor.organization_id, person_id)
            ensure_can_grant(actor, current.role)
            previous = changed(current, changes)
            if not previous:
                return current
            if "email" in previous and tx[EMAILS].find_emails(actor.organization_id, [changes["email"]]):
                raise _taken(changes["email"])
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            if (updated.role is not Role.OWNER or not updated.is_active) and _owns(tx, updated):
                field, value = ("role", updated.role.value) if "role" in previous else ("isActive", updated.is_active)
                raise Conflict(
                    "the organization's Owner stays an active owner; transfer the ownership first",
                    {"field": field, "value": value, "reason": "the person is the organization's Owner"},
                )
            tx[PEOPLE].update(updated)
            tx.record(PersonUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    def _new(self, actor: Actor, data: NewPerson, now: dt.datetime) -> Person:
        return Person(
            id=self.uow.ids.new(PEOPLE.prefix),
            organization_id=actor.organization_id,
            created_at=now,
            updated_at=now,
            **attrs.asdict(data, recurse=False),
        )


def _owns(session: Session, person: Person) -> bool:
    return Directory(session).owner_of(person.organization_id) == person.id


def _taken(address: str) -> Conflict:
    return Conflict(
        "a person with this e-mail already exists in the organization", {"field": "email", "value": address}
    )


AREA = Area(
    name="people",
    tag="People",
    service=lambda context: PeopleService(context.uow, context.pages),
    api=PeopleService,
    actions=(PERSON_READ, PERSON_CREATE, PERSON_UPDATE),
    records=(PEOPLE,),
    events=(PersonCreated, PersonUpdated),
)
