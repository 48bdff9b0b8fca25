"""A register's records as spreadsheet files: export of a filtered list, import of new records.

An area declares its register once, from its ``Records`` table (and, to import, its create body,
event and hooks): ``Register(VENDORS, new=NewVendor, event=VendorCreated, shape=..., check=...)``.
The columns come from the models: an export has one column per field the API shows (its wire
name as the header, the cell as the JSON answer holds it, nested values as JSON text), an import
reads the columns of the create body and ignores the others an export has (``id``,
``createdAt``...), so an exported file imports as it is. Its operations are one line each in the
service's class body, like ``Standard``'s:

    export_csv = VENDOR_REGISTER.export(VENDOR_READ, "csv", Route("GET", "/v1/vendors/export.csv", "..."))
    import_file = VENDOR_REGISTER.importer(VENDOR_CREATE, Route("POST", "/v1/vendors/import", "..."), example=...)

An export takes the list's filters and streams: pages are read as the file is written, one cursor
page at a time (a row added meanwhile neither shifts nor repeats the rest). An import is checked
whole first, and a dry run answers every row's errors (row number, field, value, reason) without
writing; a real one is all or nothing: one transaction creates every row with its event and audit
entry, or a ``ValidationError`` listing every row's errors leaves nothing written.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import enum
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Generic, TypeVar, cast

import attrs

from .errors import ComplianceError, ValidationError, bounded
from .events import Event
from .operations import Declared, Once, page_of
from .pages import MAX_PER_PAGE, Page, PageRequest
from .permissions import Action, Actor, authorize
from .records import Records
from .registry import Download, Route, declarations
from .rendering import WireView, wire_name
from .sheets import FORMATS, Cell, guard, read_sheet, unguard, write_sheet
from .uow import Tx
from .validation import Checked, boolean, choice, field_errors, register_schema, schema_of

__all__ = [
    "FileFormat",
    "RegisterFile",
    "RowError",
    "ImportReport",
    "Register",
    "MAX_IMPORT_ROWS",
    "MAX_FILE_CHARS",
    "FILE_CONTENT",
    "register_of",
]

M = TypeVar("M")
F = TypeVar("F")

MAX_IMPORT_ROWS = 5000
"""The most rows one import takes: they are written in one transaction (all or nothing)."""
_MAX_READ_ROWS = 4 * MAX_IMPORT_ROWS
"""The most rows read from a file, blank ones included (a sheet of formatted empty rows)."""
MAX_FILE_CHARS = 8_000_000
"""The most characters of an import's base64 ``content`` (a file of about 6 MB), within the HTTP
body limit."""
MAX_LISTED_ROW_ERRORS = 1000
"""The most row errors one answer lists (``truncated`` says there were more)."""
_BOOLEANS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
_CAPITAL = re.compile(r"(?<!^)([A-Z])")


class FileFormat(enum.StrEnum):
    CSV = "csv"
    XLSX = "xlsx"


def _base64(value: Any, field: attrs.Attribute[Any]) -> str:
    if not isinstance(value, str):
        raise ValidationError.field(wire_name(field.name), value, "must be the file's bytes in base64")
    if len(value) > MAX_FILE_CHARS:
        raise ValidationError.field(wire_name(field.name), len(value), f"must be at most {MAX_FILE_CHARS} characters")
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError.field(wire_name(field.name), value, "must be the file's bytes in base64") from None
    return value


_CONTENT = register_schema(
    Checked(_base64, takes_field=True),
    {
        "type": "string",
        "format": "byte",
        "maxLength": MAX_FILE_CHARS,
        "description": "the file's bytes in base64 (standard alphabet, with padding)",
    },
)
FILE_CONTENT = _CONTENT
"""The converter of a file's bytes in base64, for a body that carries a file of its own."""


@attrs.frozen(kw_only=True)
class RegisterFile:
    """A file to import: its format, its bytes in base64 (JSON carries no bytes) and whether to
    only check it (``dryRun``: every row's errors answered, nothing written)."""

    format: FileFormat = attrs.field(converter=choice(FileFormat))
    content: str = attrs.field(converter=_CONTENT)
    dry_run: bool = attrs.field(default=False, converter=boolean)

    @classmethod
    def of(cls, data: bytes, file_format: FileFormat | str, *, dry_run: bool = False) -> RegisterFile:
        """The import of ``data`` (the file's bytes), for in-process callers."""
        return cls(format=file_format, content=base64.b64encode(data).decode("ascii"), dry_run=dry_run)

    @property
    def data(self) -> bytes:
        return base64.b64decode(self.content)


@attrs.frozen(kw_only=True)
class RowError:
    """What is wrong with one row: its number in the file (the header is row 1), the column's
    field, the value found there and why it is refused."""

    row: int
    field: str | None
    value: Any = None
    reason: str


@attrs.frozen(kw_only=True)
class ImportReport:
    """What an import did, or (``dryRun``) would do: ``rows`` read, ``created`` records (with
    their ``ids``, in the file's order) and, for a dry run, every row's ``errors``."""

    dry_run: bool
    rows: int
    created: int
    ids: tuple[str, ...] = ()
    errors: tuple[RowError, ...] = ()


Shape = Callable[[Any], Any]
Check = Callable[[Any, Tx, Actor, Any], None]
Progress = Callable[[int, int], None]
"""``progress(done, total)``: rows checked (and written) so far, of all the file's rows."""


@attrs.frozen
class _Column:
    name: str
    """The model's field."""
    header: str
    """Its wire name."""
    kind: str
    """How a cell becomes the field's input: ``string``, ``boolean``, ``integer``, ``rating``
    (a name or a number), ``json`` (a list or an object)."""


def _kind(converter: Any) -> str:
    schema = schema_of(converter)
    if "oneOf" in schema or "anyOf" in schema:
        return "rating"
    kind = schema.get("type")
    if kind in ("array", "object"):
        return "json"
    if kind in ("boolean", "integer"):
        return str(kind)
    return "string"


def _export_columns(model: type) -> tuple[_Column, ...]:
    view: WireView = getattr(model, "WIRE_VIEW", WireView())
    return tuple(
        _Column(field.name, view.rename.get(field.name, wire_name(field.name)), "string")
        for field in attrs.fields(model)
        if field.name != "organization_id" and field.name not in view.omit and field.name not in view.inline
    )


def _import_columns(model: type) -> tuple[_Column, ...]:
    return tuple(_Column(field.name, wire_name(field.name), _kind(field.converter)) for field in attrs.fields(model))


def _snake(value: Any) -> Any:
    """A nested JSON value as core's models take it (``purposeCategory`` -> ``purpose_category``)."""
    if isinstance(value, dict):
        return {_CAPITAL.sub(r"_\1", str(key)).lower(): _snake(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_snake(item) for item in value]
    return value


def _cell(value: Any) -> Cell:
    """A JSON answer's value as a cell."""
    if isinstance(value, str):
        return guard(value)
    if isinstance(value, (dict, list)):
        return guard(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return cast(Cell, value)


def _blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def _text(cell: Any) -> str:
    """A cell typed by a spreadsheet program (a number, a date) as the text it shows."""
    if isinstance(cell, bool):
        return "true" if cell else "false"
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    if isinstance(cell, dt.datetime):
        return cell.date().isoformat() if cell.time() == dt.time() else cell.isoformat()
    if isinstance(cell, dt.date):
        return cell.isoformat()
    return unguard(cell) if isinstance(cell, str) else str(cell)


def _input(column: _Column, cell: Any) -> Any:
    """The field's input from a non-blank cell (its converter then judges it)."""
    if column.kind == "boolean" and not isinstance(cell, bool):
        text = _text(cell).strip()
        return _BOOLEANS.get(text.lower(), text)
    if column.kind in ("integer", "rating"):
        if isinstance(cell, bool):
            return cell
        if isinstance(cell, float) and cell.is_integer():
            return int(cell)
        if isinstance(cell, int):
            return cell
        text = _text(cell).strip()
        return int(text) if _INTEGER.fullmatch(text) else text
    if column.kind == "json":
        text = _text(cell)
        try:
            return _snake(json.loads(text))
        except ValueError:
            raise ValidationError.field(column.header, text, "must be JSON, as an export writes it") from None
    if column.kind == "boolean":
        return cell
    return _text(cell)


def _row_errors(row: int, error: ComplianceError) -> list[RowError]:
    listed = error.details.get("errors")
    entries = listed if isinstance(listed, list) and listed else [error.details]
    return [
        RowError(
            row=row,
            field=entry.get("field"),
            value=bounded(entry.get("value"))[0],
            reason=str(entry.get("reason") or error.message),
        )
        for entry in entries
    ]


class _Operation(Declared):
    """A register's import: the declaration also names its register, so the command line can
    run it with a progress bar (``register_of``)."""

    register: Register[Any, Any]


def register_of(api: type) -> Register[Any, Any] | None:
    """The register whose import the service class ``api`` declares, if any."""
    for declaration in declarations(api):
        if isinstance(declaration, _Operation):
            return declaration.register
    return None


class Register(Generic[M, F]):
    """A table's records as files (see the module's docstring).

    :param records: the table; its model gives the export's columns, its filters the export's
    :param new: the create body: its fields are the import's columns (None: export only)
    :param event: the event each imported record records (as a create does)
    :param shape: what a new record derives from its fields (a risk's scores), as on create
    :param check: ``check(service, tx, actor, record)``, the area's rules on a new record, as on
        create; what it raises is that row's error
    :param unique: fields no two rows may share (an e-mail), checked across the file
    """

    def __init__(
        self,
        records: Records[M, F],
        *,
        new: type | None = None,
        event: type[Event] | None = None,
        shape: Shape | None = None,
        check: Check | None = None,
        unique: tuple[str, ...] = (),
    ) -> None:
        self.records = records
        self.new = new
        self.event = event
        self.shape = shape
        self.check = check
        self.unique = unique
        self.columns = _export_columns(records.model)
        self.import_columns = _import_columns(new) if new is not None else ()
        self.import_action: Action | None = None

    @property
    def title(self) -> str:
        return self.records.name.replace("_", " ").capitalize()

    # Export

    def export(self, action: Action, file_format: str, route: Route) -> Declared:
        """The operation answering every record the list's filters match as a file."""
        if file_format not in FORMATS:
            raise ValueError(f"{file_format}: not one of {sorted(FORMATS)}")
        register = self
        filter_model = self.records.filters

        def run(service: Any, actor: Actor, filters: Any = None, search: PageRequest | None = None) -> Download:
            return register.download(service, actor, file_format, filters, search)

        if filter_model is None:

            def run_unfiltered(service: Any, actor: Actor) -> Download:
                return register.download(service, actor, file_format, None)

            return Declared(run_unfiltered, action, route, ids=(), result=Download, media_type=FORMATS[file_format])
        return Declared(
            run,
            action,
            route,
            ids=(),
            filters=filter_model,
            result=Download,
            media_type=FORMATS[file_format],
            lists=self.records,
        )

    def exports(self, action: Action, collection: str, plural: str) -> tuple[Declared, Declared]:
        """The CSV and the XLSX export, at ``<collection>/export.csv`` and ``.xlsx`` (``plural``
        names the records in their summaries): ``export_csv, export_xlsx = REGISTER.exports(...)``."""
        csv, xlsx = (
            self.export(
                action,
                file_format,
                Route(
                    "GET",
                    f"{collection}/export.{file_format}",
                    f"Export the {plural} the list's filters match as {file_format.upper()}",
                ),
            )
            for file_format in ("csv", "xlsx")
        )
        return csv, xlsx

    def download(
        self, service: Any, actor: Actor, file_format: str, filters: Any, search: PageRequest | None = None
    ) -> Download:
        """The file of the records ``filters`` and ``search`` (the list's ``q``, ``sort`` and
        range; its page and size are not used) match, in the list's order or the sort's. Its
        first page is read before this returns (so an error is raised here, not half way through
        the file), the others as the file is written."""
        records = self.records
        if filters is None and records.filters is not None:
            filters = records.filters()
        terms = search.search if search is not None else {}
        first = page_of(service, records, actor, filters, PageRequest.walking(MAX_PER_PAGE, **terms))
        render = service.uow.renderer.json
        columns = self.columns

        def rows() -> Iterator[list[Cell]]:
            yield [column.header for column in columns]
            page: Page[M] = first
            while True:
                for item in page.items:
                    shown = render(item)
                    yield [_cell(shown.get(column.header)) for column in columns]
                if page.next_after is None:
                    return
                after = PageRequest.walking(MAX_PER_PAGE, page.next_after, **terms)
                page = page_of(service, records, actor, filters, after)

        return Download(
            filename=f"{records.name}.{file_format}",
            media_type=FORMATS[file_format],
            chunks=write_sheet(file_format, self.title, rows()),
        )

    # Import

    def importer(self, action: Action, route: Route, *, example: Mapping[str, Any]) -> Declared:
        """The operation importing a file of new records (idempotent: a retry with the same
        Idempotency-Key answers the first import's report)."""
        if self.new is None or self.event is None:
            raise ValueError(f"{self.records.name}: a register imports only with its create body and event")
        self.import_action = action
        register = self

        def run(service: Any, actor: Actor, data: RegisterFile, once: Once) -> ImportReport:
            return register.load(service, actor, data, once=once)

        declared = _Operation(
            run, action, route, ids=(), body=RegisterFile, idempotent=True, result=ImportReport, example=example
        )
        declared.register = self
        return declared

    def load(
        self,
        service: Any,
        actor: Actor,
        file: RegisterFile,
        *,
        once: Once | None = None,
        progress: Progress | None = None,
    ) -> ImportReport:
        """Import ``file`` as ``actor`` (authorized here too, for callers that come straight to
        it, such as the command line with its progress bar)."""
        if self.import_action is not None:
            authorize(actor, self.import_action)
        rows, errors, total = self._parse(file)
        uow = service.uow
        now = uow.clock.now()

        def write() -> ImportReport:
            made: list[Any] = []
            for done, (number, data) in enumerate(rows, start=1):
                try:
                    record = self._record(service, tx, actor, data, now)
                except ComplianceError as error:
                    errors.extend(_row_errors(number, error))
                else:
                    if not errors and not file.dry_run:
                        tx[self.records].add(record)
                        tx.record(cast(Any, self.event)(organization_id=actor.organization_id, subject=record))
                        made.append(record)
                if progress is not None:
                    progress(done, len(rows))
            errors.sort(key=lambda error: error.row)
            if file.dry_run:
                return ImportReport(dry_run=True, rows=total, created=0, errors=tuple(errors))
            if errors:
                raise _refusal(errors, total)
            return ImportReport(dry_run=False, rows=total, created=len(made), ids=tuple(r.id for r in made))

        with uow.write(actor) as tx:
            return write() if once is None else once(tx, file, now, write)

    def _parse(self, file: RegisterFile) -> tuple[list[tuple[int, Any]], list[RowError], int]:
        """The rows that build a create body (with their numbers), every error found and the
        number of rows (blank ones aside)."""
        sheet = iter(read_sheet(file.format, file.data))
        header = next(sheet, None)
        if header is None:
            raise ValidationError.field("content", "", "has no header row")
        errors: list[RowError] = []
        known = {column.header: column for column in self.import_columns}
        ignored = {column.header for column in self.columns}
        placed: dict[int, _Column] = {}
        seen: set[str] = set()
        for index, cell in enumerate(header):
            name = _text(cell).strip() if cell is not None else ""
            if name in seen and name:
                errors.append(RowError(row=1, field=name, value=name, reason="repeats an earlier column"))
            seen.add(name)
            if name in known:
                placed[index] = known[name]
            elif name and name not in ignored:
                errors.append(
                    RowError(
                        row=1, field=name, value=bounded(name)[0], reason="unknown column (see the register's export)"
                    )
                )
        present = {column.name for column in placed.values()}
        model = cast(type, self.new)
        for field in attrs.fields(model):
            if field.default is attrs.NOTHING and field.name not in present:
                errors.append(RowError(row=1, field=wire_name(field.name), value=None, reason="column is required"))
        parsed: list[tuple[int, Any]] = []
        firsts: dict[tuple[str, Any], int] = {}
        count = 0
        for number, row in enumerate(sheet, start=2):
            if number > _MAX_READ_ROWS:  # blank rows count here: a workbook of a million is no register
                raise ValidationError.field("content", f"more than {_MAX_READ_ROWS} rows", "holds too many rows")
            if all(_blank(cell) for cell in row):
                continue
            count += 1
            if count > MAX_IMPORT_ROWS:
                raise ValidationError.field(
                    "content", f"more than {MAX_IMPORT_ROWS} rows", f"at most {MAX_IMPORT_ROWS} rows"
                )
            built = self._build(number, row, placed, errors)
            if built is None:
                continue
            clash = False
            for name in self.unique:
                value = getattr(built, name)
                first = firsts.setdefault((name, value), number)
                if first != number:
                    errors.append(
                        RowError(row=number, field=wire_name(name), value=value, reason=f"repeats row {first}")
                    )
                    clash = True
            if not clash:
                parsed.append((number, built))
        return parsed, errors, count

    def _build(self, number: int, row: Sequence[Any], placed: Mapping[int, _Column], errors: list[RowError]) -> Any:
        arguments: dict[str, Any] = {}
        failed: list[RowError] = []
        for index, column in placed.items():
            cell = row[index] if index < len(row) else None
            if _blank(cell):
                continue
            try:
                arguments[column.name] = _input(column, cell)
            except ValidationError as error:
                failed += _row_errors(number, error)
        model = cast(type, self.new)
        for problem in field_errors(model, arguments):
            failed += _row_errors(number, problem)
        built = None
        if not failed:
            try:
                built = model(**arguments)
            except ValidationError as error:  # a rule across fields
                failed += _row_errors(number, error)
        errors.extend(failed)
        return None if failed else built

    def _record(self, service: Any, tx: Tx, actor: Actor, data: Any, now: dt.datetime) -> Any:
        build: Callable[..., Any] = self.records.model
        record = build(
            id=service.uow.ids.new(self.records.prefix),
            organization_id=actor.organization_id,
            created_at=now,
            updated_at=now,
            **attrs.asdict(data, recurse=False),
        )
        if self.shape is not None:
            record = self.shape(record)
        if self.check is not None:
            self.check(service, tx, actor, record)
        return record


def _refusal(errors: Sequence[RowError], total: int) -> ValidationError:
    listed = [attrs.asdict(error) for error in errors[:MAX_LISTED_ROW_ERRORS]]
    reason = f"{len(errors)} error(s) in a file of {total} rows; none were created"
    details: dict[str, Any] = {"field": "content", "value": None, "reason": reason, "errors": listed}
    if len(errors) > MAX_LISTED_ROW_ERRORS:
        details["truncated"] = True
    return ValidationError(f"content: {reason}", details)
