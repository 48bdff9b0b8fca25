"""The JSON wire format: camelCase keys, ISO 8601 UTC times, strict request shapes.

This is the only place where core's snake_case names become the spec's camelCase ones. Request
*shape* is checked here (a JSON object, no unknown or missing keys, query syntax); request
*values* are checked by core's own field converters when the command model is built, so an HTTP
caller and an in-process caller meet the same ``ValidationError``. The inverse direction (JSON
back into core models) serves ``HTTPTransport``.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
import threading
import types
import typing
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
import cattrs
import orjson
from cattrs.gen import make_dict_structure_fn, override

from compliance_core.areas.api_keys import ApiKey
from compliance_core.areas.organizations import Organization, Plan
from compliance_core.kernel.clock import SystemClock, utc
from compliance_core.kernel.errors import ValidationError
from compliance_core.kernel.pages import (
    DEFAULT_PER_PAGE,
    MAX_PAGE,
    MAX_PER_PAGE,
    Listing,
    Page,
    PageRequest,
    Position,
    RowItems,
)
from compliance_core.kernel.permissions import Actor
from compliance_core.kernel.rendering import Renderer, WireView, json_value, model_in, wire_name
from compliance_core.kernel.validation import UNSET, field_errors

__all__ = ["Wire", "JSON", "MAX_JSON_DEPTH", "MAX_INTEGER_DIGITS", "encode_cursor", "decode_cursor"]

T = TypeVar("T")
JSON = "application/json"
MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request body may have (the top-level object is level
1). Real bodies need 3 (a bulk entry's list of sub-processors); the limit keeps every later step
(validation, error details that echo a value, logging) far from any recursion limit."""
MAX_INTEGER_DIGITS = 18
"""Longest integer a query parameter may spell (leading zeros aside): every such number fits in
a 64-bit integer, so a store can bind it; core judges the value itself (``page`` has its own
upper bound)."""
_INTEGER = re.compile(r"-?[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ECHO_CHARS = 200
"""Longest string echoed in the details of an error rendered by the fallback, and longest
query value echoed by the wire's own errors."""
_ECHO_ITEMS = 20
"""Most entries of one array or object the fallback copies into error details."""
_ECHO_DEPTH = 4
"""Deepest nesting the fallback copies into error details."""
_ECHO_NODES = 200
"""Most values in all the fallback copies into the details of one error."""
_QUERIES_KEPT = 512
"""Parsed list queries kept per app; a full table is emptied and starts again."""
_QUERY_VALUE_KEPT = 64
_ORJSON = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC
"""orjson writes datetimes (ISO 8601, "Z"), dates and enums itself, faster than hooks would."""


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=_ORJSON)


def _parse_datetime(value: str, _: type) -> dt.datetime:
    return utc(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


@attrs.frozen
class _Shape:
    """How one model's JSON object maps onto its constructor."""

    fields: dict[str, str]
    """wire name -> field name"""
    required: tuple[str, ...]
    """wire names without a default"""
    nested: dict[str, _Shape]
    """field name -> shape of the attrs model held in that field's list"""
    booleans: frozenset[str]
    """wire names of true/false fields (how a query string spells them differs)"""

    def required_present(self, body: Mapping[str, Any]) -> bool:
        return all(key in body for key in self.required)


class _RenderedPages:
    """List bodies already rendered, by the identity of their ``Page``.

    Core's page cache answers a repeated list request with the very same ``Page`` object while
    the data is unchanged, so its body need not be rendered again. An entry refers to its page
    weakly: it lives as long as core keeps the page (a page nobody will serve again is not kept
    alive here, with its 50 models, for nothing), and a lookup hits only if the entry's page IS the
    page asked about, so an id reused by a later object never finds an old body. A dead page's
    body goes at the next ``put``. Bounded LRU, shared by the request threads of one app.
    """

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, str], tuple[weakref.ref[Page[Any]], bytes]] = OrderedDict()
        self._dead: deque[tuple[int, str]] = deque()
        """Keys of entries whose page has died; appended by weakref callbacks, which may run in
        any thread at any moment (even under ``_lock``), so they touch nothing else."""
        self._lock = threading.Lock()

    def get(self, page: Page[Any], auth_type: str) -> bytes | None:
        key = (id(page), auth_type)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0]() is not page:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, page: Page[Any], auth_type: str, body: bytes) -> None:
        key = (id(page), auth_type)
        dead = self._dead
        ref = weakref.ref(page, lambda _: dead.append(key))
        with self._lock:
            while dead:
                gone = dead.popleft()
                entry = self._entries.get(gone)
                if entry is not None and entry[0]() is None:
                    del self._entries[gone]
            self._entries[key] = (ref, body)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


def _check_depth(value: Any) -> None:
    """Raise when arrays and objects in ``value`` nest deeper than ``MAX_JSON_DEPTH`` (walked
    with a stack, never recursively)."""
    if not isinstance(value, (dict, list)):
        return
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_JSON_DEPTH:
                    raise ValidationError.field(
                        "body", None, f"is nested too deeply (at most {MAX_JSON_DEPTH} levels of arrays and objects)"
                    )
                stack.append((child, depth + 1))


def _clip(text: str, limit: int = _ECHO_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _bounded(value: Any) -> Any:
    """A JSON-writable copy of ``value`` cut to a bounded size: strings to ``_ECHO_CHARS``, each
    array or object to ``_ECHO_ITEMS`` entries, nesting to ``_ECHO_DEPTH``, the whole to
    ``_ECHO_NODES`` values. Built with a stack (never recursively), and calling no ``str`` or
    ``repr`` of a foreign object (which may recurse or raise): those become their type's name."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    nodes = 0
    while stack:
        item, parent, slot, depth = stack.pop()
        nodes += 1
        out: Any
        if nodes > _ECHO_NODES:
            out = "..."
        elif item is None or isinstance(item, (bool, float)):
            out = item
        elif isinstance(item, int):
            out = int(item) if -(2**63) <= item < 2**63 else f"<integer of {item.bit_length()} bits>"
        elif isinstance(item, str):
            out = _clip(str.__str__(item))
        elif isinstance(item, (dt.datetime, dt.date)):
            out = item.isoformat()
        elif isinstance(item, (Mapping, list, tuple)):
            if depth >= _ECHO_DEPTH:
                out = f"<{'object' if isinstance(item, Mapping) else 'array'} of {len(item)} entries>"
            elif isinstance(item, Mapping):
                out = {}
                for index, (key, child) in enumerate(item.items()):
                    if index >= _ECHO_ITEMS:
                        out["..."] = f"{len(item) - index} more entries"
                        break
                    name = _clip(str.__str__(key)) if isinstance(key, str) else f"<{type(key).__name__}>"
                    out[name] = None
                    stack.append((child, out, name, depth + 1))
            else:
                out = [None] * min(len(item), _ECHO_ITEMS)
                for index, child in enumerate(item[:_ECHO_ITEMS]):
                    stack.append((child, out, index, depth + 1))
                if len(item) > _ECHO_ITEMS:
                    out.append(f"... {len(item) - _ECHO_ITEMS} more entries")
        else:
            out = f"<{type(item).__name__}>"
        parent[slot] = out
    return root[0]


def _last_resort(code: str, request_id: str) -> bytes:
    """An error body from nothing but ASCII letters, digits and underscores of the code and id."""

    def safe(text: Any) -> str:
        return (
            "".join(c for c in text[:64] if c.isascii() and (c.isalnum() or c == "_")) if isinstance(text, str) else ""
        )

    code_text, id_text = safe(code) or "internal_error", safe(request_id)
    return (
        f'{{"error":{{"code":"{code_text}","message":"the error could not be rendered","details":{{}}}},'
        f'"requestId":"{id_text}"}}'
    ).encode()


def _is_bool(hint: Any) -> bool:
    return hint is bool or (
        typing.get_origin(hint) in (typing.Union, types.UnionType) and bool in typing.get_args(hint)
    )


_CURSOR_CHARS = 200
"""Longest cursor accepted: the ones issued here are about 80 characters."""


def encode_cursor(position: Position) -> str:
    """A cursor walk's position as an opaque, URL-safe token (base64url of a JSON array: the
    offset, the last row's ``createdAt`` as the API shows it, its id, and the walk's sort when
    it has one, so the cursor is refused with another)."""
    key = [position.offset, position.created_at, position.id]
    raw = _dumps(key if position.sort is None else [*key, position.sort])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_cursor(token: str) -> Position:
    """The position a token from ``encode_cursor`` stands for; anything else is a
    ``validation_error`` on ``cursor``."""
    try:
        if len(token) > _CURSOR_CHARS:
            raise ValueError("too long")
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        offset, created_at, item_id, *rest = orjson.loads(raw)
        sort = rest.pop() if len(rest) == 1 else None
        if rest or not (sort is None or (isinstance(sort, str) and 0 < len(sort) <= 64)):
            raise ValueError("sort")
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < MAX_PAGE * MAX_PER_PAGE:
            raise ValueError("offset")
        if not isinstance(item_id, str) or not 0 < len(item_id) <= 64 or not isinstance(created_at, str):
            raise ValueError("key")
        when = _parse_datetime(created_at, dt.datetime)
    except (ValueError, TypeError, binascii.Error, orjson.JSONDecodeError):
        raise ValidationError.field("cursor", _clip(token), "is not a cursor this service issued") from None
    return Position(when, item_id, offset, sort)


class Wire:
    """Encoder and decoder for one app (or one client).

    :param renderer: core's renderer of the platform (its clock gives an API key's status); a
        client without a platform gets one on the system clock
    """

    def __init__(self, renderer: Renderer | None = None) -> None:
        self._renderer = renderer or Renderer(SystemClock())
        self._shapes: dict[type, _Shape] = {}
        self._rendered = _RenderedPages()
        self._queries: dict[tuple[Any, ...], tuple[Any, PageRequest]] = {}
        self._converter = self._build_converter()

    # -- responses -------------------------------------------------------------------------

    def dumps(self, value: Any) -> bytes:
        """A core model, or a dict or list holding models, as camelCase JSON."""
        return _dumps(self._renderer.native(value))

    def unstructure(self, value: Any) -> Any:
        """The same as plain JSON values (times as strings), for callers writing JSON themselves."""
        return orjson.loads(self.dumps(value))

    def page(self, page: Page[Any], actor: Actor) -> bytes:
        """The spec's list envelope (``authenticatedUser`` belongs to sessions only).

        The body depends on the page and the kind of caller only, so a page served again from
        core's cache is sent as rendered the first time, unless its items show the time of the
        answer (an API key's status).
        """
        items = page.items
        if not items:
            return self._envelope(page, [], actor)
        model = items.source.model if isinstance(items, RowItems) else type(items[0])
        if self._renderer.clocked(model):
            return self._envelope(page, self._data(items, model), actor)
        body = self._rendered.get(page, actor.auth_type)
        if body is None:
            body = self._envelope(page, self._data(items, model), actor)
            self._rendered.put(page, actor.auth_type, body)
        return body

    def _data(self, items: Sequence[Any], model: type) -> list[Any]:
        """The items' wire objects: from the store's rows when it kept them and the renderer
        allows (no models built), else from the models; a row the fast path cannot render goes
        through its model."""
        renderer = self._renderer
        if isinstance(items, RowItems) and renderer.from_rows:
            from_row = renderer.row_function(items.source)
            if from_row is not None:
                data = []
                for index, row in enumerate(items.rows):
                    try:
                        data.append(from_row(row))
                    except (KeyError, TypeError, ValueError):
                        data.append(renderer.function(model)(items[index]))
                return data
        render = renderer.function(model)
        return [render(item) for item in items]

    @staticmethod
    def _envelope(page: Page[Any], data: list[Any], actor: Actor) -> bytes:
        meta: dict[str, Any] = {
            "total": page.total,
            "page": page.page,
            "perPage": page.per_page,
            "totalPages": page.total_pages,
        }
        if page.walk:
            meta["cursor"] = None if page.after is None else encode_cursor(page.after)
            meta["nextCursor"] = None if page.next_after is None else encode_cursor(page.next_after)
        return _dumps({"data": data, "count": page.total, "meta": meta, "authType": actor.auth_type})

    def batch(self, items: Sequence[Any]) -> bytes:
        return _dumps({"data": self._renderer.native(items), "count": len(items)})

    @staticmethod
    def error(code: str, message: str, details: Mapping[str, Any], request_id: str) -> bytes:
        """The spec's error body. It cannot fail: details that orjson cannot write (a value nested
        too deeply, an object whose ``str`` raises) are replaced by a bounded copy built without
        recursion, and if even that fails the body keeps the code and the request id only."""
        body = {"error": {"code": code, "message": message, "details": dict(details)}, "requestId": request_id}
        try:
            return orjson.dumps(body, default=str, option=_ORJSON | orjson.OPT_NON_STR_KEYS)
        except Exception:  # e.g. an echoed value nested deeper than orjson writes
            pass
        try:
            bounded = {"code": _bounded(code), "message": _bounded(message), "details": _bounded(dict(details))}
            return orjson.dumps({"error": bounded, "requestId": _bounded(request_id)}, option=_ORJSON)
        except Exception:
            return _last_resort(code, request_id)

    # -- requests --------------------------------------------------------------------------

    @staticmethod
    def loads(raw: bytes) -> Any:
        """A request body as JSON values, nested at most ``MAX_JSON_DEPTH`` levels deep."""
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            raise ValidationError.field("body", None, f"is not valid JSON ({error})") from None
        # Nesting needs an opening bracket per level: most bodies have too few to check further.
        if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:
            _check_depth(value)
        return value

    def command(self, body: Any, model: type[T]) -> T:
        """Build a command model (``NewVendor``, ``VendorPatch``, ...) from a request body.

        Absent keys of a patch stay UNSET; an explicit null is passed on for core to judge.
        Everything wrong is reported at once (``ValidationError.every``): unknown keys, then
        missing fields, then refused values.
        """
        if not isinstance(body, dict):
            raise ValidationError.field("body", _json_type(body), "must be a JSON object")
        unknown: list[ValidationError] = []
        arguments = self._arguments(body, self._shape(model), "", unknown)
        if unknown or not self._shape(model).required_present(body):
            raise ValidationError.every(unknown + field_errors(model, arguments))
        return model(**arguments)

    def members(self, body: Any, model: type, check: Callable[..., Any]) -> Any:
        """The entries of a bulk-create body, renamed for core, which checks each one with
        ``check`` and reports every bad entry's index, field, value and reason; unknown keys
        found here are merged into that report."""
        if not isinstance(body, dict):
            raise ValidationError.field("body", _json_type(body), "must be a JSON object")
        for key, value in body.items():
            if key != "members":
                raise ValidationError.field(key, value, "unknown field")
        if "members" not in body:
            raise ValidationError.field("members", None, "is required")
        members = body["members"]
        if not isinstance(members, list):
            return members  # core names the bad value
        known = self._shape(model).fields
        entries: list[Any] = []
        unknown: list[dict[str, Any]] = []
        for index, member in enumerate(members):
            if not isinstance(member, dict):
                entries.append(member)
                continue
            unknown += [
                {"index": index, "field": key, "value": value, "reason": "unknown field"}
                for key, value in member.items()
                if key not in known
            ]
            entries.append({known[key]: value for key, value in member.items() if key in known})
        if unknown:
            check(entries, extra_errors=unknown)  # raises, listing these with core's findings
        return entries

    @staticmethod
    def check_query(params: Mapping[str, Any], allowed: frozenset[str]) -> None:
        for name, value in params.items():
            if name not in allowed:
                raise ValidationError.field(name, value, "unknown query parameter")
            if isinstance(value, list):
                raise ValidationError.field(name, value, "must be given at most once")

    def list_query(
        self, params: Mapping[str, str], filters: type[T] | None, listing: Listing | None = None
    ) -> tuple[T | None, PageRequest]:
        """Filters and page of a list request whose parameter names are already checked.

        Clients repeat the same few queries, so a parsed one is kept (both results are frozen)
        and only new ones build a filter model and a page request; bad ones raise each time, and
        long values (none is valid today) are never kept.
        """
        key = (filters, listing, tuple(params.items()))
        parsed = self._queries.get(key)
        if parsed is None:
            parsed = self._parse_list_query(params, filters, listing)
            if all(len(value) <= _QUERY_VALUE_KEPT for value in params.values()):
                if len(self._queries) >= _QUERIES_KEPT:
                    self._queries.clear()
                self._queries[key] = parsed
        return parsed

    def _parse_list_query(
        self, params: Mapping[str, str], filters: type[T] | None, listing: Listing | None = None
    ) -> tuple[T | None, PageRequest]:
        per_page = self._integer(params, "perPage", DEFAULT_PER_PAGE)
        search = self._search(params, listing) if listing is not None else {}
        if "cursor" in params:
            if "page" in params:
                raise ValidationError.field("page", _clip(params["page"]), "cannot be combined with cursor")
            PageRequest(per_page=per_page)  # the same perPage check as a numbered page
            token = params["cursor"]
            page = PageRequest.walking(per_page, decode_cursor(token) if token else None, **search)
        else:
            page = PageRequest(page=self._integer(params, "page", 1), per_page=per_page, **search)
        if filters is None:
            return None, page
        shape = self._shape(filters)
        arguments: dict[str, Any] = {}
        for key, name in shape.fields.items():
            if key not in params:
                continue
            value = params[key]
            if key in shape.booleans:
                if value not in ("true", "false"):
                    raise ValidationError.field(key, value, "must be true or false")
                arguments[name] = value == "true"
            else:
                arguments[name] = value
        return filters(**arguments), page

    @staticmethod
    def _search(params: Mapping[str, str], listing: Listing) -> dict[str, Any]:
        """``q``, ``sort``, ``from`` and ``to`` as ``PageRequest`` takes them: the sort's field
        by its model name, the range's bounds parsed as the ranged field's type."""
        search: dict[str, Any] = {"q": params.get("q")}
        sort = params.get("sort")
        if sort is not None:  # an empty sort names no field: refused, as the document's enum says
            fields = {wire_name(name): name for name in listing.sorts}
            field = fields.get(sort.removeprefix("-"))
            if field is None:
                raise ValidationError.field(
                    "sort", _clip(sort), f"must be one of {', '.join(fields)} (with - before it for descending)"
                )
            search["sort"] = "-" + field if sort.startswith("-") else field
        for key, name in (("from", "since"), ("to", "until")):
            value = params.get(key)
            if value is None:
                continue
            try:
                if listing.ranged_date:
                    search[name] = dt.date.fromisoformat(value) if _DATE.fullmatch(value) else None
                else:
                    instant = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
                    search[name] = instant if instant.tzinfo is not None and "T" in value.upper() else None
            except ValueError:
                search[name] = None
            if search[name] is None:
                rule = (
                    "a date (2026-12-31)"
                    if listing.ranged_date
                    else "a date-time with its offset (2026-12-31T00:00:00Z)"
                )
                raise ValidationError.field(key, _clip(value), f"must be {rule}")
        return search

    @staticmethod
    def _integer(params: Mapping[str, str], name: str, default: int) -> int:
        if name not in params:
            return default
        value = params[name]
        if not _INTEGER.fullmatch(value):
            raise ValidationError.field(name, _clip(value), "must be an integer")
        if len(value.lstrip("-").lstrip("0")) > MAX_INTEGER_DIGITS:
            raise ValidationError.field(name, _clip(value), f"is too large (at most {MAX_INTEGER_DIGITS} digits)")
        return int(value)

    def _arguments(
        self, body: Mapping[str, Any], shape: _Shape, where: str, unknown: list[ValidationError]
    ) -> dict[str, Any]:
        """The body's known keys renamed for core (in nested lists too); each unknown key is
        added to ``unknown`` and left out. A nested entry's missing keys are core's to name."""
        arguments: dict[str, Any] = {}
        for key, value in body.items():
            name = shape.fields.get(key)
            if name is None:
                unknown.append(ValidationError.field(where + key, value, "unknown field"))
                continue
            nested = shape.nested.get(name)
            if nested is not None and isinstance(value, list):
                value = [
                    self._arguments(item, nested, f"{where}{key}[{index}].", unknown)
                    if isinstance(item, dict)
                    else item
                    for index, item in enumerate(value)
                ]
            arguments[name] = value
        return arguments

    def _shape(self, model: type) -> _Shape:
        shape = self._shapes.get(model)
        if shape is None:
            hints = typing.get_type_hints(model)
            nested = {}
            for field in attrs.fields(model):
                inner = model_in(hints[field.name])
                if inner is not None:
                    nested[field.name] = self._shape(inner)
            shape = _Shape(
                fields={wire_name(f.name): f.name for f in attrs.fields(model)},
                required=tuple(wire_name(f.name) for f in attrs.fields(model) if f.default is attrs.NOTHING),
                nested=nested,
                booleans=frozenset(wire_name(f.name) for f in attrs.fields(model) if _is_bool(hints[f.name])),
            )
            self._shapes[model] = shape
        return shape

    # -- the client side: core models to requests, responses back to core models ------------

    def command_json(self, command: Any) -> dict[str, Any]:
        """A command model (or a bulk entry given as a mapping) as a request body object, for
        ``dumps``; a patch's UNSET fields are left out."""
        native = self._renderer.native
        if isinstance(command, Mapping):
            return {wire_name(str(k)): native(v) for k, v in command.items()}
        return {
            wire_name(f.name): native(value)
            for f in attrs.fields(type(command))
            if (value := getattr(command, f.name)) is not UNSET
        }

    def query(self, filters: Any, page: PageRequest | None, *, search: PageRequest | None = None) -> dict[str, str]:
        """The query string of a list's ``filters`` and ``page``, or of an export's ``filters``
        and ``search`` (the search, sort and range of a page, without its number and size)."""
        params: dict[str, str] = {}
        searched = page if page is not None else search
        if filters is not None:
            for field in attrs.fields(type(filters)):
                value = getattr(filters, field.name)
                if value == field.default:
                    continue
                value = json_value(value)
                params[wire_name(field.name)] = (
                    ("true" if value else "false") if isinstance(value, bool) else str(value)
                )
        if searched is not None:
            if searched.q is not None:
                params["q"] = searched.q
            if searched.sort is not None:
                params["sort"] = ("-" if searched.sort.startswith("-") else "") + wire_name(
                    searched.sort.removeprefix("-")
                )
            for key, bound in (("from", searched.since), ("to", searched.until)):
                if bound is not None:
                    params[key] = bound.isoformat()
        if page is not None and page.walk:
            params["cursor"] = "" if page.after is None else encode_cursor(page.after)
            params["perPage"] = str(page.per_page)
        elif page is not None:
            params["page"] = str(page.page)
            params["perPage"] = str(page.per_page)
        return params

    def structure(self, data: Any, model: type[T]) -> T:
        return self._converter.structure(data, model)

    def structure_page(self, data: Mapping[str, Any], model: type[T], request: PageRequest | None = None) -> Page[T]:
        """The page a list answered; ``request`` (the one sent) carries its search, sort and
        range to ``Page.next_request``."""
        meta = data["meta"]
        walk = "nextCursor" in meta
        return Page(
            items=tuple(self._converter.structure(item, model) for item in data["data"]),
            total=meta["total"],
            page=meta["page"],
            per_page=meta["perPage"],
            walk=walk,
            after=decode_cursor(meta["cursor"]) if walk and meta.get("cursor") else None,
            next_after=decode_cursor(meta["nextCursor"]) if walk and meta["nextCursor"] else None,
            request=request,
        )

    def structure_health(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {**data, "timestamp": _parse_datetime(data["timestamp"], dt.datetime)}

    # -- the converter ---------------------------------------------------------------------

    def _build_converter(self) -> cattrs.Converter:
        """Structures responses back into core models (the client side)."""
        converter = cattrs.Converter()

        def renames(model: type) -> dict[str, Any]:
            return {f.name: override(rename=wire_name(f.name)) for f in attrs.fields(model)}

        converter.register_structure_hook(dt.datetime, _parse_datetime)
        converter.register_structure_hook(dt.date, lambda value, _: dt.date.fromisoformat(value))
        converter.register_structure_hook_factory(
            attrs.has, lambda model: make_dict_structure_fn(model, converter, **renames(model))
        )
        structure_key = make_dict_structure_fn(ApiKey, converter, **renames(ApiKey))
        converter.register_structure_hook(ApiKey, lambda data, model: structure_key({**data, "secretHash": ""}, model))

        def structure_inlined(model: type) -> Callable[[Any, type], Any]:
            """A model whose view shows one field's model in place (``IssuedKey``)."""
            view: WireView = model.WIRE_VIEW  # type: ignore[attr-defined]
            (inner,) = view.inline
            hints = typing.get_type_hints(model)
            others = {
                f.name: view.rename.get(f.name, wire_name(f.name)) for f in attrs.fields(model) if f.name != inner
            }

            def structure(data: Mapping[str, Any], _: type) -> Any:
                values = {name: data.get(key) for name, key in others.items()}
                return model(**{inner: converter.structure(data, hints[inner]), **values})

            return structure

        converter.register_structure_hook_factory(
            lambda model: attrs.has(model) and bool(getattr(model, "WIRE_VIEW", WireView()).inline), structure_inlined
        )

        def structure_organization(data: Mapping[str, Any], _: type) -> Organization:
            plan = Plan(data["plan"])
            negotiated = plan is Plan.ENTERPRISE  # other plans take their limits from the plan table
            return Organization(
                id=data["id"],
                name=data["name"],
                plan=plan,
                rate_limit_rpm=data["rateLimit"]["requestsPerMinute"] if negotiated else None,
                rate_limit_burst=data["rateLimit"]["burst"] if negotiated else None,
                slug=data.get("slug"),
                website=data.get("website"),
                logo=data.get("logo"),
                primary_color=data.get("primaryColor"),
                evidence_approval_enabled=data.get("evidenceApprovalEnabled", False),
                device_agent_step_enabled=data.get("deviceAgentStepEnabled", True),
                security_training_step_enabled=data.get("securityTrainingStepEnabled", True),
                advanced_mode_enabled=data.get("advancedModeEnabled", False),
                owner_person_id=data.get("ownerPersonId"),
                created_at=_parse_datetime(data["createdAt"], dt.datetime),
                updated_at=_parse_datetime(data["updatedAt"], dt.datetime),
            )

        converter.register_structure_hook(Organization, structure_organization)
        return converter
