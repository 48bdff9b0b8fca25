"""The policy service: edit, publish (freezing a version), approve, sign, download, review.

Who may do what: managers edit, publish, submit and archive; the named approver (or, when none is
named, any manager) approves or rejects; staff keys act as a person and sign the versions they
are asked to sign, and so do owners and admins with a key of their own bound to them; auditors
read everything. Staff see only the policies in force.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import attrs

from ...kernel.clock import utc
from ...kernel.directory import Directory, acting_name, every
from ...kernel.errors import Conflict, Forbidden, NotFound
from ...kernel.operations import Standard, operation, page_of
from ...kernel.page_cache import PageCache
from ...kernel.pages import Page, PageRequest
from ...kernel.permissions import MANAGERS, Actor, Role
from ...kernel.records import Filter, changed, fetch
from ...kernel.registry import Download, Repo, Route, Session
from ...kernel.uow import Tx, UnitOfWork
from .models import (
    ACKNOWLEDGEMENTS,
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
    PolicyVersionFilter,
    PublishPolicy,
    RejectPolicy,
    SignerStatus,
    SubmitForApproval,
    next_review,
)
from .pdf import PolicyDocument, PolicyPdf, load_renderer

__all__ = ["PolicyService", "PDF"]

PDF = "application/pdf"


def _staff(actor: Actor) -> bool:
    return actor.role in STAFF


def _conflict(policy: Policy, reason: str, field: str, value: Any) -> Conflict:
    return Conflict(f"policy {policy.id} {reason}", {"field": field, "value": value, "reason": reason})


def _pieces(data: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


_TABLE = Standard(POLICIES, id="policy_id")
_ALL = "/v1/policies"
_ONE = "/v1/policies/{policy_id}"


@attrs.define
class PolicyService:
    uow: UnitOfWork
    pages: PageCache
    renderer: Callable[[], PolicyPdf] = load_renderer
    """Finds the PDF renderer, on the first download."""
    _pdf: PolicyPdf | None = attrs.field(default=None, init=False)

    # -- reading -------------------------------------------------------------------------------

    @operation(
        POLICY_READ,
        Route("GET", _ALL, "List policies (staff: the policies in force)"),
        filters=PolicyFilter,
        paged=True,
        result=Policy,
        lists=POLICIES,
    )
    def list(self, actor: Actor, filters: PolicyFilter | None = None, page: PageRequest | None = None) -> Page[Policy]:
        """Staff see only the policies in force: a filter asking for others is refused (403)
        rather than quietly replaced, so a caller never mistakes a narrowed list for the whole."""
        filters = filters or PolicyFilter()
        if _staff(actor):
            if filters.in_force is False:
                raise _staff_filter("inForce", False)
            if filters.archived:
                raise _staff_filter("archived", True)
            filters = attrs.evolve(filters, in_force=True)
        return page_of(self, POLICIES, actor, filters, page)

    @operation(POLICY_READ, Route("GET", _ONE, "Read one policy"), result=Policy, given=("publish",))
    def get(self, actor: Actor, policy_id: str) -> Policy:
        with self.uow.read() as session:
            return self._visible(session, actor, policy_id)

    @operation(
        POLICY_AUDIT,
        Route("GET", _ONE + "/versions", "List a policy's published versions, newest first"),
        paged=True,
        result=PolicyVersion,
        lists=POLICY_VERSIONS,
    )
    def list_versions(self, actor: Actor, policy_id: str, page: PageRequest | None = None) -> Page[PolicyVersion]:
        """Newest first."""
        return page_of(
            self, POLICY_VERSIONS, actor, PolicyVersionFilter(policy_id=policy_id), page, under=(POLICIES, policy_id)
        )

    @operation(
        POLICY_READ,
        Route("GET", "/v1/policy-acknowledgements", "List acknowledgements (staff: their own)"),
        filters=AcknowledgementFilter,
        paged=True,
        result=Acknowledgement,
        lists=ACKNOWLEDGEMENTS,
    )
    def list_acknowledgements(
        self, actor: Actor, filters: AcknowledgementFilter | None = None, page: PageRequest | None = None
    ) -> Page[Acknowledgement]:
        """Staff see their own sign-offs only (asking for someone else's is refused, 403);
        managers and auditors everyone's."""
        filters = filters or AcknowledgementFilter()
        if _staff(actor):
            person_id = self._person_of(actor)
            if filters.person_id not in (None, person_id):
                raise _staff_filter("personId", filters.person_id)
            filters = attrs.evolve(filters, person_id=person_id)
        return page_of(self, ACKNOWLEDGEMENTS, actor, filters, page, scope=actor.person_id if _staff(actor) else None)

    @operation(
        POLICY_AUDIT,
        Route("GET", _ONE + "/sign-off", "Who must sign the version in force, and who has"),
        result=PolicySignOff,
        given=("publish",),
    )
    def sign_off(self, actor: Actor, policy_id: str) -> PolicySignOff:
        """Who must sign the version in force, and when each did."""
        with self.uow.read() as session:
            policy = fetch(session, POLICIES, actor.organization_id, policy_id)
            if policy.current_version_id is None:
                return PolicySignOff(policy_id=policy.id, version_id=None, version=0, required=0, acknowledged=0)
            signed = {
                a.person_id: a
                for a in every(
                    session[ACKNOWLEDGEMENTS],
                    policy.organization_id,
                    AcknowledgementFilter(version_id=policy.current_version_id),
                )
            }
            required = self._signers(session, policy)
            issuers = (a.key_issued_by_person_id for a in signed.values())
            names = Directory(session).names(policy.organization_id, [*required, *issuers])
        signers = tuple(_signer(p, signed.get(p), names) for p in required)
        return PolicySignOff(
            policy_id=policy.id,
            version_id=policy.current_version_id,
            version=policy.version,
            required=len(signers),
            acknowledged=sum(1 for s in signers if s.acknowledged_at is not None),
            signers=signers,
        )

    # -- editing -------------------------------------------------------------------------------

    create = _TABLE.create(
        POLICY_WRITE,
        Route("POST", _ALL, "Add a policy (a draft)", 201),
        body=NewPolicy,
        event=PolicyCreated,
        check=lambda service, tx, actor, policy: _check_people(tx, policy, ("assignee_id", "signer_ids")),
        example={
            "name": "Acceptable use",
            "description": "How company devices and accounts may be used.",
            "content": "# Acceptable use\n\nUse company devices for work.\n\n- Lock your screen\n- Report incidents",
            "frequency": "yearly",
        },
    )

    @operation(
        POLICY_WRITE,
        Route("PATCH", _ONE, "Change some of a policy's fields (the working copy)"),
        body=PolicyPatch,
        result=Policy,
        example={"description": "Revised after the annual review."},
    )
    def update(self, actor: Actor, policy_id: str, patch: PolicyPatch) -> Policy:
        """Edits the working copy (not while it awaits approval: the approver decides on the text
        that was submitted); a change of frequency moves the next review date of a published
        policy (unless the date is sent too)."""
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = self._editable(tx, actor, policy_id)
            if "frequency" in changes and "next_review_date" not in changes and current.last_published_at:
                changes["next_review_date"] = next_review(current.last_published_at.date(), changes["frequency"])
            previous = changed(current, changes)
            if not previous:
                return current
            if current.pending_approval and {"name", "content"} & previous.keys():
                field = "content" if "content" in previous else "name"
                raise _conflict(
                    current, "awaits approval of its text; approve or reject it first", field, changes[field]
                )
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            _check_people(tx, updated, [name for name in ("assignee_id", "signer_ids") if name in previous])
            tx[POLICIES].update(updated)
            tx.record(PolicyUpdated(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    archive = _TABLE.archive(
        POLICY_WRITE,
        Route("POST", _ONE + "/archive", "Archive a policy (out of force)"),
        event=PolicyArchived,
        also=lambda policy: {"in_force": False},
    )
    """Out of the register and out of force: staff no longer see it or sign it."""
    restore = _TABLE.restore(
        POLICY_WRITE,
        Route("POST", _ONE + "/restore", "Bring an archived policy back"),
        event=PolicyRestored,
        also=lambda policy: {"in_force": policy.current_version_id is not None},
    )

    # -- publishing and approval ---------------------------------------------------------------

    @operation(
        POLICY_WRITE,
        Route("POST", _ONE + "/versions/publish", "Publish the working copy as a new version"),
        body=PublishPolicy,
        result=Policy,
        example={"changelog": "First edition"},
    )
    def publish(self, actor: Actor, policy_id: str, data: PublishPolicy) -> Policy:
        """Freeze the working copy as the next version and put it in force. Every signer is
        asked again: acknowledgements belong to the version they signed. A pending approval
        is settled by the publication."""
        with self.uow.write(actor) as tx:
            current = self._editable(tx, actor, policy_id)
            return self._publish(tx, actor, current, data.changelog)

    @operation(
        POLICY_WRITE,
        Route("POST", _ONE + "/submit-for-approval", "Ask an approver to approve"),
        body=SubmitForApproval,
        result=Policy,
        example={"comment": "Please review the new incident section."},
    )
    def submit_for_approval(self, actor: Actor, policy_id: str, data: SubmitForApproval) -> Policy:
        """Ask for the working copy to be approved; the named approver (an active owner or admin)
        decides, or any manager when none is named. The policy is ``needs_review`` meanwhile;
        a version already in force stays in force."""
        with self.uow.write(actor) as tx:
            current = self._editable(tx, actor, policy_id)
            _check_content(current)
            Directory(tx).check_approver(actor.organization_id, "approverId", data.approver_id)
            now = self.uow.clock.now()
            changes: dict[str, Any] = {
                "status": PolicyStatus.NEEDS_REVIEW,
                "pending_approval": True,
                "approver_id": data.approver_id,
                "review_comment": data.comment,
            }
            previous = changed(current, changes)
            updated = attrs.evolve(current, **changes, updated_at=now)
            tx[POLICIES].update(updated)
            tx.record(
                PolicySubmittedForApproval(organization_id=actor.organization_id, subject=updated, previous=previous)
            )
        return updated

    @operation(
        POLICY_APPROVE,
        Route("POST", _ONE + "/approve", "Approve and publish the working copy"),
        body=ApprovePolicy,
        result=Policy,
        example={"comment": "Approved."},
        given=(submit_for_approval,),
    )
    def approve(self, actor: Actor, policy_id: str, data: ApprovePolicy) -> Policy:
        """Publish the working copy as approved: the version records who approved it, when, and
        the comment."""
        with self.uow.write(actor) as tx:
            current = self._awaiting(tx, actor, policy_id)
            updated = self._publish(tx, actor, current, None, approved=True, comment=data.comment)
            tx.record(PolicyApproved(organization_id=actor.organization_id, subject=updated))
        return updated

    @operation(
        POLICY_APPROVE,
        Route("POST", _ONE + "/reject", "Send the working copy back with a comment"),
        body=RejectPolicy,
        result=Policy,
        example={"comment": "Name the incident contact."},
        given=(submit_for_approval,),
    )
    def reject(self, actor: Actor, policy_id: str, data: RejectPolicy) -> Policy:
        """Send the working copy back with a comment: the policy returns to ``published`` when a
        version is in force, else to ``draft``."""
        with self.uow.write(actor) as tx:
            current = self._awaiting(tx, actor, policy_id)
            changes: dict[str, Any] = {
                "status": PolicyStatus.PUBLISHED if current.in_force else PolicyStatus.DRAFT,
                "pending_approval": False,
                "approver_id": None,
                "review_comment": data.comment,
            }
            previous = changed(current, changes)
            updated = attrs.evolve(current, **changes, updated_at=self.uow.clock.now())
            tx[POLICIES].update(updated)
            tx.record(PolicyRejected(organization_id=actor.organization_id, subject=updated, previous=previous))
        return updated

    # -- signing -------------------------------------------------------------------------------

    @operation(
        POLICY_ACKNOWLEDGE,
        Route("POST", _ONE + "/acknowledge", "Sign the version in force as the key's person"),
        result=Acknowledgement,
        given=(publish,),
    )
    def acknowledge(self, actor: Actor, policy_id: str) -> Acknowledgement:
        """Sign the version in force as the caller's person; signing twice returns the first
        acknowledgement. Only people the policy asks may sign."""
        person_id = self._person_of(actor)
        with self.uow.write(actor) as tx:
            policy = self._visible(tx, actor, policy_id)
            if policy.current_version_id is None or policy.archived:
                raise NotFound.resource(POLICIES.kind, policy_id)
            if not self._asks(tx, policy, person_id):
                raise Forbidden(
                    f"policy {policy.id} does not ask person {person_id} to sign",
                    {"field": "personId", "value": person_id, "reason": "is not asked to sign this policy"},
                )
            done = tx[ACKNOWLEDGEMENTS].list(
                actor.organization_id,
                AcknowledgementFilter(version_id=policy.current_version_id, person_id=person_id),
                PageRequest(page=1, per_page=1),
            )[0]
            if done:
                return done[0]
            now = self.uow.clock.now()
            acknowledgement = Acknowledgement(
                id=self.uow.ids.new(ACKNOWLEDGEMENTS.prefix),
                organization_id=actor.organization_id,
                policy_id=policy.id,
                version_id=policy.current_version_id,
                version=policy.version,
                person_id=person_id,
                person_name=acting_name(tx, actor),
                acknowledged_by=actor.principal,
                key_issued_by=actor.key_issued_by,
                key_issued_by_person_id=actor.key_issued_by_person_id,
                created_at=now,
                updated_at=now,
            )
            tx[ACKNOWLEDGEMENTS].add(acknowledgement)
            tx.record(PolicyAcknowledged(organization_id=actor.organization_id, subject=acknowledgement))
        return acknowledgement

    # -- documents -----------------------------------------------------------------------------

    @operation(
        POLICY_READ,
        Route("GET", _ONE + "/pdf", "The version in force as a PDF"),
        result=Download,
        media_type=PDF,
        bounded=True,
        given=(publish,),
    )
    def download(self, actor: Actor, policy_id: str) -> Download:
        """The version in force as a PDF."""
        with self.uow.read() as session:
            policy = self._visible(session, actor, policy_id)
            if policy.current_version_id is None:  # nothing to read yet: a read answers 404, not 409
                raise NotFound(
                    f"policy {policy.id} has no published version",
                    {"resource": POLICY_VERSIONS.kind, "policyId": policy.id, "reason": "no version is published yet"},
                )
            document = _document(
                policy,
                fetch(session, POLICY_VERSIONS, policy.organization_id, policy.current_version_id),
                *_letterhead(session, actor.organization_id),
            )
        data = self._render(policy.name, [document])
        return Download(filename=f"{policy.name}.pdf", media_type=PDF, chunks=_pieces(data))

    @operation(
        POLICY_READ,
        Route("GET", _ALL + "/download-all", "Every policy in force as one PDF"),
        result=Download,
        media_type=PDF,
        bounded=True,
    )
    def download_all(self, actor: Actor) -> Download:
        """Every policy in force, in one PDF, in the order they were created."""
        with self.uow.read() as session:
            organization = Directory(session).organization(actor.organization_id)
            title = f"{organization.name if organization else actor.organization_id}: policies"
            letterhead = _letterhead(session, actor.organization_id)
            documents = [
                _document(
                    policy,
                    fetch(session, POLICY_VERSIONS, policy.organization_id, policy.current_version_id),
                    *letterhead,
                )
                for policy in every(session[POLICIES], actor.organization_id, PolicyFilter(in_force=True))
                if policy.current_version_id is not None
            ]
        return Download(filename="policies.pdf", media_type=PDF, chunks=_pieces(self._render(title, documents)))

    # -- the review sweep ----------------------------------------------------------------------

    def sweep_reviews(self, now: dt.datetime | None = None) -> int:
        """Move every published policy whose next review date has come to ``needs_review``, in
        every organization (one write each), and return how many moved. The server's lead worker
        runs it periodically and ``compliance maintenance`` on demand; running it twice moves
        nothing more."""
        now = utc(now) if now is not None else self.uow.clock.now()
        today = now.date()
        with self.uow.read() as session:
            organizations = Directory(session).organization_ids()
        moved = 0
        for organization_id in organizations:
            with self.uow.write(None) as tx:
                due = [
                    p
                    for p in every(tx[POLICIES], organization_id, PolicyFilter(status=PolicyStatus.PUBLISHED))
                    if p.next_review_date is not None and p.next_review_date <= today
                ]
                for policy in due:
                    updated = attrs.evolve(policy, status=PolicyStatus.NEEDS_REVIEW, updated_at=now)
                    tx[POLICIES].update(updated)
                    tx.record(
                        PolicyReviewDue(
                            organization_id=organization_id,
                            subject=updated,
                            previous={"status": PolicyStatus.PUBLISHED},
                        )
                    )
            moved += len(due)
        return moved

    # -- helpers -------------------------------------------------------------------------------

    def _visible(self, session: Session, actor: Actor, policy_id: str) -> Policy:
        """The policy, or a 404 for staff when it is not in force (a draft is not theirs to see)."""
        policy = fetch(session, POLICIES, actor.organization_id, policy_id)
        if _staff(actor) and (not policy.in_force or policy.archived):
            raise NotFound.resource(POLICIES.kind, policy_id)
        return policy

    @staticmethod
    def _editable(session: Session, actor: Actor, policy_id: str) -> Policy:
        policy = fetch(session, POLICIES, actor.organization_id, policy_id)
        if policy.archived:
            raise _conflict(policy, "is archived; restore it first", "archived", True)
        return policy

    @staticmethod
    def _awaiting(session: Session, actor: Actor, policy_id: str) -> Policy:
        policy = PolicyService._editable(session, actor, policy_id)
        if not policy.pending_approval:
            raise Conflict(
                f"policy {policy.id} is not awaiting approval",
                {"field": "pendingApproval", "value": False, "reason": "submit it for approval first"},
            )
        if policy.approver_id is not None and actor.person_id != policy.approver_id:
            raise Forbidden(
                f"only the named approver {policy.approver_id} decides on policy {policy.id}",
                {"field": "approverId", "value": policy.approver_id, "reason": "the caller is not the named approver"},
            )
        if policy.approver_id is not None and not actor.as_own_person:
            raise Forbidden(
                f"only the named approver's own key decides on policy {policy.id}",
                {
                    "field": "approverId",
                    "value": policy.approver_id,
                    "reason": "the caller's key was issued by someone other than the approver",
                },
            )
        if actor.person_id is not None:
            # Checked again now, not only at submission: the approver may have been
            # deactivated or lost the owner or admin role meanwhile.
            person = Directory(session).person(actor.organization_id, actor.person_id)
            if person is None or not person.is_active or Role(person.role) not in MANAGERS:
                raise Forbidden(
                    f"person {actor.person_id} may no longer approve policy {policy.id}",
                    {
                        "field": "approverId",
                        "value": actor.person_id,
                        "reason": "is no longer an active owner or admin",
                    },
                )
        return policy

    @staticmethod
    def _person_of(actor: Actor) -> str:
        if actor.person_id is None:
            raise Forbidden(
                "this caller acts as no person",
                {"field": "personId", "value": None, "reason": "a person-bound key is needed"},
            )
        return actor.person_id

    def _publish(
        self,
        tx: Tx,
        actor: Actor,
        current: Policy,
        changelog: str | None,
        *,
        approved: bool = False,
        comment: str | None = None,
    ) -> Policy:
        """Freeze ``current``'s working copy as its next version; ``approved`` when the decision
        of an approver publishes it (with its ``comment``)."""
        _check_content(current)
        now = self.uow.clock.now()
        version = PolicyVersion(
            id=self.uow.ids.new(POLICY_VERSIONS.prefix),
            organization_id=current.organization_id,
            policy_id=current.id,
            version=current.version + 1,
            name=current.name,
            content=current.content,
            changelog=changelog,
            published_by=actor.principal,
            published_at=now,
            approved_by=(actor.person_id or actor.principal) if approved else None,
            approved_at=now if approved else None,
            approval_comment=comment if approved else None,
            approval_key_issued_by=actor.key_issued_by if approved else None,
            approval_key_issued_by_person_id=actor.key_issued_by_person_id if approved else None,
            approved_by_person_name=acting_name(tx, actor) if approved else None,
            created_at=now,
            updated_at=now,
        )
        changes: dict[str, Any] = {
            "status": PolicyStatus.PUBLISHED,
            "current_version_id": version.id,
            "version": version.version,
            "in_force": True,
            "pending_approval": False,
            "approver_id": None,
            "last_published_at": now,
            "next_review_date": next_review(now.date(), current.frequency),
        }
        if approved:
            changes["last_approved_at"] = now
            changes["review_comment"] = comment
        previous = changed(current, changes)
        updated = attrs.evolve(current, **changes, updated_at=now)
        tx[POLICY_VERSIONS].add(version)
        tx[POLICIES].update(updated)
        tx.record(PolicyPublished(organization_id=current.organization_id, subject=updated, previous=previous))
        return updated

    @staticmethod
    def _asks(session: Session, policy: Policy, person_id: str) -> bool:
        if not policy.is_required_to_sign:
            return False
        if policy.signer_ids:
            return person_id in policy.signer_ids
        person = Directory(session).person(policy.organization_id, person_id)
        return person is not None and person.is_active

    @staticmethod
    def _signers(session: Session, policy: Policy) -> tuple[str, ...]:
        if not policy.is_required_to_sign:
            return ()
        if policy.signer_ids:
            return policy.signer_ids
        return tuple(p.id for p in Directory(session).active_people(policy.organization_id))

    def _render(self, title: str, documents: Sequence[PolicyDocument]) -> bytes:
        if self._pdf is None:
            self._pdf = self.renderer()
        return self._pdf.render(title, documents, self.uow.clock.now())


def _staff_filter(field: str, value: Any) -> Forbidden:
    return Forbidden(
        f"staff keys may not list with {field}={value}",
        {"field": field, "value": value, "reason": "staff see only the policies in force and their own sign-offs"},
    )


def _signer(person_id: str, signature: Acknowledgement | None, names: dict[str, str]) -> SignerStatus:
    if signature is None:
        return SignerStatus(person_id=person_id, person_name=names.get(person_id))
    issuer = signature.key_issued_by_person_id
    return SignerStatus(
        person_id=person_id,
        person_name=names.get(person_id),
        acknowledged_at=signature.created_at,
        acknowledged_by=signature.acknowledged_by,
        key_issued_by=signature.key_issued_by,
        key_issued_by_person_id=issuer,
        key_issued_by_person_name=None if issuer is None else names.get(issuer),
    )


def _check_content(policy: Policy) -> None:
    if not policy.content.strip():
        raise _conflict(policy, "has no content to publish", "content", policy.content)


def _check_people(session: Session, policy: Policy, fields: Any) -> None:
    directory = Directory(session)
    for field in fields:
        if field == "assignee_id":
            directory.check_member(policy.organization_id, "assigneeId", policy.assignee_id)
        elif field == "signer_ids":
            for index, person_id in enumerate(policy.signer_ids):
                directory.check_member(policy.organization_id, f"signerIds[{index}]", person_id)


class _Logo(Protocol):
    @property
    def data(self) -> bytes: ...


class _Logos(Protocol):
    """The port to the organization's logo (the ``organization_logos`` table: one row at most)."""

    def list(self, organization_id: str, filters: Any, page: PageRequest) -> tuple[Sequence[_Logo], int]: ...


_LOGOS: Repo[_Logos] = Repo("organization_logos")


@attrs.frozen
class _AnyLogo(Filter):
    """The logo table has no filter: its one row is the organization's logo."""


def _letterhead(session: Session, organization_id: str) -> tuple[str, bytes | None]:
    """The organization's name and logo image, which head each page of its policy PDFs."""
    organization = Directory(session).organization(organization_id)
    logos, _ = session[_LOGOS].list(organization_id, _AnyLogo(), PageRequest(page=1, per_page=1))
    return (organization.name if organization else "", logos[0].data if logos else None)


def _document(policy: Policy, version: PolicyVersion, organization: str, logo: bytes | None) -> PolicyDocument:
    return PolicyDocument(
        organization=organization,
        logo=logo,
        name=version.name,
        description=policy.description,
        version=version.version,
        content=version.content,
        published_at=version.published_at,
        approved_at=version.approved_at,
        approved_by=version.approved_by,
        approved_by_person_name=version.approved_by_person_name,
        approval_key_issued_by=version.approval_key_issued_by,
        approval_key_issued_by_person_id=version.approval_key_issued_by_person_id,
    )
