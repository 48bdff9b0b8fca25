"""Recurring work: a frequency (monthly, quarterly, yearly, or an RFC 5545 recurrence rule) and
the next date it falls on.

Task templates store a frequency and tasks made from them recur by it, so the grammar, its
normalisation and the arithmetic live here, below both areas, rather than in either. Rules are
read by python-dateutil.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from typing import Any

import attrs
from dateutil.rrule import rrulestr  # type: ignore[import-untyped]  # dateutil ships no types

from .errors import ValidationError
from .validation import UNSET, Checked, Unset, register_schema, wire_name

__all__ = [
    "KEYWORDS",
    "FREQUENCY_PATTERN",
    "FREQUENCY_RULES",
    "expanded_rule",
    "normalised_frequency",
    "frequency",
    "optional_frequency",
    "next_occurrence",
]

KEYWORDS = ("monthly", "quarterly", "yearly")
_MONTHS = {"monthly": 1, "quarterly": 3, "yearly": 12}
_DAY = "(MO|TU|WE|TH|FR|SA|SU)"
_WEEK = "([1-9]|[1-4][0-9]|5[0-3])"
_YEAR_DAY = "([1-9]|[1-9][0-9]|[12][0-9][0-9]|3[0-5][0-9]|36[0-6])"


def _listed(item: str) -> str:
    return f"{item}(,{item})*"


_PARTS = "|".join(
    (
        "INTERVAL=[1-9][0-9]{0,3}",
        f"WKST={_DAY}",
        f"BYDAY={_listed(f'([+-]?{_WEEK})?{_DAY}')}",
        f"BYMONTHDAY={_listed('[+-]?([1-9]|[12][0-9]|3[01])')}",
        f"BYYEARDAY={_listed(f'[+-]?{_YEAR_DAY}')}",
        f"BYWEEKNO={_listed(f'[+-]?{_WEEK}')}",
        f"BYMONTH={_listed('([1-9]|1[0-2])')}",
        f"BYSETPOS={_listed(f'[+-]?{_YEAR_DAY}')}",
    )
)
FREQUENCY_PATTERN = f"^(monthly|quarterly|yearly|(RRULE:)?FREQ=(DAILY|WEEKLY|MONTHLY|YEARLY)(;({_PARTS}))*)$"
"""What a frequency may be, as the document states it: RFC 5545's RRULE grammar narrowed to what
recurring work needs (FREQ first and DAILY at the finest, no COUNT or UNTIL: the work recurs
without end; no BYHOUR, BYMINUTE or BYSECOND: it recurs by the day), in upper case as the RFC
writes it, each number within the RFC's range."""
_FREQUENCY_FORM = re.compile(FREQUENCY_PATTERN)
_ANCHOR = dt.datetime(9968, 1, 1)
"""Where a rule is checked from: a leap year 32 years before the last one dateutil reaches, so a
rule that never occurs (the 30th of February) is found by walking 32 years (about 10 ms), not
8,000 (seconds); those years hold every weekday pattern of common and leap years."""
FREQUENCY_RULES = (
    "monthly, quarterly or yearly, or an RFC 5545 recurrence rule (an RRULE value, the RRULE: prefix "
    "optional) such as FREQ=WEEKLY;BYDAY=MO: FREQ first (DAILY, WEEKLY, MONTHLY or YEARLY), then "
    "INTERVAL, WKST, BYDAY, BYMONTHDAY, BYYEARDAY, BYWEEKNO, BYMONTH or BYSETPOS, in upper case; the rule "
    "must occur on some day, and is stored as python-dateutil writes it back"
)


def expanded_rule(rule: str) -> str:
    """The recurrence rule (the grammar of ``FREQUENCY_PATTERN``, without the RRULE: prefix) as
    python-dateutil writes it back (repeated parts once, in its order). Raises ``ValueError`` when
    dateutil cannot expand it or it never occurs: rules relating the rule's parts to the calendar,
    which the pattern cannot state, checked by the services."""
    try:
        parsed = rrulestr(rule, dtstart=_ANCHOR)
        written = str(parsed).splitlines()[-1].removeprefix("RRULE:")
        occurs = parsed.after(_ANCHOR, inc=True) is not None
    except Exception:  # dateutil fails on some combinations with several exception types
        raise ValueError("python-dateutil cannot expand this rule (its parts contradict each other)") from None
    if not occurs:
        raise ValueError("the rule never occurs (such as the 30th of February)")
    return str(written)


def normalised_frequency(value: str) -> str:
    """The frequency as stored: a keyword, or the rule as python-dateutil writes it back. Raises
    ``ValueError`` with the reason otherwise.

    >>> normalised_frequency("quarterly")
    'quarterly'
    >>> normalised_frequency("RRULE:FREQ=WEEKLY;BYDAY=TU;BYDAY=MO")
    'FREQ=WEEKLY;BYDAY=MO'
    """
    if not _FREQUENCY_FORM.fullmatch(value):
        raise ValueError(f"must be {FREQUENCY_RULES}")
    return value if value in KEYWORDS else expanded_rule(value.removeprefix("RRULE:"))


def _checker(optional: bool) -> Any:
    def check(value: Any, field: attrs.Attribute[Any]) -> str | Unset | None:
        """The grammar only (what the document's pattern states); the services expand the rule."""
        if value is UNSET:  # a PATCH that leaves it
            return Unset.UNSET
        if value is None and optional:
            return None
        if not isinstance(value, str) or len(value) > 500 or not _FREQUENCY_FORM.fullmatch(value):
            raise ValidationError.field(wire_name(field.name), value, f"must be {FREQUENCY_RULES}")
        return value.removeprefix("RRULE:")

    return check


_SCHEMA = {"type": "string", "maxLength": 500, "pattern": FREQUENCY_PATTERN, "description": FREQUENCY_RULES}
frequency = register_schema(Checked(_checker(False), takes_field=True), _SCHEMA)
"""A required frequency: a keyword or an RFC 5545 recurrence rule (see ``FREQUENCY_PATTERN``)."""
optional_frequency = register_schema(
    Checked(_checker(True), takes_field=True),
    {**_SCHEMA, "nullable": True, "description": "null: it does not recur; " + FREQUENCY_RULES},
)
"""A frequency that may be null (work done once)."""


def _add_months(day: dt.date, months: int) -> dt.date:
    """``day`` moved by whole months, kept within the month it lands in (31 January + 1 month is
    the last day of February)."""
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))


_UNIT_DAYS = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 31, "YEARLY": 366}
_LAST = dt.date(9999, 12, 31)
_GREGORIAN_CYCLE = 146_097
"""Days in 400 years, after which the calendar (weekdays included) repeats: how far a rule is
followed before it is taken to fall due no more."""


def _parts(rule: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in rule.split(";"))


def _in_phase(rule: str, after: dt.date) -> dt.date:
    """The latest day on or before ``after`` in the same phase as ``_ANCHOR`` (the day rules are
    checked from): a whole number of the rule's intervals away from it. A rule such as
    ``FREQ=MONTHLY;INTERVAL=2;BYMONTH=1`` falls in January only every other phase of two months;
    expanded from the anchor's phase, where the check found it occurring, it falls due again."""
    parts = _parts(rule)
    interval = int(parts.get("INTERVAL", "1"))
    anchor = _ANCHOR.date()
    if parts["FREQ"] == "YEARLY":
        return dt.date(after.year - (after.year - anchor.year) % interval, 1, 1)
    if parts["FREQ"] == "MONTHLY":
        index = after.year * 12 + after.month - 1
        index -= (index - (anchor.year * 12 + anchor.month - 1)) % interval
        return dt.date(index // 12, index % 12 + 1, 1)
    step = interval * _UNIT_DAYS[parts["FREQ"]]
    return after - dt.timedelta(days=(after - anchor).days % step)


def next_occurrence(frequency: str, after: dt.date) -> dt.date | None:
    """The first day strictly after ``after`` on which work of this frequency falls due: a
    keyword counts whole months from ``after``; a rule is expanded in its checked phase (see
    ``_in_phase``), so ``FREQ=MONTHLY;BYMONTHDAY=1`` falls on the next first of a month and
    ``FREQ=WEEKLY;BYDAY=MO`` on the next Monday. None when the calendar ends first (year 9999),
    or when the rule does not fall due within the 400 years after (the Gregorian calendar repeats
    then: a rule without INTERVAL that falls due at all does within them; one taking every n-th
    day that also narrows the days, such as every 55th day when it is Monday 1 January, may not).

    >>> next_occurrence("quarterly", dt.date(2026, 1, 31))
    datetime.date(2026, 4, 30)
    >>> next_occurrence("FREQ=WEEKLY;BYDAY=MO", dt.date(2026, 11, 27))
    datetime.date(2026, 11, 30)
    """
    if frequency in _MONTHS:
        if after.year * 12 + after.month + _MONTHS[frequency] > 9999 * 12 + 12:
            return None
        return _add_months(after, _MONTHS[frequency])
    interval = int(_parts(frequency).get("INTERVAL", "1"))
    horizon = dt.timedelta(days=_GREGORIAN_CYCLE + 2 * interval * _UNIT_DAYS[_parts(frequency)["FREQ"]])
    until = _LAST if _LAST - after <= horizon else after + horizon
    start = dt.datetime.combine(_in_phase(frequency, after), dt.time())
    bounded = f"{frequency};UNTIL={until:%Y%m%d}T235959"
    try:
        found = rrulestr(bounded, dtstart=start).after(dt.datetime.combine(after, dt.time()), inc=False)
    except (ValueError, OverflowError):  # past the last day dateutil reaches
        return None
    return None if found is None else found.date()
