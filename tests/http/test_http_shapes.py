"""Every shape the generic HTTP machinery offers, proven with a test-only area (``shapes_area``):
PUT, DELETE (204), transitions with and without a body, two-id nested paths, file responses
(CSV, PDF, XLSX, ZIP; streamed), 202 Accepted with a status resource and HEAD; in-process, over
HTTP, through ``HTTPTransport`` (parity with ``LocalTransport``) and in the OpenAPI document.

The area is registered here only: the module's ``platform`` and ``app`` fixtures replace the
suite's, so the suite's ``boot``, ``api``, ``as_role`` and ``other`` fixtures act on this app.
"""

from __future__ import annotations

import csv
import gc
import inspect
import io
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import falcon
import falcon.testing
import httpx
import pytest
import shapes_area
from openapi_spec_validator import validate
from shapes_area import (
    CSV,
    PDF,
    XLSX,
    ZIP,
    NewNotebook,
    NewNotePage,
    NotebookFilter,
    NotebookJob,
    NotebookPatch,
    PublishNotebook,
)

from compliance_core import (
    Actor,
    Client,
    ComplianceError,
    FrozenClock,
    LocalTransport,
    PageRequest,
    Platform,
    Role,
    SequentialIds,
)
from compliance_core.areas import AREAS
from compliance_core.kernel.registry import Accepted, Area, Download, Operation
from compliance_core.platform import Bootstrap
from compliance_http.app import create_app
from compliance_http.client import HTTPTransport
from compliance_http.openapi import openapi_document
from compliance_http.routes import Endpoint, endpoints
from compliance_store.memory import MemoryStore
from http_support import Api, check_answer, error

AREA = shapes_area.AREA
TEST_AREAS = (*AREAS, AREA)
ROOT = "/v1/notebooks"


def make_platform(clock: FrozenClock | None = None) -> Platform:
    return Platform(MemoryStore(areas=TEST_AREAS), areas=TEST_AREAS, clock=clock or FrozenClock(), ids=SequentialIds())


@pytest.fixture
def platform(clock: FrozenClock) -> Iterator[Platform]:
    with make_platform(clock) as platform:
        yield platform


@pytest.fixture
def app(platform: Platform) -> falcon.App:
    return create_app(platform)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return openapi_document(
        endpoints(TEST_AREAS),
        event_types=(event.type for area in TEST_AREAS for event in area.events),
    )


def put(api: Api, path: str, body: Any, **options: Any) -> falcon.testing.Result:
    return api.request("PUT", path, body=body, **options)


def delete(api: Api, path: str) -> falcon.testing.Result:
    return api.request("DELETE", path)


def notebook(api: Api, title: str = "Audit notes", summary: str = "What we saw.") -> dict[str, Any]:
    created = api.post(ROOT, {"title": title, "summary": summary})
    assert created.status_code == 201, created.text
    return created.json  # type: ignore[no-any-return]


def page(api: Api, notebook_id: str, title: str, body: str = "") -> dict[str, Any]:
    created = api.post(f"{ROOT}/{notebook_id}/pages", {"title": title, "body": body})
    assert created.status_code == 201, created.text
    return created.json  # type: ignore[no-any-return]


def assert_headers_only(result: falcon.testing.Result) -> None:
    assert result.content == b""


# -- the declarations ----------------------------------------------------------------------------


def test_the_area_is_declared_like_any_other(platform: Platform) -> None:
    bound = endpoints(platform.areas)
    routed = {e.operation.name for e in bound}
    assert {op.name for op in AREA.operations} <= routed
    statuses = {e.operation.name: e.status for e in bound if e.operation.area == "notebooks"}
    assert statuses["notebooks.delete"] == statuses["notebooks.delete_page"] == 204
    assert statuses["notebooks.export"] == 202
    assert statuses["notebooks.export_csv"] == statuses["notebooks.replace"] == 200
    assert AREA.operations[4].body_argument == "data"  # replace takes the New model as data


def test_a_media_type_belongs_to_a_download_only() -> None:
    with pytest.raises(ValueError, match="media type"):
        Area(
            name="x",
            service=lambda context: None,
            operations=(Operation(name="x.get", action=None, result=dict, media_type=CSV),),
        )


# -- PUT and DELETE ------------------------------------------------------------------------------


def test_put_replaces_the_record_and_delete_answers_204_then_404(
    api: Api, platform: Platform, clock: FrozenClock, document: dict[str, Any]
) -> None:
    created = notebook(api)
    one = f"{ROOT}/{created['id']}"
    clock.advance(minutes=5)
    replaced = put(api, one, {"title": "Audit notes, v2"})
    assert replaced.status_code == 200, replaced.text
    check_answer(document, "/v1/notebooks/{notebookId}", "PUT", 200, replaced.json)
    # a replacement, not a patch: what the body leaves out goes back to its default
    assert replaced.json["title"] == "Audit notes, v2" and replaced.json["summary"] == ""
    assert (replaced.json["id"], replaced.json["createdAt"]) == (created["id"], created["createdAt"])
    assert replaced.json["updatedAt"] != created["updatedAt"]
    assert api.get(one).json == replaced.json
    # PATCH, by contrast, keeps what it is not sent
    assert api.patch(one, {"summary": "Again."}).json["title"] == "Audit notes, v2"

    error(put(api, one, {"summary": "no title"}), 400, "validation_error", "title")
    error(put(api, one, {"title": "T", "published": True}), 400, "validation_error", "published")
    error(put(api, one, {"title": "   "}), 400, "validation_error", "title")
    error(put(api, f"{ROOT}/nbk_missing", {"title": "T"}), 404, "not_found")

    deleted = delete(api, one)
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert "content-type" not in {name.lower() for name in deleted.headers}
    assert deleted.headers["X-Request-Id"]
    error(api.get(one), 404, "not_found")
    error(delete(api, one), 404, "not_found")
    error(put(api, one, {"title": "T"}), 404, "not_found")
    head = api.request("HEAD", one)
    assert head.status_code == 404 and head.content == b""


def test_put_and_delete_need_the_write_permission_before_the_body_is_read(
    api: Api, as_role: Callable[[str], Api]
) -> None:
    one = f"{ROOT}/{notebook(api)['id']}"
    auditor = as_role("auditor")
    assert auditor.get(one).status_code == 200
    error(put(auditor, one, {"nope": 1}), 403, "forbidden")
    error(put(auditor, one, None, headers={"Content-Type": "text/plain"}), 403, "forbidden")
    error(delete(auditor, one), 403, "forbidden")
    assert api.get(one).status_code == 200


def test_another_organization_sees_nothing(api: Api, other: Api) -> None:
    created = notebook(api)
    one = f"{ROOT}/{created['id']}"
    page_id = page(api, created["id"], "P")["id"]
    for method, path, body in [
        ("GET", one, None),
        ("PUT", one, {"title": "Mine"}),
        ("DELETE", one, None),
        ("POST", one + "/unpublish", None),
        ("POST", one + "/publish", {"note": "n"}),
        ("GET", f"{one}/pages/{page_id}", None),
        ("DELETE", f"{one}/pages/{page_id}", None),
        ("GET", one + "/exports/csv", None),
        ("POST", one + "/exports", None),
    ]:
        error(other.request(method, path, body=body), 404, "not_found")
    assert api.get(one).json == created


# -- transitions ---------------------------------------------------------------------------------


def test_a_transition_with_a_body(api: Api, document: dict[str, Any]) -> None:
    one = f"{ROOT}/{notebook(api)['id']}"
    published = api.post(one + "/publish", {"note": "  Reviewed by the CISO.  "})
    assert published.status_code == 200, published.text
    check_answer(document, "/v1/notebooks/{notebookId}/publish", "POST", 200, published.json)
    assert (published.json["published"], published.json["publishNote"]) == (True, "Reviewed by the CISO.")
    assert api.get(ROOT, query="published=true").json["count"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "note"),
        ({"note": ""}, "note"),
        ({"note": 5}, "note"),
        ({"note": "x" * 501}, "note"),
        ({"note": "ok", "extra": 1}, "extra"),
        (["note"], "body"),
    ],
)
def test_a_bad_transition_body_names_the_field(api: Api, body: Any, field: str) -> None:
    created = notebook(api)
    error(api.post(f"{ROOT}/{created['id']}/publish", body), 400, "validation_error", field)
    assert api.get(f"{ROOT}/{created['id']}").json == created


def test_a_transition_body_must_be_json(api: Api) -> None:
    one = f"{ROOT}/{notebook(api)['id']}/publish"
    error(api.request("POST", one, raw=b"{not json"), 400, "validation_error", "body")
    error(
        api.request("POST", one, raw=b"note=x", content_type="application/x-www-form-urlencoded"),
        400,
        "validation_error",
        "Content-Type",
    )


@pytest.mark.parametrize("role", ["admin", "auditor", "contractor"])
def test_a_role_without_the_action_is_refused_before_the_body_is_read(
    api: Api, as_role: Callable[[str], Api], role: str
) -> None:
    created = notebook(api)
    one = f"{ROOT}/{created['id']}"
    caller = as_role(role)
    for body in ({"note": "fine"}, {"bad": 1}, {}):
        details = error(caller.post(one + "/publish", body), 403, "forbidden")
        assert details["action"] == "notebook:publish"
    error(caller.request("POST", one + "/publish", raw=b"{not json"), 403, "forbidden")
    error(caller.post(one + "/unpublish"), 403, "forbidden")
    assert api.get(one).json == created


def test_a_transition_without_a_body(api: Api, document: dict[str, Any]) -> None:
    one = f"{ROOT}/{notebook(api)['id']}"
    api.post(one + "/publish", {"note": "n"})
    withdrawn = api.request("POST", one + "/unpublish")  # no body, no Content-Type
    assert withdrawn.status_code == 200, withdrawn.text
    check_answer(document, "/v1/notebooks/{notebookId}/unpublish", "POST", 200, withdrawn.json)
    assert (withdrawn.json["published"], withdrawn.json["publishNote"]) == (False, None)
    again = api.request("POST", one + "/unpublish")
    assert again.json == withdrawn.json
    error(api.request("POST", f"{ROOT}/nbk_missing/unpublish"), 404, "not_found")


# -- two ids -------------------------------------------------------------------------------------


def test_a_nested_path_with_two_ids_reaches_only_the_parents_children(api: Api, document: dict[str, Any]) -> None:
    mine, theirs = notebook(api, "Mine")["id"], notebook(api, "Theirs")["id"]
    first = page(api, mine, "First", "one")
    second = page(api, mine, "Second")
    foreign = page(api, theirs, "Foreign")
    assert first["notebookId"] == mine

    one = f"{ROOT}/{mine}/pages/{first['id']}"
    got = api.get(one)
    assert got.status_code == 200 and got.json == first
    check_answer(document, "/v1/notebooks/{notebookId}/pages/{pageId}", "GET", 200, got.json)
    head = api.request("HEAD", one)
    assert head.status_code == 200 and head.content == b"" and head.headers["content-type"] == "application/json"

    listed = api.get(f"{ROOT}/{mine}/pages", query="perPage=1&page=2")
    assert listed.status_code == 200, listed.text
    assert [p["id"] for p in listed.json["data"]] == [second["id"]]
    assert listed.json["meta"] == {"total": 2, "page": 2, "perPage": 1, "totalPages": 2}
    check_answer(document, "/v1/notebooks/{notebookId}/pages", "GET", 200, listed.json)
    error(api.get(f"{ROOT}/{mine}/pages", query="notebookId=x"), 400, "validation_error", "notebookId")

    # a page of another notebook is not found through this one, whatever the method
    wrong = f"{ROOT}/{mine}/pages/{foreign['id']}"
    error(api.get(wrong), 404, "not_found")
    error(put(api, wrong, {"title": "Hijack"}), 404, "not_found")
    error(delete(api, wrong), 404, "not_found")
    assert api.get(f"{ROOT}/{theirs}/pages/{foreign['id']}").json == foreign
    # nor through a notebook that does not exist
    error(api.get(f"{ROOT}/nbk_missing/pages/{first['id']}"), 404, "not_found")
    error(api.post(f"{ROOT}/nbk_missing/pages", {"title": "T"}), 404, "not_found")

    replaced = put(api, one, {"title": "First, again"})
    assert replaced.status_code == 200, replaced.text
    assert (replaced.json["title"], replaced.json["body"], replaced.json["notebookId"]) == ("First, again", "", mine)
    error(put(api, one, {"title": "T", "notebookId": theirs}), 400, "validation_error", "notebookId")

    removed = delete(api, one)
    assert removed.status_code == 204 and removed.content == b""
    error(api.get(one), 404, "not_found")
    assert api.get(f"{ROOT}/{mine}/pages").json["count"] == 1


def test_ids_with_reserved_characters_are_not_found_rather_than_misrouted(api: Api) -> None:
    mine = notebook(api)["id"]
    error(api.get(f"{ROOT}/{mine}/pages/nbp%2F1"), 404, "not_found")
    error(api.get(f"{ROOT}/{mine}%2Fpages/x"), 404, "not_found")


# -- files ---------------------------------------------------------------------------------------


def _csv_rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode(), newline="")))


def _check_csv(content: bytes, titles: list[str]) -> None:
    rows = _csv_rows(content)
    assert rows[0] == ["id", "title", "body"]
    assert [row[1] for row in rows[1:]] == titles
    assert rows[1][2] == 'a, "quoted"\nbody'


def _check_pdf(content: bytes, titles: list[str]) -> None:
    assert content.startswith(b"%PDF-1.4\n")
    assert content.rstrip().endswith(b"%%EOF")
    startxref = int(content.rsplit(b"startxref", 1)[1].split()[0])
    assert content[startxref:].startswith(b"xref\n")
    first_object = int(content[startxref:].split(b"\n")[3].split()[0])
    assert content[first_object:].startswith(b"1 0 obj")
    for title in titles:
        assert f"({title}) '".encode("latin-1") in content


def _check_xlsx(content: bytes, titles: list[str]) -> None:
    assert content.startswith(b"PK\x03\x04")
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.testzip() is None
        assert {"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml", "xl/worksheets/sheet1.xml"} <= set(
            archive.namelist()
        )
        assert b"spreadsheetml.sheet.main+xml" in archive.read("[Content_Types].xml")
        sheet = archive.read("xl/worksheets/sheet1.xml").decode()
    for title in titles:
        assert f"<t>{title}</t>" in sheet


def _check_zip(content: bytes, titles: list[str]) -> None:
    assert content.startswith(b"PK\x03\x04")
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.testzip() is None
        names = archive.namelist()
        assert names[0] == "README.md" and len(names) == 1 + len(titles)
        assert [archive.read(name).decode().splitlines()[0] for name in names[1:]] == [f"# {t}" for t in titles]


FILES = [
    ("csv", CSV, _check_csv),
    ("pdf", PDF, _check_pdf),
    ("xlsx", XLSX, _check_xlsx),
    ("zip", ZIP, _check_zip),
]


@pytest.fixture
def filled(api: Api) -> tuple[str, list[str]]:
    """A notebook with a non-ASCII title and two pages; its id and the page titles."""
    notebook_id = notebook(api, "Prüfung (2025)")["id"]
    titles = ["Interviews", "Evidence"]
    page(api, notebook_id, titles[0], 'a, "quoted"\nbody')
    page(api, notebook_id, titles[1])
    return notebook_id, titles


def _expected(platform: Platform, boot: Bootstrap, notebook_id: str, kind: str) -> Download:
    """The same export in-process: what HTTP must send byte for byte."""
    actor = platform.actor(boot.organization.id, Role.AUDITOR)
    return getattr(platform.services["notebooks"], f"export_{kind}")(actor, notebook_id)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("kind", "media_type", "check"), FILES, ids=[f[0] for f in FILES])
def test_a_file_response(
    api: Api,
    platform: Platform,
    boot: Bootstrap,
    filled: tuple[str, list[str]],
    kind: str,
    media_type: str,
    check: Callable[[bytes, list[str]], None],
) -> None:
    notebook_id, titles = filled
    path = f"{ROOT}/{notebook_id}/exports/{kind}"
    expected = _expected(platform, boot, notebook_id, kind)
    got = api.get(path)
    assert got.status_code == 200
    assert got.headers["content-type"] == media_type
    disposition = got.headers["content-disposition"]
    if kind == "pdf":  # RFC 6266: an ASCII fallback first, then the UTF-8 name
        fallback, encoded = disposition.split("; ")[1:]
        assert disposition.startswith("attachment; filename=") and fallback.isascii() and fallback.endswith(".pdf")
        assert encoded == "filename*=UTF-8''Pr%C3%BCfung%20%282025%29.pdf"
    else:
        assert disposition == f'attachment; filename="{notebook_id}.{kind}"'
    assert "content-length" not in got.headers  # streamed: the size is not known up front
    assert got.headers["X-Request-Id"] and got.headers["X-RateLimit-Limit"]
    assert got.content == expected.read()
    check(got.content, titles)

    head = api.request("HEAD", path)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == media_type
    assert head.headers["content-disposition"] == disposition
    assert "content-length" not in head.headers

    error(api.get(f"{ROOT}/nbk_missing/exports/{kind}"), 404, "not_found")
    head_missing = api.request("HEAD", f"{ROOT}/nbk_missing/exports/{kind}")
    assert head_missing.status_code == 404 and head_missing.content == b""
    error(api.get(path, query="format=x"), 400, "validation_error", "format")


def test_a_file_needs_the_read_permission(
    platform: Platform, boot: Bootstrap, app: falcon.App, as_role: Callable[[str], Api], filled: tuple[str, list[str]]
) -> None:
    notebook_id, _ = filled
    for kind, _, _ in FILES:
        result = as_role("contractor").get(f"{ROOT}/{notebook_id}/exports/{kind}")
        error(result, 403, "forbidden")
        assert result.headers["content-type"] == "application/json"
        error(Api(app, None).get(f"{ROOT}/{notebook_id}/exports/{kind}"), 401, "unauthorized")


def _wsgi(app: falcon.App, method: str, path: str, key: str) -> tuple[str, dict[str, str], Any]:
    """Call the app as a WSGI server does: the status, the headers and the body iterable, which is
    left for the caller to iterate (as a server sending it would)."""
    seen: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        seen["status"], seen["headers"] = status, {k.lower(): v for k, v in headers}

    body = app(falcon.testing.create_environ(path=path, method=method, headers={"X-API-Key": key}), start_response)
    return seen["status"], seen["headers"], body


@pytest.mark.parametrize(("kind", "media_type", "check"), FILES, ids=[f[0] for f in FILES])
def test_a_file_is_streamed_from_a_generator_while_it_is_sent(
    app: falcon.App,
    platform: Platform,
    boot: Bootstrap,
    filled: tuple[str, list[str]],
    kind: str,
    media_type: str,
    check: Callable[[bytes, list[str]], None],
) -> None:
    notebook_id, titles = filled
    status, headers, body = _wsgi(app, "GET", f"{ROOT}/{notebook_id}/exports/{kind}", boot.owner_key.secret or "")
    assert status == "200 OK" and headers["content-type"] == media_type
    # the server gets the service's generator itself, not yet started: nothing is produced before
    # the status line, and nothing is held in memory whole
    assert inspect.isgenerator(body)
    assert inspect.getgeneratorstate(body) == inspect.GEN_CREATED
    chunks = []
    for chunk in body:
        assert inspect.getgeneratorstate(body) == inspect.GEN_SUSPENDED  # produced one at a time
        chunks.append(chunk)
    body.close()  # what a WSGI server does when it is done
    assert len(chunks) > 1 and all(isinstance(c, bytes) for c in chunks)
    assert b"".join(chunks) == _expected(platform, boot, notebook_id, kind).read()
    check(b"".join(chunks), titles)


def test_head_on_a_file_sends_its_headers_only(app: falcon.App, boot: Bootstrap, filled: tuple[str, list[str]]) -> None:
    notebook_id, _ = filled
    status, headers, body = _wsgi(app, "HEAD", f"{ROOT}/{notebook_id}/exports/pdf", boot.owner_key.secret or "")
    assert status == "200 OK" and headers["content-type"] == PDF
    assert "content-length" not in headers
    assert list(body) == []


# -- 202 Accepted --------------------------------------------------------------------------------


def test_work_that_finishes_later_answers_202_with_a_status_resource(
    api: Api, platform: Platform, boot: Bootstrap, clock: FrozenClock, document: dict[str, Any]
) -> None:
    notebook_id = notebook(api)["id"]
    accepted = api.post(f"{ROOT}/{notebook_id}/exports")
    assert accepted.status_code == 202, accepted.text
    job = accepted.json
    assert (job["notebookId"], job["status"]) == (notebook_id, "queued")
    assert job["id"].startswith("nbj_")
    check_answer(document, "/v1/notebooks/{notebookId}/exports", "POST", 202, job)
    location = accepted.headers["location"]
    assert httpx.URL(location).path == f"/v1/notebook-jobs/{job['id']}"

    status = api.get(httpx.URL(location).path)
    assert status.status_code == 200 and status.json == job
    check_answer(document, "/v1/notebook-jobs/{jobId}", "GET", 200, status.json)
    head = api.request("HEAD", httpx.URL(location).path)
    assert head.status_code == 200 and head.content == b""

    clock.advance(minutes=1)
    platform.services["notebooks"].finish(boot.organization.id, job["id"])  # the worker's part
    done = api.get(httpx.URL(location).path).json
    assert (done["status"], done["id"], done["createdAt"]) == ("done", job["id"], job["createdAt"])

    error(api.post(f"{ROOT}/nbk_missing/exports"), 404, "not_found")
    error(api.get("/v1/notebook-jobs/nbj_missing"), 404, "not_found")


# -- the client: HTTP and in-process agree ---------------------------------------------------------


def outcome(call: Callable[[], Any]) -> Any:
    """The result or the error; a file as what it is (name, type, content), since its chunks are
    an iterator; and whether the chunks were a lazy iterator (streamed)."""
    try:
        result = call()
    except ComplianceError as error:
        return error
    if isinstance(result, Download):
        return ("file", result.filename, result.media_type, inspect.isgenerator(result.chunks), result.read())
    return result


def scenario(client: Client) -> list[Any]:
    notebooks = client.notebooks
    first = notebooks.create(NewNotebook(title="Prüfung (2025)", summary="What we saw."), idempotency_key="n1")
    second = notebooks.create(NewNotebook(title="Other"))
    interviews = notebooks.add_page(first.id, NewNotePage(title="Interviews", body='a, "quoted"\nbody'))
    foreign = notebooks.add_page(second.id, NewNotePage(title="Foreign"))
    steps: list[Callable[[], Any]] = [
        lambda: first,
        lambda: notebooks.create(NewNotebook(title="Prüfung (2025)", summary="What we saw."), idempotency_key="n1"),
        lambda: notebooks.update(first.id, NotebookPatch(summary="Revised.")),
        lambda: notebooks.replace(second.id, NewNotebook(title="Other, replaced")),
        lambda: notebooks.replace("nbk_missing", NewNotebook(title="T")),
        lambda: notebooks.publish(first.id, PublishNotebook(note="Reviewed.")),
        lambda: notebooks.list(NotebookFilter(published=True)),
        lambda: notebooks.unpublish(first.id),
        lambda: notebooks.unpublish(first.id),
        lambda: notebooks.add_page(first.id, NewNotePage(title="Evidence")),
        lambda: notebooks.list_pages(first.id, PageRequest(per_page=1)),
        lambda: notebooks.list_pages(first.id, page=PageRequest(page=2, per_page=1)),
        lambda: notebooks.get_page(first.id, interviews.id),
        lambda: notebooks.get_page(first.id, foreign.id),
        lambda: notebooks.replace_page(first.id, interviews.id, NewNotePage(title="Interviews, v2")),
        lambda: notebooks.replace_page(first.id, foreign.id, NewNotePage(title="Hijack")),
        lambda: notebooks.delete_page(first.id, foreign.id),
        lambda: notebooks.export_csv(first.id),
        lambda: notebooks.export_pdf(first.id),
        lambda: notebooks.export_xlsx(first.id),
        lambda: notebooks.export_zip(first.id),
        lambda: notebooks.export_zip("nbk_missing"),
        lambda: notebooks.export(first.id),
        lambda: notebooks.job(notebooks.export(second.id).job.id),
        lambda: notebooks.job("nbj_missing"),
        lambda: notebooks.delete_page(second.id, foreign.id),
        lambda: notebooks.get_page(second.id, foreign.id),
        lambda: notebooks.delete(second.id),
        lambda: notebooks.get(second.id),
        lambda: notebooks.delete(second.id),
    ]
    return [outcome(step) for step in steps]


def test_http_and_local_transports_agree_on_every_shape() -> None:
    local_platform, remote_platform = make_platform(), make_platform()
    local_boot, remote_boot = local_platform.bootstrap("Acme"), remote_platform.bootstrap("Acme")
    actor = Actor(organization_id=local_boot.organization.id, role=Role.OWNER, key_id=local_boot.owner_key.key.id)
    local = scenario(Client(LocalTransport(local_platform, actor), areas=TEST_AREAS))
    app = create_app(remote_platform)
    transport = HTTPTransport(
        "http://testserver",
        remote_boot.owner_key.secret or "",
        transport=httpx.WSGITransport(app=app),
        areas=TEST_AREAS,
    )
    with transport:
        remote = scenario(Client(transport, areas=TEST_AREAS))
    assert len(local) == len(remote)
    for index, (expected, got) in enumerate(zip(local, remote, strict=True)):
        assert got == expected, f"step {index}"
    files = [step for step in local if isinstance(step, tuple)]
    first = local[0].id
    assert [(name, media, streamed) for _, name, media, streamed, _ in files] == [
        (f"{first}.csv", CSV, True),
        ("Prüfung (2025).pdf", PDF, True),
        (f"{first}.xlsx", XLSX, True),
        (f"{first}.zip", ZIP, True),
    ]
    accepted = [step for step in remote if isinstance(step, Accepted)]
    assert len(accepted) == 1 and accepted[0].status == "notebooks.job"
    assert isinstance(accepted[0].job, NotebookJob) and accepted[0].job.status == "queued"
    assert [type(step).__name__ for step in remote if isinstance(step, ComplianceError)] == ["NotFound"] * 9


def test_a_client_without_the_extra_area_does_not_know_it(platform: Platform, boot: Bootstrap) -> None:
    transport = HTTPTransport(
        "http://testserver",
        boot.owner_key.secret or "",
        transport=httpx.WSGITransport(app=create_app(platform)),
    )
    with transport, pytest.raises(KeyError):
        Client(transport, areas=TEST_AREAS).notebooks.list()
    with pytest.raises(RuntimeError, match="area notebooks has no tag"):
        HTTPTransport("http://testserver", "k", areas=(*AREAS, attrs.evolve(AREA, tag=None)))


class ClosingTransport(httpx.BaseTransport):
    """A transport noting the paths whose response body was closed (the connection freed)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.closed: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        stream, closed, path = response.stream, self.closed, request.url.path

        class Body(httpx.SyncByteStream):
            def __iter__(self) -> Iterator[bytes]:
                yield from stream  # type: ignore[union-attr]

            def close(self) -> None:
                closed.append(path)
                stream.close()  # type: ignore[union-attr]

        return httpx.Response(response.status_code, headers=response.headers, stream=Body())


def test_a_file_through_the_http_client_is_streamed(
    platform: Platform, boot: Bootstrap, filled: tuple[str, list[str]]
) -> None:
    notebook_id, titles = filled
    app = create_app(platform)
    wsgi = ClosingTransport(httpx.WSGITransport(app=app))
    transport = HTTPTransport("http://testserver", boot.owner_key.secret or "", transport=wsgi, areas=TEST_AREAS)
    with transport:
        client = Client(transport, areas=TEST_AREAS)
        download = client.notebooks.export_csv(notebook_id)
        assert inspect.isgenerator(download.chunks)
        assert (download.filename, download.media_type) == (f"{notebook_id}.csv", CSV)
        assert wsgi.closed == []  # still open: the content arrives as it is read
        _check_csv(download.read(), titles)
        assert wsgi.closed == [f"{ROOT}/{notebook_id}/exports/csv"]

        dropped = client.notebooks.export_zip(notebook_id)
        del dropped  # never read: the response is closed all the same
        gc.collect()
        assert wsgi.closed[-1] == f"{ROOT}/{notebook_id}/exports/zip"

        with pytest.raises(ComplianceError) as raised:
            client.notebooks.export_pdf("nbk_missing")
        assert raised.value.code == "not_found"
        assert len(wsgi.closed) == 3


# -- the document --------------------------------------------------------------------------------


def test_the_document_of_every_shape_is_valid(document: dict[str, Any], api: Api) -> None:
    validate(document)
    assert api.get("/v1/openapi.json").json == document  # the app serves the document of its routes
    paths = document["paths"]
    assert set(paths["/v1/notebooks/{notebookId}"]) == {"get", "head", "patch", "put", "delete"}
    assert set(paths["/v1/notebooks/{notebookId}/pages/{pageId}"]) == {"get", "head", "put", "delete"}
    nested = paths["/v1/notebooks/{notebookId}/pages/{pageId}"]["get"]
    assert [p["name"] for p in nested["parameters"] if p.get("in") == "path"] == ["notebookId", "pageId"]

    put_body = paths["/v1/notebooks/{notebookId}"]["put"]["requestBody"]["content"]["application/json"]
    assert put_body["schema"] == {"$ref": "#/components/schemas/NewNotebook"}
    publish = paths["/v1/notebooks/{notebookId}/publish"]["post"]
    assert publish["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PublishNotebook"
    }
    assert "requestBody" not in paths["/v1/notebooks/{notebookId}/unpublish"]["post"]

    for path in ("/v1/notebooks/{notebookId}", "/v1/notebooks/{notebookId}/pages/{pageId}"):
        deleted = paths[path]["delete"]["responses"]
        assert "204" in deleted and "200" not in deleted
        assert "content" not in deleted["204"]

    for kind, media_type, _ in FILES:
        operation = paths[f"/v1/notebooks/{{notebookId}}/exports/{kind}"]
        ok = operation["get"]["responses"]["200"]
        assert ok["content"] == {media_type: {"schema": {"type": "string", "format": "binary"}}}
        assert "Content-Disposition" in ok["headers"]
        head = operation["head"]["responses"]["200"]
        assert "content" not in head and "Content-Disposition" in head["headers"]

    accepted = paths["/v1/notebooks/{notebookId}/exports"]["post"]["responses"]
    assert "202" in accepted and "200" not in accepted
    assert accepted["202"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/NotebookJob"}
    assert "Location" in accepted["202"]["headers"]
    job = document["components"]["schemas"]["NotebookJob"]
    assert job["properties"]["status"] == {"type": "string", "enum": ["queued", "done"]}


def test_two_schemas_wanting_one_name_fail_loudly() -> None:
    @attrs.frozen(kw_only=True)
    class NotebookPage:  # the name of the list envelope of Notebook
        id: str

    get = attrs.evolve(next(op for op in AREA.operations if op.name == "notebooks.get_page"), result=NotebookPage)
    operations = {op.name: op for op in AREA.operations} | {get.name: get}
    bound = tuple(Endpoint(operation=operation, tag="Notebooks") for operation in operations.values())
    with pytest.raises(RuntimeError, match="'NotebookPage' would describe both"):
        openapi_document(bound)


def test_a_download_without_a_declared_media_type_is_documented_as_octet_stream() -> None:
    plain = attrs.evolve(AREA.operations[13], media_type=None)
    endpoint = Endpoint(operation=plain, tag="Notebooks")
    content = openapi_document((endpoint,))["paths"]["/v1/notebooks/{notebookId}/exports/csv"]["get"]
    assert set(content["responses"]["200"]["content"]) == {"application/octet-stream"}
