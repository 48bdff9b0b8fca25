"""The likelihood and impact scales, and the score and level they give.

Vendors (inherent and residual probability and impact) and risks (likelihood, impact and their
residual pair) rate on the same two five-step scales, so a vendor rated "likely / major" and a
risk rated the same mean the same thing. They live here, below the areas, because areas never
import each other and two copies of one scale would drift apart.
"""

from __future__ import annotations

import enum
from typing import Any, TypeVar

import attrs

from .errors import ValidationError
from .rendering import wire_name
from .validation import UNSET, Checked, Unset, register_schema

__all__ = [
    "Likelihood",
    "Impact",
    "RiskLevel",
    "score",
    "level",
    "LEVEL_FLOORS",
    "rating",
    "rating_score",
    "rated_filter",
]


class Likelihood(enum.StrEnum):
    """1 to 5, in declaration order."""

    VERY_UNLIKELY = "very_unlikely"
    UNLIKELY = "unlikely"
    POSSIBLE = "possible"
    LIKELY = "likely"
    VERY_LIKELY = "very_likely"

    @property
    def value_number(self) -> int:
        return _LIKELIHOOD[self]


class Impact(enum.StrEnum):
    """1 to 5, in declaration order."""

    INSIGNIFICANT = "insignificant"
    MINOR = "minor"
    MODERATE = "moderate"
    MAJOR = "major"
    SEVERE = "severe"

    @property
    def value_number(self) -> int:
        return _IMPACT[self]


_LIKELIHOOD = {member: rank for rank, member in enumerate(Likelihood, start=1)}
_IMPACT = {member: rank for rank, member in enumerate(Impact, start=1)}


class RiskLevel(enum.StrEnum):
    VERY_LOW = "very_low"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    VERY_HIGH = "very_high"


LEVEL_FLOORS: tuple[tuple[int, RiskLevel], ...] = (
    (17, RiskLevel.VERY_HIGH),
    (10, RiskLevel.HIGH),
    (5, RiskLevel.MEDIUM),
    (2, RiskLevel.LOW),
    (1, RiskLevel.VERY_LOW),
)
"""The reference platform's heat-map bands (very high above 16, high above 9, medium above 4,
low above 1, else very low): the lowest score of each level, highest level first."""


def score(likelihood: Likelihood, impact: Impact) -> int:
    """Likelihood x impact, 1 to 25.

    >>> score(Likelihood.LIKELY, Impact.MAJOR)
    16
    """
    return likelihood.value_number * impact.value_number


def level(value: int) -> RiskLevel:
    """The band a score falls in.

    >>> level(16), level(17)
    (<RiskLevel.HIGH: 'high'>, <RiskLevel.VERY_HIGH: 'very_high'>)
    """
    if not 1 <= value <= 25:
        raise ValueError(f"a score is 1 to 25, not {value}")
    return next(band for floor, band in LEVEL_FLOORS if value >= floor)


def rating_score(likelihood: Likelihood | None, impact: Impact | None) -> int | None:
    """Likelihood x impact, or None while either is unrated: an unassessed pair has no score
    (it is not the lowest one).

    >>> rating_score(Likelihood.LIKELY, None) is None
    True
    """
    if likelihood is None or impact is None:
        return None
    return score(likelihood, impact)


S = TypeVar("S", Likelihood, Impact)


def rating(scale: type[S]) -> Checked:
    """A rating on ``scale``, or None (unrated): the step's name, or its number 1 to 5 (3 is the
    third name, ``possible`` or ``moderate``). Anything else is refused naming the field.

    >>> attrs.make_class("Rated", {"impact": attrs.field(converter=rating(Impact))})(impact=4).impact
    <Impact.MAJOR: 'major'>
    """
    steps = list(scale)
    names = ", ".join(step.value for step in steps)

    def check(value: Any, field: attrs.Attribute[Any]) -> S | Unset | None:
        if value is None or value is UNSET or isinstance(value, scale):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if 1 <= value <= len(steps):
                return steps[value - 1]
        elif isinstance(value, str):
            try:
                return scale(value)
            except ValueError:
                pass
        raise ValidationError.field(
            wire_name(field.name), value, f"must be one of {names}, a number 1 to {len(steps)}, or null (unrated)"
        )

    return register_schema(
        Checked(check, takes_field=True),
        {
            "oneOf": [
                {"type": "string", "enum": [step.value for step in steps]},
                {"type": "integer", "minimum": 1, "maximum": len(steps)},
            ],
            "nullable": True,
            "description": f"a name, or its number 1 to {len(steps)} in this order; null (or absent) means unrated",
        },
    )


def rated_filter(description: str) -> Checked:
    """The ``rated`` list filter: true, false or None (any), documented with ``description``
    (what false finds: the unassessed records)."""

    def check(value: Any, field: attrs.Attribute[Any]) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        raise ValidationError.field(wire_name(field.name), value, "must be true or false")

    return register_schema(Checked(check, takes_field=True), {"type": "boolean", "description": description})
