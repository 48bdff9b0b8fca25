"""Where the server keeps evidence files: the environment's choice, checked at start-up, else a
directory beside the SQLite database; and how a platform's areas find the store (``blobs_of``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance_blobs.local import LocalBlobs
from compliance_blobs.memory import MemoryBlobs
from compliance_core import Platform
from compliance_core.kernel.blobs import blobs_of
from compliance_core.kernel.errors import InternalError, ValidationError
from compliance_core.kernel.page_cache import PageCache
from compliance_core.kernel.uow import Context
from compliance_http.cli.stores import blobs_setting, serve_settings


def test_the_environment_names_the_blob_store(tmp_path: Path) -> None:
    assert blobs_setting({}) is None
    assert "blobs" not in serve_settings({})
    assert blobs_setting({"COMPLIANCE_BLOBS_DIR": str(tmp_path / "files")}) == (tmp_path / "files").as_uri()
    assert serve_settings({"COMPLIANCE_BLOBS_URL": "memory://"})["blobs"] == "memory://"
    with pytest.raises(ValidationError) as both:
        blobs_setting({"COMPLIANCE_BLOBS_URL": "memory://", "COMPLIANCE_BLOBS_DIR": str(tmp_path)})
    assert both.value.details["field"] == "COMPLIANCE_BLOBS_DIR"


@pytest.mark.parametrize("url", ["ftp://files/x", "s3://bucket?endpoint=http://x&colour=blue", "memory://?max_bytes=x"])
def test_a_mistyped_url_stops_the_server_at_start_up(url: str) -> None:
    with pytest.raises(ValidationError):
        serve_settings({"COMPLIANCE_BLOBS_URL": url})


def _context(platform: Platform) -> Context:
    return Context(uow=platform.uow, pages=PageCache(0), flush_admission=lambda: None, settings=platform.settings)


def test_a_sqlite_platform_keeps_files_beside_its_database(tmp_path: Path) -> None:
    with Platform.open(f"sqlite:///{tmp_path / 'compliance.db'}") as platform:
        context = _context(platform)
        found = blobs_of(context)
        assert isinstance(found, LocalBlobs) and found.root == tmp_path / "compliance.db-blobs"
        assert blobs_of(context) is found
        assert not found.root.exists()  # made by the first upload, not by opening


def test_settings_choose_the_store(tmp_path: Path) -> None:
    chosen = MemoryBlobs()
    with Platform.open("memory://", settings={"blobs": chosen}) as platform:
        assert blobs_of(_context(platform)) is chosen
    with Platform.open("memory://", settings={"blobs": (tmp_path / "x").as_uri()}) as platform:
        assert isinstance(blobs_of(_context(platform)), LocalBlobs)
    with Platform.open("memory://") as platform:
        assert isinstance(blobs_of(_context(platform)), MemoryBlobs)


def test_postgresql_needs_a_configured_store(postgres_url: str) -> None:
    with Platform.open(postgres_url) as platform, pytest.raises(InternalError) as raised:
        blobs_of(_context(platform))
    assert "COMPLIANCE_BLOBS_URL" in raised.value.message
