"""The risk register: each risk rated before and after treatment, with its treatment, owner and
links, and acceptance that lapses on its own.

Scores are stored beside the ratings they come from (``inherent_score`` = likelihood x impact,
``residual_score`` = residual likelihood x residual impact, 1 to 25, and their levels), set by
the service on every write: a list can then be filtered by level in the store, like any other
column, and every answer, event and export shows them without recomputing.

Accepting a risk is a decision with a shelf life: it records who accepted, when, the residual
score accepted and an expiry date. An acceptance lapses, and the risk returns to
``needs_review`` with a ``risk.acceptance_lapsed`` event, when its expiry date arrives (the sweep
``lapse_expired_acceptances``, run by the server and ``compliance maintenance``) or when a write
changes the residual score away from the one accepted (in that same write).

``models`` holds what is stored and answered (the risk, its commands, table, actions and events),
``scoring`` the scores and levels worked out from the ratings, ``service`` the operations and the
lapse sweep.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.links import Linkable, LinkState
from ...kernel.registry import Area, Chore
from ...kernel.subjects import Commentable
from .models import (
    EVENTS,
    MAX_LINKS,
    RISK_ACCEPT,
    RISK_ARCHIVE,
    RISK_CREATE,
    RISK_READ,
    RISK_UPDATE,
    RISKS,
    AcceptanceLapse,
    NewRisk,
    Risk,
    RiskAcceptance,
    RiskAcceptanceLapsed,
    RiskAccepted,
    RiskArchived,
    RiskCategory,
    RiskCreated,
    RiskDepartment,
    RiskFilter,
    RiskPatch,
    RiskRestored,
    RiskScoreChanged,
    RiskStatus,
    RiskUpdated,
    Treatment,
)
from .service import RiskService

__all__ = [
    "RiskCategory",
    "RiskDepartment",
    "RiskStatus",
    "Treatment",
    "AcceptanceLapse",
    "Risk",
    "NewRisk",
    "RiskPatch",
    "RiskAcceptance",
    "RiskFilter",
    "RiskService",
    "RISKS",
    "RISK_READ",
    "RISK_CREATE",
    "RISK_UPDATE",
    "RISK_ARCHIVE",
    "RISK_ACCEPT",
    "RiskCreated",
    "RiskUpdated",
    "RiskArchived",
    "RiskRestored",
    "RiskScoreChanged",
    "RiskAccepted",
    "RiskAcceptanceLapsed",
    "MAX_LINKS",
    "AREA",
]


def _serves(risk: Risk, now: dt.datetime) -> LinkState | None:
    """A risk is why a control exists, not part of implementing it."""
    return None if risk.archived else LinkState.CONTEXT


AREA = Area(
    name="risks",
    tag="Risks",
    service=lambda context: RiskService(context.uow, context.pages),
    api=RiskService,
    actions=(RISK_READ, RISK_CREATE, RISK_UPDATE, RISK_ARCHIVE, RISK_ACCEPT),
    records=(RISKS,),
    events=EVENTS,
    links=(Linkable(kind="risk", records=RISKS, state=_serves, updated=RiskUpdated),),
    ports=(Commentable(kind="risk", records=RISKS, read=RISK_READ),),
    chores=(
        Chore(
            name="lapse expired risk acceptances",
            every=dt.timedelta(minutes=10),
            run=RiskService.lapse_expired_acceptances,
            report="lapsedRiskAcceptances",
            done="returned %d risk(s) whose acceptance expired to review",
        ),
    ),
)
