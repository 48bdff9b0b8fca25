"""Mappings between two frameworks' requirements: which requirement of one answers, wholly or in
part, to which requirement of another, so that an organization enabling a second framework
reuses the controls it already runs for the first.

A mapping file holds the pairs of one publisher from one framework to another, each with how
the source requirement relates to the target (the relations of NIST's OSCAL mapping model and
of NIST IR 8477's set-theory relationships): ``equal``, ``subset`` (the source asks for part of
what the target asks), ``superset`` or ``intersects``. Read either way round, a pair turns:
subset becomes superset. The same reader checks the files this package ships and, through
``read_mappings``' errors naming the offending entry, the files users import.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from .oscal import PublishedFile

__all__ = [
    "MappingRelation",
    "RequirementMapping",
    "MappingSet",
    "MappingSource",
    "read_mappings",
]


class MappingRelation(enum.StrEnum):
    """How a source requirement relates to its target, as a set of what each asks for."""

    EQUAL = "equal"
    SUBSET = "subset"
    """The source asks for part of what the target asks: meeting the target meets the source."""
    SUPERSET = "superset"
    """The source asks for all the target asks and more: meeting the source meets the target."""
    INTERSECTS = "intersects"
    """They share some of what they ask; neither covers the other."""

    def inverse(self) -> MappingRelation:
        """The relation read from the target to the source."""
        return _INVERSE[self]


_INVERSE = {
    MappingRelation.EQUAL: MappingRelation.EQUAL,
    MappingRelation.SUBSET: MappingRelation.SUPERSET,
    MappingRelation.SUPERSET: MappingRelation.SUBSET,
    MappingRelation.INTERSECTS: MappingRelation.INTERSECTS,
}


@attrs.frozen(kw_only=True)
class RequirementMapping:
    """One requirement of a framework related to one requirement of another."""

    source_framework: str
    source_requirement: str
    target_framework: str
    target_requirement: str
    relation: MappingRelation
    publisher: str
    """Who says so (the project for the mappings it ships, the user's auditor for an import)."""

    def inverse(self) -> RequirementMapping:
        """The same pair read from the target framework to the source framework."""
        return RequirementMapping(
            source_framework=self.target_framework,
            source_requirement=self.target_requirement,
            target_framework=self.source_framework,
            target_requirement=self.source_requirement,
            relation=self.relation.inverse(),
            publisher=self.publisher,
        )


@attrs.frozen(kw_only=True)
class MappingSet:
    """The pairs of one mapping file, from ``source`` to ``target``."""

    source: str
    target: str
    publisher: str
    version: str
    mappings: tuple[RequirementMapping, ...]

    def unknown(self, source_ids: Collection[str], target_ids: Collection[str]) -> tuple[ValidationError, ...]:
        """One error per pair naming a requirement its framework does not hold: a file with any
        is not served (a mapping to nothing would make controls reuse nothing, silently)."""
        errors = []
        for index, pair in enumerate(self.mappings):
            if pair.source_requirement not in source_ids:
                errors.append(
                    ValidationError.field(
                        f"mappings[{index}].source", pair.source_requirement, f"is no requirement of {self.source}"
                    )
                )
            if pair.target_requirement not in target_ids:
                errors.append(
                    ValidationError.field(
                        f"mappings[{index}].target", pair.target_requirement, f"is no requirement of {self.target}"
                    )
                )
        return tuple(errors)


@attrs.frozen(kw_only=True)
class MappingSource:
    """A mapping file the catalogue serves: the two frameworks it maps and the file's checksums."""

    source: str
    target: str
    file: PublishedFile
    bundled: bool = True
    """Read from this package's ``data`` directory (False: from the embedder's directory)."""


def read_mappings(document: Any) -> MappingSet:
    """The pairs of a parsed mapping file; each thing wrong is one error naming where it is, all
    reported at once (``ValidationError.every``), so a user's import is fixed in one go.

    >>> found = read_mappings({"source": "a", "target": "b", "publisher": "us", "version": "1",
    ...     "mappings": [{"source": "x", "target": "y", "relation": "subset"}]})
    >>> found.mappings[0].inverse().relation
    <MappingRelation.SUPERSET: 'superset'>
    """
    if not isinstance(document, Mapping):
        raise ValidationError.field("mappings", type(document).__name__, "must be a JSON object")
    errors: list[ValidationError] = []
    heading = {key: _text(document, key, key, errors) for key in ("source", "target", "publisher", "version")}
    entries = document.get("mappings")
    if not isinstance(entries, list):
        errors.append(ValidationError.field("mappings", entries, "must be a list of pairs"))
        entries = []
    pairs: list[RequirementMapping] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(entries):
        where = f"mappings[{index}]"
        if not isinstance(entry, Mapping):
            errors.append(ValidationError.field(where, entry, "must be an object with source, target and relation"))
            continue
        source = _text(entry, "source", where + ".source", errors)
        target = _text(entry, "target", where + ".target", errors)
        relation = _relation(entry.get("relation"), where + ".relation", errors)
        if (source, target) in seen:
            errors.append(ValidationError.field(where, [source, target], "repeats a pair listed before"))
        seen.add((source, target))
        if relation is not None:
            pairs.append(
                RequirementMapping(
                    source_framework=heading["source"],
                    source_requirement=source,
                    target_framework=heading["target"],
                    target_requirement=target,
                    relation=relation,
                    publisher=heading["publisher"],
                )
            )
    if heading["source"] and heading["source"] == heading["target"]:
        errors.append(ValidationError.field("target", heading["target"], "must differ from source"))
    if errors:
        raise ValidationError.every(errors)
    return MappingSet(
        source=heading["source"],
        target=heading["target"],
        publisher=heading["publisher"],
        version=heading["version"],
        mappings=tuple(pairs),
    )


def _text(document: Mapping[str, Any], key: str, field: str, errors: list[ValidationError]) -> str:
    value = document.get(key)
    if not isinstance(value, str) or not value.strip():
        errors.append(ValidationError.field(field, value, "must be a non-empty string"))
        return ""
    return value


def _relation(value: Any, field: str, errors: list[ValidationError]) -> MappingRelation | None:
    try:
        return MappingRelation(value)
    except ValueError:
        known = ", ".join(relation.value for relation in MappingRelation)
        errors.append(ValidationError.field(field, value, f"must be one of: {known}"))
        return None
