"""SQLite 0013 / PostgreSQL 0011 on a store that already holds keys, signatures and archived
policies: what the rows say afterwards (issue 16)."""

from __future__ import annotations

import pathlib
import sqlite3
from typing import Any

from sqlite_utils import Database

from compliance_store.sqlite.migrations import MIGRATIONS, migrations

_BEFORE = "0013_signature_issuers"


def _row(conn: sqlite3.Connection, table: str, **values: Any) -> None:
    """A row with ``values`` and a filler for every other column that must have one."""
    for _, name, kind, notnull, default, _ in conn.execute(f'PRAGMA table_info("{table}")'):
        if name not in values and notnull and default is None:
            values[name] = 0 if "INT" in kind.upper() else ""
    names = ", ".join(f'"{name}"' for name in values)
    conn.execute(f'INSERT INTO "{table}" ({names}) VALUES ({", ".join("?" * len(values))})', list(values.values()))


def test_existing_keys_signatures_and_archived_policies_are_filled_in(tmp_path: pathlib.Path) -> None:
    assert _BEFORE in [name for name, _ in MIGRATIONS]
    path = tmp_path / "old.db"
    db = Database(str(path))
    migrations().apply(db, stop_before=_BEFORE)
    db.close()
    conn = sqlite3.connect(path)
    with conn:
        key = {"organization_id": "org_a", "name": "k", "role": "admin", "prefix": "comp_", "created_at": "t"}
        _row(conn, "api_keys", id="key_op", secret_hash="1", person_id="mem_boss", created_by="local:owner", **key)
        _row(conn, "api_keys", id="key_ann", secret_hash="2", person_id="mem_ann", created_by="key_op", **key)
        _row(conn, "api_keys", id="key_self", secret_hash="3", person_id="mem_boss", created_by="key_op", **key)
        _row(conn, "api_keys", id="key_boot", secret_hash="4", created_by=None, **key)
        _row(conn, "policy_acknowledgements", id="pak_1", organization_id="org_a", acknowledged_by="key_ann")
        _row(conn, "policies", id="pol_old", organization_id="org_a", archived=1, in_force=1)
        _row(conn, "policies", id="pol_live", organization_id="org_a", archived=0, in_force=1)
    conn.close()
    db = Database(str(path))
    migrations().apply(db)
    db.close()
    conn = sqlite3.connect(path)
    keys = {row[0]: row[1:] for row in conn.execute("SELECT id, issued_by_person_id, self_issued FROM api_keys")}
    assert keys == {
        "key_op": (None, 1),  # the operator handed it over
        "key_ann": ("mem_boss", 0),
        "key_self": ("mem_boss", 0),  # a chain through the API before 0013 proves nothing
        "key_boot": (None, 0),
    }
    assert conn.execute("SELECT key_issued_by, key_issued_by_person_id FROM policy_acknowledgements").fetchall() == [
        ("key_op", "mem_boss")
    ]
    assert dict(conn.execute("SELECT id, in_force FROM policies")) == {"pol_old": 0, "pol_live": 1}
    conn.close()
