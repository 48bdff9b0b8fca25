"""Policies: Markdown content with frozen, numbered versions; approval by a named approver;
sign-off per person and per version; a periodic review; PDF downloads.

States: ``draft`` -> ``published`` (a version is in force) -> ``needs_review`` (the review date
has passed, or an approval is pending) -> ``published`` again by publishing or approving; any of
them can be archived and restored. Publishing asks every signer again.
"""

from __future__ import annotations

import datetime as dt

from ...kernel.registry import Area, Chore, Download, Operation
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
from .service import PDF, PolicyService

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

_POLICY = ("policy_id",)
_PUBLISHED = ("policies.publish",)
"""What the generic suites run first where an operation needs a version in force."""

AREA = Area(
    name="policies",
    service=lambda context: PolicyService(context.uow, context.pages),
    actions=(POLICY_READ, POLICY_AUDIT, POLICY_WRITE, POLICY_APPROVE, POLICY_ACKNOWLEDGE),
    records=(POLICIES, POLICY_VERSIONS, ACKNOWLEDGEMENTS),
    events=EVENTS,
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
    operations=(
        Operation(name="policies.list", action=POLICY_READ, filters=PolicyFilter, paged=True, result=Policy),
        Operation(
            name="policies.create",
            action=POLICY_WRITE,
            body=NewPolicy,
            idempotent=True,
            result=Policy,
            example={
                "name": "Acceptable use",
                "description": "How company devices and accounts may be used.",
                "content": "# Acceptable use\n\nUse company devices for work.\n\n- Lock your screen\n- Report incidents",
                "frequency": "yearly",
            },
        ),
        Operation(name="policies.get", action=POLICY_READ, ids=_POLICY, result=Policy, given=_PUBLISHED),
        Operation(
            name="policies.update",
            action=POLICY_WRITE,
            ids=_POLICY,
            body=PolicyPatch,
            result=Policy,
            example={"description": "Revised after the annual review."},
        ),
        Operation(
            name="policies.publish",
            action=POLICY_WRITE,
            ids=_POLICY,
            body=PublishPolicy,
            result=Policy,
            example={"changelog": "First edition"},
        ),
        Operation(
            name="policies.submit_for_approval",
            action=POLICY_WRITE,
            ids=_POLICY,
            body=SubmitForApproval,
            result=Policy,
            example={"comment": "Please review the new incident section."},
        ),
        Operation(
            name="policies.approve",
            action=POLICY_APPROVE,
            ids=_POLICY,
            body=ApprovePolicy,
            result=Policy,
            example={"comment": "Approved."},
            given=("policies.submit_for_approval",),
        ),
        Operation(
            name="policies.reject",
            action=POLICY_APPROVE,
            ids=_POLICY,
            body=RejectPolicy,
            result=Policy,
            example={"comment": "Name the incident contact."},
            given=("policies.submit_for_approval",),
        ),
        Operation(name="policies.archive", action=POLICY_WRITE, ids=_POLICY, result=Policy),
        Operation(name="policies.restore", action=POLICY_WRITE, ids=_POLICY, result=Policy),
        Operation(
            name="policies.acknowledge",
            action=POLICY_ACKNOWLEDGE,
            ids=_POLICY,
            result=Acknowledgement,
            given=_PUBLISHED,
        ),
        Operation(name="policies.list_versions", action=POLICY_AUDIT, ids=_POLICY, paged=True, result=PolicyVersion),
        Operation(name="policies.sign_off", action=POLICY_AUDIT, ids=_POLICY, result=PolicySignOff, given=_PUBLISHED),
        Operation(
            name="policies.list_acknowledgements",
            action=POLICY_READ,
            filters=AcknowledgementFilter,
            paged=True,
            result=Acknowledgement,
        ),
        Operation(
            name="policies.download",
            action=POLICY_READ,
            ids=_POLICY,
            result=Download,
            media_type=PDF,
            given=_PUBLISHED,
        ),
        Operation(name="policies.download_all", action=POLICY_READ, result=Download, media_type=PDF),
    ),
)
