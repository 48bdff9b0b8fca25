"""Models as the API shows them: camelCase keys in field order, one function per model.

This is the one wire shape of every resource. The HTTP adapter hands ``Renderer.native``'s
output to its JSON encoder (which writes datetimes, dates and enums itself); events, the outbox
and webhooks use ``Renderer.json``, which turns those into the same strings. A model changes its
shape only through a ``WireView`` it declares (an API key hides its hash and shows its status).
"""

from __future__ import annotations

import datetime as dt
import enum
import threading
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from .clock import Clock

if TYPE_CHECKING:
    from .pages import RowSource

__all__ = ["WireView", "Renderer", "wire_name", "json_value", "model_in"]

_NATIVE = (str, int, float, type(None), dt.date, enum.Enum)
"""Values a JSON encoder for the wire writes itself (bool is an int, datetime a date)."""


def wire_name(name: str) -> str:
    """``processes_personal_data`` -> ``processesPersonalData``."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@attrs.frozen(kw_only=True)
class WireView:
    """How a model's wire object differs from its fields.

    :param omit: fields never shown (secrets, internals)
    :param inline: fields holding a model whose keys are shown in place of the field
    :param rename: wire names that differ from the field's camelCase name
    :param extra: more keys computed from the model and the time of the answer, after the fields
    :param clocked: ``extra`` depends on that time, so a rendered body cannot be reused later
    """

    omit: frozenset[str] = frozenset()
    inline: frozenset[str] = frozenset()
    rename: Mapping[str, str] = attrs.field(factory=dict)
    extra: Callable[[Any, dt.datetime], dict[str, Any]] | None = None
    clocked: bool = False


class _HasView(typing.Protocol):
    WIRE_VIEW: ClassVar[WireView]


def json_value(value: Any) -> Any:
    """A native rendering as plain JSON values: the strings the HTTP encoder writes."""
    if isinstance(value, dict):
        return {key: json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _native(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return all(isinstance(arg, _NATIVE) for arg in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType, tuple, list):
        return all(arg is Ellipsis or _native(arg) for arg in typing.get_args(hint))
    return isinstance(hint, type) and issubclass(hint, _NATIVE) and not attrs.has(hint)


def model_in(hint: Any) -> type | None:
    """The attrs class inside ``tuple[X, ...] | Unset`` and the like, if any."""
    if attrs.has(hint):
        return hint
    for arg in typing.get_args(hint):
        found = model_in(arg)
        if found is not None:
            return found
    return None


class Renderer:
    """Compiles, once per model, ``model -> dict`` as a single dict display of its fields.

    A page of 50 vendors renders in about 60 % of the time of a generic walk (cattrs' generated
    functions call a hook per optional field); nested models (sub-processors) go through their
    own compiled function.

    :param clock: the time of the answer, for views that show it (an API key's status)
    :param from_rows: transports may render pages straight from a store's rows
        (``row_function``); False renders every page through its models
    """

    def __init__(self, clock: Clock, *, from_rows: bool = True) -> None:
        self._clock = clock
        self.from_rows = from_rows
        self._functions: dict[type, Callable[[Any], dict[str, Any]]] = {}
        self._clocked: set[type] = set()
        self._row_functions: dict[tuple[type, int], Callable[[Sequence[Any]], dict[str, Any]] | None] = {}
        self._plain_functions: dict[type, Callable[[Mapping[str, Any]], dict[str, Any]] | None] = {}
        self._lock = threading.Lock()

    def native(self, value: Any) -> Any:
        """A model (or a list, tuple or dict holding models) with native leaves."""
        if attrs.has(type(value)):
            return self.function(type(value))(value)
        if isinstance(value, (list, tuple)):
            return [self.native(item) for item in value]
        if isinstance(value, Mapping):
            return {key: self.native(item) for key, item in value.items()}
        return value

    def json(self, value: Any) -> Any:
        """The same with plain JSON leaves (event payloads, the outbox, webhooks)."""
        return json_value(self.native(value))

    def clocked(self, model: type) -> bool:
        """Whether the model's wire object depends on the time of the answer."""
        self.function(model)
        return model in self._clocked

    def function(self, model: type) -> Callable[[Any], dict[str, Any]]:
        found = self._functions.get(model)
        if found is None:
            with self._lock:
                found = self._functions.get(model) or self._compile(model)
        return found

    def _compile(self, model: type) -> Callable[[Any], dict[str, Any]]:
        view: WireView = getattr(model, "WIRE_VIEW", WireView())
        hints = typing.get_type_hints(model)
        namespace: dict[str, Any] = {}
        entries = []
        clocked = view.clocked
        for field in attrs.fields(model):
            if field.name in view.omit:
                continue
            hint = hints[field.name]
            value = f"model.{field.name}"
            inner = model_in(hint)
            if _native(hint) or inner is None:
                pass
            else:
                hook = f"_render_{field.name}"
                namespace[hook] = self._compile_nested(inner)
                clocked = clocked or inner in self._clocked
                if typing.get_origin(hint) is tuple:
                    value = f"[{hook}(item) for item in {value}]"
                elif type(None) in typing.get_args(hint):
                    value = f"None if {value} is None else {hook}({value})"
                else:
                    value = f"{hook}({value})"
            if field.name in view.inline:
                entries.append(f"**{value}")
            else:
                entries.append(f"{view.rename.get(field.name, wire_name(field.name))!r}: {value}")
        body = f"{{{', '.join(entries)}}}"
        if view.extra is not None:
            namespace["_extra"] = view.extra
            namespace["_clock"] = self._clock
            body = f"{{**{body}, **_extra(model, _clock.now())}}"
        source = f"def render(model):\n    return {body}\n"
        exec(compile(source, f"<wire renderer for {model.__qualname__}>", "exec"), namespace)
        function: Callable[[Any], dict[str, Any]] = namespace["render"]
        if clocked:
            self._clocked.add(model)
        self._functions[model] = function
        return function

    def _compile_nested(self, model: type) -> Callable[[Any], dict[str, Any]]:
        return self._functions.get(model) or self._compile(model)

    def row_function(self, source: RowSource[Any]) -> Callable[[Sequence[Any]], dict[str, Any]] | None:
        """``row -> dict``: the wire object of the model a store row stands for, without building
        the model (None when the model's view needs the model: ``extra`` or ``inline``).

        Compiled, once per model and source, from the same fields and ``WireView`` as
        ``function``: each column goes through the store's decoder to the very value the model
        would hold (so the JSON encoder writes the same bytes), except nested models, which a
        store keeps as JSON: their plain JSON values are renamed and converted by a compiled
        ``plain`` function instead of being structured into models (the costliest part of
        reading a vendor: about half of a page-cache miss). A row the plain data does not fit
        (a key missing, say) raises, and the caller renders that row through its model; a test
        renders every area's records both ways and compares the bytes.
        """
        key = (source.model, id(source))
        if key in self._row_functions:
            return self._row_functions[key]
        with self._lock:
            made = self._compile_row(source)
            self._row_functions[key] = made
        return made

    def _compile_row(self, source: RowSource[Any]) -> Callable[[Sequence[Any]], dict[str, Any]] | None:
        model = source.model
        view: WireView = getattr(model, "WIRE_VIEW", WireView())
        if view.extra is not None or view.inline:
            return None
        hints = typing.get_type_hints(model)
        namespace: dict[str, Any] = {"_load": source.plain_loader}
        entries = []
        for index, name in enumerate(source.names):
            if name in view.omit:
                continue
            hint = hints[name]
            cell = f"row[{index}]"
            inner = model_in(hint)
            if _native(hint) or inner is None:
                decode = source.column_decoder(name)
                value = cell
                if decode is not None and not _same_on_the_wire(decode):
                    namespace[f"_decode_{index}"] = decode
                    value = f"(None if {cell} is None else _decode_{index}({cell}))"
            else:
                plain = self._plain(inner)
                if plain is None:
                    return None
                namespace[f"_plain_{index}"] = plain
                if typing.get_origin(without_none(hint)) is tuple:
                    value = f"(None if {cell} is None else [_plain_{index}(item) for item in _load({cell})])"
                else:
                    value = f"(None if {cell} is None else _plain_{index}(_load({cell})))"
            entries.append(f"{view.rename.get(name, wire_name(name))!r}: {value}")
        source_text = f"def render(row):\n    return {{{', '.join(entries)}}}\n"
        exec(compile(source_text, f"<row renderer for {model.__qualname__}>", "exec"), namespace)
        function: Callable[[Sequence[Any]], dict[str, Any]] = namespace["render"]
        return function

    def _plain(self, model: type) -> Callable[[Mapping[str, Any]], dict[str, Any]] | None:
        """``plain JSON object -> dict`` for a nested model kept as JSON by a store (the field
        names of the model as keys, timestamps as ISO text, enums as their values), or None when
        its view needs the model."""
        if model in self._plain_functions:
            return self._plain_functions[model]
        view: WireView = getattr(model, "WIRE_VIEW", WireView())
        made: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
        if view.extra is None and not view.inline:
            hints = typing.get_type_hints(model)
            namespace: dict[str, Any] = {"_timestamp": dt.datetime.fromisoformat}
            entries = []
            for field in attrs.fields(model):
                if field.name in view.omit:
                    continue
                hint = hints[field.name]
                value = f"data[{field.name!r}]"
                inner = model_in(hint)
                base = without_none(hint)
                if base is dt.datetime:
                    value = f"(None if {value} is None else _timestamp({value}))"
                elif inner is not None:
                    nested = self._plain(inner)
                    if nested is None:
                        self._plain_functions[model] = None
                        return None
                    namespace[f"_plain_{field.name}"] = nested
                    if typing.get_origin(base) is tuple:
                        value = f"[_plain_{field.name}(item) for item in {value}]"
                    else:
                        value = f"(None if {value} is None else _plain_{field.name}({value}))"
                elif not _native(hint):
                    self._plain_functions[model] = None  # a value the store encodes some other way
                    return None
                entries.append(f"{view.rename.get(field.name, wire_name(field.name))!r}: {value}")
            text = f"def plain(data):\n    return {{{', '.join(entries)}}}\n"
            exec(compile(text, f"<plain renderer for {model.__qualname__}>", "exec"), namespace)
            made = namespace["plain"]
        self._plain_functions[model] = made
        return made


def without_none(hint: Any) -> Any:
    """``X`` for ``X | None``, else the hint as it is."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(args) == 1:
            return args[0]
    return hint


def _same_on_the_wire(decode: Callable[[Any], Any]) -> bool:
    """Whether ``decode`` only swaps a stored text for the ``str`` enum member equal to it (the
    SQL stores' enum decoders: a value -> member table's ``__getitem__``), which the JSON encoder
    writes as that very text: the row renderer then leaves the text as it is (seven lookups a
    vendor row)."""
    table = getattr(decode, "__self__", None)
    if not isinstance(table, dict) or getattr(decode, "__name__", "") != "__getitem__":
        return False
    return all(
        isinstance(key, str) and isinstance(member, str) and isinstance(member, enum.Enum) and member == key
        for key, member in table.items()
    )
