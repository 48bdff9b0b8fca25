"""/v1/risks over HTTP: scores and levels in every answer, level filters, acceptance."""

from __future__ import annotations

from typing import Any

from compliance_core import FrozenClock, Platform
from http_support import Api, error

ROOT = "/v1/risks"


def create(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, {"title": "Laptop theft", **fields})
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def test_every_answer_shows_the_scores_and_levels(api: Api) -> None:
    risk = create(api, likelihood="likely", impact="severe", residualLikelihood="unlikely", residualImpact="minor")
    assert risk["id"].startswith("rsk_")
    assert (risk["inherentScore"], risk["inherentLevel"], risk["residualScore"], risk["residualLevel"]) == (
        20,
        "very_high",
        4,
        "low",
    )
    assert api.get(f"{ROOT}/{risk['id']}").json == risk
    assert api.get(ROOT).json["data"] == [risk]
    patched = api.patch(f"{ROOT}/{risk['id']}", {"impact": "minor"}).json
    assert (patched["inherentScore"], patched["inherentLevel"]) == (8, "medium")


def test_lists_filter_by_level_treatment_and_status(api: Api) -> None:
    create(api, title="High", likelihood="very_likely", impact="major", treatmentStrategy="mitigate")
    create(api, title="Low", treatmentStrategy="transfer")
    titles = lambda q: {r["title"] for r in api.get(ROOT, query=q).json["data"]}  # noqa: E731
    assert titles("inherentLevel=very_high") == {"High"}
    assert titles("treatmentStrategy=transfer") == {"Low"}
    assert titles("status=open&residualLevel=very_low") == set()  # no residual is rated: no level
    assert titles("rated=false") == {"Low"} and titles("rated=true&status=open") == {"High"}
    error(api.get(ROOT, query="inherentLevel=extreme"), 400, "validation_error")
    error(api.get(ROOT, query="rated=maybe"), 400, "validation_error")


def test_a_risk_without_ratings_is_unassessed_on_the_wire(api: Api) -> None:
    risk = create(api, title="Unrated")
    fields = ("likelihood", "impact", "residualLikelihood", "residualImpact")
    scores = ("inherentScore", "inherentLevel", "residualScore", "residualLevel")
    assert [risk[name] for name in (*fields, *scores)] == [None] * 8 and risk["rated"] is False
    rated = api.patch(f"{ROOT}/{risk['id']}", {"likelihood": 4, "impact": "major"}).json
    assert (rated["likelihood"], rated["inherentScore"], rated["inherentLevel"], rated["rated"]) == (
        "likely",
        16,
        "high",
        True,
    )
    cleared = api.patch(f"{ROOT}/{risk['id']}", {"impact": None}).json
    assert (cleared["impact"], cleared["inherentScore"], cleared["inherentLevel"], cleared["rated"]) == (
        None,
        None,
        None,
        False,
    )
    refused = api.post(f"{ROOT}/{risk['id']}/accept", {"expiresOn": "2030-01-01"})
    assert error(refused, 409, "conflict", "residualScore")["value"] is None


def test_ratings_are_names_or_numbers_1_to_5_and_nothing_else(api: Api) -> None:
    risk = create(api, likelihood=1, impact=5, residualLikelihood="possible", residualImpact=3)
    assert (risk["likelihood"], risk["impact"], risk["residualLikelihood"], risk["residualImpact"]) == (
        "very_unlikely",
        "severe",
        "possible",
        "moderate",
    )
    assert (risk["inherentScore"], risk["residualScore"]) == (5, 9)
    for field, value in (("likelihood", 0), ("impact", 6), ("residualImpact", "3"), ("likelihood", True)):
        assert error(api.post(ROOT, {"title": "x", field: value}), 400, "validation_error", field)["value"] == value
        result = api.patch(f"{ROOT}/{risk['id']}", {field: value})
        assert error(result, 400, "validation_error", field)["value"] == value


def test_accept_records_the_acceptance_and_a_residual_change_returns_the_risk_to_review(api: Api) -> None:
    risk = create(api, residualLikelihood="possible", residualImpact="moderate")
    accepted = api.post(f"{ROOT}/{risk['id']}/accept", {"expiresOn": "2026-12-31", "note": "Board decision"})
    assert accepted.status_code == 200, accepted.text
    body = accepted.json
    assert (body["status"], body["treatmentStrategy"], body["acceptedResidualScore"]) == ("accepted", "accept", 9)
    assert body["acceptanceExpiresOn"] == "2026-12-31" and body["acceptedBy"].startswith("key_")
    stale = api.patch(f"{ROOT}/{risk['id']}", {"residualLikelihood": "likely"}).json
    assert (stale["status"], stale["acceptanceLapseReason"], stale["residualScore"]) == (
        "needs_review",
        "residual_changed",
        12,
    )


def test_bad_acceptances_name_the_field(api: Api, clock: FrozenClock) -> None:
    risk = create(api)
    today = clock.now().date().isoformat()
    result = api.post(f"{ROOT}/{risk['id']}/accept", {"expiresOn": today})
    assert error(result, 400, "validation_error", "expiresOn")["value"] == today
    error(api.post(f"{ROOT}/{risk['id']}/accept", {}), 400, "validation_error", "expiresOn")
    result = api.patch(f"{ROOT}/{risk['id']}", {"status": "accepted"})
    assert error(result, 400, "validation_error", "status")["value"] == "accepted"


def test_an_expired_acceptance_lapses_through_the_platform_sweep(
    api: Api, platform: Platform, clock: FrozenClock
) -> None:
    risk = create(api, residualLikelihood=2, residualImpact=2)
    api.post(f"{ROOT}/{risk['id']}/accept", {"expiresOn": "2026-01-10"})
    clock.advance(days=9)
    assert platform.run_chores().counts["lapsedRiskAcceptances"] == 1
    lapsed = api.get(f"{ROOT}/{risk['id']}").json
    assert (lapsed["status"], lapsed["acceptanceLapseReason"]) == ("needs_review", "expired")


def test_archive_and_restore(api: Api) -> None:
    risk = create(api)
    assert api.post(f"{ROOT}/{risk['id']}/archive").json["archived"] is True
    assert api.get(ROOT).json["count"] == 0 and api.get(ROOT, query="archived=true").json["count"] == 1
    assert api.post(f"{ROOT}/{risk['id']}/restore").json["archived"] is False
