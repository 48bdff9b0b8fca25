"""Policies: Markdown content with frozen, numbered versions; approval by a named approver;
sign-off per person and per version; a periodic review; PDF downloads.

States: ``draft`` -> ``published`` (a version is in force) -> ``needs_review`` (the review date
has passed, or an approval is pending) -> ``published`` again by publishing or approving; any of
them can be archived and restored. Publishing asks every signer again.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.links import Linkable, LinkState
from ...kernel.permissions import Actor
from ...kernel.registry import Area, Chore
from ...kernel.subjects import Commentable
from .models import (
    ACKNOWLEDGEMENTS,
    EVENTS,
    POLICIES,
    POLICY_ACKNOWLEDGE,
    POLICY_APPROVE,
    POLICY_AUDIT,
    POLICY_READ,
    POLICY_VERSIONS,
    POLICY_WRITE,
    STAFF,
    Acknowledgement,
    AcknowledgementFilter,
    ApprovePolicy,
    Frequency,
    NewPolicy,
    Policy,
    PolicyAcknowledged,
    PolicyApproved,
    PolicyArchived,
    PolicyCreated,
    PolicyFilter,
    PolicyPatch,
    PolicyPublished,
    PolicyRejected,
    PolicyRestored,
    PolicyReviewDue,
    PolicySignOff,
    PolicyStatus,
    PolicySubmittedForApproval,
    PolicyUpdated,
    PolicyVersion,
    PublishPolicy,
    RejectPolicy,
    SignerStatus,
    SubmitForApproval,
    next_review,
)
from .pdf import PolicyDocument, PolicyPdf
from .service import PolicyService

__all__ = [
    "PolicyStatus",
    "Frequency",
    "Policy",
    "PolicyVersion",
    "Acknowledgement",
    "SignerStatus",
    "PolicySignOff",
    "NewPolicy",
    "PolicyPatch",
    "PolicyFilter",
    "AcknowledgementFilter",
    "PublishPolicy",
    "SubmitForApproval",
    "ApprovePolicy",
    "RejectPolicy",
    "PolicyService",
    "PolicyDocument",
    "PolicyPdf",
    "POLICIES",
    "POLICY_VERSIONS",
    "ACKNOWLEDGEMENTS",
    "STAFF",
    "POLICY_READ",
    "POLICY_AUDIT",
    "POLICY_WRITE",
    "POLICY_APPROVE",
    "POLICY_ACKNOWLEDGE",
    "PolicyCreated",
    "PolicyUpdated",
    "PolicyPublished",
    "PolicySubmittedForApproval",
    "PolicyApproved",
    "PolicyRejected",
    "PolicyReviewDue",
    "PolicyArchived",
    "PolicyRestored",
    "PolicyAcknowledged",
    "next_review",
    "AREA",
]

"""What the generic suites run first where an operation needs a version in force."""


def _serves(policy: Policy, now: dt.datetime) -> LinkState | None:
    """A policy does its part for its controls while a version of it is in force."""
    if policy.archived:
        return None
    return LinkState.DONE if policy.in_force else LinkState.PENDING


def _seen(policy: Policy, actor: Actor) -> bool:
    """Staff see the policies in force, as reading one shows them (a draft is not theirs)."""
    return actor.role not in STAFF or (policy.in_force and not policy.archived)


AREA = Area(
    name="policies",
    tag="Policies",
    service=lambda context: PolicyService(context.uow, context.pages),
    api=PolicyService,
    actions=(POLICY_READ, POLICY_AUDIT, POLICY_WRITE, POLICY_APPROVE, POLICY_ACKNOWLEDGE),
    records=(POLICIES, POLICY_VERSIONS, ACKNOWLEDGEMENTS),
    events=EVENTS,
    links=(Linkable(kind="policy", records=POLICIES, state=_serves, updated=PolicyUpdated),),
    ports=(Commentable(kind="policy", records=POLICIES, read=POLICY_READ, visible=_seen),),
    chores=(
        Chore(
            name="sweep policy reviews",
            every=dt.timedelta(hours=12),
            run=PolicyService.sweep_reviews,
            report="policiesDueForReview",
            done="%d policy(ies) due for review",
            log_zero=True,
        ),
    ),
)
