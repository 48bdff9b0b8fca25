"""Field converters that fail with the field's wire name, the offending value and a reason.

They are ``attrs.Converter``s taking the field, so a command model such as ``NewVendor`` both
normalises and validates its input in one place, and every transport reports the same error.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import attrs

from .clock import utc
from .errors import ValidationError
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
    "date",
    "timestamp",
    "email",
    "optional_id",
    "UNSET",
    "Unset",
    "COUNTRIES",
    "EEA_COUNTRIES",
]

E = TypeVar("E", bound=enum.Enum)


class Unset(enum.Enum):
    """Marks a PATCH field the caller did not send (distinct from an explicit null)."""

    UNSET = "unset"

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET = Unset.UNSET


def _fail(field: attrs.Attribute, value: Any, reason: str) -> ValidationError:
    return ValidationError.field(wire_name(field.name), value, reason)


def _converter(check: Callable[[Any, attrs.Attribute], Any], optional: bool = False) -> attrs.Converter:
    def convert(value: Any, field: attrs.Attribute) -> Any:
        if value is UNSET or (optional and value is None):
            return value
        return check(value, field)

    return attrs.Converter(convert, takes_field=True)


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _text(max_length: int, min_length: int) -> Callable[[Any, attrs.Attribute], str]:
    def check(value: Any, field: attrs.Attribute) -> str:
        if not isinstance(value, str):
            raise _fail(field, value, "must be a string")
        value = value.strip()
        if _CONTROL.search(value):
            raise _fail(field, value[:80], "must not contain control characters")
        if len(value) < min_length:
            raise _fail(field, value, "must not be empty" if min_length == 1 else f"needs {min_length}+ characters")
        if len(value) > max_length:
            raise _fail(field, value[:80], f"must be at most {max_length} characters")
        return value

    return check


def text(max_length: int = 255, min_length: int = 1) -> attrs.Converter:
    return _converter(_text(max_length, min_length))


def optional_text(max_length: int = 255) -> attrs.Converter:
    return _converter(_text(max_length, 0), optional=True)


def blank_text(max_length: int) -> attrs.Converter:
    """Text that is never null but may be cleared: ``None`` becomes ``""``."""
    check = _text(max_length, 0)
    return _converter(lambda value, field: "" if value is None else check(value, field))


def _choice(enum_cls: type[E], fold_case: bool) -> Callable[[Any, attrs.Attribute], E]:
    allowed = ", ".join(str(m.value) for m in enum_cls)

    def check(value: Any, field: attrs.Attribute) -> E:
        if isinstance(value, enum_cls):
            return value
        try:
            return enum_cls(value.lower() if fold_case and isinstance(value, str) else value)
        except (ValueError, TypeError):
            raise _fail(field, value, f"must be one of {allowed}") from None

    return check


def choice(enum_cls: type[E], *, fold_case: bool = False) -> attrs.Converter:
    """``fold_case`` also takes display spellings such as "Owner" for role names."""
    return _converter(_choice(enum_cls, fold_case))


def optional_choice(enum_cls: type[E], *, fold_case: bool = False) -> attrs.Converter:
    return _converter(_choice(enum_cls, fold_case), optional=True)


def _boolean(value: Any, field: attrs.Attribute) -> bool:
    if not isinstance(value, bool):
        raise _fail(field, value, "must be true or false")
    return value


boolean = _converter(_boolean)


def integer(minimum: int, maximum: int) -> attrs.Converter:
    """A whole number within bounds (true and false are not numbers here)."""

    def check(value: Any, field: attrs.Attribute) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise _fail(field, value, f"must be an integer from {minimum} to {maximum}")
        return value

    return _converter(check)


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


def _country(value: Any, field: attrs.Attribute) -> str:
    if not isinstance(value, str) or value.upper() not in COUNTRIES:
        raise _fail(field, value, "must be an ISO 3166-1 alpha-2 country code")
    return value.upper()


country = _converter(_country)
optional_country = _converter(_country, optional=True)


def _url(value: Any, field: attrs.Attribute) -> str:
    if not isinstance(value, str) or len(value) > 2048:
        raise _fail(field, value, "must be an http(s) URL of at most 2048 characters")
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        raise _fail(field, value, "must be an http(s) URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in value.strip():
        raise _fail(field, value, "must be an http(s) URL")
    return value.strip()


url = _converter(_url, optional=True)


def _date(value: Any, field: attrs.Attribute) -> dt.date:
    if isinstance(value, dt.datetime):
        return utc(value).date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return dt.date.fromisoformat(value)
            return utc(dt.datetime.fromisoformat(value.replace("Z", "+00:00"))).date()
        except ValueError:
            pass
    raise _fail(field, value, "must be an ISO 8601 date (YYYY-MM-DD)")


date = _converter(_date, optional=True)


def _timestamp(value: Any, field: attrs.Attribute) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return utc(value)
    if isinstance(value, str) and len(value) > 10:
        try:
            return utc(dt.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    raise _fail(field, value, "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z")


timestamp = _converter(_timestamp, optional=True)

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: Any, field: attrs.Attribute) -> str:
    if not isinstance(value, str) or len(value) > 254 or not _EMAIL.match(value.strip()):
        raise _fail(field, value, "must be an e-mail address")
    return value.strip().lower()


email = _converter(_email)


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


_ID = re.compile(r"^[a-z]+(_[a-z]+)?_[0-9a-zA-Z]+$")


def _id(value: Any, field: attrs.Attribute) -> str:
    if not isinstance(value, str) or not _ID.match(value) or len(value) > 64:
        raise _fail(field, value, "must be an identifier such as mem_...")
    return value


optional_id = _converter(_id, optional=True)
