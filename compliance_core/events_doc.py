"""The event catalogue, ``docs/events.md``, generated from the event classes the areas declare.

    python -m compliance_core.events_doc > docs/events.md      (or: make events)

Each type is listed with its class docstring (when it is emitted), the resource its ``data``
holds and an example body. The examples are real bodies: the generator runs every area's
declared operations, with their declared ``example`` bodies, on a throwaway memory platform with
a frozen clock and sequential ids, and keeps the first body of each type it sees. A test fails
when the committed file differs from what this writes. Nothing imports this module at run time.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .areas import AREAS
from .kernel.clock import FrozenClock
from .kernel.errors import ComplianceError
from .kernel.events import Event, OutboxMessage
from .kernel.ids import SequentialIds
from .kernel.permissions import Actor, Role
from .kernel.registry import Area, Operation
from .platform import Platform, open_store

__all__ = ["SPEC_OCCASIONS", "Seen", "observe", "steady_examples", "render", "main"]

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


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _body(operation: Operation, made: Mapping[str, str] | None = None) -> Any:
    """The operation's example as its body model (wire names to field names), each placeholder
    id (``rsk_...``) replaced by the record of that prefix an earlier area's example made (a
    comment names a real risk)."""
    assert operation.body is not None and operation.example is not None
    made = made or {}

    def placed(value: Any) -> Any:
        if isinstance(value, str) and value.endswith("_...") and value[: -len("_...")] in made:
            return made[value[: -len("_...")]]
        return value

    return operation.body(**{_snake(key): placed(value) for key, value in operation.example.items()})


def observe(areas: Sequence[Area[Any]] = AREAS) -> dict[str, Seen]:
    """Run each area's create (with its example), then each single-record operation (patches
    with their example, body-less ones as they are), and collect the events they record."""
    platform = Platform(open_store("memory://"), clock=FrozenClock(), ids=SequentialIds(), areas=areas)
    seen: dict[str, Seen] = {}
    latest: list[OutboxMessage] = []
    first: dict[str, str] = {}
    """The first record each example made, by id prefix (what later examples' placeholders name)."""

    def collect(message: OutboxMessage, event: Event) -> None:
        latest.append(message)
        if message.type not in seen:
            seen[message.type] = Seen(message.payload, type(event.subject))

    platform.signals.connect(None, collect)
    with platform:
        boot = platform.bootstrap("Acme Ltd")
        actor = Actor(organization_id=boot.organization.id, role=Role.OWNER, key_id=boot.owner_key.key.id)
        _enable_a_framework(platform, actor)
        made: dict[str, str] = {}
        """The record each area's create made, all made before any is changed or deleted (an
        attachment's example names a task that the tasks' own delete would take away)."""
        for area in areas:
            creates = [op for op in area.operations if op.method == "create" and op.example and not op.ids]
            if not creates:
                continue
            latest.clear()
            platform.services[area.name].create(actor, _body(creates[0], first))
            created = [m.subject_id for m in latest if m.type.endswith(".created")]
            if created:
                made[area.name] = created[-1]
                first.setdefault(created[-1].rsplit("_", 1)[0], created[-1])
        for area in areas:
            if area.name not in made:
                continue
            service = platform.services[area.name]
            for operation in area.operations:
                if len(operation.ids) != 1 or operation.paged:
                    continue
                method = getattr(service, operation.method)
                try:
                    if operation.body is None:
                        method(actor, made[area.name])
                    elif getattr(operation.body, "IS_PATCH", False) and operation.example:
                        method(actor, made[area.name], _body(operation, first))
                except ComplianceError:
                    continue  # an operation the example record does not allow: its event shows elsewhere
    return seen


def _enable_a_framework(platform: Platform, actor: Actor) -> None:
    """Enable a framework and implement one of its controls with a published policy, when the
    platform has those areas: the statement of applicability's examples need an enabled
    framework, and the spec's ``control.status_changed`` happens only in another area's write."""
    services = platform.services
    if "controls" not in services:
        return
    framework = next(iter(services["frameworks"].catalogue.installed()), None)
    if framework is None:
        return
    services["controls"].enable(actor, framework.id)
    if "policies" in services:
        from .areas.policies import NewPolicy, PublishPolicy

        control = services["controls"].list(actor).items[0]
        policy = services["policies"].create(
            actor, NewPolicy(name="Access control", content="Access is reviewed.", control_ids=[control.id])
        )
        services["policies"].publish(actor, policy.id, PublishPolicy())


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
