"""A risk's scores and levels, worked out from its ratings on every write and stored beside them."""

from __future__ import annotations

import attrs

from ...kernel.scales import level, rating_score
from .models import Risk

__all__ = ["SCORE_FIELDS", "scored"]

SCORE_FIELDS = ("inherent_score", "inherent_level", "residual_score", "residual_level", "rated")


def scored(risk: Risk) -> Risk:
    """The risk with its scores and levels worked out from its ratings: None (unassessed) while
    either rating of a pair is missing."""
    inherent = rating_score(risk.likelihood, risk.impact)
    residual = rating_score(risk.residual_likelihood, risk.residual_impact)
    return attrs.evolve(
        risk,
        inherent_score=inherent,
        inherent_level=None if inherent is None else level(inherent),
        residual_score=residual,
        residual_level=None if residual is None else level(residual),
        rated=inherent is not None,
    )
