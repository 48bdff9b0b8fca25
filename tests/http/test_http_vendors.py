"""/v1/vendors over HTTP: shapes, filters, paging, patches, archive and their errors."""

from __future__ import annotations

from typing import Any

import pytest

from http_support import Api, error

ROOT = "/v1/vendors"


def create(api: Api, **fields: Any) -> dict[str, Any]:
    result = api.post(ROOT, {"name": "Hosting Co", **fields})
    assert result.status_code == 201, result.text
    return result.json  # type: ignore[no-any-return]


def test_create_answers_the_vendor_in_camel_case(api: Api) -> None:
    vendor = create(
        api,
        country="de",
        criticality="critical",
        ictService=True,
        processesPersonalData=True,
        dpaStatus="signed",
        dpaSignedAt="2025-12-01",
        website="https://hosting.example",
        subProcessors=[{"name": "Disk GmbH", "country": "DE", "purposeCategory": "data_storage"}],
    )
    assert vendor["id"].startswith("vnd_")
    assert vendor["country"] == "DE"
    assert vendor["criticality"] == "critical"
    assert vendor["ictService"] is True and vendor["processesPersonalData"] is True
    assert vendor["dpaSignedAt"] == "2025-12-01"
    assert vendor["createdAt"] == "2026-01-01T00:00:00Z"
    assert vendor["subProcessors"] == [{"name": "Disk GmbH", "country": "DE", "purposeCategory": "data_storage"}]
    assert vendor["status"] == "not_assessed" and vendor["archived"] is False
    assert not any("_" in key for key in vendor)


def test_a_vendor_without_ratings_is_unassessed_and_ratings_take_numbers(api: Api) -> None:
    unrated = create(api, name="Unrated")
    ratings = ("inherentProbability", "inherentImpact", "residualProbability", "residualImpact")
    assert [unrated[name] for name in ratings] == [None] * 4 and unrated["rated"] is False
    numbered = create(api, name="Numbered", inherentProbability=5, inherentImpact=1, residualImpact="minor")
    assert [numbered[name] for name in ratings] == ["very_likely", "insignificant", None, "minor"]
    assert numbered["rated"] is True
    names = lambda q: {v["name"] for v in api.get(ROOT, query=q).json["data"]}  # noqa: E731
    assert names("rated=false") == {"Unrated"} and names("rated=true") == {"Numbered"}
    patched = api.patch(f"{ROOT}/{unrated['id']}", {"inherentProbability": 2, "inherentImpact": 2}).json
    assert (patched["inherentProbability"], patched["inherentImpact"], patched["rated"]) == ("unlikely", "minor", True)
    for value in (0, 6, "2", 2.5, False):
        result = api.post(ROOT, {"name": "x", "inherentImpact": value})
        assert error(result, 400, "validation_error", "inherentImpact")["value"] == value


def test_get_returns_the_created_vendor(api: Api) -> None:
    vendor = create(api)
    result = api.get(f"{ROOT}/{vendor['id']}")
    assert result.status_code == 200
    assert result.json == vendor


def test_list_envelope_and_paging(api: Api) -> None:
    ids = [create(api, name=f"Vendor {i}")["id"] for i in range(3)]
    first = api.get(ROOT, query="perPage=2")
    assert first.status_code == 200
    body = first.json
    assert set(body) == {"data", "count", "meta", "authType"}
    assert body["count"] == 3 and body["authType"] == "api-key"
    assert body["meta"] == {"total": 3, "page": 1, "perPage": 2, "totalPages": 2}
    second = api.get(ROOT, query="perPage=2&page=2").json
    assert [v["id"] for v in body["data"] + second["data"]] == ids
    assert second["meta"]["page"] == second["meta"]["totalPages"]


def test_empty_list_has_one_page(api: Api) -> None:
    assert api.get(ROOT).json["meta"] == {"total": 0, "page": 1, "perPage": 50, "totalPages": 1}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("criticality=critical", {"A"}),
        ("processesPersonalData=true", {"A"}),
        ("processesPersonalData=false", {"B", "C"}),
        ("ictService=true", {"B"}),
        ("category=cloud", {"A", "B"}),
        ("country=de", {"A"}),
        ("dpaStatus=pending", {"C"}),
        ("status=assessed", {"B"}),
        ("category=cloud&ictService=true", {"B"}),
        ("archived=true", {"D"}),
    ],
)
def test_filters_combine_with_and(api: Api, query: str, expected: set[str]) -> None:
    create(api, name="A", criticality="critical", processesPersonalData=True, category="cloud", country="DE")
    create(api, name="B", ictService=True, category="cloud", status="assessed")
    create(api, name="C", dpaStatus="pending")
    archived = create(api, name="D")
    assert api.post(f"{ROOT}/{archived['id']}/archive").status_code == 200
    result = api.get(ROOT, query=query)
    assert result.status_code == 200, result.text
    assert {v["name"] for v in result.json["data"]} == expected


def test_queries_answer_alike_each_time_and_bad_ones_fail_each_time(api: Api) -> None:
    create(api, name="A", category="cloud")
    create(api, name="B", category="hr")
    for _ in range(2):
        assert [v["name"] for v in api.get(ROOT, query="category=cloud&perPage=1").json["data"]] == ["A"]
        assert [v["name"] for v in api.get(ROOT, query="perPage=1&page=2").json["data"]] == ["B"]
        assert api.get("/v1/people", query="perPage=1").json["meta"]["perPage"] == 1
        # category is free text (the spec): an unknown one matches nothing; an empty one is refused
        assert api.get(ROOT, query="category=vital&perPage=1").json["count"] == 0
        error(api.get(ROOT, query="criticality=vital&perPage=1"), 400, "validation_error", "criticality")


def test_assignee_filter(api: Api) -> None:
    person = api.post("/v1/people", {"name": "Ann", "email": "ann@example.com"}).json
    create(api, name="Mine", assigneeId=person["id"])
    create(api, name="Nobody's")
    names = [v["name"] for v in api.get(ROOT, query=f"assigneeId={person['id']}").json["data"]]
    assert names == ["Mine"]


def test_patch_changes_only_the_sent_fields_and_null_clears(api: Api, clock: Any) -> None:
    vendor = create(api, website="https://a.example", country="FR")
    clock.advance(minutes=5)
    result = api.patch(f"{ROOT}/{vendor['id']}", {"description": "Object storage", "website": None})
    assert result.status_code == 200, result.text
    patched = result.json
    assert patched["description"] == "Object storage"
    assert patched["website"] is None
    assert patched["country"] == "FR" and patched["name"] == vendor["name"]
    assert patched["updatedAt"] == "2026-01-01T00:05:00Z"


def test_patch_null_on_a_required_field_is_rejected(api: Api) -> None:
    vendor = create(api)
    details = error(api.patch(f"{ROOT}/{vendor['id']}", {"name": None}), 400, "validation_error", "name")
    assert details["value"] is None


def test_archive_and_restore_are_idempotent(api: Api) -> None:
    vendor = create(api)
    first = api.post(f"{ROOT}/{vendor['id']}/archive")
    again = api.post(f"{ROOT}/{vendor['id']}/archive")
    assert first.status_code == again.status_code == 200
    assert first.json == again.json and first.json["archived"] is True
    assert first.json["archivedAt"] == "2026-01-01T00:00:00Z"
    assert api.get(ROOT).json["count"] == 0
    restored = api.post(f"{ROOT}/{vendor['id']}/restore")
    assert restored.status_code == 200 and restored.json["archived"] is False
    assert api.get(ROOT).json["count"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": 5}, "name"),
        ({}, "name"),
        ({"name": "x", "color": "red"}, "color"),
        ({"name": "x", "dpa_status": "signed"}, "dpa_status"),
        ({"name": "x", "ictService": "true"}, "ictService"),
        ({"name": "x", "criticality": "vital"}, "criticality"),
        ({"name": "x", "country": "XX"}, "country"),
        ({"name": "x", "website": "ftp://a"}, "website"),
        ({"name": "x", "dpaSignedAt": "yesterday"}, "dpaSignedAt"),
        ({"name": "x", "subProcessors": {"name": "a"}}, "subProcessors"),
        ({"name": "x", "subProcessors": [{"name": "a", "country": "DE"}]}, "subProcessors[0].purposeCategory"),
        (
            {
                "name": "x",
                "subProcessors": [
                    {"name": "a", "country": "DE", "purposeCategory": "hosting", "purpose_category": "x"}
                ],
            },
            "subProcessors[0].purpose_category",
        ),
        (
            {"name": "x", "subProcessors": [{"name": "a", "country": "ZZ", "purposeCategory": "hosting"}]},
            "subProcessors[0].country",
        ),
        ({"name": "x", "processesPersonalData": True, "country": "US"}, "transferMechanism"),
        ({"name": "x", "assigneeId": "mem_00009999"}, "assigneeId"),
    ],
)
def test_create_rejects_bad_fields_by_name(api: Api, body: dict[str, Any], field: str) -> None:
    error(api.post(ROOT, body), 400, "validation_error", field)
    assert api.get(ROOT).json["count"] == 0


def test_wrong_type_echoes_the_value(api: Api) -> None:
    details = error(api.post(ROOT, {"name": 5}), 400, "validation_error", "name")
    one = {"field": "name", "value": 5, "reason": "must be a string"}
    assert details == {**one, "errors": [one]}


@pytest.mark.parametrize(
    ("raw", "content_type", "field"),
    [
        (b"{not json", "application/json", "body"),
        (b"", "application/json", "name"),
        (b'[{"name": "x"}]', "application/json", "body"),
        (b'"x"', "application/json", "body"),
        (b'{"name": "x"}', "text/plain", "Content-Type"),
        (b"name=x", "application/x-www-form-urlencoded", "Content-Type"),
    ],
)
def test_body_must_be_a_json_object(api: Api, raw: bytes, content_type: str, field: str) -> None:
    error(api.request("POST", ROOT, raw=raw, content_type=content_type), 400, "validation_error", field)


def test_json_with_charset_is_accepted(api: Api) -> None:
    result = api.request("POST", ROOT, raw=b'{"name": "x"}', content_type="application/json; charset=utf-8")
    assert result.status_code == 201


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("perPage=201", "perPage"),
        ("perPage=0", "perPage"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=two", "page"),
        ("perPage=1.5", "perPage"),
        ("ictService=yes", "ictService"),
        ("ictService=True", "ictService"),
        ("criticality=vital", "criticality"),
        ("country=", "country"),
        ("colour=red", "colour"),
        ("per_page=10", "per_page"),
        ("page=1&page=2", "page"),
    ],
)
def test_bad_query_parameters_are_named(api: Api, query: str, field: str) -> None:
    details = error(api.get(ROOT, query=query), 400, "validation_error", field)
    assert "value" in details


def test_page_zero_names_its_value(api: Api) -> None:
    assert error(api.get(ROOT, query="page=0"), 400, "validation_error", "page")["value"] == 0
    assert error(api.get(ROOT, query="perPage=201"), 400, "validation_error", "perPage")["value"] == 201


def test_unknown_query_parameter_on_a_single_resource(api: Api) -> None:
    vendor = create(api)
    error(api.get(f"{ROOT}/{vendor['id']}", query="expand=all"), 400, "validation_error", "expand")


@pytest.mark.parametrize("suffix", ["", "/archive", "/restore"])
def test_missing_vendor_is_404(api: Api, suffix: str) -> None:
    method = "GET" if not suffix else "POST"
    details = error(api.request(method, f"{ROOT}/vnd_missing{suffix}"), 404, "not_found")
    assert details == {"resource": "vendor", "id": "vnd_missing"}


def test_another_organizations_vendor_looks_missing(api: Api, other: Api) -> None:
    theirs = create(other)
    mine = api.get(f"{ROOT}/{theirs['id']}")
    missing = api.get(f"{ROOT}/vnd_missing")
    assert mine.status_code == missing.status_code == 404
    assert mine.json["error"]["details"] == {"resource": "vendor", "id": theirs["id"]}
    assert set(mine.json) == set(missing.json)
    assert mine.json["error"]["message"] == missing.json["error"]["message"].replace("vnd_missing", theirs["id"])
    error(api.patch(f"{ROOT}/{theirs['id']}", {"name": "mine now"}), 404, "not_found")
    error(api.post(f"{ROOT}/{theirs['id']}/archive"), 404, "not_found")
    assert api.get(ROOT).json["count"] == 0
    assert other.get(f"{ROOT}/{theirs['id']}").json["name"] == "Hosting Co"


def test_auditor_reads_but_cannot_write(api: Api, as_role: Any) -> None:
    vendor = create(api)
    auditor = as_role("auditor")
    assert auditor.get(ROOT).status_code == 200
    assert auditor.get(f"{ROOT}/{vendor['id']}").status_code == 200
    details = error(auditor.post(ROOT, {"name": "x"}), 403, "forbidden")
    assert details == {"action": "vendor:create", "role": "auditor"}
    error(auditor.patch(f"{ROOT}/{vendor['id']}", {"name": "x"}), 403, "forbidden")
    error(auditor.post(f"{ROOT}/{vendor['id']}/archive"), 403, "forbidden")
    assert api.get(ROOT).json["count"] == 1
