"""Suites driven by the registries: every operation on the wire is covered by being registered.

For every route of every area, on every store: each role gets 403 exactly when the area's
declared action denies it (and learns nothing of the body's rules first), and otherwise the
route's success status; no key is 401; another organization's ids answer exactly like ids that
never existed; HEAD answers wherever GET does; every answer fits the OpenAPI document; and
generated bodies never reach a 5xx or write anything when refused. Records are made through
each area's create operation with its declared ``example`` body.

The suites are collected by a test module per store (``test_http_generic*.py``, each naming its
``world`` with ``world_on``), so the three stores run on different workers. The SQL stores' modules
collect only the suites whose answers depend on the store: what is decided
before a store is reached (no key, the permission before the body, HEAD, an empty transition body)
runs on memory alone.
"""

from __future__ import annotations

import copy
import itertools
import re
from collections.abc import Iterator
from typing import Any

import attrs
import falcon.testing
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oscal_examples import example_frameworks

from compliance_core import Actor, FrozenClock, Platform, Role, SequentialIds
from compliance_core.areas import AREAS
from compliance_core.areas.frameworks.bundled import BUNDLED_SOURCES
from compliance_core.areas.people import NewPerson
from compliance_core.events_doc import manifest_ids
from compliance_core.kernel.permissions import can
from compliance_core.kernel.registry import Download
from compliance_http.app import create_app
from compliance_http.openapi import openapi_document
from compliance_http.routes import Endpoint, default_endpoints
from http_support import Api, check_answer, issue_key

ENDPOINTS = sorted((e for e in default_endpoints() if not e.public), key=lambda e: e.operation.result is not Download)
"""The downloads first: an export's cost grows with the organization, which every test adds to."""
WITH_BODY = [e for e in ENDPOINTS if e.operation.body is not None]
DOCUMENT = openapi_document()


def _name(endpoint: Endpoint) -> str:
    return f"{endpoint.method} {endpoint.path}"


def _documented(path: str) -> str:
    return re.sub(r"{(\w+)}", lambda m: "{" + re.sub(r"_(\w)", lambda c: c[1].upper(), m[1]) + "}", path)


SHARED_IDS = {"framework_id": "iso-27001-2022"}
"""Ids naming what every organization shares (a framework of the catalogue): a path taking one
gets the same framework in both organizations, which the World enables in both."""
MANIFEST_IDS = ("provider_slug", "variable_id")
"""Ids naming entries of an installed provider's manifest (``events_doc.manifest_ids``), the same
in every organization."""


def open_platform(url: str) -> Platform:
    """The platform the suites of a module share."""
    frameworks = example_frameworks()  # a catalogue holding a framework to read
    # and the bundled ones, which creates' examples name (a task template's is ISO 27001's)
    settings = {
        "frameworks": attrs.evolve(frameworks, sources=(*frameworks.sources, *BUNDLED_SOURCES)),
        "signing": "memory://",  # what exports sign with: PostgreSQL has no default key file
        "blobs": "memory://",  # evidence files: PostgreSQL has no default blob store
    }
    return Platform.open(url, clock=FrozenClock(), ids=SequentialIds(), settings=settings)


class World:
    """Two organizations of their own on the module's platform: a key per role in the first, an
    owner in the second. Each suite gets a World (``world_on``), so what one suite made never
    weighs on another's exports."""

    def __init__(self, platform: Platform, app: Any) -> None:
        self.in_memory = platform.store.url.startswith("memory:")
        self.platform = platform
        self.app = app
        plan = {"plan": "enterprise", "rpm": 1_000_000, "burst": 1_000_000}
        mine = self.platform.bootstrap("Acme", **plan)
        self.owner = Api(self.app, mine.owner_key.secret)
        self.callers = {role: Api(self.app, issue_key(self.platform, mine.organization.id, role)) for role in Role}
        for role in (Role.OWNER, Role.ADMIN):  # a manager bound to a person, who signs as them
            self.callers[role] = Api(self.app, self._bound(mine.organization.id, role))
        theirs = self.platform.bootstrap("Globex", **plan)
        self.others = {role: Api(self.app, issue_key(self.platform, theirs.organization.id, role)) for role in Role}
        for role in (Role.OWNER, Role.ADMIN):  # bound as in the first, so signing reaches the 404
            self.others[role] = Api(self.app, self._bound(theirs.organization.id, role))
        self.anonymous = Api(self.app, None)
        self.serial = itertools.count()
        self.creates = {e.operation.area: e for e in ENDPOINTS if e.operation.method == "create"}
        self.organizations = (mine.organization.id, theirs.organization.id)
        self.steps = {e.operation.name: e for e in ENDPOINTS}
        self.shared = {**SHARED_IDS, **manifest_ids(self.platform)}

    def _bound(self, organization_id: str, role: Role) -> str:
        operator = Actor(organization_id=organization_id, role=Role.OWNER, auth_type="local")
        email = f"{role.value}.person@acme.example"
        person = self.platform.people.create(operator, NewPerson(name=f"{role.value} person", email=email, role=role))
        return issue_key(self.platform, organization_id, role, person_id=person.id)

    def body(self, endpoint: Endpoint) -> Any:
        """The operation's example, made unique where uniqueness matters (e-mail addresses)."""
        example = endpoint.operation.example
        if example is None:
            return None
        return self._real(_fresh(copy.deepcopy(dict(example)), next(self.serial)))

    def _real(self, value: Any) -> Any:
        """The example with each placeholder id (``pol_...``) replaced by a new record of the
        table with that prefix, made by its area's create (a link names a real policy)."""
        if isinstance(value, dict):
            return {key: self._real(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._real(item) for item in value]
        if isinstance(value, str) and value.endswith("_..."):
            prefix = value[: -len("_...")]
            area = next(
                a.name for a in AREAS for table in a.records if table.prefix == prefix and a.name in self.creates
            )
            return self.record(area)
        return value

    def record(self, area: str, name: str | None = None, by: Api | None = None) -> str:
        """A new record of the area in the first organization, made by its owner (or by ``by``:
        the caller of an operation reserved to the record's author); for an id ``name`` of a
        table the area keeps as a log of its writes (context snapshots), the newest row of that
        log after the create."""
        create = self.creates.get(area)
        if create is None:
            return self.listed(area)
        result = (by or self.owner).post(create.path, self.body(create))
        assert result.status_code == create.status, result.text
        log = next((e for e in ENDPOINTS if name is not None and _logs(e, area, name)), None)
        if (
            log is not None
            and log.operation.lists is not None
            and log.operation.lists.model is not create.operation.result
        ):
            listed = self.owner.get(log.path)
            assert listed.status_code == 200 and listed.json["data"], listed.text
            return str(listed.json["data"][0]["id"])
        return str(result.json["id"])

    def listed(self, area: str) -> str:
        """A record of an area nobody creates through the API (a read-only log such as the audit
        trail): the first its list shows after a write in another area."""
        self.record(next(iter(self.creates)))
        lists = [e for e in ENDPOINTS if e.operation.area == area and e.operation.paged and not e.operation.ids]
        result = self.owner.get(lists[0].path)
        assert result.status_code == 200 and result.json["data"], result.text
        return str(result.json["data"][0]["id"])

    def listed_under(self, ids: tuple[str, ...], made: dict[str, str]) -> str:
        """A record nobody creates under records already made (a framework's requirement): the
        first the list taking the earlier ids shows."""
        lists = [e for e in ENDPOINTS if e.operation.paged and e.operation.ids == ids[:-1]]
        result = self.owner.get(lists[0].path.format(**made))
        assert result.status_code == 200 and result.json["data"], result.text
        return str(result.json["data"][0]["id"])

    def call(self, caller: Api, endpoint: Endpoint, ids: dict[str, str], method: str | None = None) -> Any:
        path = endpoint.path.format(**ids)
        return caller.request(method or endpoint.method, path, body=self.body(endpoint))

    def ids(self, endpoint: Endpoint, by: Api | None = None) -> dict[str, str]:
        """Real ids for the endpoint's path: the first from the area's create (made by ``by``
        when given: the caller of an operation reserved to the record's author), each later one
        (a record under the earlier ones) from the POST that makes what the GET of that path
        reads; then brought into the state the endpoint starts from by the operations it is
        ``given`` (run as the owner with their examples)."""
        names = endpoint.operation.ids
        made: dict[str, str] = {}
        self._enable_shared()
        for index, name in enumerate(names):
            if name in self.shared:
                made[name] = self.shared[name]
                continue
            if index == 0:
                made[name] = self.record(self.owner_of(endpoint, name), name, by)
                continue
            try:
                maker = _maker(names[: index + 1])
            except LookupError:  # read-only records under the earlier ids: the first listed
                made[name] = self.listed_under(names[: index + 1], made)
                continue
            result = self.owner.post(maker.path.format(**made), self.body(maker))
            assert result.status_code == maker.status, result.text
            made[name] = str(result.json["id"])
        for step in endpoint.operation.given:
            before = self.steps[step]
            result = self.call(self.owner, before, made)
            assert result.status_code == before.status, (step, result.text)
        return made

    def _enable_shared(self) -> None:
        """Both organizations have the shared framework enabled (its statement, rows and task
        templates exist), whatever an earlier endpoint disabled: enabling again changes nothing."""
        for organization_id in self.organizations:
            owner = Actor(organization_id=organization_id, role=Role.OWNER, auth_type="local")
            self.platform.controls.enable(owner, SHARED_IDS["framework_id"])

    def owner_of(self, endpoint: Endpoint, name: str) -> str:
        """The area whose record an id names: the operation's own when it creates records, else
        the area keeping the table of that kind (``person_id``: a person, in the people area),
        else the operation's own (a log, whose records ``record`` finds in its list)."""
        area = endpoint.operation.area
        if area in self.creates:
            return area
        return next(
            (
                owner.name
                for owner in AREAS
                for records in owner.records
                if owner.name in self.creates and f"{records.kind.replace(' ', '_')}_id" == name
            ),
            area,
        )


def _logs(endpoint: Endpoint, area: str, name: str) -> bool:
    """Whether ``endpoint`` lists, for the whole organization, the area's table whose records
    the id ``name`` names (``snapshot_id``: a ``context snapshot``)."""
    operation = endpoint.operation
    table = operation.lists
    if operation.area != area or not operation.paged or operation.ids or table is None or not table.newest_first:
        return False
    return f"_{table.kind.replace(' ', '_')}_id".endswith(f"_{name}")


def _maker(ids: tuple[str, ...]) -> Endpoint:
    """The POST that makes a record under ``ids[:-1]``: it answers (or accepts) the model the
    GET taking exactly ``ids`` reads."""
    readers = [e for e in ENDPOINTS if e.method == "GET" and e.operation.ids == ids and not e.operation.paged]
    reader = min(readers, key=lambda e: e.operation.result is Download)  # a record's read before a download
    model = reader.operation.result
    for endpoint in ENDPOINTS:
        same_parent = endpoint.method == "POST" and endpoint.operation.ids == ids[:-1]
        if same_parent and model in (endpoint.operation.result, endpoint.accepted):
            return endpoint
    raise LookupError(f"no operation makes the {model.__name__} that {_name(reader)} reads")


def _fresh(value: Any, n: int) -> Any:
    if isinstance(value, dict):
        return {key: _fresh(item, n) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item, n) for item in value]
    if isinstance(value, str) and "@" in value:
        local, _, domain = value.partition("@")
        return f"{local}+{n}@{domain}"
    return value


def _json(result: Any) -> Any:
    """The parsed JSON body; None for no body or a file (a download documents no JSON)."""
    if not result.content or not result.headers.get("Content-Type", "").startswith("application/json"):
        return None
    return result.json


def world_on(store: str) -> tuple[Any, Any]:
    """The module's ``worlds`` and ``world`` fixtures: one platform on ``store`` (memory, sqlite
    or postgresql) for the whole module, and a World on it per suite (test function)."""

    @pytest.fixture(scope="module")
    def worlds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worlds]:
        if store == "memory":
            url = "memory://"
        elif store == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('generic') / 'g.db'}"
        else:
            url = request.getfixturevalue("new_postgres_schema")()
        shared = Worlds(open_platform(url))
        yield shared
        shared.platform.close()

    @pytest.fixture
    def world(worlds: Worlds, request: pytest.FixtureRequest) -> World:
        return worlds.of(request.function.__name__)

    return worlds, world


class Worlds:
    """The module's platform and app, and the World of each suite that ran on it."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.app = create_app(platform)
        self._made: dict[str, World] = {}

    def of(self, suite: str) -> World:
        if suite not in self._made:
            self._made[suite] = World(self.platform, self.app)
        return self._made[suite]


def _roles(world: World, endpoint: Endpoint) -> list[Role]:
    """Every role on the memory store, but for a download (a PDF, an export: the same bytes for
    every role it allows, and seconds to make) one role it allows; on a SQL store, whose answers
    differ from memory's only in what the store does, one role the action allows and one it
    denies."""
    allowed = [role for role in Role if can(role, endpoint.operation.action)]  # type: ignore[arg-type]
    denied = [role for role in Role if role not in allowed]
    if not world.in_memory:
        return allowed[:1] + denied[:1]
    return allowed[:1] + denied if endpoint.operation.result is Download else list(Role)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=_name)
def test_each_role_gets_403_exactly_when_the_action_denies_it(world: World, endpoint: Endpoint) -> None:
    action = endpoint.operation.action
    assert action is not None
    for role in _roles(world, endpoint):
        caller = world.callers[role]
        authored = endpoint.operation.authored and can(role, action)  # its author's: made by the caller
        result = world.call(caller, endpoint, world.ids(endpoint, caller if authored else None))
        if can(role, action):
            assert result.status_code == endpoint.status, (role, result.text)
        else:
            assert result.status_code == 403, (role, result.text)
            assert result.json["error"]["details"] == {"action": action.name, "role": role.value}
        check_answer(DOCUMENT, _documented(endpoint.path), endpoint.method, result.status_code, _json(result))


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.method != "GET"], ids=_name)
def test_permission_is_checked_before_the_body(world: World, endpoint: Endpoint) -> None:
    denied = [role for role in Role if not can(role, endpoint.operation.action)]  # type: ignore[arg-type]
    for role in denied:
        path = endpoint.path.format(**world.ids(endpoint))
        result = world.callers[role].request(endpoint.method, path, raw=b"{not json")
        assert result.status_code == 403, (role, result.text)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=_name)
def test_no_key_is_401(world: World, endpoint: Endpoint) -> None:
    ids = {name: "x_1" for name in endpoint.operation.ids}
    result = world.call(world.anonymous, endpoint, ids)
    assert result.status_code == 401, result.text
    check_answer(DOCUMENT, _documented(endpoint.path), endpoint.method, 401, result.json)


SHARED_AREAS = {"frameworks"}
"""Areas whose records are the same for every organization (the framework catalogue)."""


@pytest.mark.parametrize(
    "endpoint",
    [
        e
        for e in ENDPOINTS
        if e.operation.ids
        and e.operation.area not in SHARED_AREAS
        and not all(name in SHARED_IDS or name in MANIFEST_IDS for name in e.operation.ids)
    ],
    ids=_name,
)
def test_another_organizations_ids_look_like_ids_that_never_existed(world: World, endpoint: Endpoint) -> None:
    mine = world.ids(endpoint)
    never = {name: f"{value}9" for name, value in mine.items()}
    # a caller of the other organization whose role may call it (the owner, unless staff-only)
    other = world.others[next(role for role in Role if can(role, endpoint.operation.action))]  # type: ignore[arg-type]
    foreign = world.call(other, endpoint, mine)
    missing = world.call(other, endpoint, never)
    assert foreign.status_code == missing.status_code == 404, foreign.text

    def shape(result: Any, ids: dict[str, str]) -> str:
        text = result.text.replace(result.headers["X-Request-Id"], "")
        for value in ids.values():
            text = text.replace(value, "<id>")
        return text

    assert shape(foreign, mine) == shape(missing, never)
    check_answer(DOCUMENT, _documented(endpoint.path), endpoint.method, 404, foreign.json)


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.operation.ids and e.method == "GET"], ids=_name)
def test_an_id_of_any_shape_is_one_that_never_existed(world: World, endpoint: Endpoint) -> None:
    """The document lets a path id be any string, and an id is opaque: a malformed one names no
    record (404), it is not a bad request."""
    for odd in ("0", "null", "x" * 80):
        result = world.call(world.owner, endpoint, {name: odd for name in endpoint.operation.ids})
        assert result.status_code == 404, (odd, result.text)


@pytest.mark.parametrize("endpoint", [e for e in ENDPOINTS if e.method == "GET"], ids=_name)
def test_head_answers_wherever_get_does(world: World, endpoint: Endpoint) -> None:
    ids = world.ids(endpoint)
    got = world.call(world.owner, endpoint, ids)
    head = world.call(world.owner, endpoint, ids, method="HEAD")
    assert head.status_code == got.status_code == endpoint.status
    assert head.content == b""
    assert head.headers["Content-Type"] == got.headers["Content-Type"]


TRANSITIONS = [
    e
    for e in ENDPOINTS
    if e.method == "POST" and e.operation.ids and (e.operation.body is None or e.operation.optional_body)
]


@pytest.mark.parametrize("endpoint", TRANSITIONS, ids=_name)
def test_a_transition_takes_no_body_an_empty_one_or_an_empty_object(world: World, endpoint: Endpoint) -> None:
    """Issue 18: a POST on a record whose body is optional (or absent) succeeds with no body at
    all, with ``Content-Length: 0`` and with ``{}``, each on a record of its own."""
    caller = world.callers[next(role for role in Role if can(role, endpoint.operation.action))]  # type: ignore[arg-type]
    assert caller.key is not None
    for raw in (None, b"", b"{}"):
        path = endpoint.path.format(**world.ids(endpoint))
        if raw is None:
            result = falcon.testing.simulate_post(world.app, path, headers={"X-API-Key": caller.key})
        else:
            result = caller.request("POST", path, raw=raw, content_type="application/json")
        assert result.status_code == endpoint.status, (raw, result.text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)


def _bodies(endpoint: Endpoint) -> st.SearchStrategy[Any]:
    """Generated bodies: arbitrary JSON, and the example with keys dropped or values replaced."""
    example = dict(endpoint.operation.example or {})
    mutated = st.fixed_dictionaries({}, optional={key: st.just(value) | json_values for key, value in example.items()})
    return json_values | mutated | st.dictionaries(st.text(max_size=12), json_values, max_size=4)


def _count(world: World, endpoint: Endpoint, ids: dict[str, str]) -> int | None:
    """The total of the area's first list the endpoint's ids can address (a list under a task
    takes the task's id)."""
    lists = [
        e
        for e in ENDPOINTS
        if e.operation.area == endpoint.operation.area and e.operation.paged and set(e.operation.ids) <= set(ids)
    ]
    if not lists:
        return None
    return int(world.owner.get(lists[0].path.format(**ids)).json["count"])


@pytest.mark.parametrize("endpoint", WITH_BODY, ids=_name)
def test_generated_bodies_never_fail_the_server_or_half_write(world: World, endpoint: Endpoint) -> None:
    """40 bodies per operation on the memory store, where the rules run; 5 on each SQL store,
    which adds only what a database refuses or half-writes (the whole suite stays under its
    10-minute budget on 2 cores)."""
    ids = world.ids(endpoint)
    path = endpoint.path.format(**ids)
    read = next((e for e in ENDPOINTS if e.method == "GET" and e.path == endpoint.path), None)

    def state() -> Any:
        """What the path reads: its JSON, or the bytes of a file it answers (a logo's image)."""
        answer = world.owner.get(path)
        if not answer.headers.get("Content-Type", "").startswith("application/json"):
            return answer.content
        return {key: value for key, value in answer.json.items() if key != "requestId"}  # an error names its request

    @settings(max_examples=40 if world.in_memory else 5, deadline=None, suppress_health_check=list(HealthCheck))
    @given(body=_bodies(endpoint))
    def run(body: Any) -> None:
        before_count = _count(world, endpoint, ids)
        before = state() if read is not None else None
        result = world.owner.request(endpoint.method, path, body=body)
        assert result.status_code < 500, result.text
        assert result.status_code in (endpoint.status, 400, 403, 409), result.text
        check_answer(DOCUMENT, _documented(endpoint.path), endpoint.method, result.status_code, _json(result))
        if result.status_code != endpoint.status:
            assert "field" in result.json["error"]["details"], result.text
            assert _count(world, endpoint, ids) == before_count
            if read is not None:
                assert state() == before

    run()
