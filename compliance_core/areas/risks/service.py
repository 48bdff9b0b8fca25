"""The risk register's operations: the standard ones, ``update`` (scores follow the ratings),
``accept``, and the sweep that lapses expired acceptances."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from ...kernel.directory import Directory, acting_name
from ...kernel.errors import Conflict, ValidationError
from ...kernel.events import Event
from ...kernel.operations import Standard, operation
from ...kernel.page_cache import PageCache
from ...kernel.pages import MAX_PER_PAGE, PageRequest
from ...kernel.permissions import Actor
from ...kernel.records import fetch
from ...kernel.registers import Register
from ...kernel.registry import Download, Route, Session
from ...kernel.uow import Tx, UnitOfWork
from .heat_map import SVG, RiskHeatMap, heat_map_of, matching_risks, svg_of
from .models import (
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
    RiskCreated,
    RiskFilter,
    RiskPatch,
    RiskRestored,
    RiskScoreChanged,
    RiskStatus,
    RiskUpdated,
    Treatment,
    accept_through_accept,
)
from .scoring import SCORE_FIELDS, scored

__all__ = ["RiskService", "check_owner"]


def check_owner(session: Session, organization_id: str, owner_id: str | None) -> None:
    Directory(session).check_member(organization_id, "ownerId", owner_id)


def _differences(current: Risk, updated: Risk) -> dict[str, Any]:
    """The previous values of every field the write changes (``updated_at`` aside)."""
    return {
        field.name: getattr(current, field.name)
        for field in attrs.fields(Risk)
        if field.name != "updated_at" and getattr(current, field.name) != getattr(updated, field.name)
    }


def _lapsed(risk: Risk, reason: AcceptanceLapse, now: dt.datetime) -> Risk:
    return attrs.evolve(
        risk,
        status=RiskStatus.NEEDS_REVIEW,
        acceptance_lapsed_at=now,
        acceptance_lapse_reason=reason,
        updated_at=now,
    )


def _check_new(service: object, tx: Tx, actor: Actor, risk: Risk) -> None:
    check_owner(tx, actor.organization_id, risk.owner_id)


_TABLE = Standard(RISKS, id="risk_id")
_REGISTER = Register(RISKS, new=NewRisk, event=RiskCreated, shape=scored, check=_check_new)
_ALL = "/v1/risks"
_ONE = "/v1/risks/{risk_id}"


@attrs.define
class RiskService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(RISK_READ, Route("GET", _ALL, "List the risk register"))
    create = _TABLE.create(
        RISK_CREATE,
        Route("POST", _ALL, "Register a risk", 201),
        body=NewRisk,
        event=RiskCreated,
        shape=scored,
        check=_check_new,
        example={
            "title": "Laptop theft exposes customer data",
            "category": "technology",
            "likelihood": "possible",
            "impact": "major",
            "residualLikelihood": "unlikely",
            "residualImpact": "moderate",
            "treatmentStrategy": "mitigate",
        },
    )
    get = _TABLE.get(RISK_READ, Route("GET", _ONE, "Read one risk"))
    export_csv, export_xlsx = _REGISTER.exports(RISK_READ, _ALL, "risks")
    import_file = _REGISTER.importer(
        RISK_CREATE,
        Route("POST", _ALL + "/import", "Import risks from a CSV or XLSX file: a dry run lists every row's errors"),
        example={
            "format": "csv",
            "content": "dGl0bGUsY2F0ZWdvcnksbGlrZWxpaG9vZCxpbXBhY3QNClN1cHBsaWVyIG91dGFnZSx2ZW5kb3JfbWFuYWdlbWVudCxwb3NzaWJsZSxtYWpvcg0K",
        },
    )

    @operation(
        RISK_UPDATE,
        Route("PATCH", _ONE, "Change some of a risk's fields (scores follow the ratings)"),
        body=RiskPatch,
        result=Risk,
        example={"likelihood": "likely"},
    )
    def update(self, actor: Actor, risk_id: str, patch: RiskPatch) -> Risk:
        """Change some fields. Scores follow the ratings; a change of the residual score of an
        accepted risk lapses its acceptance in this same write."""
        changes = patch.changes()
        with self.uow.write(actor) as tx:
            current = fetch(tx, RISKS, actor.organization_id, risk_id)
            if changes.get("status") is RiskStatus.ACCEPTED and current.status is not RiskStatus.ACCEPTED:
                raise accept_through_accept()
            now = self.uow.clock.now()
            updated = scored(attrs.evolve(current, **changes, updated_at=now))
            if not _differences(current, updated):
                return current
            if "owner_id" in changes and updated.owner_id != current.owner_id:
                check_owner(tx, actor.organization_id, updated.owner_id)
            lapse = updated.status is RiskStatus.ACCEPTED and updated.residual_score != current.accepted_residual_score
            if lapse:
                updated = _lapsed(updated, AcceptanceLapse.RESIDUAL_CHANGED, now)
            self._write(tx, current, updated, RiskUpdated)
            if lapse:
                self._record(tx, RiskAcceptanceLapsed, current, updated, ("status", "acceptance_lapsed_at"))
        return updated

    @operation(
        RISK_ACCEPT,
        Route("POST", _ONE + "/accept", "Accept a risk until an expiry date, at its current residual score"),
        body=RiskAcceptance,
        result=Risk,
        example={"expiresOn": "2099-12-31", "note": "Within appetite until the office move"},
    )
    def accept(self, actor: Actor, risk_id: str, data: RiskAcceptance) -> Risk:
        """Accept the risk as it stands: records the caller, the time, the residual score and
        the expiry; the treatment becomes ``accept``. Accepting again renews the acceptance."""
        now = self.uow.clock.now()
        if data.expires_on <= now.date():
            raise ValidationError.field("expiresOn", data.expires_on.isoformat(), "must be after today")
        with self.uow.write(actor) as tx:
            current = fetch(tx, RISKS, actor.organization_id, risk_id)
            if current.archived:
                raise Conflict(
                    "an archived risk cannot be accepted; restore it first",
                    {"field": "archived", "value": True, "reason": "restore the risk before accepting it"},
                )
            if current.status is RiskStatus.CLOSED:
                raise Conflict(
                    "a closed risk cannot be accepted; reopen it first",
                    {"field": "status", "value": current.status.value, "reason": "reopen the risk before accepting it"},
                )
            if current.residual_score is None:  # an acceptance holds a residual score; none is not the lowest
                raise Conflict(
                    "an unassessed risk cannot be accepted; rate its residual likelihood and impact first",
                    {
                        "field": "residualScore",
                        "value": None,
                        "reason": "rate residualLikelihood and residualImpact before accepting the risk",
                    },
                )
            updated = attrs.evolve(
                current,
                status=RiskStatus.ACCEPTED,
                treatment_strategy=Treatment.ACCEPT,
                accepted_by=actor.principal,
                accepted_by_person_id=actor.person_id,
                accepted_by_person_name=acting_name(tx, actor),
                accepted_at=now,
                accepted_residual_score=current.residual_score,
                acceptance_expires_on=data.expires_on,
                acceptance_note=data.note,
                acceptance_lapsed_at=None,
                acceptance_lapse_reason=None,
                updated_at=now,
            )
            self._write(tx, current, updated, RiskAccepted)
        return updated

    @operation(
        RISK_READ,
        Route("GET", _ALL + "/heat-map", "Likelihood x impact matrices of the register, inherent and residual"),
        filters=RiskFilter,
        result=RiskHeatMap,
        lists=RISKS,
    )
    def heat_map(
        self, actor: Actor, filters: RiskFilter | None = None, search: PageRequest | None = None
    ) -> RiskHeatMap:
        """How many risks, and which, sit in each likelihood x impact cell, before and after
        treatment; the unassessed are counted apart. The list's filters, ``q`` and ``from``/``to``
        choose the risks (default: the live register), exactly as they choose the list's."""
        return self._heat_map(actor, filters, search)

    @operation(
        RISK_READ,
        Route("GET", _ALL + "/heat-map.svg", "The heat map as an SVG picture (the list's filters and search apply)"),
        filters=RiskFilter,
        result=Download,
        media_type=SVG,
        lists=RISKS,
    )
    def heat_map_svg(
        self, actor: Actor, filters: RiskFilter | None = None, search: PageRequest | None = None
    ) -> Download:
        """``heat_map`` drawn: the inherent and residual matrices side by side."""
        picture = svg_of(self._heat_map(actor, filters, search))
        return Download(filename="risk-heat-map.svg", media_type=SVG, chunks=(picture,), inline=True)

    def _heat_map(self, actor: Actor, filters: RiskFilter | None, search: PageRequest | None) -> RiskHeatMap:
        with self.uow.read() as session:
            return heat_map_of(matching_risks(session, actor.organization_id, filters or RiskFilter(), search))

    archive = _TABLE.archive(
        RISK_ARCHIVE,
        Route("POST", _ONE + "/archive", "Archive a risk (kept for audits, dropped from the register)"),
        event=RiskArchived,
    )
    restore = _TABLE.restore(
        RISK_ARCHIVE,
        Route("POST", _ONE + "/restore", "Bring an archived risk back into the register"),
        event=RiskRestored,
    )

    def lapse_expired_acceptances(self, now: dt.datetime | None = None) -> int:
        """Return every accepted risk whose acceptance has reached its expiry date to
        ``needs_review`` (one ``risk.acceptance_lapsed`` event each), in every organization,
        archived risks included; returns how many lapsed.

        An operator chore like the idempotency purge, not a caller's operation: the server's lead
        worker runs it periodically and ``compliance maintenance`` on demand. Running it twice,
        or from several processes, lapses each acceptance once: the check is inside the write.

        :param now: the time to judge expiry at (default: the platform's clock)
        """
        now = now or self.uow.clock.now()
        with self.uow.read() as session:
            tenants = Directory(session).organization_ids()
        lapsed = 0
        for organization_id in tenants:
            for archived in (False, True):
                lapsed += self._lapse_expired(organization_id, archived, now)
        return lapsed

    def _lapse_expired(self, organization_id: str, archived: bool, now: dt.datetime) -> int:
        today = now.date()
        filters = RiskFilter(status=RiskStatus.ACCEPTED, archived=archived)
        due: list[str] = []
        with self.uow.read() as session:
            number = 1
            while True:
                items, total = session[RISKS].list(
                    organization_id, filters, PageRequest(page=number, per_page=MAX_PER_PAGE)
                )
                due += [r.id for r in items if r.acceptance_expires_on is not None and r.acceptance_expires_on <= today]
                if number * MAX_PER_PAGE >= total or not items:
                    break
                number += 1
        if not due:
            return 0
        lapsed = 0
        with self.uow.write(None) as tx:  # the system's chore, no caller
            for risk_id in due:
                current = tx[RISKS].get(organization_id, risk_id)
                if (  # another write or sweep may have got there first
                    current is None
                    or current.status is not RiskStatus.ACCEPTED
                    or current.acceptance_expires_on is None
                    or current.acceptance_expires_on > today
                ):
                    continue
                updated = _lapsed(current, AcceptanceLapse.EXPIRED, now)
                tx[RISKS].update(updated)
                self._record(tx, RiskAcceptanceLapsed, current, updated, ("status", "acceptance_lapsed_at"))
                lapsed += 1
        return lapsed

    def _write(self, tx: Tx, current: Risk, updated: Risk, event: type[Event]) -> None:
        """Store the change and record its event, plus ``risk.score_changed`` when a score moved."""
        previous = _differences(current, updated)
        tx[RISKS].update(updated)
        tx.record(event(organization_id=current.organization_id, subject=updated, previous=previous))
        if current.inherent_score != updated.inherent_score or current.residual_score != updated.residual_score:
            self._record(tx, RiskScoreChanged, current, updated, SCORE_FIELDS)

    @staticmethod
    def _record(tx: Tx, event: type[Event], current: Risk, updated: Risk, fields: tuple[str, ...]) -> None:
        previous = {name: getattr(current, name) for name in fields}
        tx.record(event(organization_id=current.organization_id, subject=updated, previous=previous))
