"""The limit for creates: a minimal WSGI app on the same prefork waitress server as the full stack
that answers ``POST /v1/vendors`` by writing the rows a create writes (the vendor, its outbox
message, its audit entry) with plain sqlite3 in one ``BEGIN IMMEDIATE`` transaction, into the
same migrated file (its indexes and triggers fire as they do for the full stack). No auth, no
validation, no domain objects; SQLite's own busy handler queues the writers.

``python -m bench.plain_writes --db PATH --organization ORG --port P``
"""

from __future__ import annotations

import datetime as dt
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from .plain import serve_plain

__all__ = ["create_plain_writes_app"]

_VENDOR = (
    "INSERT INTO vendors (id, organization_id, name, description, category, status, inherent_probability, "
    "inherent_impact, residual_probability, residual_impact, website, criticality, ict_service, "
    "processes_personal_data, is_sub_processor, created_at, updated_at) "
    "VALUES (?, ?, ?, '', 'other', 'not_assessed', 'possible', 'moderate', 'possible', 'moderate', ?, "
    "'standard', 0, 0, 0, ?, ?)"
)
_OUTBOX = (
    "INSERT INTO outbox (id, type, organization_id, subject_id, payload, occurred_at) "
    "VALUES (?, 'vendor.created', ?, ?, ?, ?)"
)
_AUDIT = (
    "INSERT INTO audit_log (id, organization_id, created_at, actor_type, action, entity_type, entity_id, "
    "event_id, changes) VALUES (?, ?, ?, 'system', 'vendor.created', 'vendor', ?, ?, '{}')"
)

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class PlainWrites:
    """The WSGI callable: one sqlite3 connection per thread, as sqlite3 requires."""

    def __init__(self, path: str, organization_id: str) -> None:
        self._path = path
        self._organization_id = organization_id
        self._local = threading.local()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self._path, timeout=10, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] != "POST" or environ["PATH_INFO"] != "/v1/vendors":
            start_response("404 Not Found", [("Content-Length", "0")])
            return [b""]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = orjson.loads(environ["wsgi.input"].read(length))
        now = dt.datetime.now(dt.UTC).isoformat()
        org = self._organization_id
        vendor_id, event_id, entry_id = (f"{prefix}_{secrets.token_hex(13)}" for prefix in ("vnd", "evt", "aud"))
        vendor = {"id": vendor_id, "name": body["name"], "website": body.get("website"), "createdAt": now}
        payload = orjson.dumps({"id": event_id, "type": "vendor.created", "data": vendor}).decode()
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_VENDOR, (vendor_id, org, body["name"], body.get("website"), now, now))
            conn.execute(_OUTBOX, (event_id, org, vendor_id, payload, now))
            conn.execute(_AUDIT, (entry_id, org, now, vendor_id, event_id))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        answer = orjson.dumps(vendor)
        start_response("201 Created", [("Content-Type", "application/json"), ("Content-Length", str(len(answer)))])
        return [answer]


def create_plain_writes_app(path: str, organization_id: str) -> PlainWrites:
    return PlainWrites(path, organization_id)


def main(argv: list[str] | None = None) -> None:
    serve_plain(argv, "python -m bench.plain_writes", ("--db", "the migrated SQLite file"), create_plain_writes_app)


if __name__ == "__main__":
    main()
