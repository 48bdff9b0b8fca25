"""The risk register's own rules, in-process: scores and levels, score events, acceptance,
its expiry and staleness, archive and restore."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compliance_core import Conflict, Forbidden, NotFound, Role, ValidationError
from compliance_core.areas.frameworks.control_models import NewControl
from compliance_core.areas.people import NewPerson
from compliance_core.areas.risks import (
    AcceptanceLapse,
    NewRisk,
    RiskAcceptance,
    RiskFilter,
    RiskPatch,
    RiskStatus,
    Treatment,
)
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.scales import Impact, Likelihood, RiskLevel, level, score


def _events(platform, kind: str | None = None):
    with platform.uow.read() as session:
        messages = session[OUTBOX].pending(1000)
    return [m for m in messages if kind is None or m.type == kind]


def _risk(platform, actor, **fields):
    return platform.risks.create(actor, NewRisk(title=fields.pop("title", "Laptop theft"), **fields))


def _rated(platform, actor, **fields):
    """A risk whose residual ratings are given, as an acceptance needs."""
    return _risk(platform, actor, **{"residual_likelihood": "unlikely", "residual_impact": "minor", **fields})


# -- scores and levels ---------------------------------------------------------------------------


def test_scores_and_levels_are_worked_out_from_the_ratings(platform, owner) -> None:
    risk = _risk(
        platform,
        owner,
        likelihood="likely",
        impact="major",
        residual_likelihood="unlikely",
        residual_impact="moderate",
    )
    assert (risk.inherent_score, risk.inherent_level) == (16, RiskLevel.HIGH)
    assert (risk.residual_score, risk.residual_level) == (6, RiskLevel.MEDIUM)
    assert risk.rated
    defaults = _risk(platform, owner, title="Defaults")
    assert (defaults.status, defaults.treatment_strategy, defaults.category) == ("open", "accept", "other")


def test_a_risk_created_without_ratings_is_unassessed_not_the_lowest_risk(platform, owner) -> None:
    unrated = _risk(platform, owner, title="Unrated")
    assert (unrated.likelihood, unrated.impact, unrated.residual_likelihood, unrated.residual_impact) == (None,) * 4
    assert (unrated.inherent_score, unrated.inherent_level, unrated.residual_score, unrated.residual_level) == (
        None,
    ) * 4
    assert not unrated.rated
    half = _risk(platform, owner, title="Half", likelihood="likely")  # a score needs both ratings
    assert (half.inherent_score, half.inherent_level, half.rated) == (None, None, False)
    rated = platform.risks.update(owner, half.id, RiskPatch(impact="minor"))
    assert (rated.inherent_score, rated.inherent_level, rated.rated) == (8, RiskLevel.MEDIUM, True)
    unrated_again = platform.risks.update(owner, half.id, RiskPatch(likelihood=None))
    assert (unrated_again.inherent_score, unrated_again.rated) == (None, False)
    [first, second] = _events(platform, "risk.score_changed")
    assert first.payload["previous"] == {"inherentScore": None, "inherentLevel": None, "rated": False}
    assert second.payload["previous"] == {"inherentScore": 8, "inherentLevel": "medium", "rated": True}


@pytest.mark.parametrize(
    ("number", "likelihood", "impact"),
    [(1, "very_unlikely", "insignificant"), (3, "possible", "moderate"), (5, "very_likely", "severe")],
)
def test_ratings_are_taken_as_numbers_1_to_5(platform, owner, number, likelihood, impact) -> None:
    risk = _risk(platform, owner, likelihood=number, impact=number, residual_likelihood=number, residual_impact=number)
    assert (risk.likelihood, risk.impact, risk.residual_likelihood, risk.residual_impact) == (
        likelihood,
        impact,
        likelihood,
        impact,
    )
    assert risk.inherent_score == risk.residual_score == number * number
    updated = platform.risks.update(owner, risk.id, RiskPatch(impact=6 - number))
    assert updated.impact == list(Impact)[5 - number] and updated.inherent_score == number * (6 - number)


def test_an_unassessed_risk_cannot_be_accepted(platform, owner) -> None:
    inherent_only = _risk(platform, owner, likelihood="likely", impact="major")
    with pytest.raises(Conflict) as caught:
        platform.risks.accept(owner, inherent_only.id, RiskAcceptance(expires_on="2030-01-01"))
    assert caught.value.details["field"] == "residualScore" and caught.value.details["value"] is None
    assert platform.risks.get(owner, inherent_only.id).status is RiskStatus.OPEN


def test_unrating_the_residual_lapses_an_acceptance(platform, owner) -> None:
    risk = _rated(platform, owner)
    platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on="2030-01-01"))
    unrated = platform.risks.update(owner, risk.id, RiskPatch(residual_impact=None))
    assert unrated.status is RiskStatus.NEEDS_REVIEW and unrated.residual_score is None
    assert unrated.acceptance_lapse_reason is AcceptanceLapse.RESIDUAL_CHANGED


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (1, "very_low"),
        (2, "low"),
        (4, "low"),
        (5, "medium"),
        (9, "medium"),
        (10, "high"),
        (16, "high"),
        (17, "very_high"),
        (25, "very_high"),
    ],
)
def test_the_bands_are_the_reference_heat_map(value: int, band: str) -> None:
    assert level(value) == band


def test_every_score_of_the_scales_is_a_product_from_1_to_25() -> None:
    scores = {score(likelihood, impact) for likelihood in Likelihood for impact in Impact}
    assert scores == {a * b for a in range(1, 6) for b in range(1, 6)}
    assert score(Likelihood.VERY_LIKELY, Impact.SEVERE) == 25
    with pytest.raises(ValueError):
        level(26)


_RANKS = list(RiskLevel)


@given(
    likelihood=st.sampled_from(Likelihood),
    impact=st.sampled_from(Impact),
    higher_likelihood=st.sampled_from(Likelihood),
    higher_impact=st.sampled_from(Impact),
)
def test_the_level_is_monotone_in_likelihood_and_impact(likelihood, impact, higher_likelihood, higher_impact) -> None:
    lower = level(score(likelihood, impact))
    if higher_likelihood.value_number >= likelihood.value_number and higher_impact.value_number >= impact.value_number:
        higher = level(score(higher_likelihood, higher_impact))
        assert _RANKS.index(higher) >= _RANKS.index(lower)


def test_a_rating_change_updates_the_scores_and_announces_them(platform, owner) -> None:
    risk = _risk(platform, owner, likelihood="possible", impact="major")
    updated = platform.risks.update(owner, risk.id, RiskPatch(likelihood="very_likely"))
    assert (updated.inherent_score, updated.inherent_level) == (20, RiskLevel.VERY_HIGH)
    [changed] = _events(platform, "risk.score_changed")
    assert changed.payload["data"]["inherentScore"] == 20
    assert changed.payload["previous"] == {"inherentScore": 12, "inherentLevel": "high"}
    [update] = _events(platform, "risk.updated")
    assert update.payload["previous"]["likelihood"] == "possible"


def test_a_change_that_keeps_the_scores_announces_no_score_change(platform, owner) -> None:
    risk = _risk(platform, owner, likelihood="likely", impact="minor")  # 4 x 2
    platform.risks.update(owner, risk.id, RiskPatch(likelihood="unlikely", impact="major"))  # 2 x 4
    platform.risks.update(owner, risk.id, RiskPatch(title="Stolen laptop"))
    assert _events(platform, "risk.score_changed") == []
    assert len(_events(platform, "risk.updated")) == 2
    assert platform.risks.update(owner, risk.id, RiskPatch(title="Stolen laptop")).title == "Stolen laptop"
    assert len(_events(platform, "risk.updated")) == 2  # nothing changed, nothing recorded


# -- fields, links, owner, filters ----------------------------------------------------------------


def test_links_to_controls_and_tasks_are_kept_once_each(platform, owner) -> None:
    first, second = (platform.controls.create(owner, NewControl(name=name)).id for name in ("A", "B"))
    risk = _risk(platform, owner, control_ids=[first, second, first], task_ids=["tsk_9"])
    assert (risk.control_ids, risk.task_ids) == ((first, second), ("tsk_9",))
    cleared = platform.risks.update(owner, risk.id, RiskPatch(control_ids=None))
    assert cleared.control_ids == ()
    with pytest.raises(ValidationError) as caught:
        NewRisk(title="x", task_ids=["tsk_1", "not an id"])
    assert caught.value.details["field"] == "taskIds[1]" and caught.value.details["value"] == "not an id"


def test_the_owner_must_be_a_person_of_the_organization(platform, owner, other_org) -> None:
    person = platform.people.create(owner, NewPerson(name="Ada", email="ada@example.com"))
    stranger = platform.people.create(other_org, NewPerson(name="Bob", email="bob@example.com"))
    risk = _risk(platform, owner, owner_id=person.id)
    assert risk.owner_id == person.id
    with pytest.raises(ValidationError) as caught:
        platform.risks.update(owner, risk.id, RiskPatch(owner_id=stranger.id))
    assert caught.value.details["field"] == "ownerId" and caught.value.details["value"] == stranger.id
    with pytest.raises(ValidationError):
        _risk(platform, owner, owner_id="mem_nobody")


def test_bad_values_name_the_field_and_the_value() -> None:
    for fields, name, value in (
        ({"likelihood": "sometimes"}, "likelihood", "sometimes"),
        ({"residual_impact": 6}, "residualImpact", 6),
        ({"impact": 0}, "impact", 0),
        ({"likelihood": True}, "likelihood", True),
        ({"likelihood": 2.0}, "likelihood", 2.0),
        ({"residual_likelihood": "3"}, "residualLikelihood", "3"),
        ({"treatment_strategy": "ignore"}, "treatmentStrategy", "ignore"),
        ({"category": "weather"}, "category", "weather"),
    ):
        with pytest.raises(ValidationError) as caught:
            NewRisk(title="x", **fields)
        assert (caught.value.details["field"], caught.value.details["value"]) == (name, value)


def test_filters_by_level_status_treatment_and_owner(platform, owner) -> None:
    person = platform.people.create(owner, NewPerson(name="Ada", email="ada@example.com"))
    high = _risk(platform, owner, title="High", likelihood="likely", impact="major", owner_id=person.id)
    _risk(platform, owner, title="Low", treatment_strategy="transfer", category="vendor_management")
    titles = lambda **f: {r.title for r in platform.risks.list(owner, RiskFilter(**f)).items}  # noqa: E731
    assert titles(inherent_level="high") == {"High"}
    assert titles(residual_level="very_low") == set()  # neither residual is rated: unassessed is no level
    assert titles(rated=False) == {"Low"} and titles(rated=True) == {"High"}
    assert titles(treatment_strategy="transfer", category="vendor_management") == {"Low"}
    assert titles(owner_id=person.id) == {"High"}
    platform.risks.archive(owner, high.id)
    assert titles() == {"Low"} and titles(archived=True) == {"High"}


def test_archive_and_restore_are_events_and_idempotent(platform, owner) -> None:
    risk = _risk(platform, owner)
    archived = platform.risks.archive(owner, risk.id)
    assert archived.archived and archived.archived_at == platform.clock.now()
    assert platform.risks.archive(owner, risk.id) == archived
    restored = platform.risks.restore(owner, risk.id)
    assert not restored.archived and restored.archived_at is None
    assert [m.type for m in _events(platform)] == ["risk.created", "risk.archived", "risk.restored"]


def test_roles_and_organizations(platform, owner, actor_as, other_org) -> None:
    risk = _risk(platform, owner)
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        assert platform.risks.get(actor_as(role), risk.id).id == risk.id
        with pytest.raises(Forbidden):
            platform.risks.update(actor_as(role), risk.id, RiskPatch(title="x"))
        with pytest.raises(Forbidden):
            platform.risks.accept(actor_as(role), risk.id, RiskAcceptance(expires_on="2030-01-01"))
    platform.risks.update(actor_as(Role.ADMIN), risk.id, RiskPatch(title="By admin"))
    with pytest.raises(NotFound):
        platform.risks.get(other_org, risk.id)


# -- acceptance ------------------------------------------------------------------------------------


def test_accepting_records_who_when_the_residual_score_and_the_expiry(platform, owner, clock) -> None:
    risk = _rated(platform, owner, treatment_strategy="mitigate", residual_likelihood="possible")
    accepted = platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on="2026-06-30", note="Within appetite"))
    assert accepted.status is RiskStatus.ACCEPTED and accepted.treatment_strategy is Treatment.ACCEPT
    assert (accepted.accepted_by, accepted.accepted_at) == (owner.principal, clock.now())
    assert (accepted.accepted_residual_score, accepted.acceptance_expires_on) == (6, dt.date(2026, 6, 30))
    assert accepted.acceptance_note == "Within appetite"
    [event] = _events(platform, "risk.accepted")
    assert event.payload["previous"]["status"] == "open"


def test_the_expiry_must_be_after_today(platform, owner, clock) -> None:
    risk = _risk(platform, owner)
    for day in (clock.now().date(), clock.now().date() - dt.timedelta(days=1)):
        with pytest.raises(ValidationError) as caught:
            platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on=day))
        assert caught.value.details["field"] == "expiresOn"
    with pytest.raises(ValidationError):
        RiskAcceptance(expires_on="2026-02-30")
    with pytest.raises(ValidationError) as caught:
        RiskAcceptance(expires_on=None)
    assert caught.value.details["field"] == "expiresOn"


def test_accepted_is_reached_only_through_accept(platform, owner) -> None:
    risk = _risk(platform, owner)
    with pytest.raises(ValidationError) as caught:
        platform.risks.update(owner, risk.id, RiskPatch(status="accepted"))
    assert caught.value.details == {"field": "status", "value": "accepted", "reason": caught.value.details["reason"]}
    with pytest.raises(ValidationError):
        _risk(platform, owner, status="accepted")


def test_closed_and_archived_risks_cannot_be_accepted(platform, owner) -> None:
    closed = _risk(platform, owner, status="closed")
    with pytest.raises(Conflict):
        platform.risks.accept(owner, closed.id, RiskAcceptance(expires_on="2030-01-01"))
    archived = platform.risks.archive(owner, _rated(platform, owner).id)
    with pytest.raises(Conflict):
        platform.risks.accept(owner, archived.id, RiskAcceptance(expires_on="2030-01-01"))


def test_a_residual_change_after_acceptance_returns_the_risk_to_review_in_the_same_write(platform, owner) -> None:
    risk = _risk(platform, owner, impact="minor", residual_likelihood="unlikely", residual_impact="minor")  # 4
    platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on="2030-01-01"))
    same = platform.risks.update(owner, risk.id, RiskPatch(likelihood="likely", description="inherent only"))
    assert same.status is RiskStatus.ACCEPTED  # the inherent score is not what was accepted
    stale = platform.risks.update(owner, risk.id, RiskPatch(residual_impact="major"))
    assert stale.status is RiskStatus.NEEDS_REVIEW and stale.residual_score == 8
    assert stale.acceptance_lapse_reason is AcceptanceLapse.RESIDUAL_CHANGED
    assert stale.accepted_residual_score == 4  # what was accepted stays on record
    [lapsed] = _events(platform, "risk.acceptance_lapsed")
    assert lapsed.payload["data"]["acceptanceLapseReason"] == "residual_changed"
    assert lapsed.payload["previous"]["status"] == "accepted"
    assert len(_events(platform, "risk.score_changed")) == 2


def test_a_residual_change_that_keeps_the_score_keeps_the_acceptance(platform, owner) -> None:
    risk = _risk(platform, owner, residual_likelihood="likely", residual_impact="minor")  # 4 x 2
    platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on="2030-01-01"))
    kept = platform.risks.update(owner, risk.id, RiskPatch(residual_likelihood="unlikely", residual_impact="major"))
    assert kept.status is RiskStatus.ACCEPTED and _events(platform, "risk.acceptance_lapsed") == []


def test_the_sweep_lapses_expired_acceptances_once(platform, owner, other_org, clock) -> None:
    due = platform.risks.accept(owner, _rated(platform, owner).id, RiskAcceptance(expires_on="2026-01-05"))
    later = platform.risks.accept(owner, _rated(platform, owner).id, RiskAcceptance(expires_on="2026-02-01"))
    elsewhere = platform.risks.accept(
        other_org, _rated(platform, other_org).id, RiskAcceptance(expires_on="2026-01-03")
    )
    archived = platform.risks.accept(owner, _rated(platform, owner).id, RiskAcceptance(expires_on="2026-01-02"))
    platform.risks.archive(owner, archived.id)
    assert platform.risks.lapse_expired_acceptances() == 0
    clock.advance(days=4)  # 2026-01-05: the acceptances ending on or before today lapse
    assert platform.risks.lapse_expired_acceptances() == 3
    assert platform.risks.lapse_expired_acceptances() == 0
    assert platform.risks.get(owner, due.id).status is RiskStatus.NEEDS_REVIEW
    assert platform.risks.get(owner, due.id).acceptance_lapse_reason is AcceptanceLapse.EXPIRED
    assert platform.risks.get(owner, due.id).acceptance_lapsed_at == clock.now()
    assert platform.risks.get(other_org, elsewhere.id).status is RiskStatus.NEEDS_REVIEW
    assert platform.risks.get(owner, archived.id).status is RiskStatus.NEEDS_REVIEW
    assert platform.risks.get(owner, later.id).status is RiskStatus.ACCEPTED
    assert {m.subject_id for m in _events(platform, "risk.acceptance_lapsed")} == {due.id, elsewhere.id, archived.id}


def test_accepting_again_renews_a_lapsed_acceptance(platform, owner, clock) -> None:
    risk = platform.risks.accept(owner, _rated(platform, owner).id, RiskAcceptance(expires_on="2026-01-02"))
    clock.advance(days=1)
    platform.risks.lapse_expired_acceptances()
    renewed = platform.risks.accept(owner, risk.id, RiskAcceptance(expires_on="2026-12-31"))
    assert renewed.status is RiskStatus.ACCEPTED
    assert (renewed.acceptance_lapse_reason, renewed.acceptance_lapsed_at) == (None, None)
    assert renewed.accepted_at == clock.now()


def test_the_platform_sweeps_with_the_idempotency_purge(platform, owner, clock) -> None:
    platform.risks.accept(owner, _rated(platform, owner).id, RiskAcceptance(expires_on="2026-01-02"))
    clock.advance(days=2)
    assert platform.run_chores().counts["lapsedRiskAcceptances"] == 1
