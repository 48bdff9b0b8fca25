"""A risk's scores and levels, worked out from its ratings on every write and stored beside them."""

from __future__ import annotations

import attrs

from ...kernel.scales import level, score
from .models import Risk

__all__ = ["SCORE_FIELDS", "scored"]

SCORE_FIELDS = ("inherent_score", "inherent_level", "residual_score", "residual_level")


def scored(risk: Risk) -> Risk:
    """The risk with its scores and levels worked out from its ratings."""
    inherent = score(risk.likelihood, risk.impact)
    residual = score(risk.residual_likelihood, risk.residual_impact)
    return attrs.evolve(
        risk,
        inherent_score=inherent,
        inherent_level=level(inherent),
        residual_score=residual,
        residual_level=level(residual),
    )
