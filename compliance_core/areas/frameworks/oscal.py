"""Reading an OSCAL catalog (and the profiles that select its baselines) into the shape every
framework has here: groups of requirements, requirements under a group or under another
requirement (an SP 800-53 control enhancement, a CSF subcategory under its category).

OSCAL nests the same way for every NIST catalog but names the levels differently: SP 800-53
groups its controls by family and nests enhancements in controls; CSF 2.0 groups categories
(controls of class ``category``) by function and nests subcategories in them. The reader keeps
the nesting as published instead of guessing which level "is" the requirement, so both read
with one function and a caller filters by ``group_id`` or ``parent_id``.

It also says which published files a framework is read from (``FrameworkSource``,
``PublishedFile``): the catalogue reads them, and the manifest of the files this package ships
(``bundled.py``) lists them, so both stand on this module rather than on each other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import attrs

from ...kernel.errors import ValidationError

__all__ = [
    "PublishedFile",
    "FrameworkSource",
    "git_blob_id",
    "Requirement",
    "RequirementGroup",
    "Catalog",
    "read_catalog",
    "profile_ids",
]

_INSERT = re.compile(r"{{\s*insert:\s*param,\s*([\w.\-]+)\s*}}")


def git_blob_id(data: bytes) -> str:
    """The id git gives these bytes as a file: how a published repository names its content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@attrs.frozen(kw_only=True)
class PublishedFile:
    """One file as its publisher holds it: by its path in the publisher's repository, or, for a
    file this package ships, by its path under the package's ``data`` directory."""

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
    """A framework of the catalogue: its OSCAL catalog, the profiles selecting its baselines and,
    optionally, the seeds of the recurring work that keeps its requirements met."""

    id: str
    name: str
    version: str
    publisher: str
    repository: str
    """Where the files are published; empty for a framework this package writes and ships."""
    commit: str
    catalog: PublishedFile
    baselines: tuple[tuple[str, PublishedFile], ...] = ()
    task_templates: PublishedFile | None = None
    """The task-template seeds offered when an organization enables the framework."""
    bundled: bool = False
    """Its files ship inside this package (read from its ``data`` directory whatever directory
    the embedder names), so it is always installed."""
    control_kinds: tuple[str, ...] = ()
    """The requirement kinds (OSCAL ``class``) that each become one control and one row of the
    statement of applicability when an organization enables the framework; empty: every
    requirement that is not withdrawn. ISO/IEC 27001's Annex A controls do, its clauses (the
    management system's own requirements) do not."""

    def files(self) -> tuple[PublishedFile, ...]:
        """The files the framework's catalog is read from (the seeds are read on their own)."""
        return (self.catalog, *(published for _, published in self.baselines))

    def acts_on(self, requirement: Requirement) -> bool:
        """Whether the requirement becomes a control when the framework is enabled."""
        if requirement.withdrawn:
            return False
        return not self.control_kinds or requirement.kind in self.control_kinds


@attrs.frozen(kw_only=True)
class RequirementGroup:
    """A family (SP 800-53 ``AC``) or a function (CSF ``GV``)."""

    id: str
    title: str
    parent_id: str | None = None


@attrs.frozen(kw_only=True)
class Requirement:
    """One control, enhancement, category or subcategory as the catalog publishes it."""

    id: str
    """The catalog's own id (``ac-2.1``, ``GV.OC-01``)."""
    label: str
    """The id people write (``AC-2(1)``, ``GV.OC-01``)."""
    title: str
    statement: str
    """The statement's prose with its sub-items, parameters shown as their assignment or selection."""
    group_id: str
    parent_id: str | None = None
    kind: str = ""
    """The catalog's class for it (``SP800-53``, ``category``, ``subcategory``)."""
    withdrawn: bool = False
    baselines: tuple[str, ...] = ()
    """The baselines (profiles) that select it, in the order the catalogue lists them."""


@attrs.frozen(kw_only=True)
class Catalog:
    title: str
    version: str
    last_modified: str
    groups: tuple[RequirementGroup, ...]
    requirements: tuple[Requirement, ...]


def read_catalog(document: Mapping[str, Any], baselines: Mapping[str, Sequence[str]] | None = None) -> Catalog:
    """The catalog in ``document`` (a parsed OSCAL catalog JSON), each requirement marked with
    the baselines whose selected ids (``profile_ids``) include it."""
    try:
        catalog = document["catalog"]
        metadata = catalog["metadata"]
        selected = {name: frozenset(ids) for name, ids in (baselines or {}).items()}
        groups: list[RequirementGroup] = []
        requirements: list[Requirement] = []
        for group in catalog.get("groups", ()):
            _read_group(group, None, selected, groups, requirements)
        return Catalog(
            title=str(metadata["title"]),
            version=str(metadata["version"]),
            last_modified=str(metadata["last-modified"]),
            groups=tuple(groups),
            requirements=tuple(requirements),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValidationError.field("catalog", repr(error)[:200], "is not an OSCAL catalog") from None


def profile_ids(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The control ids an OSCAL profile includes by id (how NIST's baselines select controls)."""
    try:
        return tuple(
            control_id
            for imported in document["profile"]["imports"]
            for included in imported.get("include-controls", ())
            for control_id in included.get("with-ids", ())
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValidationError.field("profile", repr(error)[:200], "is not an OSCAL profile") from None


def _read_group(
    group: Mapping[str, Any],
    parent: str | None,
    selected: Mapping[str, frozenset[str]],
    groups: list[RequirementGroup],
    requirements: list[Requirement],
) -> None:
    groups.append(RequirementGroup(id=group["id"], title=group["title"], parent_id=parent))
    for control in group.get("controls", ()):
        _read_control(control, group["id"], None, selected, requirements)
    for child in group.get("groups", ()):
        _read_group(child, group["id"], selected, groups, requirements)


def _read_control(
    control: Mapping[str, Any],
    group_id: str,
    parent: str | None,
    selected: Mapping[str, frozenset[str]],
    requirements: list[Requirement],
) -> None:
    props = control.get("props", ())
    params = {param["id"]: _param_text(param) for param in control.get("params", ())}
    statements = [part for part in control.get("parts", ()) if part.get("name") == "statement"]
    requirements.append(
        Requirement(
            id=control["id"],
            label=_prop(props, "label") or control["id"],
            title=control["title"],
            statement="\n".join(line for part in statements for line in _lines(part, params)),
            group_id=group_id,
            parent_id=parent,
            kind=str(control.get("class", "")),
            withdrawn=_prop(props, "status") == "withdrawn",
            baselines=tuple(name for name, ids in selected.items() if control["id"] in ids),
        )
    )
    for child in control.get("controls", ()):
        _read_control(child, group_id, control["id"], selected, requirements)


def _prop(props: Sequence[Mapping[str, Any]], name: str) -> str | None:
    """The first value of a property in NIST's own namespace (or none), as OSCAL writes labels."""
    return next((str(p["value"]) for p in props if p.get("name") == name and p.get("class") != "sp800-53a"), None)


def _lines(part: Mapping[str, Any], params: Mapping[str, str], depth: int = 0) -> Iterator[str]:
    label = _prop(part.get("props", ()), "label")
    prose = _INSERT.sub(lambda m: params.get(m[1], m[0]), str(part.get("prose", ""))).strip()
    text = " ".join(piece for piece in (label, prose) if piece)
    if text:
        yield "  " * depth + text
    for child in part.get("parts", ()):
        yield from _lines(child, params, depth + (1 if text else 0))


def _param_text(param: Mapping[str, Any]) -> str:
    """A parameter as SP 800-53's printed text shows it: [Assignment: ...] or [Selection: ...]."""
    select = param.get("select")
    if select is not None:
        how = " (one or more)" if select.get("how-many") == "one-or-more" else ""
        return f"[Selection{how}: {'; '.join(str(choice) for choice in select.get('choice', ()))}]"
    return f"[Assignment: organization-defined {param.get('label', param['id'])}]"
