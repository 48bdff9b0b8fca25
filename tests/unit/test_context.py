"""Context in-process: answers, the snapshot every write keeps, and replaying them (the generic
suites cover the rest)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import Forbidden, FrozenClock, NotFound, Platform, Role, SequentialIds, ValidationError
from compliance_core.areas.context import (
    ChangeKind,
    ContextAnswer,
    ContextEntryPatch,
    ContextEntryUpdated,
    ContextPrevious,
    NewContextEntry,
    replay,
)
from compliance_core.areas.people import NewPerson
from compliance_core.kernel.audit import AUDIT_LOG, AuditFilter
from compliance_core.kernel.events import OUTBOX
from compliance_core.kernel.pages import PageRequest
from compliance_store.memory import MemoryStore

REMOTE = NewContextEntry(question="How does your team work?", answer="Fully remote.", tags=["people", "people", "ops"])


def test_each_write_keeps_a_snapshot_of_what_it_changed_newest_first(platform, owner, clock) -> None:
    entry = platform.context.create(owner, REMOTE)
    assert entry.tags == ("people", "ops")
    clock.advance(seconds=1)
    platform.context.update(owner, entry.id, ContextEntryPatch(answer="Remote, with an office."))
    clock.advance(seconds=1)
    platform.context.delete(owner, entry.id)

    snapshots = platform.context.snapshots(owner).items
    removed, changed, added = snapshots
    assert [(c.context_id, c.kind, c.answer, c.tags, c.previous) for c in added.changes] == [
        (entry.id, ChangeKind.ADDED, "Fully remote.", ("people", "ops"), ContextPrevious())
    ]
    assert [(c.kind, c.answer, c.previous) for c in changed.changes] == [
        (ChangeKind.CHANGED, "Remote, with an office.", ContextPrevious(answer="Fully remote."))
    ]
    assert [(c.kind, c.answer) for c in removed.changes] == [(ChangeKind.REMOVED, "Remote, with an office.")]
    assert [s.answers for s in snapshots] == [0, 1, 1]
    assert added.changed_by == owner.principal and added.created_at < changed.created_at
    assert platform.context.snapshot(owner, changed.id) == changed
    with platform.uow.read() as session:
        audited = session[AUDIT_LOG].list(owner.organization_id, AuditFilter(entity_id=entry.id), PageRequest())[0]
    assert [a.action for a in audited] == ["context_entry.deleted", "context_entry.updated", "context_entry.created"]


def test_a_snapshot_names_the_person_behind_the_caller(platform, owner) -> None:
    person = platform.people.create(owner, NewPerson(name="Ada Admin", email="ada@acme.example", role=Role.ADMIN))
    admin = platform.actor(owner.organization_id, Role.ADMIN, person_id=person.id)
    platform.context.create(admin, REMOTE)
    (snapshot,) = platform.context.snapshots(owner).items
    assert (snapshot.changed_by_person_id, snapshot.changed_by_person_name) == (person.id, "Ada Admin")


def test_an_update_that_changes_nothing_writes_nothing(platform, owner) -> None:
    entry = platform.context.create(owner, REMOTE)
    assert platform.context.update(owner, entry.id, ContextEntryPatch(answer=" Fully remote. ")) == entry
    assert platform.context.snapshots(owner).total == 1
    with platform.uow.read() as session:
        assert ContextEntryUpdated.type not in [m.type for m in session[OUTBOX].pending(100)]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": "q" * 1001, "answer": "a"}, "question"),
        ({"question": "q", "answer": "a" * 10_001}, "answer"),
        ({"question": "q", "answer": " "}, "answer"),
        ({"question": "q", "answer": "a", "tags": [f"t{n}" for n in range(21)]}, "tags"),
        ({"question": "q", "answer": "a", "tags": ["ok", "t" * 51]}, "tags[1]"),
        ({"question": "q", "answer": "a", "tags": "ops"}, "tags"),
    ],
)
def test_bounds_are_refused_naming_the_field(platform, owner, body, field) -> None:
    with pytest.raises(ValidationError) as raised:
        platform.context.create(owner, NewContextEntry(**body))
    assert raised.value.details["field"] == field
    assert platform.context.snapshots(owner).total == 0


def test_everyone_reads_and_only_owners_and_admins_write(platform, owner, actor_as) -> None:
    entry = platform.context.create(actor_as(Role.ADMIN), REMOTE)
    for role in (Role.AUDITOR, Role.EMPLOYEE, Role.CONTRACTOR):
        assert platform.context.get(actor_as(role), entry.id) == entry
        assert platform.context.snapshots(actor_as(role)).total == 1
        with pytest.raises(Forbidden):
            platform.context.update(actor_as(role), entry.id, ContextEntryPatch(answer="x"))


def test_another_organizations_snapshots_are_not_found(platform, owner, other_org) -> None:
    platform.context.create(other_org, REMOTE)
    (theirs,) = platform.context.snapshots(other_org).items
    assert platform.context.snapshots(owner).total == 0
    with pytest.raises(NotFound):
        platform.context.snapshot(owner, theirs.id)


_TEXT = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8)
_STEPS = st.lists(
    st.tuples(st.sampled_from(["add", "change", "remove"]), st.integers(0, 5), _TEXT, st.lists(_TEXT, max_size=3)),
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=_STEPS)
def test_replaying_the_snapshots_from_empty_gives_the_current_context(steps) -> None:
    platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    ids: list[str] = []
    for kind, pick, words, tags in steps:
        if kind == "add" or not ids:
            ids.append(platform.context.create(owner, NewContextEntry(question=words, answer=words, tags=tags)).id)
        elif kind == "change":
            platform.context.update(owner, ids[pick % len(ids)], ContextEntryPatch(answer=words, tags=tags))
        else:
            platform.context.delete(owner, ids.pop(pick % len(ids)))
    snapshots = platform.context.snapshots(owner, page=PageRequest(per_page=100)).items
    current = platform.context.list(owner, page=PageRequest(per_page=100)).items
    assert replay(list(snapshots)) == {
        e.id: ContextAnswer(question=e.question, answer=e.answer, tags=e.tags) for e in current
    }
    assert (snapshots[0].answers if snapshots else 0) == len(current)
