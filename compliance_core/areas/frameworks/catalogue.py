"""Which frameworks the platform knows, where their files come from, and the one object per
platform that reads them on demand.

Two kinds of files, each admitted only when its bytes match the checksums recorded for it:

- NIST's OSCAL content, verbatim: named by its path in NIST's repository, the commit it was
  published at and its checksums (the git blob id, which NIST's repository itself records, and
  the SHA-256 where it was computed). The files come from a directory the embedder names
  (``Frameworks(directory=...)``, the ``frameworks`` setting of ``Platform``).
- The frameworks, mappings and task-template seeds this package ships (``bundled.py``): read
  from the package's own ``data`` directory whatever directory the embedder names, so they are
  always installed.

A framework whose files are absent or altered is not listed, and a mapping or seed file that is
altered or names a requirement its framework lacks is not served: nothing is served from a file
other than the one recorded. Nothing is read at import time; each file is read and parsed on its
first use and kept by the platform's ``FrameworkCatalogue``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

import attrs

from ...kernel.errors import ValidationError
from .bundled import BUNDLED_SOURCES, MAPPING_SOURCES, BundledDocuments, TaskTemplateSeed, read_task_templates
from .mappings import MappingSet, MappingSource, RequirementMapping, read_mappings
from .oscal import Catalog, FrameworkSource, PublishedFile, Requirement, git_blob_id, profile_ids, read_catalog

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

log = logging.getLogger("compliance_core.frameworks")

IMPORTED_KEPT = 32
"""How many parsed imported catalogs a platform keeps (SP 800-53's parses to a few MB)."""

NIST_OSCAL_REPOSITORY = "https://github.com/usnistgov/oscal-content"


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
    """The ``frameworks`` setting: where NIST's files are and which frameworks the catalogue holds.

    :param directory: a directory holding NIST's published files (None: only the bundled
        frameworks are installed)
    :param documents: any other reader of them (instead of ``directory``)
    :param sources: the frameworks and their files (default: NIST's, then the bundled ones)
    :param mappings: the mapping files between frameworks (default: the bundled ones)
    """

    directory: Path | str | None = None
    documents: Documents | None = None
    sources: tuple[FrameworkSource, ...] = NIST_SOURCES + BUNDLED_SOURCES
    mappings: tuple[MappingSource, ...] = MAPPING_SOURCES

    def reader(self) -> Documents | None:
        if self.documents is not None:
            return self.documents
        return None if self.directory is None else DirectoryDocuments(Path(self.directory))


class FrameworkCatalogue:
    """The frameworks whose files are present and unaltered, each read once per platform (a
    catalog is parsed on its first use, then kept by this object, never by the module)."""

    def __init__(self, settings: Frameworks) -> None:
        self.sources = settings.sources
        self.mapping_sources = settings.mappings
        self._documents = settings.reader()
        self._bundled = BundledDocuments()
        self._lock = threading.RLock()
        self._catalogs: dict[str, Catalog | None] = {}
        self._mapping_sets: dict[MappingSource, MappingSet | None] = {}
        self._between: dict[tuple[str, str], tuple[RequirementMapping, ...]] = {}
        self._seeds: dict[str, tuple[TaskTemplateSeed, ...]] = {}
        self._imported: OrderedDict[str, Catalog] = OrderedDict()

    def parsed(self, sha256: str, load: Callable[[], Catalog]) -> Catalog:
        """An organization's imported catalog, parsed once and kept under its checksum (the
        same bytes are the same catalog for every organization); the least recently read go
        first past ``IMPORTED_KEPT``."""
        with self._lock:
            found = self._imported.get(sha256)
            if found is not None:
                self._imported.move_to_end(sha256)
                return found
        catalog = load()
        with self._lock:
            self._imported[sha256] = catalog
            while len(self._imported) > IMPORTED_KEPT:
                self._imported.popitem(last=False)
        return catalog

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

    def document(self, framework_id: str) -> bytes | None:
        """The framework's OSCAL catalog file, byte for byte as published (checked against its
        checksums again), None when the framework is not installed."""
        source = self.source(framework_id)
        if source is None or self.catalog(framework_id) is None:
            return None
        return self._read(source.catalog, source.bundled)

    def actionable(self, framework_id: str) -> tuple[Requirement, ...]:
        """The requirements that become one control (and one row of the statement of
        applicability) each when an organization enables the framework: those of its
        ``control_kinds``, never a withdrawn one; none for a framework not installed."""
        source, catalog = self.source(framework_id), self.catalog(framework_id)
        if source is None or catalog is None:
            return ()
        return tuple(item for item in catalog.requirements if source.acts_on(item))

    def mappings_between(self, source_id: str, target_id: str) -> tuple[RequirementMapping, ...]:
        """The pairs relating ``source_id``'s requirements to ``target_id``'s, oriented that way
        (a file mapping the other way round is read turned: subset becomes superset). Only when
        both frameworks are installed and the file matches its checksums and names only
        requirements the two frameworks hold."""
        with self._lock:
            key = (source_id, target_id)
            if key not in self._between:
                self._between[key] = self._oriented(source_id, target_id)
            return self._between[key]

    def task_templates(self, framework_id: str) -> tuple[TaskTemplateSeed, ...]:
        """The recurring work the framework's seed file suggests (none when it has no such file,
        or the file is altered or names a requirement the framework lacks)."""
        with self._lock:
            if framework_id not in self._seeds:
                try:
                    self._seeds[framework_id] = self.load_task_templates(framework_id)
                except ValidationError as error:
                    log.warning("task templates of %s not served: %s %s", framework_id, error, error.details)
                    self._seeds[framework_id] = ()
            return self._seeds[framework_id]

    def load_task_templates(self, framework_id: str) -> tuple[TaskTemplateSeed, ...]:
        """The seeds as ``task_templates`` serves them, raising instead of serving none when the
        file is altered, malformed or names unknown requirements (what the tests check)."""
        source, catalog = self.source(framework_id), self.catalog(framework_id)
        if source is None or catalog is None or source.task_templates is None:
            return ()
        seeds = read_task_templates(self._parsed(source.task_templates, source.bundled), framework_id)
        known = {item.id for item in catalog.requirements if not item.withdrawn}
        errors = [
            ValidationError.field(
                f"templates[{index}].requirements", requirement, f"is no requirement of {framework_id}"
            )
            for index, seed in enumerate(seeds)
            for requirement in seed.requirement_ids
            if requirement not in known
        ]
        if errors:
            raise ValidationError.every(errors)
        return seeds

    def load_mappings(self, mapping: MappingSource) -> MappingSet:
        """A mapping file as the catalogue serves it, raising when it is altered, malformed,
        maps other frameworks than it says, or names requirements the frameworks lack."""
        found = read_mappings(self._parsed(mapping.file, mapping.bundled))
        if (found.source, found.target) != (mapping.source, mapping.target):
            raise ValidationError.field(
                "source", [found.source, found.target], f"the file must map {mapping.source} to {mapping.target}"
            )
        source_catalog, target_catalog = self.catalog(mapping.source), self.catalog(mapping.target)
        if source_catalog is None or target_catalog is None:
            raise ValidationError.field("source", [mapping.source, mapping.target], "names a framework not installed")
        errors = found.unknown(
            {item.id for item in source_catalog.requirements}, {item.id for item in target_catalog.requirements}
        )
        if errors:
            raise ValidationError.every(errors)
        return found

    def _oriented(self, source_id: str, target_id: str) -> tuple[RequirementMapping, ...]:
        if source_id == target_id or self.catalog(source_id) is None or self.catalog(target_id) is None:
            return ()
        found: list[RequirementMapping] = []
        for mapping in self.mapping_sources:
            if {mapping.source, mapping.target} != {source_id, target_id}:
                continue
            pairs = self._mapping_set(mapping)
            if pairs is None:
                continue
            turned = mapping.source != source_id
            found.extend(pair.inverse() if turned else pair for pair in pairs.mappings)
        return tuple(found)

    def _mapping_set(self, mapping: MappingSource) -> MappingSet | None:
        if mapping not in self._mapping_sets:
            try:
                self._mapping_sets[mapping] = self.load_mappings(mapping)
            except ValidationError as error:
                log.warning("mappings %s not served: %s %s", mapping.file.path, error, error.details)
                self._mapping_sets[mapping] = None
        return self._mapping_sets[mapping]

    def _read(self, published: PublishedFile, bundled: bool) -> bytes | None:
        """The file's bytes when present and matching its checksums, else None."""
        documents = self._bundled if bundled else self._documents
        data = None if documents is None else documents.read(published.path)
        return data if data is not None and published.matches(data) else None

    def _parsed(self, published: PublishedFile, bundled: bool) -> object:
        data = self._read(published, bundled)
        if data is None:
            raise ValidationError.field("file", published.path, "is absent or does not match its recorded checksums")
        return json.loads(data)

    def _load(self, source: FrameworkSource) -> Catalog | None:
        documents: dict[str, bytes] = {}
        for published in source.files():
            data = self._read(published, source.bundled)
            if data is None:
                if source.bundled:
                    log.warning("framework %s not installed: %s is absent or altered", source.id, published.path)
                return None
            documents[published.path] = data
        baselines: Mapping[str, tuple[str, ...]] = {
            name: profile_ids(json.loads(documents[published.path])) for name, published in source.baselines
        }
        return read_catalog(json.loads(documents[source.catalog.path]), baselines)
