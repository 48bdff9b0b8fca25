"""Cursor walks over HTTP: ``?cursor=`` starts one, ``meta.nextCursor`` continues it, and the
envelope of a numbered page is exactly what it was before cursors existed."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

import pytest

from compliance_core.kernel.pages import Position
from compliance_http.wire import decode_cursor, encode_cursor
from http_support import Api, error

pytestmark = pytest.mark.every_store


def _vendors(api: Api, count: int) -> list[str]:
    return [api.post("/v1/vendors", {"name": f"Vendor {n:03d}"}).json["id"] for n in range(count)]


def test_a_walk_reads_every_vendor_once_in_order(api: Api) -> None:
    made = _vendors(api, 7)
    seen: list[str] = []
    metas: list[dict[str, Any]] = []
    cursor = ""
    while cursor is not None:
        body = api.get("/v1/vendors", query=urlencode({"cursor": cursor, "perPage": "3"})).json
        seen += [vendor["id"] for vendor in body["data"]]
        metas.append(body["meta"])
        cursor = body["meta"]["nextCursor"]
    assert seen == made
    assert [meta["page"] for meta in metas] == [1, 2, 3]
    assert metas[0]["cursor"] is None and metas[1]["cursor"] == metas[0]["nextCursor"]
    assert all(meta["total"] == 7 and meta["totalPages"] == 3 for meta in metas)


def test_vendors_archived_behind_the_walk_or_added_do_not_shift_it(api: Api) -> None:
    made = _vendors(api, 4)
    first = api.get("/v1/vendors", query=urlencode({"cursor": "", "perPage": "2"})).json
    api.post(f"/v1/vendors/{made[0]}/archive")
    later = _vendors(api, 1)
    rest = api.get("/v1/vendors", query=urlencode({"cursor": first["meta"]["nextCursor"], "perPage": "5"})).json
    assert [v["id"] for v in first["data"]] == made[:2]
    assert [v["id"] for v in rest["data"]] == made[2:] + later
    assert rest["meta"]["nextCursor"] is None


def test_a_numbered_page_has_no_cursor_keys(api: Api) -> None:
    _vendors(api, 2)
    meta = api.get("/v1/vendors", query=urlencode({"perPage": "1"})).json["meta"]
    assert list(meta) == ["total", "page", "perPage", "totalPages"]


def test_bad_cursors_are_validation_errors(api: Api) -> None:
    for bad in ("not-a-cursor", "eyJ4IjoxfQ", "A" * 201):
        error(api.get("/v1/vendors", query=urlencode({"cursor": bad})), 400, "validation_error", "cursor")
    _vendors(api, 2)
    good = api.get("/v1/vendors", query=urlencode({"cursor": "", "perPage": "1"})).json["meta"]["nextCursor"]
    error(api.get("/v1/vendors", query=urlencode({"cursor": good, "page": "2"})), 400, "validation_error", "page")
    error(api.get("/v1/vendors", query=urlencode({"cursor": good, "perPage": "0"})), 400, "validation_error", "perPage")
    assert api.get("/v1/vendors", query=urlencode({"cursor": good})).status_code == 200


def test_forged_and_altered_cursors_are_validation_errors(api: Api) -> None:
    """A cursor is accepted only when it names a row of the list as it was served: one made by
    hand, or a real one with its row's time or id changed, is a 400 naming ``cursor``."""
    _vendors(api, 3)
    first = api.get("/v1/vendors", query=urlencode({"cursor": "", "perPage": "1"})).json
    issued = decode_cursor(first["meta"]["nextCursor"])
    made_up = Position(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "vnd_1", 0)
    later = Position(issued.created_at + dt.timedelta(seconds=1), issued.id, issued.offset)
    other_id = Position(issued.created_at, issued.id[:-1] + ("0" if issued.id[-1] != "0" else "1"), issued.offset)
    for position in (made_up, later, other_id):
        details = error(
            api.get("/v1/vendors", query=urlencode({"cursor": encode_cursor(position)})),
            400,
            "validation_error",
            "cursor",
        )
        assert position.id in details["value"]
    # a cursor of one list is no cursor of another list
    details = error(
        api.get("/v1/findings", query=urlencode({"cursor": first["meta"]["nextCursor"]})), 400, "validation_error"
    )
    assert details["field"] == "cursor"


def test_a_forged_api_key_cursor_is_a_validation_error(api: Api) -> None:
    walk = api.get("/v1/api-keys", query=urlencode({"cursor": "", "perPage": "1"})).json
    assert walk["meta"]["nextCursor"] is not None
    assert api.get("/v1/api-keys", query=urlencode({"cursor": walk["meta"]["nextCursor"]})).status_code == 200
    forged = encode_cursor(Position(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "key_0never0existed", 0))
    error(api.get("/v1/api-keys", query=urlencode({"cursor": forged})), 400, "validation_error", "cursor")
