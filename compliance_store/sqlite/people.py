"""People: the generic records repository, plus e-mails unique within an organization (a UNIQUE
index, translated to Conflict) and the ``EMAILS`` lookup other areas use."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from compliance_core.areas.people import PEOPLE, Person
from compliance_core.kernel.errors import Conflict
from compliance_core.kernel.records import Records

from .records import SqliteRecords

__all__ = ["SqlitePeople"]

# SQLite's default limit on bound parameters is 32766 on current builds, 999 on old ones.
_CHUNK = 500


class SqlitePeople(SqliteRecords[Person]):
    serves: ClassVar[Records[Any, Any]] = PEOPLE

    def add(self, person: Person) -> None:
        self._unique_email(super().add, person)

    def update(self, person: Person) -> None:
        self._unique_email(super().update, person)

    @staticmethod
    def _unique_email(write: Callable[[Person], None], person: Person) -> None:
        try:
            write(person)
        except sqlite3.IntegrityError as error:
            if "people.email" in str(error):
                raise Conflict(
                    "a person with this e-mail already exists in the organization",
                    {"field": "email", "value": person.email},
                ) from None
            raise

    def find_emails(self, organization_id: str, emails: Sequence[str]) -> set[str]:
        found: set[str] = set()
        unique = list(dict.fromkeys(emails))
        for start in range(0, len(unique), _CHUNK):
            chunk = unique[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT email FROM people WHERE organization_id = ? AND email IN ({marks})",
                [organization_id, *chunk],
            )
            found.update(email for (email,) in rows)
        return found
