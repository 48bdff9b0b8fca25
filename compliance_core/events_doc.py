"""The event catalogue, ``docs/events.md``, generated from the event classes the areas declare.

    python -m compliance_core.events_doc > docs/events.md      (or: make events)

Each type is listed with its class docstring (when it is emitted), the resource its ``data``
holds and an example body. The examples are real bodies: on a throwaway memory platform with a
frozen clock and sequential ids, the generator runs every operation of every area that writes,
with its declared ``example`` body and ``given`` steps on records made by the areas' own creates
(``run_examples``), then lets time pass (webhook deliveries to receivers that never answer, the
chores on the dates the examples name) and keeps the first body of each type it sees. A test
fails when the committed file differs from what this writes. Nothing imports this module at run
time.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import hmac
import inspect
import itertools
import json
import re
import sys
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from .areas import AREAS
from .areas.api_keys import NewApiKey
from .areas.automations import AutomationSettings, ProbeRequest, ProbeResponse
from .areas.people import NewPerson
from .areas.webhooks import SendResult
from .kernel.clock import FrozenClock
from .kernel.errors import ComplianceError
from .kernel.events import Event, OutboxMessage
from .kernel.ids import SequentialIds
from .kernel.permissions import Actor, Role
from .kernel.registry import Accepted, Area, Download, Operation
from .platform import Platform, open_store

__all__ = [
    "manifest_ids",
    "SPEC_OCCASIONS",
    "Seen",
    "Observation",
    "run_examples",
    "observe",
    "steady_examples",
    "render",
    "main",
]

SPEC_OCCASIONS: tuple[tuple[str, str], ...] = (
    ("questionnaire.submitted", "Questionnaires"),
    ("control.status_changed", "Controls"),
    ("evidence.expiring", "Evidence"),
    ("finding.created", "Findings"),
    ("finding.severity_changed", "Findings"),
    ("risk.score_changed", "Risks"),
)
"""The spec's webhook occasions and the area each belongs to: an occasion whose area is not
built yet is listed as arriving with it, never emitted by a stand-in."""


@attrs.frozen
class Seen:
    """The first body of one event type the examples produced, and its subject's model."""

    body: dict[str, Any]
    model: type


CATALOGUE_IDS = ("framework_id",)
"""Path ids naming a framework of the catalogue, which every organization shares and no create
makes: they take the first framework the examples name."""
ENABLE = "controls.enable"
"""The operation enabling a framework of the catalogue in an organization."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_OFFLINE = "the events catalogue is generated without a network"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _fresh(value: Any, n: int) -> Any:
    """The example with each e-mail address made unique (a person is made per operation)."""
    if isinstance(value, dict):
        return {key: _fresh(item, n) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item, n) for item in value]
    if isinstance(value, str) and "@" in value:
        local, _, domain = value.partition("@")
        return f"{local}+{n}@{domain}"
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _id_of(result: Any) -> str:
    """The id of the record an operation answered, as the wire shows it: the job of an
    ``Accepted``, the model a ``WIRE_VIEW`` inlines (an issued key's ``key``)."""
    if isinstance(result, Accepted):
        result = result.job
    if hasattr(result, "id"):
        return str(result.id)
    view = getattr(type(result), "WIRE_VIEW", None)
    for name in sorted(view.inline if view is not None else ()):
        inner = getattr(result, name)
        if hasattr(inner, "id"):
            return str(inner.id)
    raise LookupError(f"{type(result).__name__} names no record")


def _made(operation: Operation) -> Any:
    """The model an operation makes: its result, or the job of an ``Accepted``."""
    if typing.get_origin(operation.result) is Accepted:
        return typing.get_args(operation.result)[0]
    return operation.result


def _http(operation: Operation) -> str | None:
    return operation.route.method if operation.route is not None else None


class _Offline:
    """The webhook receivers and probed sites: nothing answers, the same way on every run."""

    def send(self, url: str, body: bytes, headers: Mapping[str, str]) -> SendResult:
        return SendResult(error="network", detail=_OFFLINE)

    def probe(self, request: ProbeRequest) -> ProbeResponse:
        return ProbeResponse(error=_OFFLINE)


class _FixedKey:
    """The key exports are signed with: a stand-in whose signature is a hash, so an export's
    ``sha256`` and ``size`` are the same on every run (a memory key is new each run)."""

    algorithm = "Ed25519"
    public_key_pem = "-----BEGIN PUBLIC KEY-----\nthe events catalogue's stand-in\n-----END PUBLIC KEY-----\n"
    fingerprint = "sha256:" + "0" * 64

    def sign(self, data: bytes) -> bytes:
        return hashlib.sha512(data).digest()

    def verify(self, data: bytes, signature: bytes) -> bool:
        return hmac.compare_digest(self.sign(data), signature)


class _Examples:
    """Every operation of an area, run in process as the generic HTTP suite runs them over the
    wire (``tests/http/test_http_generic.py``'s ``World``): records made by each area's create
    with its example, each placeholder id of an example (``pol_...``) a new record of that
    prefix, then the operation's ``given`` steps, then the operation itself.

    :param maker: who makes the records and runs the ``given`` steps: the owner's key
    :param caller: who calls each operation: an owner's key bound to a person of the
        organization, who approves, signs and acknowledges as that person
    """

    def __init__(self, platform: Platform, maker: Actor, caller: Actor) -> None:
        self.platform = platform
        self.maker = maker
        self.caller = caller
        self.operations = [op for area in platform.areas for op in area.operations]
        self.creates = {op.area: op for op in self.operations if op.method == "create"}
        self.steps = {op.name: op for op in self.operations}
        self.serial = itertools.count()
        installed = platform.services["frameworks"].catalogue.installed() if "frameworks" in platform.services else ()
        self.catalogue = frozenset(framework.id for framework in installed)
        named = (text for op in self.operations for text in _strings(op.example or {}) if text in self.catalogue)
        self.frameworks = tuple(dict.fromkeys(named))
        """The catalogue's frameworks the examples name, in the order they first appear: a path's
        framework id is the first."""
        self.provider_ids = manifest_ids(platform)
        self.failures: list[tuple[str, ComplianceError]] = []
        """Each operation that refused its example (an area whose ``example`` or ``given`` does
        not fit): its events are missing."""

    def run(self, area: Area[Any]) -> None:
        """The area's writes, each on records of its own (a delete takes away only what it was
        made for); one whose body may be left out runs again without it (an update of the
        context that changes nothing confirms it), which may refuse (a finding's title is
        required unless a template gives it). A GET only reads and records nothing, so it is not
        run (and the files some render are slow to make)."""
        for operation in area.operations:
            if _http(operation) == "GET":
                continue
            for with_example in (True, False) if operation.optional_body else (True,):
                try:
                    by = self.caller if operation.authored else None
                    self.call(self.caller, operation, self.ids(operation, by), with_example=with_example)
                except ComplianceError as error:
                    if with_example:
                        self.failures.append((operation.name, error))

    def call(self, actor: Actor, operation: Operation, ids: Mapping[str, str], *, with_example: bool = True) -> Any:
        """The operation on ``ids`` with its example (or without a body), the catalogue's
        frameworks it names enabled first: a statement of applicability, a task template or a
        crosswalk is of enabled frameworks, and an earlier operation may have disabled one."""
        example = operation.example if with_example else None
        named = [ids[name] for name in operation.ids if name in CATALOGUE_IDS]
        named += [text for text in _strings(example or {}) if text in self.catalogue]
        enable = self.steps.get(ENABLE)
        if enable is not None:
            for framework_id in dict.fromkeys(named):
                self._invoke(self.maker, enable, {"framework_id": framework_id})
        arguments: dict[str, Any] = {name: ids[name] for name in operation.ids}
        if operation.body_argument is not None and example is not None:
            arguments[operation.body_argument] = self.body(operation)
        return self._invoke(actor, operation, arguments)

    def _invoke(self, actor: Actor, operation: Operation, arguments: Mapping[str, Any]) -> Any:
        result = getattr(self.platform.services[operation.area], operation.method)(actor, **arguments)
        if isinstance(result, Download):  # its chunks only format what was read: none is sent
            close = getattr(result.chunks, "close", None)
            if close is not None:
                close()
        return result

    def body(self, operation: Operation) -> Any:
        """The example as the body model (wire names to field names), e-mail addresses made
        unique and each placeholder id a real record."""
        assert operation.body is not None and operation.example is not None
        example = self._real(_fresh(copy.deepcopy(dict(operation.example)), next(self.serial)))
        if operation.batch is not None:
            return [{_snake(key): value for key, value in member.items()} for member in example["members"]]
        return operation.body(**{_snake(key): value for key, value in example.items()})

    def _real(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._real(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._real(item) for item in value]
        if isinstance(value, str) and value.endswith("_..."):
            prefix = value[: -len("_...")]
            return self.record(
                next(
                    area.name
                    for area in self.platform.areas
                    for table in area.records
                    if table.prefix == prefix and area.name in self.creates
                )
            )
        return value

    def record(self, area: str, name: str | None = None, by: Actor | None = None) -> str:
        """A new record of the area, made by the owner (or by ``by``: the caller of an operation
        reserved to the record's author); for an id of a table the area keeps as a log of its
        writes (context snapshots), the newest row of that log after the create."""
        create = self.creates.get(area)
        if create is None:
            return self.listed(area)
        made = _id_of(self.call(by or self.maker, create, {}))
        log = next((op for op in self.operations if name is not None and _logs(op, area, name)), None)
        if log is not None and log.lists is not None and log.lists.model is not create.result:
            return str(self.call(self.maker, log, {}).items[0].id)
        return made

    def listed(self, area: str) -> str:
        """A record of an area nobody creates (the audit trail): the first its list shows after
        a write in another area."""
        self.record(next(iter(self.creates)))
        lists = [op for op in self.operations if op.area == area and op.paged and not op.ids]
        return str(self.call(self.maker, lists[0], {}).items[0].id)

    def listed_under(self, ids: tuple[str, ...], made: Mapping[str, str]) -> str:
        """A record nobody creates under records already made (a statement's row): the first
        the list taking the earlier ids shows (the list of what a GET taking ``ids`` reads, when
        there is one)."""
        read = {op.result for op in self._readers(ids)}
        lists = [op for op in self.operations if op.paged and op.ids == ids[:-1]]
        listing = next((op for op in lists if op.result in read), lists[0])
        return str(self.call(self.maker, listing, made).items[0].id)

    def ids(self, operation: Operation, by: Actor | None = None) -> dict[str, str]:
        """Real ids for the operation: for a framework of the catalogue the first the examples
        name; else the first id from the area's create (made by ``by`` when given), each later
        one (a record under the earlier ones) from the POST that makes what the GET taking those
        ids reads. Then the record is brought into the state the operation starts from by the
        operations it is ``given``, run as the owner with their examples."""
        names = operation.ids
        made: dict[str, str] = {}
        for index, name in enumerate(names):
            if name in CATALOGUE_IDS and self.frameworks:
                made[name] = self.frameworks[0]
            elif name in self.provider_ids:
                made[name] = self.provider_ids[name]
            elif index == 0:
                made[name] = self.record(self._owner_of(operation, name), name, by)
            else:
                maker = self._maker(names[: index + 1])
                if maker is None:
                    made[name] = self.listed_under(names[: index + 1], made)
                else:
                    made[name] = _id_of(self.call(self.maker, maker, made))
        for step in operation.given:
            self.call(self.maker, self.steps[step], made)
        return made

    def _owner_of(self, operation: Operation, name: str) -> str:
        """The area whose record an id names: the operation's own when it creates records, else
        the area keeping the table of that kind (``person_id``: the people area), else the
        operation's own (a log, whose records ``record`` finds in its list)."""
        if operation.area in self.creates:
            return operation.area
        return next(
            (
                area.name
                for area in self.platform.areas
                for table in area.records
                if area.name in self.creates and f"{table.kind.replace(' ', '_')}_id" == name
            ),
            operation.area,
        )

    def _readers(self, ids: tuple[str, ...]) -> list[Operation]:
        return [op for op in self.operations if _http(op) == "GET" and op.ids == ids and not op.paged]

    def _maker(self, ids: tuple[str, ...]) -> Operation | None:
        """The POST that makes a record under ``ids[:-1]``: it answers (or accepts) the model a
        GET taking exactly ``ids`` reads; None when nothing makes it (a version of a file)."""
        read = {op.result for op in self._readers(ids)}
        return next(
            (op for op in self.operations if _http(op) == "POST" and op.ids == ids[:-1] and _made(op) in read),
            None,
        )


def manifest_ids(platform: Platform) -> dict[str, str]:
    """Path ids naming entries of the manifest of the provider the examples connect (the
    provider, one of its variables), which no create makes: {} when no such
    provider is installed."""
    connections = platform.services.get("integration_connections")
    if connections is None:
        return {}
    catalogue = connections.integrations.catalogue
    named = (text for area in platform.areas for op in area.operations for text in _strings(op.example or {}))
    slug = next((text for text in named if text in catalogue.providers), None)
    return catalogue.path_ids(slug) if slug is not None else {}


def _let_time_pass(platform: Platform, clock: FrozenClock) -> None:
    """What happens later with nobody calling: the webhook engine sends what the operations
    recorded to receivers that never answer, a day passing between rounds, until its retries are
    spent (an endpoint whose event failed every retry is disabled); then the chores run on the
    eve and on the morrow of each date the examples name (evidence is about to lapse, then has;
    an acceptance runs out; a task falls due), in order, the clock moved to each."""
    engine = platform.delivery_engine(_Offline(), draw=lambda: 0.5, concurrency=1)
    while engine.drain().busy:
        clock.advance(days=1)
    days = {
        dt.date.fromisoformat(text[:10])
        for area in platform.areas
        for op in area.operations
        for text in _strings(op.example or {})
        if _DATE.match(text)
    }
    moments = sorted(
        dt.datetime.combine(day + dt.timedelta(days=shift), dt.time(), tzinfo=dt.UTC)
        for day in days
        for shift in (-1, 1)
    )
    for moment in moments:
        if moment > clock.now():
            clock.advance(seconds=(moment - clock.now()).total_seconds())
            platform.run_chores()


def _logs(operation: Operation, area: str, name: str) -> bool:
    """Whether ``operation`` lists, for the whole organization, the area's table whose records
    the id ``name`` names (``snapshot_id``: a ``context snapshot``)."""
    table = operation.lists
    if operation.area != area or not operation.paged or operation.ids or table is None or not table.newest_first:
        return False
    return f"_{table.kind.replace(' ', '_')}_id".endswith(f"_{name}")


@attrs.frozen
class Observation:
    """What running the examples showed: the first body of each event type, and each operation
    that refused its example (an area whose ``example`` or ``given`` does not fit)."""

    seen: dict[str, Seen]
    failures: list[tuple[str, ComplianceError]]


def run_examples(areas: Sequence[Area[Any]] = AREAS) -> Observation:
    """Run every operation of every area with its example on a throwaway memory platform with a
    frozen clock and sequential ids, let time pass, and collect the events recorded.

    Each area runs in an organization of its own, as a new customer would use it: a webhook
    endpoint gets the events of its own area only, and an evidence export packs the tasks of its
    area (each a PDF to render), not the hundred every other area made."""
    clock = FrozenClock()
    settings = {"automations": AutomationSettings(prober=_Offline()), "signing": _FixedKey()}
    platform = Platform(open_store("memory://"), clock=clock, ids=SequentialIds(), areas=areas, settings=settings)
    seen: dict[str, Seen] = {}
    recording = [True]

    def collect(message: OutboxMessage, event: Event) -> None:
        if recording[0] and message.type not in seen:
            seen[message.type] = Seen(message.payload, type(event.subject))

    platform.signals.connect(None, collect)
    failures: list[tuple[str, ComplianceError]] = []
    with platform:
        for area in platform.areas:
            boot = platform.bootstrap("Acme Ltd")
            assert boot.owner_key.secret is not None
            maker = platform.access.admit(boot.owner_key.secret).actor
            recording[0] = False  # the caller's person and key are no examples of a person or a key
            person = platform.services["people"].create(
                maker, NewPerson(name="Owner person", email="owner.person@acme.example", role=Role.OWNER)
            )
            operator = platform.actor(boot.organization.id)  # only they (or the person) bind a manager's key
            issued = platform.services["api_keys"].create(
                operator, NewApiKey(name="Owner person's key", role=Role.OWNER, person_id=person.id)
            )
            recording[0] = True
            examples = _Examples(platform, maker, platform.access.admit(issued.secret).actor)
            examples.run(area)
            failures += examples.failures
        _let_time_pass(platform, clock)
    return Observation(seen=seen, failures=failures)


def observe(areas: Sequence[Area[Any]] = AREAS) -> dict[str, Seen]:
    """The first body of each event type the examples produce (``run_examples``)."""
    return run_examples(areas).seen


def _steady(first: Any, second: Any) -> Any:
    """``first`` with every value that differed in a second run (a key's random prefix) shown as
    ``"<random>"``, so the document is the same on every run."""
    if isinstance(first, dict) and isinstance(second, dict):
        return {key: _steady(value, second.get(key)) for key, value in first.items()}
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        return [_steady(a, b) for a, b in zip(first, second, strict=True)]
    return first if first == second else "<random>"


def steady_examples(areas: Sequence[Area[Any]] = AREAS) -> dict[str, Seen]:
    """``observe`` twice, keeping what both runs agree on."""
    first, second = observe(areas), observe(areas)
    return {
        event_type: Seen(_steady(seen.body, second[event_type].body if event_type in second else None), seen.model)
        for event_type, seen in first.items()
    }


def _resource(model: type) -> str:
    return f"`{model.__name__}`, as the API renders it"


def _when(event: type[Event]) -> str:
    doc = inspect.getdoc(event)
    return " ".join(doc.split()) if doc else ""


def _example(seen: Seen | None) -> list[str]:
    if seen is None:
        return ["No example: the declared examples do not reach this event.", ""]
    text = json.dumps(seen.body, indent=2, ensure_ascii=False)
    return [f"`data`: {_resource(seen.model)}.", "", "```json", text, "```", ""]


def _title(area: Area[Any]) -> str:
    return area.name.replace("_", " ").capitalize().replace("Api ", "API ")


_INTRO = """\
# Events

<!-- Generated by `python -m compliance_core.events_doc > docs/events.md` (`make events`) from
the event classes the areas declare; do not edit by hand: a test fails when this file is stale. -->

Every write records a typed event for each change it makes. The unit of work stores the event in
the outbox, and an [audit entry](api.md#audit-log) derived from it, in the same transaction as the
change, and announces it only after that transaction commits. A write that fails or rolls back
records nothing: no outbox row, no audit entry, no signal.

## The body

The same JSON body goes to the outbox, to webhooks and to in-process subscribers:

| key | value |
|---|---|
| `id` | the event's id (`evt_...`); the audit entry of the write carries it as `eventId` |
| `type` | one of the types below: `<resource>.created\\|updated\\|archived\\|deleted` and the spec's occasions |
| `createdAt` | when the write committed (UTC, ISO 8601) |
| `organizationId` | the organization the resource belongs to |
| `data` | the resource as the API renders it after the change (before it, for a deletion) |
| `previous` | for a change only: each changed field's wire name and its old value |

## Subscribing in-process

A `Platform` sends each committed event on its own blinker signals (never module-global ones):
`platform.signals.connect(None, receiver)` for every event, or
`platform.signals.connect(VendorUpdated, receiver)` (or its type, `"vendor.updated"`) for one
kind. A receiver is called as `receiver(message, event=event)`: `message` is the stored
`OutboxMessage` (`message.payload` is the body above) and `event` the typed event
(`event.subject` is the record, `event.previous` the old values by field name). Receivers are
held strongly, so a lambda works; a receiver that raises is logged and the others still run,
because the write has already committed. `examples/subscribe_to_events.py` is a runnable example.

```python
from compliance_core import Platform
from compliance_core.areas.findings import FindingSeverityChanged

platform = Platform.open("sqlite:///compliance.db")


def escalate(message, event):
    print(event.subject.title, event.previous["severity"], "->", event.subject.severity)


platform.signals.connect(FindingSeverityChanged, escalate)
```

Signals are in-process and best effort (a process that stops between the commit and the
signal misses it); webhook delivery reads the durable outbox instead.
"""


def render(areas: Sequence[Area[Any]] = AREAS, seen: Mapping[str, Seen] | None = None) -> str:
    """The whole of ``docs/events.md``."""
    seen = steady_examples(areas) if seen is None else seen
    declared = {event.type: area for area in areas for event in area.events}
    lines = [_INTRO, "## The spec's occasions", ""]
    lines += ["| type | status |", "|---|---|"]
    for event_type, area_title in SPEC_OCCASIONS:
        if event_type in declared:
            status = f"emitted by the {_title(declared[event_type])} area"
        else:
            status = f"arrives with the {area_title} area (not built yet)"
        lines.append(f"| `{event_type}` | {status} |")
    lines += ["", "## Catalogue", ""]
    lines += ["| type | area | when |", "|---|---|---|"]
    for area in areas:
        for event in area.events:
            lines.append(f"| [`{event.type}`](#{_anchor(event.type)}) | {_title(area)} | {_when(event)} |")
    lines.append("")
    for area in areas:
        if not area.events:
            continue
        lines += [f"### {_title(area)}", ""]
        for event in area.events:
            lines += [f"#### `{event.type}`", "", _when(event), ""]
            lines += _example(seen.get(event.type))
    return "\n".join(lines).rstrip("\n") + "\n"


def _anchor(event_type: str) -> str:
    """The heading anchor GitHub gives ``#### `vendor.created` ``."""
    return re.sub(r"[^a-z0-9_-]", "", event_type.lower())


def main(argv: Iterable[str] = ()) -> int:
    sys.stdout.write(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
