"""The directory: the people of an organization and the organizations themselves, as every area
that is not theirs reads them.

Many areas ask the same two questions of others: is this id a person of the organization (an
assignee, an owner, a signer, a key's person), and which organizations are there (a sweep visits
each). The people and organizations areas keep those tables; every other area asks through this
one port instead of declaring its own Protocol for the same lookup, and never imports them.

A session is enough to ask: ``Directory(tx).check_member(org_id, "ownerId", owner_id)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import attrs

from .errors import ValidationError
from .pages import PageRequest
from .permissions import Actor, Role
from .registry import Repo, Session

__all__ = [
    "DirectoryPerson",
    "People",
    "DirectoryOrganization",
    "Organizations",
    "PEOPLE",
    "ORGANIZATIONS",
    "ActivePeople",
    "Directory",
    "every",
    "acting_name",
]


class DirectoryPerson(Protocol):
    """What other areas read of a person."""

    @property
    def id(self) -> str: ...

    @property
    def organization_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> Role: ...

    @property
    def is_active(self) -> bool: ...


class People(Protocol):
    """The people table as other areas reach it: one person, a page of them, and storing a
    person another area changed with ``attrs.evolve`` (a transfer of ownership changes roles)."""

    def get(self, organization_id: str, person_id: str) -> DirectoryPerson | None: ...

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[Sequence[DirectoryPerson], int]: ...

    def update(self, person: Any) -> None: ...


class DirectoryOrganization(Protocol):
    """What other areas read of an organization."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def owner_person_id(self) -> str | None: ...


class Organizations(Protocol):
    """The organizations table as other areas reach it."""

    def get(self, organization_id: str) -> DirectoryOrganization | None: ...

    def list_all(self) -> list[DirectoryOrganization]:
        """Every organization, oldest first."""
        ...


PEOPLE: Repo[People] = Repo("people")
ORGANIZATIONS: Repo[Organizations] = Repo("organizations")
_BATCH = 200


@attrs.frozen(kw_only=True)
class ActivePeople:
    """A filter of the people table: every active person. SQL stores read a filter's values by
    the people table's filter column names, so any column named here but ``is_active`` reads
    None ("any"), whatever columns the people area adds; ``matches`` is the reference."""

    is_active: bool = True

    def __getattr__(self, name: str) -> None:
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def matches(self, person: Any) -> bool:
        return bool(person.is_active)


def every(repository: Any, organization_id: str, filters: Any) -> list[Any]:
    """Every matching record of a repository, page by page (an organization's active people,
    its policies, one version's sign-offs)."""
    found: list[Any] = []
    number = 1
    while True:
        items, total = repository.list(organization_id, filters, PageRequest(page=number, per_page=_BATCH))
        found += items
        if len(found) >= total or not items:
            return found
        number += 1


def acting_name(session: Session, actor: Actor | None) -> str | None:
    """The name of the person ``actor`` acts as (None: no person), as admission read it or, for
    an ``Actor`` made without it, as the directory has it now."""
    if actor is None or actor.person_id is None:
        return None
    if actor.person_name is not None:
        return actor.person_name
    person = session[PEOPLE].get(actor.organization_id, actor.person_id)
    return None if person is None else person.name


@attrs.frozen
class Directory:
    """The directory read through one store session (a read or a write transaction)."""

    session: Session

    def person(self, organization_id: str, person_id: str) -> DirectoryPerson | None:
        """The person of the organization with this id (None: no such person there)."""
        return self.session[PEOPLE].get(organization_id, person_id)

    def check_member(self, organization_id: str, field: str, person_id: str | None) -> None:
        """A ``validation_error`` on ``field`` unless ``person_id`` is None or a person of the
        organization (active or not: a deactivated person still owns what they owned)."""
        if person_id is not None and self.person(organization_id, person_id) is None:
            raise ValidationError.field(field, person_id, "is not a person in this organization")

    def check_approver(self, organization_id: str, field: str, person_id: str | None) -> None:
        """A ``validation_error`` on ``field`` unless ``person_id`` is None or an active owner or
        admin of the organization: who may decide an approval (a policy's, a statement's)."""
        if person_id is None:
            return
        approver = self.person(organization_id, person_id)
        if approver is None:
            raise ValidationError.field(field, person_id, "is not a person in this organization")
        if not approver.is_active or Role(approver.role) not in (Role.OWNER, Role.ADMIN):
            raise ValidationError.field(field, person_id, "must be an active owner or admin")

    def active_people(self, organization_id: str) -> list[DirectoryPerson]:
        return every(self.session[PEOPLE], organization_id, ActivePeople())

    def names(self, organization_id: str, person_ids: Iterable[str | None]) -> dict[str, str]:
        """The name of each of these people, by id (an id of nobody in the organization is left
        out), so a list of sign-offs or acceptances shows who each person is."""
        found: dict[str, str] = {}
        for person_id in dict.fromkeys(person_ids):
            if person_id is None:
                continue
            person = self.person(organization_id, person_id)
            if person is not None:
                found[person_id] = person.name
        return found

    def store_person(self, person: Any) -> None:
        """Store a person changed with ``attrs.evolve`` (the caller records its event)."""
        self.session[PEOPLE].update(person)

    def organization(self, organization_id: str) -> DirectoryOrganization | None:
        return self.session[ORGANIZATIONS].get(organization_id)

    def organization_ids(self) -> list[str]:
        """Every organization's id, oldest first (what a sweep visits)."""
        return [organization.id for organization in self.session[ORGANIZATIONS].list_all()]

    def owner_of(self, organization_id: str) -> str | None:
        """The person who owns the organization, if one is named."""
        organization = self.organization(organization_id)
        return None if organization is None else organization.owner_person_id
