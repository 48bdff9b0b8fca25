"""The declarations areas make (``kernel/registry.py``) and what is derived from them: the
platform's services, the client's methods and the arguments a transport carries."""

from __future__ import annotations

import inspect
import re
import typing
from typing import Any

import attrs
import pytest

from compliance_core import Client, LocalTransport, NotFound, Page, PageRequest, Platform
from compliance_core.areas import AREAS
from compliance_core.areas.people import NewPerson
from compliance_core.areas.vendors import VENDOR_READ, NewVendor, Vendor, VendorFilter, VendorPatch
from compliance_core.client import HEALTH
from compliance_core.kernel.operations import Declared, Once
from compliance_core.kernel.operations import operation as declare_operation
from compliance_core.kernel.permissions import Actor, Role
from compliance_core.kernel.registry import Area, Operation, Route

OPERATIONS = [operation for area in AREAS for operation in area.operations]
OPERATION_IDS = [operation.name for operation in OPERATIONS]


def _operation(name: str) -> Operation:
    return next(operation for operation in OPERATIONS if operation.name == name)


def test_area_names_and_operation_names_are_unique() -> None:
    names = [area.name for area in AREAS]
    assert len(names) == len(set(names))
    assert len(OPERATION_IDS) == len(set(OPERATION_IDS))
    assert all(operation.name.startswith(f"{operation.area}.") for operation in OPERATIONS)


def test_the_platform_builds_one_service_per_area(platform: Platform) -> None:
    assert list(platform.services) == [area.name for area in AREAS]
    for area in AREAS:
        assert getattr(platform, area.name) is platform.services[area.name]
    assert platform.operations == {operation.name: operation for operation in OPERATIONS}
    with pytest.raises(AttributeError):
        platform.nonexistent_area  # noqa: B018


@pytest.mark.parametrize("area", AREAS, ids=[area.name for area in AREAS])
def test_every_operation_is_declared_by_the_service_method_that_runs_it(platform: Platform, area: Area) -> None:
    assert area.operations
    for operation in area.operations:
        declared = vars(area.api).get(operation.method)
        assert isinstance(declared, Declared), operation.name
        assert declared.operation is operation
        assert declared.name == operation.name


def test_a_declared_method_outside_an_area_refuses_to_run() -> None:
    class Things:
        @declare_operation(VENDOR_READ, Route("GET", "/v1/things/{thing_id}", "Read one"))
        def get(self, actor: Any, thing_id: str) -> str:
            return thing_id

    assert Things.get.method == "get"
    with pytest.raises(RuntimeError, match="no Area"):
        Things().get(Actor(organization_id="org_1", role=Role.OWNER), "thing_1")
    area = Area(name="things", tag="Things", service=lambda context: Things(), api=Things, actions=(VENDOR_READ,))
    assert [(op.name, op.ids) for op in area.operations] == [("things.get", ("thing_id",))]
    with pytest.raises(ValueError, match="already declared"):
        Area(name="others", tag="Others", service=lambda context: Things(), api=Things, actions=(VENDOR_READ,))


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("vendors.list", ("filters", "page")),
        ("vendors.create", ("data", "idempotency_key")),
        ("vendors.update", ("vendor_id", "patch")),
        ("vendors.archive", ("vendor_id",)),
        ("people.bulk_create", ("members", "idempotency_key")),
        ("api_keys.list", ("page",)),
        ("organizations.get", ()),
    ],
)
def test_operation_parameters_follow_the_service_convention(name: str, parameters: tuple[str, ...]) -> None:
    assert _operation(name).parameters == parameters


def test_bind_names_the_arguments_the_way_the_service_would() -> None:
    create, update, listing = _operation("vendors.create"), _operation("vendors.update"), _operation("vendors.list")
    data, patch, filters = NewVendor(name="V"), VendorPatch(name="W"), VendorFilter(criticality="critical")
    assert create.bind((data,), {}) == {"data": data, "idempotency_key": None}
    assert create.bind((), {"data": data, "idempotency_key": "k"}) == {"data": data, "idempotency_key": "k"}
    assert update.bind(("vnd_1", patch), {}) == {"vendor_id": "vnd_1", "patch": patch}
    assert update.bind(("vnd_1",), {"patch": patch}) == {"vendor_id": "vnd_1", "patch": patch}
    assert listing.bind((filters,), {}) == {"filters": filters, "page": None}
    assert listing.bind((), {"page": PageRequest(page=2)}) == {"filters": None, "page": PageRequest(page=2)}


@pytest.mark.parametrize(
    ("name", "args", "kwargs"),
    [
        ("vendors.create", ("data", "key"), {}),  # idempotency_key is keyword only
        ("vendors.create", ("data",), {"data": "again"}),
        ("vendors.create", (), {"idempotency": "k"}),
        ("vendors.update", (), {"patch": "p"}),  # the id is required
        ("vendors.get", ("vnd_1", "vnd_2"), {}),
        ("organizations.get", ("org_1",), {}),
    ],
)
def test_bind_refuses_what_the_service_would_refuse(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        _operation(name).bind(args, kwargs)


@pytest.mark.parametrize("operation", OPERATIONS, ids=OPERATION_IDS)
def test_whatever_bind_produces_the_declared_method_accepts(platform: Platform, operation: Operation) -> None:
    """Parity of ``Operation.bind`` with the method the runner calls: the ids as positional
    arguments, everything else by keyword (``idempotency_key`` becomes the ``Once`` the write
    runs through), binds to the declared method without a TypeError."""
    declared = vars(type(platform.services[operation.area]))[operation.method]
    ids = tuple(f"{name}_1" for name in operation.ids)
    bound = operation.bind(ids, {})
    assert list(bound) == list(operation.parameters)
    if operation.idempotent:
        bound["once"] = Once(
            Actor(organization_id="org_1", role=Role.OWNER), bound.pop("idempotency_key"), operation.name
        )
    inspect.signature(declared._run).bind("service", "actor", **bound)


class Recording:
    """A transport that answers nothing and remembers what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[Operation, dict[str, Any]]] = []

    def call(self, operation: Operation, arguments: dict[str, Any]) -> Any:
        self.calls.append((operation, arguments))
        return None


def test_the_client_has_a_method_per_operation_and_hands_the_transport_the_operation() -> None:
    transport = Recording()
    client = Client(transport)
    for area in AREAS:
        assert dir(getattr(client, area.name)) == sorted(operation.method for operation in area.operations)
    data = NewVendor(name="V")
    client.vendors.create(data, idempotency_key="k")
    client.vendors.update("vnd_1", VendorPatch(name="W"))
    client.health()
    (create, create_args), (update, update_args), (health, health_args) = transport.calls
    assert create is _operation("vendors.create") and create_args == {"data": data, "idempotency_key": "k"}
    assert update is _operation("vendors.update") and update_args["vendor_id"] == "vnd_1"
    assert (health, health_args) == (HEALTH, {})
    with pytest.raises(AttributeError):
        client.vendors.explode  # noqa: B018
    with pytest.raises(AttributeError):
        client.nonexistent_area  # noqa: B018


def test_the_local_transport_calls_the_services(platform: Platform, owner) -> None:
    client = Client(LocalTransport(platform, owner))
    vendor = client.vendors.create(NewVendor(name="Hosting Co"), idempotency_key="k")
    assert (
        isinstance(vendor, Vendor)
        and client.vendors.create(NewVendor(name="Hosting Co"), idempotency_key="k") == vendor
    )
    page = client.vendors.list(VendorFilter(), PageRequest(per_page=10))
    assert isinstance(page, Page) and page.items == (vendor,)
    assert client.vendors.get(vendor.id) == platform.vendors.get(owner, vendor.id)
    [person] = client.people.bulk_create([NewPerson(name="Ann", email="ann@acme.test")])
    assert client.people.get(person.id) == person
    assert client.organizations.get().id == owner.organization_id
    assert client.health()["status"] == "ok"


def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda upper: "_" + upper.group().lower(), name)


def _the_record(created: Any, model: type) -> Any:
    """What create answered, or the record inside it (an issued API key holds the key)."""
    if isinstance(created, model):
        return created
    return next(value for value in attrs.asdict(created, recurse=False).values() if isinstance(value, model))


CREATED = [
    operation
    for operation in OPERATIONS
    if operation.method == "create" and operation.example is not None and not operation.batch
]


def _real(platform: Platform, owner: Actor, value: Any) -> Any:
    """An example's value, with a placeholder id (``rsk_...``) replaced by a new record of the
    table with that prefix, made by its area's create example (a comment names a real risk)."""
    if not (isinstance(value, str) and value.endswith("_...")):
        return value
    prefix = value[: -len("_...")]
    area = next(area for area in AREAS for table in area.records if table.prefix == prefix)
    create = next(operation for operation in CREATED if operation.area == area.name)
    assert create.example is not None and create.body is not None
    body = create.body(**{_snake(key): _real(platform, owner, item) for key, item in create.example.items()})
    return platform.services[area.name].create(owner, body).id


@pytest.mark.parametrize("create", CREATED, ids=[operation.area for operation in CREATED])
def test_every_create_example_makes_a_record_only_its_organization_reads(
    platform: Platform, owner, other_org, create: Operation
) -> None:
    """Driven by the declarations: the create operation's example body (wire form) makes a record
    that the area's get and list return to the organization, and nobody else's."""
    for organization in (owner, other_org) if "frameworkId" in create.example else ():
        platform.controls.enable(organization, create.example["frameworkId"])  # a statement's framework
    client, outsider = Client(LocalTransport(platform, owner)), Client(LocalTransport(platform, other_org))
    area = getattr(client, create.area)
    body = create.body(**{_snake(key): _real(platform, owner, value) for key, value in create.example.items()})
    created = area.create(body)
    operations = {operation.method: operation for operation in OPERATIONS if operation.area == create.area}
    record = _the_record(created, operations["get"].result if "get" in operations else type(created))
    if "get" in operations:
        assert area.get(record.id) == record
        with pytest.raises(NotFound):
            getattr(outsider, create.area).get(record.id)
    if "list" in operations:
        assert record in area.list().items
        assert record not in getattr(outsider, create.area).list().items


@pytest.mark.parametrize("area", AREAS, ids=[area.name for area in AREAS])
def test_an_area_evolved_declares_the_same_operations_once(area: Area) -> None:
    """Tests evolve areas (another table, another chore); the copy must neither re-declare
    the service's methods as new objects nor list them twice."""
    evolved = attrs.evolve(area, records=area.records)
    assert evolved.operations == area.operations
    assert all(new is old for new, old in zip(evolved.operations, area.operations, strict=True))


def test_the_platform_names_each_built_in_area_with_its_service_type() -> None:
    """Embedders' type checkers see ``platform.vendors`` as a ``VendorService``: an area added to
    ``AREAS`` without its annotation on ``Platform`` would reach them as ``Any``."""
    services = {area.api.__name__: area.api for area in AREAS if area.api is not None}
    hints = typing.get_type_hints(Platform, localns=services)
    assert {area.name: hints.get(area.name) for area in AREAS} == {area.name: area.api for area in AREAS}
