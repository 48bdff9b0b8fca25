"""What an area declares, and the session every store hands out.

An area is a few explicit declarations: its actions (who may do what), its operations (what a
caller can ask for), the repositories and record tables it keeps, its events and a factory for
its service. ``compliance_core.areas.AREAS`` lists the areas; the platform, the client, the HTTP
routes, the stores and the generic test suites loop over that list instead of being edited for
every area.

Repositories are reached through typed handles rather than session attributes: ``tx[VENDORS]``
is a ``RecordRepository[Vendor, VendorFilter]`` to the type checker, and a store resolves the
handle by its ``name``. Two handles may name one repository with different Protocols; that is
how an area reaches another area's records through a port (vendors look people up through the
kernel's ``directory``) without importing that area.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

import attrs

from .permissions import Action
from .validation import reports_every_error

if TYPE_CHECKING:
    from .events import Event
    from .links import Linkable
    from .pages import Listing
    from .records import Listed, Records

__all__ = ["Repo", "Session", "Route", "Operation", "Area", "Chore", "Download", "Accepted"]

R = TypeVar("R")
S = TypeVar("S")
J = TypeVar("J")
T = TypeVar("T")


@attrs.frozen
class Repo(Generic[R]):
    """A typed handle on the repository a store session keeps under ``name``."""

    name: str


@attrs.frozen
class Where:
    """A filter of another area's table (reached through a ``Repo``) by some of its columns:
    every column not named reads None ("any"), as the stores read filters by column; ``matches``
    is the rule the memory store applies."""

    values: Mapping[str, Any]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "values":
            raise AttributeError(name)
        return self.values.get(name)

    def matches(self, record: Any) -> bool:
        return all(getattr(record, name) == value for name, value in self.values.items())


class Session(Protocol):
    """One store transaction: the repository behind each handle."""

    def __getitem__(self, repo: Repo[R]) -> R: ...


@attrs.frozen(kw_only=True)
class Download:
    """A file an operation answers with, produced chunk by chunk so a large export is never held
    in memory whole.

    :param filename: what a browser saves it as
    :param media_type: e.g. ``text/csv``, ``application/pdf``
    :param chunks: the content; iterated once, by whoever sends it

    The chunks are consumed after the service has returned, outside its transaction, and over
    HTTP after the status line is sent: read what the file needs (and raise any error) before
    returning, and let the chunks only format what was read.
    """

    filename: str
    media_type: str
    chunks: Any = attrs.field(repr=False)
    """An iterable of ``bytes``."""
    inline: bool = False
    """Shown where it is opened (a picture, such as the risk heat map's SVG) rather than saved:
    over HTTP ``Content-Disposition: inline`` instead of ``attachment``."""

    def read(self) -> bytes:
        """The whole content at once (in-process callers, tests)."""
        return b"".join(self.chunks)


@attrs.frozen(kw_only=True)
class Accepted(Generic[J]):
    """An operation that starts work and answers before it is done: ``job`` is the model of the
    work (with an ``id``), ``status`` the operation that reports on it by that id. Declare the
    result as ``Accepted[JobModel]``."""

    job: J
    status: str
    ids: tuple[str, ...] = ()
    """The status operation's path ids when it takes more than the job's id (parents first,
    e.g. ``(webhook_id, delivery_id)``); empty means ``(job.id,)``."""

    @property
    def location_ids(self) -> tuple[str, ...]:
        """The ids the status operation's route is called with."""
        return self.ids or (str(getattr(self.job, "id")),)  # noqa: B009 (J is any model with an id)


@attrs.frozen
class Route:
    """Where an operation sits on the wire: plain data, so core declares it beside the operation
    and the HTTP app, its document and its client all read the same row.

    :param method: ``GET``, ``POST``, ``PATCH``, ``PUT`` or ``DELETE``
    :param path: ``/v1/...``, with the operation's ids as ``{vendor_id}`` (the document shows
        them in camelCase)
    :param summary: one line for the document
    :param status: the success status when it is not the one the result implies (201 for a
        create; otherwise 200, 204 for no result, 202 for ``Accepted``)
    :param aliases: earlier paths of the same operation (with the same ids), still answered
        exactly as ``path`` is and documented as deprecated, so a renamed path breaks no client
    """

    method: str
    path: str
    summary: str
    status: int | None = None
    aliases: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Operation:
    """One thing a caller can ask an area for, declared once in core.

    Areas declare theirs on the service method that runs them (``kernel.operations.operation``)
    and list the service class as the ``Area``'s ``api``. A caller calls ``<area>.<method>`` with
    ``(actor, *ids, ...)`` and then, in this order, ``filters, page`` (paged lists), the body
    under ``body_argument``, and ``idempotency_key`` (keyword only); ``bind`` names them. The
    client, the HTTP app, its document and the generic suites are derived from this.

    :param name: ``"<area>.<method>"``
    :param route: its HTTP route (None: not on the wire)
    :param action: the permission it needs; None for public operations (health)
    :param ids: path identifiers in the order the service takes them
    :param body: the command model the request body becomes
    :param batch: the body is a list of ``body`` entries (all or nothing), and this is the
        area's check of such a list: ``batch(entries, extra_errors=[...])`` raises one error
        listing every bad entry, merged with the errors a transport found first (unknown keys)
    :param filters: the filter model of a list (its fields are the query parameters); an
        operation that is not ``paged`` takes them too, for all that match (an export)
    :param paged: a list answered one page at a time
    :param idempotent: takes an Idempotency-Key
    :param result: the model answered: an attrs class, ``dict``, ``Download``, ``Accepted[Job]``,
        or None (nothing: 204 over HTTP)
    :param example: a valid request body in wire form, for the documentation and the generic
        suites (which create records with it)
    :param media_type: for a ``Download`` result, the media type of the file it answers with
        (``text/csv``), as documented; None documents ``application/octet-stream``
    :param given: operations of the same area (taking the same ids, each with its ``example``)
        that bring a new record into the state this one starts from (approving needs a
        submission first); the generic suites run them as the owner before calling this one
    :param bounded: its work runs on a bounded pool under a time limit (the PDF renderer), so it
        may refuse with ``ServiceUnavailable`` (HTTP 503 with Retry-After) when that pool is busy
    :param authored: only the caller who wrote the record may call it (editing a comment), a rule
        on the record beside the role's action: the generic suites make the record as the
        calling role (with the create's example) instead of as the owner
    :param lists: the table a paged list (or an export of the whole list, or a report over it
        such as the risk heat map) reads (a ``Records`` table, or a kernel table ``Listed``), whose
        declaration says what the list searches, sorts and ranges by (``listing``: the ``q``,
        ``sort``, ``from`` and ``to`` parameters); an operation that is not paged takes them as
        ``search``, a ``PageRequest`` whose page and size it does not use
    """

    name: str
    action: Action | None
    route: Route | None = None
    ids: tuple[str, ...] = ()
    body: type | None = None
    batch: Callable[..., Any] | None = None
    filters: type | None = None
    paged: bool = False
    idempotent: bool = False
    result: Any = None
    example: Mapping[str, Any] | None = None
    media_type: str | None = None
    given: tuple[str, ...] = ()
    bounded: bool = False
    authored: bool = False
    lists: Records[Any, Any] | Listed[Any] | None = None

    @property
    def listing(self) -> Listing | None:
        """What the list offers besides its filters (None: paging only)."""
        return None if self.lists is None else self.lists.listing

    def __attrs_post_init__(self) -> None:
        if self.body is not None:
            reports_every_error(self.body)

    @property
    def area(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def optional_body(self) -> bool:
        """Its body has no required field, so it may be left out (a transition's optional
        comment): in-process the body defaults to the model built from nothing, over HTTP an
        empty request body is taken as ``{}``. A body model may say it is never empty
        (``BODY_REQUIRED = True``) although each field has a default, when its fields are
        alternatives of which one must come (evidence: a file, a link or a note)."""
        return (
            self.body is not None
            and self.batch is None
            and not getattr(self.body, "BODY_REQUIRED", False)
            and all(field.default is not attrs.NOTHING for field in attrs.fields(self.body))
        )

    @property
    def method(self) -> str:
        return self.name.split(".", 1)[-1]

    @property
    def public(self) -> bool:
        return self.action is None

    @property
    def body_argument(self) -> str | None:
        """The keyword under which the service takes the body."""
        if self.body is None:
            return None
        if self.batch is not None:
            return "members"
        return "patch" if getattr(self.body, "IS_PATCH", False) else "data"

    @property
    def parameters(self) -> tuple[str, ...]:
        """The service's parameters after ``actor``, in order (``idempotency_key`` last)."""
        names = list(self.ids)
        if self.paged:
            names += ["filters", "page"] if self.filters is not None else ["page"]
        elif self.filters is not None:  # a report over the list's records (a heat map), an export
            names += ["filters", "search"] if self.listing is not None else ["filters"]
        if self.body_argument is not None:
            names.append(self.body_argument)
        if self.idempotent:
            names.append("idempotency_key")
        return tuple(names)

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Client arguments by name, the way the service would bind them."""
        names = self.parameters
        positional = [n for n in names if n != "idempotency_key"]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments, got {len(args)}")
        bound = dict(zip(positional, args))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                raise TypeError(f"{self.name}() got an unexpected or repeated argument {key!r}")
            bound[key] = value
        for name in names:
            if name not in bound and name in self.ids:
                raise TypeError(f"{self.name}() is missing {name!r}")
            bound.setdefault(name, None)
        body = self.body_argument
        if body is not None and bound[body] is None and self.optional_body:
            bound[body] = cast(type, self.body)()
        return bound


@attrs.frozen(kw_only=True)
class Chore(Generic[T]):
    """Work nobody calls for, such as lapsing expired risk acceptances, declared once by the area
    that owns it (or by the kernel, for its own tables). ``Platform.run_chores``, the server's lead
    worker and ``compliance maintenance`` all run the same declarations, so a new chore needs no
    edit of the server or the command line.

    :param name: what it does, as a phrase a log completes ("could not <name>"); unique
    :param every: how long the server's lead worker waits between two runs (it runs every chore
        once as it starts, too)
    :param run: ``run(target, now) -> count``, where ``target`` is the area's service (a kernel
        chore gets the platform's ``Context``) and ``now`` the aware UTC time to judge by. It is
        maintenance done as the system (``uow.write(None)``), and must be harmless run twice or
        from several processes at once: whatever it checks, it checks inside its write.
    :param report: the key of its count in ``compliance maintenance``'s report
        (``purgedOutboxMessages``)
    :param done: the line the server logs after a run, with ``%d`` for the count
    :param log_zero: log ``done`` even when nothing was done (a heartbeat of the schedule)
    """

    name: str
    every: dt.timedelta
    run: Callable[[T, dt.datetime], int]
    report: str
    done: str
    log_zero: bool = False


@attrs.frozen(kw_only=True)
class Area(Generic[S]):
    """One area of the platform.

    :param name: the service's attribute on ``Platform`` and ``Client`` (``vendors``)
    :param service: builds the service from the platform's ``Context``
    :param api: the service class whose methods declare the operations
        (``kernel.operations.operation``); they are named ``<name>.<method>`` and come first
        in ``operations``, in the order the class defines them
    :param tag: the spec's group name of its operations (``Finding Templates``)
    :param operations: what callers can ask for (besides the ``api``'s)
    :param actions: the permissions its operations need
    :param records: organization-scoped tables every store keeps for it
    :param events: the event classes its writes record
    :param chores: the scheduled work it does as the system, run with its service
    :param links: its tables whose records name the controls they serve (``kernel.links``)
    :param ports: what it offers other areas to read without importing it (``kernel.context_history``)
    """

    name: str
    service: Callable[[Any], S]
    api: type | None = None
    tag: str | None = None
    operations: tuple[Operation, ...] = ()
    actions: tuple[Action, ...] = ()
    records: tuple[Records[Any, Any], ...] = ()
    events: tuple[type[Event], ...] = ()
    chores: tuple[Chore[S], ...] = ()
    links: tuple[Linkable, ...] = ()
    ports: tuple[Any, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.api is not None:
            declared = tuple(declaration.declare(self.name) for declaration in declarations(self.api))
            extra = tuple(operation for operation in self.operations if operation not in declared)
            object.__setattr__(self, "operations", (*declared, *extra))
        for operation in self.operations:
            if operation.area != self.name:
                raise ValueError(f"operation {operation.name} declared in area {self.name}")
            if operation.action is not None and operation.action not in self.actions:
                raise ValueError(f"operation {operation.name} needs {operation.action.name}, not declared")
            if operation.media_type is not None and operation.result is not Download:
                raise ValueError(f"operation {operation.name} declares a media type but answers no Download")
        names = {operation.name: operation for operation in self.operations}
        for operation in self.operations:
            for step in operation.given:
                if step not in names or names[step].ids != operation.ids:
                    raise ValueError(f"operation {operation.name} is given {step}, not an operation on the same ids")


class Declaration(Protocol):
    """What a service class holds for each operation it declares (``kernel.operations``)."""

    declares_operation: bool

    def declare(self, area: str) -> Operation:
        """The operation, named for ``area``; the declaration runs it under that name from now on."""
        ...


def declarations(api: type) -> list[Declaration]:
    """The operations ``api`` declares, in the order its class bodies define them (bases first)."""
    found: dict[str, Declaration] = {}
    for cls in reversed(api.__mro__):
        for name, value in vars(cls).items():
            if getattr(value, "declares_operation", False) is True:
                found[name] = value
    return list(found.values())
