"""What a request carries beyond what its operation takes is refused, never silently ignored: an
Idempotency-Key sent to an operation that keeps none (the client would believe its retry safe),
and a body sent to an operation that takes none (the client meant something by it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core.kernel.permissions import Role
from http_support import Api, error


def _vendor(api: Api) -> str:
    return str(api.post("/v1/vendors", {"name": "Acme"}).json["id"])


def test_an_idempotency_key_on_an_operation_without_one_is_refused_and_nothing_runs(api: Api) -> None:
    vendor = _vendor(api)
    headers = {"Idempotency-Key": "retry-1"}
    details = error(api.post(f"/v1/vendors/{vendor}/archive", headers=headers), 400, "validation_error")
    assert details["field"] == "Idempotency-Key" and details["value"] == "retry-1"
    assert api.get(f"/v1/vendors/{vendor}").json["archived"] is False
    error(api.patch(f"/v1/vendors/{vendor}", {"name": "Other"}, headers=headers), 400, "validation_error")
    assert api.get(f"/v1/vendors/{vendor}").json["name"] == "Acme"
    error(api.get("/v1/vendors", headers=headers), 400, "validation_error", "Idempotency-Key")
    error(api.request("DELETE", "/v1/webhooks/whk_none", headers=headers), 400, "validation_error", "Idempotency-Key")


def test_an_operation_that_keeps_idempotency_keys_still_replays(api: Api) -> None:
    headers = {"Idempotency-Key": "create-1"}
    first = api.post("/v1/vendors", {"name": "Acme"}, headers=headers)
    again = api.post("/v1/vendors", {"name": "Acme"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json["id"] == again.json["id"]


def test_a_role_without_permission_learns_nothing_of_the_header_rule(
    api: Api, as_role: Callable[[Role | str], Api]
) -> None:
    vendor = _vendor(api)
    auditor = as_role(Role.AUDITOR)
    error(auditor.post(f"/v1/vendors/{vendor}/archive", headers={"Idempotency-Key": "k"}), 403, "forbidden")
    error(auditor.post(f"/v1/vendors/{vendor}/archive", raw=b"junk", content_type="text/plain"), 403, "forbidden")


def test_a_body_sent_to_an_operation_that_takes_none_is_refused_and_nothing_runs(api: Api) -> None:
    vendor = _vendor(api)
    for raw, content_type in (
        (b"not json at all", "text/plain"),
        (b'{"x": 1}', "application/json"),
        (b"\xff\xfe", None),
    ):
        details = error(
            api.request("POST", f"/v1/vendors/{vendor}/archive", raw=raw, content_type=content_type),
            400,
            "validation_error",
            "body",
        )
        assert details["value"] == raw.decode("utf-8", "replace")
    assert api.get(f"/v1/vendors/{vendor}").json["archived"] is False
    error(api.request("GET", "/v1/vendors", raw=b"x", content_type="text/plain"), 400, "validation_error", "body")
    long = api.request("POST", f"/v1/vendors/{vendor}/archive", raw=b"a" * 10_000, content_type="text/plain")
    assert len(error(long, 400, "validation_error", "body")["value"]) <= 200


def test_an_empty_body_is_no_body(api: Api) -> None:
    vendor = _vendor(api)
    archived = api.request("POST", f"/v1/vendors/{vendor}/archive", raw=b"", content_type="application/json")
    assert archived.status_code == 200 and archived.json["archived"] is True
    assert api.post(f"/v1/vendors/{vendor}/restore").status_code == 200


@pytest.mark.parametrize("path", ["/v1/vendors/{}/archive", "/v1/vendors/{}"])
def test_any_body_on_a_bodiless_operation_is_a_400_never_a_500(api: Api, path: str) -> None:
    vendor = _vendor(api)
    method = "POST" if path.endswith("archive") else "GET"

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(raw=st.binary(min_size=1, max_size=300), content_type=st.sampled_from(["application/json", "text/plain"]))
    def check(raw: bytes, content_type: str) -> None:
        answer = api.request(method, path.format(vendor), raw=raw, content_type=content_type)
        error(answer, 400, "validation_error", "body")

    check()
    assert api.get(f"/v1/vendors/{vendor}").json["archived"] is False
