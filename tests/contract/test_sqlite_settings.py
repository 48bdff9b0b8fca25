"""SQLite connection settings from the file's size: the memory map covers the file and room to
grow, up to SQLite's ceiling; the page cache stays small unless part of the file is unmapped."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from compliance_store.sqlite import SqliteStore
from compliance_store.sqlite.store import MMAP_MAX, connection_settings

MiB = 2**20


@pytest.mark.parametrize(
    "size, cache_kib, mmap_size",
    [
        (0, 16_000, 64 * MiB),
        (10 * MiB, 16_000, 64 * MiB),
        (200 * MiB, 16_000, 400 * MiB),
        (1500 * MiB, 16_000, MMAP_MAX),
        (MMAP_MAX + 40 * MiB, 40 * 1024, MMAP_MAX),
        (10 * 1024 * MiB, 64 * 1024, MMAP_MAX),
    ],
)
def test_the_map_and_cache_follow_the_file_size(size: int, cache_kib: int, mmap_size: int) -> None:
    assert connection_settings(size) == (cache_kib, mmap_size)


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
        size = (tmp_path / "sized.db").stat().st_size
        cache_kib, mmap_size = connection_settings(size)
        for conn in opened[-2:]:  # the thread's write and read connections
            assert conn.execute("PRAGMA mmap_size").fetchone() == (mmap_size,)
            assert conn.execute("PRAGMA cache_size").fetchone() == (-cache_kib,)
    finally:
        store.close()
