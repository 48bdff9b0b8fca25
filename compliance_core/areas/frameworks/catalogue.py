"""Which frameworks the platform knows, where their published files come from, and the one
object per platform that reads them on demand.

The files are NIST's OSCAL content, verbatim: the catalogue names each file by its path in
NIST's repository, the commit it was published at and its checksums (the git blob id, which
NIST's repository itself records, and the SHA-256 where it was computed), and reads a file only
when its bytes match. The files themselves come from a directory the embedder names
(``Frameworks(directory=...)``, the ``frameworks`` setting of ``Platform``): a framework whose
files are absent or altered is not listed, so nothing is ever served from a file that is not
the one NIST published.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import attrs

from .oscal import Catalog, profile_ids, read_catalog

__all__ = [
    "PublishedFile",
    "FrameworkSource",
    "NIST_OSCAL_REPOSITORY",
    "NIST_SP_800_53_REV5",
    "NIST_SOURCES",
    "Documents",
    "DirectoryDocuments",
    "Frameworks",
    "FrameworkCatalogue",
    "git_blob_id",
]

NIST_OSCAL_REPOSITORY = "https://github.com/usnistgov/oscal-content"


@attrs.frozen(kw_only=True)
class PublishedFile:
    """One file as its publisher's repository holds it."""

    path: str
    git_blob: str
    """The git object id of its bytes (``git rev-parse <commit>:<path>``)."""
    sha256: str | None = None

    def matches(self, data: bytes) -> bool:
        if git_blob_id(data) != self.git_blob:
            return False
        return self.sha256 is None or hashlib.sha256(data).hexdigest() == self.sha256


@attrs.frozen(kw_only=True)
class FrameworkSource:
    """A framework of the catalogue: its OSCAL catalog and the profiles selecting its baselines."""

    id: str
    name: str
    version: str
    publisher: str
    repository: str
    commit: str
    catalog: PublishedFile
    baselines: tuple[tuple[str, PublishedFile], ...] = ()

    def files(self) -> tuple[PublishedFile, ...]:
        return (self.catalog, *(published for _, published in self.baselines))


_REV5 = "nist.gov/SP800-53/rev5/json/NIST_SP-800-53_rev5_"

NIST_SP_800_53_REV5 = FrameworkSource(
    id="nist-sp-800-53-rev5",
    name="NIST SP 800-53 Rev. 5 Security and Privacy Controls",
    version="5.1.1+u4",
    publisher="National Institute of Standards and Technology (public domain)",
    repository=NIST_OSCAL_REPOSITORY,
    commit="88bb8deeaa815f8914d68ea7e31a622ebbc1719d",
    catalog=PublishedFile(path=_REV5 + "catalog.json", git_blob="61878b2552562f125c2e077ececdcdf105d9519e"),
    baselines=(
        (
            "low",
            PublishedFile(
                path=_REV5 + "LOW-baseline_profile.json",
                git_blob="6e08bb2ff8d970b2f20694fda3b5ebcacb4e7f7f",
                sha256="79b7c450ab62ba012e5ad95f6255ece75fc165b2c421fefda276d82240542219",
            ),
        ),
        (
            "moderate",
            PublishedFile(
                path=_REV5 + "MODERATE-baseline_profile.json",
                git_blob="ec24aa1cab8dfb04596fd12dda730c795d060e2e",
                sha256="d88e64e1e4b3a2d65de2367f4ec31828c04f1be93375fd597c41af1409578e03",
            ),
        ),
        (
            "high",
            PublishedFile(
                path=_REV5 + "HIGH-baseline_profile.json",
                git_blob="a8e1a64e469bdd44d8038ab57c9ab0340e000e8e",
                sha256="c98eb266f3c78c622c6573e032ab1b7619a30821840bb10f7f21fdee78281058",
            ),
        ),
    ),
)
"""SP 800-53 rev. 5.1.1 with the SP 800-53B low, moderate and high baselines, as NIST's OSCAL
content repository published them at ``commit``."""

NIST_SOURCES: tuple[FrameworkSource, ...] = (NIST_SP_800_53_REV5,)


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a file: how a published repository names its content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class Documents(Protocol):
    """Where the published files are read from (a port: the filesystem by default)."""

    def read(self, path: str) -> bytes | None:
        """The bytes of the file published at ``path`` in its repository, None when absent."""
        ...


@attrs.frozen
class DirectoryDocuments:
    """Published files kept in a directory, either under their repository path or by file name
    alone (as they are downloaded one by one)."""

    root: Path

    def read(self, path: str) -> bytes | None:
        for candidate in (self.root / path, self.root / Path(path).name):
            if candidate.is_file():
                return candidate.read_bytes()
        return None


@attrs.frozen(kw_only=True)
class Frameworks:
    """The ``frameworks`` setting: where the catalogue's files are and which frameworks it holds.

    :param directory: a directory holding the published files (None: no framework installed)
    :param documents: any other reader of them (instead of ``directory``)
    :param sources: the frameworks and their published files (default: NIST's)
    """

    directory: Path | str | None = None
    documents: Documents | None = None
    sources: tuple[FrameworkSource, ...] = NIST_SOURCES

    def reader(self) -> Documents | None:
        if self.documents is not None:
            return self.documents
        return None if self.directory is None else DirectoryDocuments(Path(self.directory))


class FrameworkCatalogue:
    """The frameworks whose files are present and unaltered, each read once per platform (a
    catalog is parsed on its first use, then kept by this object, never by the module)."""

    def __init__(self, settings: Frameworks) -> None:
        self.sources = settings.sources
        self._documents = settings.reader()
        self._lock = threading.Lock()
        self._catalogs: dict[str, Catalog | None] = {}

    def installed(self) -> tuple[FrameworkSource, ...]:
        return tuple(source for source in self.sources if self.catalog(source.id) is not None)

    def source(self, framework_id: str) -> FrameworkSource | None:
        return next((source for source in self.sources if source.id == framework_id), None)

    def catalog(self, framework_id: str) -> Catalog | None:
        """The framework's catalog, None when it is unknown or its files are absent or altered."""
        with self._lock:
            if framework_id not in self._catalogs:
                source = self.source(framework_id)
                self._catalogs[framework_id] = None if source is None else self._load(source)
            return self._catalogs[framework_id]

    def _load(self, source: FrameworkSource) -> Catalog | None:
        documents: dict[str, bytes] = {}
        for published in source.files():
            data = None if self._documents is None else self._documents.read(published.path)
            if data is None or not published.matches(data):
                return None
            documents[published.path] = data
        baselines: Mapping[str, tuple[str, ...]] = {
            name: profile_ids(json.loads(documents[published.path])) for name, published in source.baselines
        }
        return read_catalog(json.loads(documents[source.catalog.path]), baselines)
