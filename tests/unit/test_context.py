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
    ContextConfirmed,
    ContextEntryPatch,
    ContextEntryUpdated,
    ContextPrevious,
    ContextUpdate,
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


def test_an_update_applies_every_change_in_one_snapshot(platform, owner) -> None:
    kept, edited, dropped = (platform.context.create(owner, REMOTE) for _ in range(3))
    snapshot = platform.context.apply(
        owner,
        ContextUpdate(
            add=[{"question": "Where is data hosted?", "answer": "In the EU."}],
            change=[{"id": edited.id, "tags": ["ops"]}, {"id": kept.id, "answer": "Fully remote."}],
            remove=[dropped.id],
        ),
    )
    assert [c.kind for c in snapshot.changes] == [ChangeKind.ADDED, ChangeKind.CHANGED, ChangeKind.REMOVED]
    assert snapshot.changes[1].previous == ContextPrevious(tags=("people", "ops"))
    assert snapshot.answers == platform.context.list(owner).total == 3
    assert platform.context.snapshots(owner).items[0] == snapshot


def test_an_update_that_changes_nothing_confirms_the_context(platform, owner) -> None:
    snapshot = platform.context.apply(owner, ContextUpdate())
    assert (snapshot.changes, snapshot.answers) == ((), 0)
    with platform.uow.read() as session:
        assert [m.type for m in session[OUTBOX].pending(100)] == [ContextConfirmed.type]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"change": [{"id": "ctx_nope", "answer": "x"}]}, "change[0].id"),
        ({"remove": ["ctx_nope"]}, "remove[0]"),
        ({"change": [{"id": "{known}"}, {"id": "{known}", "answer": "x"}]}, "change[1].id"),
        ({"change": [{"id": "{known}"}], "remove": ["{known}"]}, "remove[0]"),
        ({"add": [{"question": "q"}]}, "add[0].answer"),
        ({"change": [{"id": "{known}", "answer": ""}]}, "change[0].answer"),
        ({"change": [{"id": "{known}", "owner": "x"}]}, "change[0].owner"),
    ],
)
def test_an_update_is_refused_whole_naming_the_field(platform, owner, body, field) -> None:
    known = platform.context.create(owner, REMOTE)
    sent = {
        name: [
            {k: v.format(known=known.id) for k, v in i.items()} if isinstance(i, dict) else i.format(known=known.id)
            for i in items
        ]
        for name, items in body.items()
    }
    with pytest.raises(ValidationError) as raised:
        platform.context.apply(owner, ContextUpdate(**{"add": [REMOTE], **sent}))
    assert raised.value.details["field"] == field
    assert (platform.context.list(owner).total, platform.context.snapshots(owner).total) == (1, 1)


_TEXT = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=8)
_STEP = st.tuples(st.sampled_from(["add", "change", "remove"]), st.integers(0, 5), _TEXT, st.lists(_TEXT, max_size=3))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(batches=st.lists(st.lists(_STEP, min_size=1, max_size=4), max_size=6))
def test_replaying_the_snapshots_from_empty_gives_the_current_context(batches) -> None:
    """One step is sent through the operation of its own; several as one update."""
    platform = Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())
    owner = platform.actor(platform.bootstrap("Acme").organization.id)
    ids: list[str] = []
    for batch in batches:
        if len(batch) == 1:
            kind, pick, words, tags = batch[0]
            if kind == "add" or not ids:
                ids.append(platform.context.create(owner, NewContextEntry(question=words, answer=words, tags=tags)).id)
            elif kind == "change":
                platform.context.update(owner, ids[pick % len(ids)], ContextEntryPatch(answer=words, tags=tags))
            else:
                platform.context.delete(owner, ids.pop(pick % len(ids)))
            continue
        add, change, remove = [], {}, {}
        for kind, pick, words, tags in batch:
            target = ids[pick % len(ids)] if ids else None
            if kind == "add" or target is None:
                add.append({"question": words, "answer": words, "tags": tags})
            elif kind == "change" and target not in remove:
                change[target] = {"id": target, "answer": words, "tags": tags}
            elif kind == "remove" and target not in change:
                remove[target] = target
        snapshot = platform.context.apply(
            owner, ContextUpdate(add=add, change=list(change.values()), remove=list(remove))
        )
        ids = [i for i in ids if i not in remove] + [
            c.context_id for c in snapshot.changes if c.kind is ChangeKind.ADDED
        ]
    snapshots = platform.context.snapshots(owner, page=PageRequest(per_page=100)).items
    current = platform.context.list(owner, page=PageRequest(per_page=100)).items
    assert replay(list(snapshots)) == {
        e.id: ContextAnswer(question=e.question, answer=e.answer, tags=e.tags) for e in current
    }
    assert (snapshots[0].answers if snapshots else 0) == len(current)
