"""Operations declared on the service methods that run them, and the standard ones a table gets.

An operation used to be written three times (the method, its ``Operation`` and a route row) and
tied by a name string. Here the method is the declaration: ``@operation(ACTION, Route(...), ...)``
makes it an operation of whichever ``Area`` lists the class as its ``api``, named
``<area>.<method>``, and wraps it in the one runner every caller goes through, in-process or over
HTTP: the runner binds the arguments as ``Operation.bind`` does, authorizes against the declared
action before anything else (an in-process caller gets the same 403 as an HTTP caller, and
learns nothing of the body's rules), and hands an idempotent operation the ``Once`` its write
runs through, keyed by the operation's own name. The method's code is left with the area's rules.

``Standard`` gives a ``Records`` table its list, get, create, update, delete, archive and restore
from the same declaration, with hooks for what an area adds (a rule checked on the record to be
stored, extra fields archiving changes).
"""

from __future__ import annotations

import datetime as dt
import inspect
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar, cast

import attrs

from .events import Event
from .idempotency import run_idempotent
from .pages import Page, PageRequest
from .permissions import Action, Actor, authorize
from .records import Listed, Records, changed, fetch, list_page
from .registry import Operation, Route
from .uow import Tx

__all__ = ["operation", "Declared", "Once", "Standard", "page_of"]

M = TypeVar("M")
F = TypeVar("F")
T = TypeVar("T")

_NOT_IDS = frozenset({"filters", "page", "search", "data", "patch", "members", "once"})
"""Parameters of a declared method that are not path ids."""


class Once:
    """The idempotency of one call of an idempotent operation: its write runs through
    ``once(tx, payload, now, run)``, which replays the result kept for the caller's key (or
    runs ``run`` and keeps its result), under the operation's own name."""

    __slots__ = ("actor", "key", "operation")

    def __init__(self, actor: Actor, key: str | None, operation: str) -> None:
        self.actor = actor
        self.key = key
        self.operation = operation

    def __call__(self, tx: Tx, payload: Any, now: dt.datetime, run: Callable[[], T]) -> T:
        return run_idempotent(tx, self.actor, self.key, self.operation, payload, now, run)


class Declared:
    """A service method that is an operation: the declaration the ``Area`` reads and the runner
    every call goes through (see the module's docstring).

    The method takes ``(self, actor, *ids, ...)`` with the parameters ``Operation.parameters``
    names, except that an idempotent operation takes ``once`` (a ``Once``) where callers pass
    ``idempotency_key``.
    """

    declares_operation = True

    def __init__(
        self,
        run: Callable[..., Any],
        action: Action | None,
        route: Route | None,
        *,
        ids: tuple[str, ...] | None = None,
        given: tuple[Declared | str, ...] = (),
        **declaration: Any,
    ) -> None:
        self._run = run
        self._action = action
        self._route = route
        self._ids = _ids_of(run) if ids is None else ids
        self._given = given
        self._declaration = declaration
        self.method: str | None = getattr(run, "__name__", None)
        self.operation: Operation | None = None
        self.__doc__ = run.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.method = name

    @property
    def name(self) -> str:
        """The operation's name, once an area declared it."""
        if self.operation is None:
            raise RuntimeError(f"{self.method}: no Area lists this service as its api")
        return self.operation.name

    def declare(self, area: str) -> Operation:
        declared = Operation(
            name=f"{area}.{self.method}",
            action=self._action,
            route=self._route,
            ids=self._ids,
            given=tuple(f"{area}.{step if isinstance(step, str) else step.method}" for step in self._given),
            **self._declaration,
        )
        if self.operation is None:
            self.operation = declared
        elif self.operation != declared:
            raise ValueError(f"{declared.name} is already declared as {self.operation.name}")
        return self.operation

    def __get__(self, service: Any, owner: type | None = None) -> Any:
        if service is None:
            return self

        def call(actor: Actor, *args: Any, **kwargs: Any) -> Any:
            return self(service, actor, *args, **kwargs)

        call.__name__ = call.__qualname__ = self.method or "operation"
        call.__doc__ = self.__doc__
        return call

    def __call__(self, service: Any, actor: Actor, *args: Any, **kwargs: Any) -> Any:
        declared = self.operation
        if declared is None:
            raise RuntimeError(f"{self.method}: no Area lists this service as its api")
        if declared.action is not None:
            authorize(actor, declared.action)
        arguments = declared.bind(args, kwargs)
        if declared.idempotent:
            arguments["once"] = Once(actor, arguments.pop("idempotency_key"), declared.name)
        return self._run(service, actor, **arguments)


def _ids_of(run: Callable[..., Any]) -> tuple[str, ...]:
    parameters = list(inspect.signature(run).parameters)[2:]  # self, actor
    return tuple(name for name in parameters if name not in _NOT_IDS)


def operation(
    action: Action | None,
    route: Route | None,
    *,
    body: type | None = None,
    batch: Callable[..., Any] | None = None,
    filters: type | None = None,
    paged: bool = False,
    idempotent: bool = False,
    result: Any = None,
    example: Mapping[str, Any] | None = None,
    media_type: str | None = None,
    given: tuple[Declared | str, ...] = (),
    bounded: bool = False,
    lists: Records[Any, Any] | Listed[Any] | None = None,
    authored: bool = False,
) -> Callable[[Callable[..., Any]], Declared]:
    """Declare the decorated service method as an operation (the parameters are
    ``Operation``'s; the ids are the method's parameters between ``actor`` and the rest, and
    ``given`` names methods of the same class: the declared method itself when the class body
    defined it already, else its name)."""

    def declare(run: Callable[..., Any]) -> Declared:
        return Declared(
            run,
            action,
            route,
            given=given,
            body=body,
            batch=batch,
            filters=filters,
            paged=paged,
            idempotent=idempotent,
            result=result,
            example=example,
            media_type=media_type,
            bounded=bounded,
            lists=lists,
            authored=authored,
        )

    return declare


def page_of(
    service: Any,
    records: Records[M, F],
    actor: Actor,
    filters: F,
    page: PageRequest | None,
    scope: Hashable = None,
    *,
    under: tuple[Records[Any, Any], str] | None = None,
) -> Page[M]:
    """One page of the caller's organization's records, read in a transaction of its own (a
    service holds ``uow`` and ``pages``).

    :param scope: see ``records.list_page``
    :param under: the table and id of the record the list belongs to (a finding's history, a
        webhook's deliveries): read in the same transaction, so a missing parent is a 404
        rather than an empty page
    """
    with service.uow.read() as session:
        if under is not None:
            fetch(session, under[0], actor.organization_id, under[1])
        return list_page(session, records, service.pages, actor.organization_id, filters, page or PageRequest(), scope)


Check = Callable[[Any, Tx, Actor, M], None]
"""``check(service, tx, actor, record)``: a rule on the record about to be stored, run in the
write (it may read other tables through ``tx``); raises to refuse."""


class Standard(Generic[M, F]):
    """The standard operations of one ``Records`` table, each made by one call in the service's
    class body: ``list = VENDOR_TABLE.list(VENDOR_READ, Route("GET", "/v1/vendors", "..."))``.

    The service holds ``uow`` and ``pages``. Events are recorded as the area's own classes, with
    ``previous`` holding the old values of what a write changed.

    :param records: the table
    :param id: the path id naming one record (``vendor_id``)
    """

    def __init__(self, records: Records[M, F], id: str) -> None:
        self.records = records
        self.ids = (id,)

    def list(self, action: Action, route: Route) -> Declared:
        records = self.records
        if records.filters is None:

            def run_unfiltered(service: Any, actor: Actor, page: PageRequest | None = None) -> Page[M]:
                return page_of(service, records, actor, cast(F, None), page)

            return Declared(run_unfiltered, action, route, paged=True, result=records.model, lists=records)
        filter_model = records.filters

        def run(service: Any, actor: Actor, filters: F | None = None, page: PageRequest | None = None) -> Page[M]:
            return page_of(service, records, actor, filters or filter_model(), page)

        return Declared(run, action, route, filters=filter_model, paged=True, result=records.model, lists=records)

    def get(self, action: Action, route: Route) -> Declared:
        records = self.records

        def run(service: Any, actor: Actor, **ids: str) -> M:
            with service.uow.read() as session:
                return fetch(session, records, actor.organization_id, *ids.values())

        return Declared(run, action, route, ids=self.ids, result=records.model)

    def create(
        self,
        action: Action,
        route: Route,
        *,
        body: type,
        event: type[Event],
        example: Mapping[str, Any],
        shape: Callable[[M], M] | None = None,
        check: Check[M] | None = None,
    ) -> Declared:
        """An idempotent create: the record is the body's fields plus ``id``, the organization
        and the times.

        :param shape: the record with what it derives from its fields (a risk's scores)
        :param check: the area's rules on the new record
        """
        records = self.records

        def run(service: Any, actor: Actor, data: Any, once: Once) -> M:
            uow = service.uow
            now = uow.clock.now()

            def create() -> M:
                build: Callable[..., M] = records.model
                record = build(
                    id=uow.ids.new(records.prefix),
                    organization_id=actor.organization_id,
                    created_at=now,
                    updated_at=now,
                    **attrs.asdict(data, recurse=False),
                )
                if shape is not None:
                    record = shape(record)
                if check is not None:
                    check(service, tx, actor, record)
                tx[records].add(record)
                tx.record(event(organization_id=actor.organization_id, subject=record))
                return record

            with uow.write(actor) as tx:
                return once(tx, data, now, create)

        return Declared(run, action, route, body=body, idempotent=True, result=records.model, example=example)

    def update(
        self,
        action: Action,
        route: Route,
        *,
        body: type,
        event: type[Event],
        example: Mapping[str, Any],
        check: Callable[[Any, Tx, Actor, M, Mapping[str, Any]], None] | None = None,
        shape: Callable[[M], M] | None = None,
    ) -> Declared:
        """A PATCH: nothing is written when nothing changes.

        :param shape: the record with what it derives from its fields, as on ``create``; what
            it changes is in the event's ``previous`` too
        :param check: ``check(service, tx, actor, updated, previous)``: the area's rules on the
            changed record (``previous`` holds the old values of what changed)
        """
        records = self.records

        def run(service: Any, actor: Actor, patch: Any, **ids: str) -> M:
            changes = patch.changes()
            with service.uow.write(actor) as tx:
                current = fetch(tx, records, actor.organization_id, *ids.values())
                previous = changed(current, changes)
                if not previous:
                    return current
                updated = attrs.evolve(current, **changes, updated_at=service.uow.clock.now())  # type: ignore[misc]
                if shape is not None:
                    updated = shape(updated)
                    derived = {name: getattr(updated, name) for name in attrs.fields_dict(cast(Any, type(updated)))}
                    previous = {**changed(current, derived), **previous}
                    previous.pop("updated_at", None)
                if check is not None:
                    check(service, tx, actor, updated, previous)
                tx[records].update(updated)
                tx.record(event(organization_id=actor.organization_id, subject=updated, previous=previous))
            return updated

        return Declared(run, action, route, ids=self.ids, body=body, result=records.model, example=example)

    def delete(self, action: Action, route: Route, *, event: type[Event]) -> Declared:
        records = self.records

        def run(service: Any, actor: Actor, **ids: str) -> None:
            (item_id,) = ids.values()
            with service.uow.write(actor) as tx:
                current = fetch(tx, records, actor.organization_id, item_id)
                tx[records].delete(actor.organization_id, item_id)
                tx.record(event(organization_id=actor.organization_id, subject=current))

        return Declared(run, action, route, ids=self.ids, result=None)

    def archive(
        self, action: Action, route: Route, *, event: type[Event], also: Callable[[M], dict[str, Any]] | None = None
    ) -> Declared:
        """Keep the record out of the register (``archived``, ``archived_at``); archiving an
        archived record returns it unchanged.

        :param also: further fields archiving changes, from the current record
        """
        return self._archiving(action, route, event, also, archived=True)

    def restore(
        self, action: Action, route: Route, *, event: type[Event], also: Callable[[M], dict[str, Any]] | None = None
    ) -> Declared:
        """Bring an archived record back; restoring one in the register returns it unchanged.
        It starts from a record the area's ``archive`` operation archived (its ``given``)."""
        return self._archiving(action, route, event, also, archived=False, given=("archive",))

    def _archiving(
        self,
        action: Action,
        route: Route,
        event: type[Event],
        also: Callable[[M], dict[str, Any]] | None,
        *,
        archived: bool,
        given: tuple[str, ...] = (),
    ) -> Declared:
        records = self.records

        def run(service: Any, actor: Actor, **ids: str) -> M:
            with service.uow.write(actor) as tx:
                current = fetch(tx, records, actor.organization_id, *ids.values())
                if getattr(current, "archived") is archived:  # noqa: B009 (M is any archivable model)
                    return current
                now = service.uow.clock.now()
                changes = {"archived": archived, "archived_at": now if archived else None}
                if also is not None:
                    changes.update(also(current))
                previous = {name: getattr(current, name) for name in changes}
                updated = attrs.evolve(current, **changes, updated_at=now)  # type: ignore[misc]
                tx[records].update(updated)
                tx.record(event(organization_id=actor.organization_id, subject=updated, previous=previous))
            return updated

        return Declared(run, action, route, ids=self.ids, result=records.model, given=given)
