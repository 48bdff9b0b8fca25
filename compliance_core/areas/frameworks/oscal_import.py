"""Turning a file a user imports into the one shape every imported framework is kept in: an
OSCAL catalog.

An OSCAL catalog is taken as it is; an OSCAL profile is resolved against the catalog it imports
(the controls it includes, less those it excludes, nested as the catalog nests them); a
spreadsheet (CSV or XLSX, one requirement per row) is written out as a catalog. Keeping one shape
means the rest of the package reads an imported framework exactly as it reads a published one
(``oscal.read_catalog``), and exports it as OSCAL without a second writer.

OSCAL documents are checked against OSCAL's own models through a port (``OscalModels``), which
the ``compliance_oscal`` package fills with compliance-trestle's; without it installed, the
structural reader here is the check (it refuses what it cannot read, and reads only what it needs).
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import importlib.metadata
import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from ...kernel.errors import ValidationError
from ...kernel.sheets import read_sheet

__all__ = [
    "ImportFormat",
    "OscalModels",
    "OSCAL_ENTRY_POINTS",
    "installed_models",
    "parse_document",
    "sheet_catalog",
    "profile_href",
    "resolve_profile",
    "SHEET_COLUMNS",
]

OSCAL_ENTRY_POINTS = "compliance.oscal"
OSCAL_VERSION = "1.1.2"
_TOKEN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
"""OSCAL's token: what a control's or group's id may be."""
_NAMESPACE = uuid.UUID("5d0a3f55-3c39-4c3e-9c53-0c8f1f2c2b7e")
"""Names the uuids of the catalogs written from spreadsheets (the same file gives the same uuid)."""
_MAX_PROBLEMS = 50


class ImportFormat(enum.StrEnum):
    OSCAL_CATALOG = "oscal_catalog"
    OSCAL_PROFILE = "oscal_profile"
    CSV = "csv"
    XLSX = "xlsx"


class OscalModels(Protocol):
    """OSCAL's models (the adapter: compliance-trestle's pydantic classes)."""

    def problems(self, model: str, document: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
        """What is wrong with ``document`` as the OSCAL ``model`` (``catalog``, ``profile``): a
        (where, why, value found) per problem, where as a dotted path inside the model; none
        when it is valid."""
        ...


def installed_models() -> OscalModels | None:
    """The OSCAL models the installed adapter offers, None when no adapter is installed."""
    for entry in importlib.metadata.entry_points(group=OSCAL_ENTRY_POINTS):
        found: OscalModels = entry.load()()
        return found
    return None


def parse_document(data: bytes, model: str, models: OscalModels | None) -> dict[str, Any]:
    """The parsed OSCAL ``model`` document in ``data``, checked against OSCAL's models when an
    adapter is installed; every problem is named inside ``content`` (``content.catalog.uuid``)."""
    try:
        document = json.loads(data)
    except (UnicodeDecodeError, ValueError) as error:
        raise ValidationError.field("content", str(error)[:200], f"is no JSON document (an OSCAL {model})") from None
    if not isinstance(document, dict) or not isinstance(document.get(model), dict):
        keys = sorted(document)[:10] if isinstance(document, dict) else type(document).__name__
        raise ValidationError.field("content", keys, f"must be an OSCAL {model}: a JSON object with a {model!r} key")
    if models is not None:
        problems = models.problems(model, document[model])
        if problems:
            raise ValidationError.every(
                [
                    ValidationError.field(f"content.{model}.{where}".rstrip("."), _shown(value), why)
                    for where, why, value in problems[:_MAX_PROBLEMS]
                ]
            )
    return document


def _shown(value: Any) -> Any:
    """A value found in a document, short enough to quote back in an error."""
    if isinstance(value, (dict, list)):
        return f"<{type(value).__name__} of {len(value)}>"
    return value[:200] if isinstance(value, str) else value


# -- spreadsheets ---------------------------------------------------------------------------------

SHEET_COLUMNS = ("id", "title", "label", "statement", "group", "groupTitle", "parent", "kind")
"""A spreadsheet's columns: ``id`` and ``title`` are required; ``group`` defaults to one group
named after the framework, ``label`` to the id, ``groupTitle`` to the group's id."""
_REQUIRED = ("id", "title")
_DEFAULT_GROUP = "requirements"


def sheet_catalog(
    file_format: ImportFormat, data: bytes, *, title: str, version: str, now: dt.datetime
) -> dict[str, Any]:
    """An OSCAL catalog holding one control per row of the sheet (nested under its ``parent``),
    grouped by ``group``; every error of every row is reported at once, named by its row
    (the header is row 1) and column: ``content.rows[3].parent``."""
    rows = iter(read_sheet(str(file_format), data))
    header = next(rows, None)
    if header is None:
        raise ValidationError.field("content", "", "has no header row")
    names = [str(cell).strip() if cell is not None else "" for cell in header]
    errors = [
        ValidationError.field(
            f"content.rows[1].{name}", name, f"unknown column (the columns are {', '.join(SHEET_COLUMNS)})"
        )
        for name in names
        if name and name not in SHEET_COLUMNS
    ]
    errors += [
        ValidationError.field(f"content.rows[1].{name}", None, "column is required")
        for name in _REQUIRED
        if name not in names
    ]
    if errors:
        raise ValidationError.every(errors)
    entries = list(_entries(names, rows, errors))
    if not entries and not errors:
        errors.append(ValidationError.field("content", "", "has no requirement rows"))
    by_id = {entry["id"]: entry for _, entry in entries}
    for number, entry in entries:
        parent = entry.get("parent")
        if parent is None:
            continue
        if parent not in by_id:
            errors.append(ValidationError.field(f"content.rows[{number}].parent", parent, "names no id of the sheet"))
        elif _ancestor(by_id, parent, entry["id"]):
            errors.append(ValidationError.field(f"content.rows[{number}].parent", parent, "makes a cycle"))
        elif entry.get("group") not in (None, by_id[parent].get("group")):
            errors.append(
                ValidationError.field(
                    f"content.rows[{number}].group", entry["group"], "differs from its parent's group"
                )
            )
    if errors:
        raise ValidationError.every(errors[:_MAX_PROBLEMS])
    return _catalog_document([entry for _, entry in entries], title=title, version=version, now=now, seed=data)


def _entries(
    names: Sequence[str], rows: Iterator[Sequence[Any]], errors: list[ValidationError]
) -> Iterator[tuple[int, dict[str, str]]]:
    seen: dict[str, int] = {}
    for number, row in enumerate(rows, start=2):
        cells = {name: _cell(row, index) for index, name in enumerate(names) if name}
        present = {name: value for name, value in cells.items() if value}
        if not present:
            continue
        problems = False
        for name in _REQUIRED:
            if name not in present:
                errors.append(ValidationError.field(f"content.rows[{number}].{name}", None, "is required"))
                problems = True
        for name in ("id", "group", "parent"):
            value = present.get(name)
            if value is not None and not _TOKEN.match(value):
                errors.append(
                    ValidationError.field(
                        f"content.rows[{number}].{name}",
                        value,
                        "must start with a letter or _, then letters, digits, '.', '-' or '_' (an OSCAL token)",
                    )
                )
                problems = True
        identifier = present.get("id")
        if identifier is not None and identifier in seen:
            errors.append(
                ValidationError.field(f"content.rows[{number}].id", identifier, f"repeats row {seen[identifier]}")
            )
            problems = True
        if not problems:
            seen[present["id"]] = number
            yield number, present


def _cell(row: Sequence[Any], index: int) -> str:
    value = row[index] if index < len(row) else None
    return "" if value is None else str(value).strip()


def _ancestor(by_id: Mapping[str, Mapping[str, str]], start: str, target: str) -> bool:
    """Whether walking up from ``start`` reaches ``target`` (or loops without reaching the top)."""
    seen: set[str] = set()
    current: str | None = start
    while current is not None and current in by_id:
        if current == target or current in seen:
            return True
        seen.add(current)
        current = by_id[current].get("parent")
    return False


def _catalog_document(
    entries: Sequence[Mapping[str, str]], *, title: str, version: str, now: dt.datetime, seed: bytes
) -> dict[str, Any]:
    children: dict[str | None, list[Mapping[str, str]]] = {}
    for entry in entries:
        children.setdefault(entry.get("parent"), []).append(entry)
    groups: dict[str, dict[str, Any]] = {}
    for entry in children.get(None, ()):
        group_id = entry.get("group", _DEFAULT_GROUP)
        group = groups.setdefault(
            group_id, {"id": group_id, "title": entry.get("groupTitle", group_id), "controls": []}
        )
        group["controls"].append(_control(entry, children))
    return {
        "catalog": {
            "uuid": str(uuid.uuid5(_NAMESPACE, hashlib.sha256(seed).hexdigest())),
            "metadata": {
                "title": title,
                "last-modified": now.astimezone(dt.UTC).isoformat().replace("+00:00", "Z"),
                "version": version,
                "oscal-version": OSCAL_VERSION,
            },
            "groups": list(groups.values()),
        }
    }


def _control(entry: Mapping[str, str], children: Mapping[str | None, list[Mapping[str, str]]]) -> dict[str, Any]:
    control: dict[str, Any] = {"id": entry["id"], "title": entry["title"]}
    if entry.get("kind"):
        control["class"] = entry["kind"]
    control["props"] = [{"name": "label", "value": entry.get("label", entry["id"])}]
    if entry.get("statement"):
        control["parts"] = [{"id": f"{entry['id']}_smt", "name": "statement", "prose": entry["statement"]}]
    nested = [_control(child, children) for child in children.get(entry["id"], ())]
    if nested:
        control["controls"] = nested
    return control


# -- profiles -------------------------------------------------------------------------------------


def profile_href(document: Mapping[str, Any]) -> str:
    """The file name of the one catalog a profile imports (an ``#uuid`` reference is followed to
    the back-matter resource it names); a profile importing several catalogs is refused."""
    profile = document["profile"]
    imports = profile.get("imports")
    if not isinstance(imports, list) or not imports:
        raise ValidationError.field("content.profile.imports", imports, "must import one catalog")
    hrefs = {str(item.get("href", "")) for item in imports if isinstance(item, dict)}
    if len(hrefs) != 1:
        raise ValidationError.field(
            "content.profile.imports", sorted(hrefs), "must import exactly one catalog (import one profile per catalog)"
        )
    href = hrefs.pop()
    if href.startswith("#"):
        resources = profile.get("back-matter", {}).get("resources", ())
        resource = next((item for item in resources if item.get("uuid") == href[1:]), None)
        links = [] if resource is None else [link.get("href", "") for link in resource.get("rlinks", ())]
        if not links:
            raise ValidationError.field(
                "content.profile.imports[0].href", href, "names no back-matter resource with a link"
            )
        href = str(links[0])
    return href.rstrip("/").rpartition("/")[2]


def resolve_profile(
    document: Mapping[str, Any], catalog: Mapping[str, Any], *, title: str, version: str
) -> dict[str, Any]:
    """The catalog the profile selects from ``catalog``: the controls it includes (all, or by id,
    with their child controls when it says so), less those it excludes, in the catalog's order
    and nesting; a selected control whose parent is not selected moves up to the parent's place.
    Groups left empty are dropped. Parameter settings and alterations (``modify``) are not
    applied: the requirements keep the catalog's text."""
    chosen = _selection(document["profile"]["imports"], catalog)
    groups = [
        group for group in (_kept_group(group, chosen) for group in catalog["catalog"].get("groups", ())) if group
    ]
    if not groups:
        raise ValidationError.field("content.profile.imports", "", "selects no control of the catalog it imports")
    metadata = dict(document["profile"]["metadata"])
    metadata.update({"title": title, "version": version})
    return {"catalog": {"uuid": document["profile"]["uuid"], "metadata": metadata, "groups": groups}}


def _selection(imports: Iterable[Mapping[str, Any]], catalog: Mapping[str, Any]) -> frozenset[str]:
    tree = {control["id"]: control for control in _walk(catalog["catalog"].get("groups", ()))}
    chosen: set[str] = set()
    for item in imports:
        if item.get("include-all") is not None:
            chosen.update(tree)
        for rule in item.get("include-controls", ()):
            chosen.update(_matched(rule, tree, "include-controls"))
        for rule in item.get("exclude-controls", ()):
            chosen.difference_update(_matched(rule, tree, "exclude-controls"))
    return frozenset(chosen)


def _matched(rule: Mapping[str, Any], tree: Mapping[str, Mapping[str, Any]], where: str) -> set[str]:
    found: set[str] = set()
    unknown = [control_id for control_id in rule.get("with-ids", ()) if control_id not in tree]
    if unknown:
        raise ValidationError.field(
            f"content.profile.imports[0].{where}", unknown[:20], "names controls the catalog lacks"
        )
    for control_id in rule.get("with-ids", ()):
        found.add(control_id)
        if rule.get("with-child-controls") == "yes":
            found.update(control["id"] for control in _walk_controls(tree[control_id].get("controls", ())))
    return found


def _walk(groups: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for group in groups:
        yield from _walk_controls(group.get("controls", ()))
        yield from _walk(group.get("groups", ()))


def _walk_controls(controls: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    for control in controls:
        yield control
        yield from _walk_controls(control.get("controls", ()))


def _kept_group(group: Mapping[str, Any], chosen: frozenset[str]) -> dict[str, Any] | None:
    controls = [kept for control in group.get("controls", ()) for kept in _kept(control, chosen)]
    subgroups = [kept for child in group.get("groups", ()) if (kept := _kept_group(child, chosen))]
    if not controls and not subgroups:
        return None
    kept = {key: value for key, value in group.items() if key not in ("controls", "groups")}
    if controls:
        kept["controls"] = controls
    if subgroups:
        kept["groups"] = subgroups
    return kept


def _kept(control: Mapping[str, Any], chosen: frozenset[str]) -> list[dict[str, Any]]:
    nested = [kept for child in control.get("controls", ()) for kept in _kept(child, chosen)]
    if control["id"] not in chosen:
        return nested
    kept = {key: value for key, value in control.items() if key != "controls"}
    if nested:
        kept["controls"] = nested
    return [kept]
