"""Field converters that fail with the field's wire name, the offending value and a reason.

They are ``attrs.Converter``s taking the field, so a command model such as ``NewVendor`` both
normalises and validates its input in one place, and every transport reports the same error.

Each converter factory also records the JSON-schema (OpenAPI 3.0) keywords of what it enforces
when it makes a converter, and ``schema_of(converter)`` returns them: the OpenAPI document shows
exactly the constraints the server applies, without reading any code.
"""

from __future__ import annotations

import copy
import datetime as dt
import enum
import functools
import re
import unicodedata
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import attrs

from .clock import utc
from .errors import ValidationError
from .pages import DEFAULT_PER_PAGE, MAX_PAGE, MAX_PER_PAGE
from .rendering import wire_name

__all__ = [
    "wire_name",
    "text",
    "optional_text",
    "blank_text",
    "patch_field",
    "Patch",
    "choice",
    "optional_choice",
    "boolean",
    "integer",
    "country",
    "optional_country",
    "url",
    "http_url",
    "date",
    "required_date",
    "timestamp",
    "email",
    "identifier",
    "optional_id",
    "id_list",
    "object_list",
    "UNSET",
    "Unset",
    "COUNTRIES",
    "EEA_COUNTRIES",
    "Checked",
    "schema_of",
    "register_schema",
    "page_schemas",
    "field_errors",
    "reports_every_error",
]

E = TypeVar("E", bound=enum.Enum)
M = TypeVar("M")


class Unset(enum.Enum):
    """Marks a PATCH field the caller did not send (distinct from an explicit null)."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET = Unset.UNSET


def _fail(field: attrs.Attribute[Any], value: Any, reason: str) -> ValidationError:
    return ValidationError.field(wire_name(field.name), value, reason)


if TYPE_CHECKING:
    _Converter = attrs.Converter[Any, Any]
else:  # attrs.Converter takes no type arguments at run time
    _Converter = attrs.Converter


class Checked(_Converter):
    """An ``attrs.Converter`` that ``schema_of`` can describe (it can be weakly referenced, so
    the schema registry never keeps a converter alive)."""

    __slots__ = ("__weakref__",)


_SCHEMAS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()
"""Converter -> the JSON-schema keywords it enforces, filled as each converter is made."""

C = TypeVar("C")


def register_schema(converter: C, schema: Mapping[str, Any]) -> C:
    """Record JSON-schema keywords ``converter`` enforces, over what is already recorded (a
    ``description`` is appended to the recorded one), and return the converter.

    :param converter: a ``Checked`` converter (or a function): anything weakly referenceable
    :param schema: OpenAPI 3.0 schema keywords, e.g. ``{"maxItems": 200}``

    >>> category = register_schema(text(100), {"description": "free text; e.g. cloud"})
    >>> schema_of(category)["description"].endswith("free text; e.g. cloud")
    True
    """
    merged = {**_SCHEMAS.get(converter, {}), **copy.deepcopy(dict(schema))}
    known = _SCHEMAS.get(converter, {}).get("description")
    if known and "description" in schema:
        merged["description"] = f"{known}; {schema['description']}"
    _SCHEMAS[converter] = merged
    return converter


def schema_of(converter: object) -> dict[str, Any]:
    """The JSON-schema (OpenAPI 3.0) keywords ``converter`` enforces: ``type``, ``minLength``,
    ``maxLength``, ``pattern``, ``format``, ``enum``, ``minimum``, ``maximum``, ``maxItems``,
    ``nullable`` (it accepts null) and a ``description`` of rules no keyword expresses, such as
    "no control characters" or "must contain a visible character". A converter these factories
    did not make gives ``{}``. The answer is a copy: change it freely.

    >>> schema_of(integer(0, 10))
    {'type': 'integer', 'minimum': 0, 'maximum': 10}
    >>> schema_of(len)
    {}
    """
    try:
        found = _SCHEMAS.get(converter)
    except TypeError:  # not weakly referenceable: no factory here made it
        return {}
    if found is None:
        return {}
    schema = copy.deepcopy(found)
    if _TEXT_PATTERN in schema:
        schema["pattern"] = text_pattern(*schema.pop(_TEXT_PATTERN))
    return schema


def page_schemas() -> dict[str, dict[str, Any]]:
    """The bounds ``PageRequest`` enforces, as the schemas of the ``page`` and ``perPage``
    query parameters, and the form of a ``cursor`` (opaque: only one the service issued is
    accepted, and never together with ``page``)."""
    return {
        "page": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE, "default": 1},
        "perPage": {"type": "integer", "minimum": 1, "maximum": MAX_PER_PAGE, "default": DEFAULT_PER_PAGE},
        "cursor": {
            "type": "string",
            "maxLength": 200,
            "pattern": "^[A-Za-z0-9_-]*$",
            "description": "Walk the whole list in order: empty for the first page, then each page's "
            "`meta.nextCursor`. Rows added or removed meanwhile neither shift nor repeat the rest; "
            "cannot be combined with `page`",
        },
    }


def _converter(
    check: Callable[[Any, attrs.Attribute[Any]], Any], schema: Mapping[str, Any], optional: bool = False
) -> Checked:
    def convert(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is UNSET or (optional and value is None):
            return value
        return check(value, field)

    made = Checked(convert, takes_field=True)
    return register_schema(made, {**schema, "nullable": True} if optional else schema)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""C0 controls but tab and line breaks, DEL, and the C1 controls."""
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
"""Bidirectional embeddings, overrides and isolates: they reorder how the text around them is
shown, which is how a name is made to read as another ("Trojan Source", spoofed file names)."""
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
"""Controls, format characters (U+200B-U+200F, U+2060-U+2064, U+FEFF, U+00AD, bidi controls,
tags...), lone surrogates and separators."""
_IGNORABLE = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)
"""Other characters that draw nothing: the combining grapheme joiner, Hangul and Khmer fillers,
Mongolian and Unicode variation selectors, and the blank Braille pattern."""

_TEXT_RULES = (
    "at most maxLength characters as sent; leading and trailing whitespace is removed; "
    "no control characters (C0 other than tab and line breaks, DEL, C1)"
)
_VISIBLE_RULE = "must contain a visible character (not only spaces or invisible characters such as U+200B)"
_BIDI_RULE = "no bidirectional embedding, override or isolate characters (U+202A-U+202E, U+2066-U+2069)"


def _visible(char: str) -> bool:
    return not (char.isspace() or unicodedata.category(char) in _INVISIBLE_CATEGORIES or _IGNORABLE.match(char))


def _text(max_length: int, min_length: int, names: bool) -> Callable[[Any, attrs.Attribute[Any]], str]:
    def check(sent: Any, field: attrs.Attribute[Any]) -> str:
        if not isinstance(sent, str):
            raise _fail(field, sent, "must be a string")
        if len(sent) > max_length:  # as sent, so the documented maxLength is exact
            raise _fail(field, sent, f"must be at most {max_length} characters")
        value = sent.strip()
        if _CONTROL.search(value):
            raise _fail(field, value, "must not contain control characters")
        if names and _BIDI_CONTROLS.search(value):
            raise _fail(field, value, "must not contain bidirectional embedding, override or isolate characters")
        if len(value) < min_length:
            raise _fail(field, value, "must not be empty" if min_length == 1 else f"needs {min_length}+ characters")
        # Bounded by max_length above; stops at the first visible character (usually the first).
        if min_length >= 1 and not any(map(_visible, value)):
            raise _fail(field, value, "must contain a visible character")
        return value

    return check


def _text_schema(max_length: int, min_length: int, names: bool) -> dict[str, Any]:
    rules = [_TEXT_RULES]
    if min_length >= 1:
        rules.append(_VISIBLE_RULE)
    if names:
        rules.append(_BIDI_RULE)
    schema: dict[str, Any] = {"type": "string"}
    if min_length:
        schema["minLength"] = min_length
    schema["maxLength"] = max_length
    schema["description"] = "; ".join(rules)
    schema[_TEXT_PATTERN] = (min_length >= 1, names)
    return schema


_TEXT_PATTERN = "x-text-pattern"
"""Marks a text schema whose ``pattern`` ``schema_of`` fills in on demand (building it reads
every character's category once, ~0.3 s: never at import time)."""


@functools.cache
def text_pattern(required: bool, names: bool) -> str:
    """The regular expression of exactly what ``_text`` accepts (Basic Multilingual Plane
    classes; characters above it are allowed anywhere but the one visible character a required
    value needs), built from the same predicates, so the document and the server agree."""

    def ranges(keep: Callable[[str], bool]) -> str:
        spans: list[tuple[int, int]] = []
        start: int | None = None
        for code in range(0x10000):
            hit = not 0xD800 <= code <= 0xDFFF and keep(chr(code))
            if hit and start is None:
                start = code
            elif not hit and start is not None:
                spans.append((start, code - 1))
                start = None
        if start is not None:
            spans.append((start, 0xFFFF))
        return "".join(f"\\u{a:04x}" if a == b else f"\\u{a:04x}-\\u{b:04x}" for a, b in spans)

    space = ranges(str.isspace)
    bad = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f" + ("\\u202a-\\u202e\\u2066-\\u2069" if names else "")
    if not required:
        return f"^[{space}]*[^{bad}]*[{space}]*$"
    return f"^[{space}]*[^{bad}]*[^{ranges(lambda c: not _visible(c))}][^{bad}]*[{space}]*$"


def text(max_length: int = 255, min_length: int = 1, *, optional: bool = False) -> Checked:
    """Required text: names, titles, categories (with ``optional``, None is taken too: a field
    left out, which something else fills in, such as a finding's title from its template).

    The value is a string, trimmed of leading and trailing whitespace, then:

    - it holds no control character (tab, line feed and carriage return are allowed);
    - it is ``min_length`` to ``max_length`` characters long;
    - it holds at least one visible character (with ``min_length`` >= 1): a value made only of
      whitespace, format characters (category Cf: zero-width space U+200B, ZWNJ/ZWJ, word joiner
      U+2060, BOM U+FEFF, soft hyphen, bidi marks...), fillers or variation selectors is refused
      with "must contain a visible character". Such characters are kept inside a value that has
      visible ones: ZWJ builds emoji sequences, ZWNJ is part of Persian spelling;
    - it holds no bidirectional embedding, override or isolate (U+202A-U+202E, U+2066-U+2069)
      anywhere: in a name they only serve to make it display as something else. The marks
      U+200E, U+200F and U+061C, which reorder nothing, stay allowed.

    Accents, CJK, emoji and every other script are text like any other.
    """
    return _converter(
        _text(max_length, min_length, True), _text_schema(max_length, min_length, True), optional=optional
    )


def optional_text(max_length: int = 255) -> Checked:
    """Text that may be absent (None) or empty; otherwise the rules of ``text`` except the
    visible-character one (bidirectional embeddings, overrides and isolates are refused)."""
    return _converter(_text(max_length, 0, True), _text_schema(max_length, 0, True), optional=True)


def blank_text(max_length: int) -> Checked:
    """Long-form text (descriptions, content) that is never null but may be cleared: ``None``
    becomes ``""``. Bidirectional isolates stay allowed: mixed-direction prose uses them, and
    such a field names nothing."""
    check = _text(max_length, 0, False)
    schema = _text_schema(max_length, 0, False)
    schema["description"] += "; null clears it to an empty string"
    schema["nullable"] = True
    return _converter(lambda value, field: "" if value is None else check(value, field), schema)


def _choice(enum_cls: type[E], fold_case: bool) -> Callable[[Any, attrs.Attribute[Any]], E]:
    allowed = ", ".join(str(m.value) for m in enum_cls)

    def check(value: Any, field: attrs.Attribute[Any]) -> E:
        if isinstance(value, enum_cls):
            return value
        try:
            return enum_cls(value.lower() if fold_case and isinstance(value, str) else value)
        except (ValueError, TypeError):
            raise _fail(field, value, f"must be one of {allowed}") from None

    return check


def _choice_schema(enum_cls: type[enum.Enum], fold_case: bool) -> dict[str, Any]:
    values = [member.value for member in enum_cls]
    kinds = {type(value) for value in values}
    schema: dict[str, Any] = {"type": "integer" if kinds == {int} else "string", "enum": values}
    if fold_case:
        schema["description"] = 'case-insensitive: display spellings such as "Owner" are accepted'
    return schema


def choice(enum_cls: type[E], *, fold_case: bool = False) -> Checked:
    """``fold_case`` also takes display spellings such as "Owner" for role names."""
    return _converter(_choice(enum_cls, fold_case), _choice_schema(enum_cls, fold_case))


def optional_choice(enum_cls: type[E], *, fold_case: bool = False) -> Checked:
    return _converter(_choice(enum_cls, fold_case), _choice_schema(enum_cls, fold_case), optional=True)


def _boolean(value: Any, field: attrs.Attribute[Any]) -> bool:
    if not isinstance(value, bool):
        raise _fail(field, value, "must be true or false")
    return value


boolean = _converter(_boolean, {"type": "boolean"})


def integer(minimum: int, maximum: int) -> Checked:
    """A whole number within bounds (true and false are not numbers here)."""

    def check(value: Any, field: attrs.Attribute[Any]) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise _fail(field, value, f"must be an integer from {minimum} to {maximum}")
        return value

    return _converter(check, {"type": "integer", "minimum": minimum, "maximum": maximum})


COUNTRIES = frozenset(
    """AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ
    BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO
    DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU
    GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW
    KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU
    MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW
    PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF
    TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA
    ZM ZW""".split()
)
# EU member states plus Iceland, Liechtenstein and Norway: transfers inside need no mechanism.
EEA_COUNTRIES = frozenset(
    "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO".split()
)


def _country(value: Any, field: attrs.Attribute[Any]) -> str:
    if not isinstance(value, str) or value.upper() not in COUNTRIES or value not in (value.upper(), value.lower()):
        raise _fail(field, value, "must be an ISO 3166-1 alpha-2 country code")
    return value.upper()


_COUNTRY_SCHEMA = {
    "type": "string",
    "enum": sorted(COUNTRIES) + sorted(code.lower() for code in COUNTRIES),
    "description": "an ISO 3166-1 alpha-2 country code; lower case is accepted and stored in upper case",
}
country = _converter(_country, _COUNTRY_SCHEMA)
optional_country = _converter(_country, _COUNTRY_SCHEMA, optional=True)


def _url(value: Any, field: attrs.Attribute[Any]) -> str:
    if not isinstance(value, str) or len(value) > 2048:
        raise _fail(field, value, "must be an http(s) URL of at most 2048 characters")
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        raise _fail(field, value, "must be an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in value.strip():
        raise _fail(field, value, "must be an http(s) URL")
    if not all("!" <= char <= "~" for char in value.strip()):  # RFC 3986: an IRI is sent percent-encoded
        raise _fail(field, value, "must be an http(s) URL of printable ASCII characters (percent-encode the rest)")
    return value.strip()


_URL_SCHEMA = {
    "type": "string",
    "format": "uri",
    "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://",
    "maxLength": 2048,
    "description": "an http or https URL with a host, in printable ASCII (no spaces)",
}
url = _converter(_url, _URL_SCHEMA, optional=True)
http_url = _converter(_url, _URL_SCHEMA)
"""A required ``url``: null is refused like any other non-URL."""

_DATE = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _date(value: Any, field: attrs.Attribute[Any]) -> dt.date:
    """Only a calendar date: a ``datetime`` (or a date-time string) is refused rather than
    shifted to some time zone's date."""
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if isinstance(value, str) and _DATE.fullmatch(value):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    raise _fail(field, value, "must be a date in the form YYYY-MM-DD")


date = _converter(
    _date,
    {
        "type": "string",
        "format": "date",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "description": "a calendar date in the form YYYY-MM-DD",
    },
    optional=True,
)
required_date = _converter(
    _date,
    {
        "type": "string",
        "format": "date",
        "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
        "description": "a calendar date in the form YYYY-MM-DD",
    },
)
"""``date`` that refuses null."""


def _timestamp(value: Any, field: attrs.Attribute[Any]) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return utc(value)
    if isinstance(value, str) and len(value) > 10:
        try:
            return utc(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    raise _fail(field, value, "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z")


timestamp = _converter(
    _timestamp,
    {
        "type": "string",
        "format": "date-time",
        "description": "an ISO 8601 date and time; one without an offset is taken as UTC",
    },
    optional=True,
)

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: Any, field: attrs.Attribute[Any]) -> str:
    if not isinstance(value, str) or len(value) > 254 or not _EMAIL.match(value.strip()):
        raise _fail(field, value, "must be an e-mail address")
    return value.strip().lower()


email = _converter(
    _email, {"type": "string", "format": "email", "maxLength": 254, "description": "stored in lower case"}
)


def patch_field(converter: Any) -> Any:
    """A PATCH field: UNSET unless the caller sends it, then checked as on creation (pass the
    create model's field converter: ``patch_field(attrs.fields(NewVendor).name.converter)``)."""
    return attrs.field(default=UNSET, converter=converter)


@attrs.frozen(kw_only=True)
class Patch:
    """Base of partial updates: ``changes()`` holds only the fields the caller sent."""

    IS_PATCH: ClassVar[bool] = True
    """Operations pass a patch to the service as ``patch`` (other bodies as ``data``)."""

    def changes(self) -> dict[str, Any]:
        values = ((f.name, getattr(self, f.name)) for f in attrs.fields(type(self)))
        return {name: value for name, value in values if value is not UNSET}


def field_errors(model: type, arguments: Mapping[str, Any]) -> list[ValidationError]:
    """What is wrong with each field of ``arguments`` as ``model``'s keyword arguments: first each
    required field missing ("is required"), then each value its field's converter refuses, in the
    model's field order. Empty when every field is fine taken alone (a rule across fields may
    still refuse the whole)."""
    missing: list[ValidationError] = []
    refused: list[ValidationError] = []
    for field in attrs.fields(model):
        if field.name not in arguments:
            if field.default is attrs.NOTHING:
                missing.append(ValidationError.field(wire_name(field.name), None, "is required"))
            continue
        converter = field.converter
        try:
            if isinstance(converter, attrs.Converter):
                if not converter.takes_self:  # type: ignore[attr-defined]  # attrs' stubs omit it
                    run = converter.converter  # type: ignore[attr-defined]
                    run(arguments[field.name], field) if converter.takes_field else run(arguments[field.name])  # type: ignore[attr-defined]
            elif converter is not None:
                converter(arguments[field.name])
        except ValidationError as error:
            refused.append(error)
    return missing + refused


def reports_every_error(model: type[M]) -> type[M]:
    """Make ``model`` report every bad field at once: when building it fails on one field's
    value, each field is checked on its own and one ``ValidationError`` lists them all
    (``ValidationError.every``: ``details.errors``, the first repeated at the top). A model that
    builds costs nothing more. Operations apply it to their body models, so a body built
    in-process or from a request reports the same list.

    >>> @reports_every_error
    ... @attrs.frozen(kw_only=True)
    ... class Pair:
    ...     a: str = attrs.field(converter=text(10))
    ...     b: int = attrs.field(converter=integer(0, 9))
    >>> try:
    ...     Pair(a=1, b=99)
    ... except ValidationError as error:
    ...     print([entry["field"] for entry in error.details["errors"]])
    ['a', 'b']
    """
    if vars(model).get("_reports_every_error", False):
        return model
    build = model.__init__

    @functools.wraps(build)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        try:
            build(self, *args, **kwargs)
        except ValidationError as error:
            if "errors" in error.details:
                raise
            raise ValidationError.every(field_errors(model, kwargs) or [error]) from None

    setattr(model, "__init__", __init__)  # noqa: B010 (mypy refuses assigning to a method)
    setattr(model, "_reports_every_error", True)  # noqa: B010
    return model


_ID = re.compile(r"^[a-z]+(_[a-z]+)?_[0-9a-zA-Z]+$")


def _id(value: Any, field: attrs.Attribute[Any]) -> str:
    if not isinstance(value, str) or not _ID.match(value) or len(value) > 64:
        raise _fail(field, value, "must be an identifier such as mem_...")
    return value


_ID_SCHEMA = {"type": "string", "pattern": _ID.pattern, "maxLength": 64, "description": "an identifier such as mem_..."}
identifier = _converter(_id, _ID_SCHEMA)
optional_id = _converter(_id, _ID_SCHEMA, optional=True)


def id_list(max_items: int) -> Checked:
    """A list of identifiers (links to other records): null means none, repeats are dropped
    (first occurrence kept) and each entry must be an identifier; stored as a tuple."""

    def check(value: Any, field: attrs.Attribute[Any]) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)):
            raise _fail(field, value, "must be a list of identifiers")
        if len(value) > max_items:
            raise _fail(field, len(value), f"at most {max_items} entries")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not _ID.match(item) or len(item) > 64:
                raise ValidationError.field(
                    f"{wire_name(field.name)}[{index}]", item, "must be an identifier such as ctl_..."
                )
        return tuple(dict.fromkeys(value))

    return _converter(
        check,
        {
            "type": "array",
            "maxItems": max_items,
            "nullable": True,
            "items": {"type": "string", "pattern": _ID.pattern, "maxLength": 64},
            "description": "null means none; repeated identifiers are kept once",
        },
    )


def _entry(model: type, where: str, item: Any) -> Any:
    """One entry of a list of objects, from its wire object (or the model itself, in-process),
    its errors named by where it sits (``change[2].answer``)."""
    if isinstance(item, model):
        return item
    if not isinstance(item, dict):
        raise ValidationError.field(where, item, "must be an object")
    known = {field.name for field in attrs.fields(model)}
    for key in item:
        if key not in known:
            raise ValidationError.field(f"{where}.{key}", item[key], "unknown field")
    for field in attrs.fields(model):
        if field.default is attrs.NOTHING and field.name not in item:
            raise ValidationError.field(f"{where}.{field.name}", None, "is required")
    try:
        return model(**item)
    except ValidationError as error:
        details = {**error.details, "field": f"{where}.{error.details['field']}"}
        raise ValidationError(f"{details['field']}: {details['reason']}", details) from None


def object_list(model: type, wire: str, max_items: int) -> Checked:
    """A list of up to ``max_items`` objects of ``model`` (null: none), each checked by the
    model's own converters, an error naming the entry and its field (``mappings[3].relation``)."""

    def check(value: Any, field: attrs.Attribute[Any]) -> Any:
        if value is None:
            return ()
        if not isinstance(value, (list, tuple)):
            raise ValidationError.field(wire, value, "must be a list")
        if len(value) > max_items:
            raise ValidationError.field(wire, len(value), f"at most {max_items} entries")
        return tuple(_entry(model, f"{wire}[{index}]", item) for index, item in enumerate(value))

    return register_schema(
        Checked(check, takes_field=True),
        {"type": "array", "maxItems": max_items, "nullable": True, "description": "null means none", "items": model},
    )
