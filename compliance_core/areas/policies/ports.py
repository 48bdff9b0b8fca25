"""The ports policies read other areas through: people (who must sign, who may approve) and
organizations (the review sweep visits each). Never an import of those areas."""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from ...kernel.pages import PageRequest
from ...kernel.permissions import Role
from ...kernel.registry import Repo

__all__ = ["PersonDirectory", "OrganizationDirectory", "ActivePeople", "PEOPLE", "ORGANIZATIONS", "every"]


class _Person(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def is_active(self) -> bool: ...

    @property
    def role(self) -> Role: ...


class PersonDirectory(Protocol):
    """The port to the people area: one person, or a page of them."""

    def get(self, organization_id: str, person_id: str) -> _Person | None: ...

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[list[_Person], int]: ...


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


class _Organization(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...


class OrganizationDirectory(Protocol):
    """The port to the organizations area: the review sweep visits every organization."""

    def get(self, organization_id: str) -> _Organization | None: ...

    def list_all(self) -> list[_Organization]: ...


PEOPLE: Repo[PersonDirectory] = Repo("people")
ORGANIZATIONS: Repo[OrganizationDirectory] = Repo("organizations")
_BATCH = 200


def every(repository: Any, organization_id: str, filters: Any) -> list[Any]:
    """Every matching record of a repository, page by page (the sets read this way are an
    organization's policies, one version's sign-offs or its active people)."""
    found: list[Any] = []
    number = 1
    while True:
        items, total = repository.list(organization_id, filters, PageRequest(page=number, per_page=_BATCH))
        found += items
        if len(found) >= total or not items:
            return found
        number += 1
