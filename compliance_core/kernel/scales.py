"""The likelihood and impact scales, and the score and level they give.

Vendors (inherent and residual probability and impact) and risks (likelihood, impact and their
residual pair) rate on the same two five-step scales, so a vendor rated "likely / major" and a
risk rated the same mean the same thing. They live here, below the areas, because areas never
import each other and two copies of one scale would drift apart.
"""

from __future__ import annotations

import enum

__all__ = ["Likelihood", "Impact", "RiskLevel", "score", "level", "LEVEL_FLOORS"]


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
