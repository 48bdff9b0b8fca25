"""The limit for lists: a bare Falcon app, served by the same prefork server code as the full stack,
that answers ``GET /v1/vendors?<filters>&page=&perPage=`` by running the store's own SQL (the
COUNT, then the page SELECT over the mapper's columns, ``ORDER BY created_at, id LIMIT OFFSET``)
with plain sqlite3 / psycopg and dumping the rows with orjson: no domain objects, no auth, no cache.

``python -m bench.plain --url STORE_URL --organization ORG --port P --workers N``
"""

from __future__ import annotations

import argparse
import functools
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import attrs
import falcon
import orjson
import psycopg
from psycopg import sql

from compliance_core.areas.vendors import VendorFilter
from compliance_http.server import DEFAULT_THREADS, serve_forever
from compliance_store.postgres.store import parse_url
from compliance_store.sqlite.store import parse_url as sqlite_path

from .scale_seed import vendor_mapper

__all__ = ["create_plain_app"]

WIRE = {
    "criticality": "criticality",
    "processes_personal_data": "processesPersonalData",
    "ict_service": "ictService",
    "category": "category",
    "country": "country",
    "dpa_status": "dpaStatus",
}
_BOOLEANS = {"processes_personal_data", "ict_service"}


class _Vendors:
    def __init__(self, url: str, organization_id: str) -> None:
        self._postgres = url.startswith(("postgresql://", "postgres://"))
        self._url = url
        self._organization_id = organization_id
        mapper = vendor_mapper(postgres=self._postgres)
        self._names = mapper.names
        self._select = mapper.select_sql
        self._mark = "%s" if self._postgres else "?"
        self._local = threading.local()
        self._statements: dict[tuple[str, ...], tuple[str, str]] = {}

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._postgres:
                conninfo, schema = parse_url(self._url)
                conn = psycopg.connect(conninfo, autocommit=True)
                conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(str(schema))))
            else:
                conn = sqlite3.connect(sqlite_path(self._url), check_same_thread=False)
            self._local.conn = conn
        return conn

    def _sql(self, active: tuple[str, ...]) -> tuple[str, str]:
        found = self._statements.get(active)
        if found is None:
            mark = self._mark
            where = " AND ".join(f'"{name}" = {mark}' for name in ("organization_id", *active))
            found = (
                f"SELECT count(*) FROM vendors WHERE {where}",
                f"{self._select} WHERE {where} ORDER BY created_at, id LIMIT {mark} OFFSET {mark}",
            )
            self._statements[active] = found
        return found

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        params = req.params
        values: list[Any] = [self._organization_id]
        active: list[str] = []
        for field in attrs.fields(VendorFilter):  # the store's order: its WHERE text is the same
            name = field.name
            raw: Any = False if name == "archived" else params.get(WIRE.get(name, ""))
            if raw is None:
                continue
            if name in _BOOLEANS:
                raw = raw == "true"
            active.append(name)
            values.append(raw if self._postgres else (int(raw) if isinstance(raw, bool) else raw))
        page, per_page = int(params.get("page", 1)), int(params.get("perPage", 50))
        count_sql, page_sql = self._sql(tuple(active))
        conn = self._connection()
        total = conn.execute(count_sql, values).fetchone()[0]
        offset = (page - 1) * per_page
        rows = conn.execute(page_sql, [*values, per_page, offset]).fetchall() if offset < total else []
        names = self._names
        resp.data = orjson.dumps(
            {
                "data": [dict(zip(names, row)) for row in rows],
                "meta": {"page": page, "perPage": per_page, "total": total},
            }
        )
        resp.content_type = "application/json"


def create_plain_app(url: str, organization_id: str) -> falcon.App:
    app = falcon.App()
    app.add_route("/v1/vendors", _Vendors(url, organization_id))
    return app


def serve_plain(
    argv: list[str] | None, prog: str, source: tuple[str, str], make_app: Callable[[str, str], Any]
) -> None:
    """Serve ``make_app(source, organization)`` on the server ``compliance serve`` runs, with its
    workers and threads: the plain apps the full stack is measured beside.

    :param source: the flag naming what the app reads or writes, and its help
    """
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument(source[0], required=True, dest="source", metavar=source[0][2:].upper(), help=source[1])
    parser.add_argument("--organization", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    args = parser.parse_args(argv)
    factory = functools.partial(make_app, args.source, args.organization)
    serve_forever(factory, args.host, args.port, args.workers, args.threads)


def main(argv: list[str] | None = None) -> None:
    serve_plain(argv, "python -m bench.plain", ("--url", "the store URL the full stack serves"), create_plain_app)


if __name__ == "__main__":
    main()
