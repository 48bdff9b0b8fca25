"""People, unique by e-mail within an organization (a UNIQUE index, translated to Conflict)."""

from __future__ import annotations

import sqlite3
from typing import Sequence

from compliance_core.errors import Conflict
from compliance_core.pagination import PageRequest
from compliance_core.people import Person, PersonFilter

from .codec import Mapper
from .listing import PagedQuery, read_revision

__all__ = ["SqlitePeople"]

# SQLite's default limit on bound parameters is 32766 on current builds, 999 on old ones.
_CHUNK = 500


class SqlitePeople:
    def __init__(self, conn: sqlite3.Connection, mapper: Mapper[Person], pages: PagedQuery[Person]) -> None:
        self._conn = conn
        self._mapper = mapper
        self._pages = pages
        self._get_sql = f"{mapper.select_sql} WHERE organization_id = ? AND id = ?"

    def revision(self, organization_id: str) -> int:
        return read_revision(self._conn, "people", organization_id)

    def add(self, person: Person) -> None:
        self._write(self._mapper.insert_sql, self._mapper.to_row(person), person)

    def update(self, person: Person) -> None:
        self._write(self._mapper.update_sql, self._mapper.update_params(person), person)

    def _write(self, sql: str, params: list[object], person: Person) -> None:
        try:
            self._conn.execute(sql, params)
        except sqlite3.IntegrityError as error:
            if "people.email" in str(error):
                raise Conflict("a person with this e-mail already exists in the organization",
                               {"field": "email", "value": person.email}) from None
            raise

    def get(self, organization_id: str, person_id: str) -> Person | None:
        row = self._conn.execute(self._get_sql, (organization_id, person_id)).fetchone()
        return None if row is None else self._mapper.from_row(row)

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

    def list(self, organization_id: str, filters: PersonFilter, page: PageRequest) -> tuple[list[Person], int]:
        return self._pages.run(self._conn, organization_id, filters, page)
