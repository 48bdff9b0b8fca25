"""SQLite connection settings: a 16 MiB page cache and no memory map on every connection (see
``compliance_store.sqlite.store.CACHE_KIB`` for the measurements)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.store import CACHE_KIB


def test_every_connection_of_the_store_gets_them(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Any] = []
    connect = SqliteStore._connect

    def keep(self: Any, *, read_only: bool = False) -> Any:
        conn = connect(self, read_only=read_only)
        opened.append(conn)
        return conn

    monkeypatch.setattr(SqliteStore, "_connect", keep)
    store = SqliteStore(f"sqlite:///{tmp_path / 'sized.db'}")
    try:
        with store.session(write=False):
            pass
        for conn in opened[-2:]:  # the thread's write and read connections
            assert conn.execute("PRAGMA mmap_size").fetchone() == (0,)
            assert conn.execute("PRAGMA cache_size").fetchone() == (-CACHE_KIB,)
    finally:
        store.close()
