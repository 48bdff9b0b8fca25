"""People: the generic records repository, plus e-mails unique within an organization (a UNIQUE
index, reported as ``Conflict``) and the ``EMAILS`` lookup other areas use.

A taken e-mail is detected without a failing statement (``ON CONFLICT DO NOTHING`` on insert, a
``NOT EXISTS`` guard on update), because in PostgreSQL a failed statement aborts the whole
transaction, where SQLite only undoes the statement: a caller that catches the ``Conflict`` can
still go on with its transaction, on both stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import psycopg
from psycopg import errors

from compliance_core.areas.people import PEOPLE, Person
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.records import Records

from .listing import PagedQuery
from .records import PostgresRecords

__all__ = ["PostgresPeople"]

_UNIQUE_EMAIL = "people_email"
_FIND = "SELECT email FROM people WHERE organization_id = %s AND email = ANY(%s)"
_TAKEN = "SELECT 1 FROM people WHERE organization_id = %s AND email = %s AND id <> %s"


class PostgresPeople(PostgresRecords[Person]):
    serves: ClassVar[Records[Any, Any]] = PEOPLE

    def __init__(self, cur: psycopg.Cursor[Any], pages: PagedQuery[Person], *, write: bool) -> None:
        super().__init__(cur, pages, write=write)
        self._add_sql = f"{self._mapper.insert_sql} ON CONFLICT (organization_id, email) DO NOTHING"
        self._update_sql = f"{self._mapper.update_sql} AND NOT EXISTS ({_TAKEN})"

    def add(self, person: Person) -> None:
        try:
            added = self._cur.execute(self._add_sql, self._mapper.to_row(person)).rowcount
        except errors.UniqueViolation as error:
            raise _conflict(person, error) from None
        if not added:
            raise _taken(person)

    def update(self, person: Person) -> None:
        params = [*self._mapper.update_params(person), person.organization_id, person.email, person.id]
        try:
            updated = self._cur.execute(self._update_sql, params).rowcount
        except errors.UniqueViolation as error:
            raise _conflict(person, error) from None
        if not updated and self._cur.execute(_TAKEN, (person.organization_id, person.email, person.id)).fetchone():
            raise _taken(person)

    def find_emails(self, organization_id: str, emails: Sequence[str]) -> set[str]:
        if not emails:
            return set()
        rows = self._cur.execute(_FIND, (organization_id, list(dict.fromkeys(emails)))).fetchall()
        return {email for (email,) in rows}


def _taken(person: Person) -> Conflict:
    return Conflict(
        "a person with this e-mail already exists in the organization", {"field": "email", "value": person.email}
    )


def _conflict(person: Person, error: errors.UniqueViolation) -> Exception:
    """A unique violation that got past the guards (a writer outside this store's lock)."""
    if error.diag.constraint_name == _UNIQUE_EMAIL:
        return _taken(person)
    return error
