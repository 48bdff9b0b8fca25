"""The ``compliance`` command: set up organizations and API keys, serve the /v1 API, and move an
instance from one store to another.

Every command prints JSON on stdout (except ``serve``, which prints a banner and its URL) and
every failure one JSON error on stderr, ``{"error": {"code", "message", "details"}}``: exit code 2
for bad input, 1 for other errors. An error about an input names the option the user typed
(``"field": "--db"``, not the store's ``url``). A command group run without its command
(``compliance``, ``compliance keys``) prints its help on stderr and exits 2. ``COMPLIANCE_DB`` is
the default for every ``--db``, which takes a SQLite file or a store URL (``postgresql://...``).
A password in a store URL is never printed: errors show it as ``***``.

    compliance init --db compliance.db --org-name "Acme"
    compliance serve --db compliance.db --port 3333
    compliance migrate-store --from compliance.db --to postgresql://app@db.internal/compliance
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shlex
import shutil
import signal
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from compliance_core import ComplianceError, Conflict, PageRequest, Platform, Role, ValidationError
from compliance_core.areas.api_keys import ApiKey, NewApiKey
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.areas.webhooks import WebhookPolicy
from compliance_core.kernel.pagination import MAX_PER_PAGE
from compliance_core.kernel.rendering import json_value
from compliance_core.kernel.uow import Store
from compliance_core.platform import open_store, version

from .delivery import POLL_INTERVAL, delivering
from .openapi import openapi_document
from .server import DEFAULT_THREADS, ServerError, configure_logging, periodic_purge, refresh_statistics, serve_platform
from .wire import Wire

__all__ = ["main", "build_parser", "store_url", "first_run_banner", "DEFAULT_DB", "DEFAULT_ORGANIZATION"]

DEFAULT_DB = "compliance.db"
DEFAULT_ORGANIZATION = "Default organization"
_SQLITE = "sqlite:///"
PLANS = ", ".join(p.value for p in Plan)
ROLES = ", ".join(r.value for r in Role)


class UsageError(Exception):
    """A command line argparse rejects; reported as a JSON validation error like any other."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage().strip())


def store_url(db: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``--db`` (else ``COMPLIANCE_DB``, else ./compliance.db) as a store URL: a file path
    becomes ``sqlite:///<absolute path>``; a URL (``memory://``, ``sqlite:///...``) is kept."""
    environ = os.environ if environ is None else environ
    value = db if db is not None else environ.get("COMPLIANCE_DB") or DEFAULT_DB
    if not value.strip():
        raise ValidationError.field("db", value, "must be a file path or a store URL")
    if "://" in value:
        return value
    return _SQLITE + str(Path(value).expanduser().resolve())


def webhook_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The platform settings ``serve`` and ``worker`` read from the environment:
    ``COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1`` lets webhooks reach private, loopback and link-local
    addresses over plain http (development and tests; the metadata address stays refused)."""
    environ = os.environ if environ is None else environ
    return {"webhooks": WebhookPolicy(allow_private=environ.get("COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS") == "1")}


def _open(db: str | None, *, create: bool = False, settings: Mapping[str, Any] | None = None) -> Platform:
    """Open the store; only ``init`` and ``serve`` may create a new SQLite file, so a mistyped
    ``--db`` elsewhere is an error instead of a new empty database."""
    url = store_url(db)
    if not create and url.startswith(_SQLITE) and not Path(url[len(_SQLITE) :]).exists():
        raise ValidationError.field(
            "db", db if db is not None else url, "no database there yet: create one with `compliance init`"
        )
    return Platform.open(url, settings=settings)


def _db_option(url: str) -> str:
    """``url`` as a ``--db`` value to print: a SQLite file as its path, and any password in a
    URL replaced by ``PASSWORD`` (what is printed ends up in terminals and logs)."""
    if url.startswith(_SQLITE):
        return url[len(_SQLITE) :]
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    user = urllib.parse.quote(parts.username or "", safe="")
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:PASSWORD@{host}"))


def _program() -> str:
    """How to run this command again from the same shell: ``compliance`` when that is what PATH
    finds, else the path it was started by (``.venv/bin/compliance`` under ``make serve``)."""
    started = sys.argv[0] if sys.argv else ""
    if Path(started).name != "compliance":
        return "compliance"
    found = shutil.which("compliance")
    try:
        if found is not None and os.path.samefile(found, started):
            return "compliance"
    except OSError:
        pass
    return started


def _emit(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str), flush=True)


def _error(code: str, message: str, details: Mapping[str, Any], hide: Sequence[str] = ()) -> None:
    """One JSON error on stderr; each string of ``hide`` (the passwords of the store URLs given)
    is replaced by ``***`` wherever it appears, whatever put it there."""
    body = _scrub({"error": {"code": code, "message": message, "details": json_value(dict(details))}}, hide)
    print(json.dumps(body, default=str), file=sys.stderr, flush=True)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def _passwords(words: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The passwords in the URLs of the command line's words (``--db``, ``--from``, ``--to``,
    ``--db=...``, a mistyped option) and of ``COMPLIANCE_DB``: in the URL's user part or as a
    ``password=`` parameter, as typed, percent-decoded and percent-encoded. Longest first, so a
    password containing another is hidden whole."""
    environ = os.environ if environ is None else environ
    found: set[str] = set()
    for url in _URL.findall(" ".join([*words, environ.get("COMPLIANCE_DB") or ""])):
        try:
            parts = urllib.parse.urlsplit(url)
            password = parts.password
        except ValueError:
            continue
        values = [password] if password else []
        values += [value for name, value in urllib.parse.parse_qsl(parts.query) if name == "password" and value]
        for value in values:
            found.update({value, urllib.parse.unquote(value), urllib.parse.quote(value, safe="")})
    return sorted(found, key=len, reverse=True)


def _scrub(value: Any, hide: Sequence[str]) -> Any:
    if not hide:
        return value
    if isinstance(value, str):
        for secret in hide:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {_scrub(key, hide): _scrub(item, hide) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub(item, hide) for item in value]
    return value


def _as_options(error: ValidationError, options: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The error's message and details with core's field name (``url``, ``expiresAt``) replaced
    by the option the user typed (``--db``, ``--expires-at``); a field no option gave is kept."""
    details = dict(error.details)
    field = details.get("field")
    option = options.get(field) if isinstance(field, str) else None
    if field is None or option is None:
        return error.message, details
    details["field"] = option
    message = error.message
    if message.startswith(f"{field}:"):
        message = option + message[len(field) :]
    return message, details


# --- commands ---------------------------------------------------------------------------------


def _init(args: argparse.Namespace) -> int:
    with _open(args.db, create=True) as platform:
        boot = platform.bootstrap(args.org_name, args.plan, rpm=args.rpm, burst=args.burst)
    _emit({"organizationId": boot.organization.id, "apiKey": boot.owner_key.secret})
    return 0


def _set_plan(args: argparse.Namespace) -> int:
    with _open(args.db) as platform:
        organization = platform.organizations.set_plan(
            platform.actor(args.org), args.plan, rpm=args.rpm, burst=args.burst
        )
        _emit(Wire(platform.renderer).unstructure(organization))
    return 0


def _org_list(args: argparse.Namespace) -> int:
    with _open(args.db) as platform:
        with platform.uow.read() as session:
            organizations = session[ORGANIZATIONS].list_all()
        _emit(Wire(platform.renderer).unstructure(organizations))
    return 0


def _keys_create(args: argparse.Namespace) -> int:
    data = NewApiKey(name=args.name, role=args.role, expires_at=args.expires_at, person_id=args.person_id)
    with _open(args.db) as platform:
        issued = platform.api_keys.create(platform.actor(args.org), data)
    _emit({"id": issued.key.id, "key": issued.secret})
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    with _open(args.db) as platform:
        actor = platform.actor(args.org)
        keys: list[ApiKey] = []
        number = 1
        while True:
            page = platform.api_keys.list(actor, PageRequest(page=number, per_page=MAX_PER_PAGE))
            keys.extend(page.items)
            if page.page >= page.total_pages:
                break
            number += 1
        _emit(Wire(platform.renderer).unstructure(keys))  # as GET /v1/api-keys shows them: no secret, no hash
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    with _open(args.db) as platform:
        key = platform.api_keys.revoke(platform.actor(args.org), args.key)
        _emit(Wire(platform.renderer).unstructure(key))
    return 0


def _maintenance(args: argparse.Namespace) -> int:
    with _open(args.db) as platform:
        purged = platform.purge_idempotency()
        published = platform.purge_outbox()
        due = platform.policies.sweep_reviews()
        lapsed = platform.lapse_risk_acceptances()
        analysed = refresh_statistics(platform.store)
    report: dict[str, Any] = {
        "purgedIdempotencyRecords": purged,
        "purgedOutboxMessages": published,
        "policiesDueForReview": due,
        "lapsedRiskAcceptances": lapsed,
    }
    if analysed is not None:
        report["analyzedTables"] = analysed
    _emit(report)
    return 0


def _store_for(url: str, option: str, *, create: bool) -> Store:
    """Open the store at ``url`` for ``migrate-store``; an error about the URL names ``option``
    (``source`` or ``target``, reported as ``--from``/``--to``)."""
    if url.startswith("memory:"):
        raise ValidationError.field(option, url, "memory:// lives inside one process: there is nothing to copy")
    if not create and url.startswith(_SQLITE) and not Path(url[len(_SQLITE) :]).exists():
        raise ValidationError.field(option, _db_option(url), "no database there")
    try:
        return open_store(url)
    except ValidationError as error:
        if error.details.get("field") not in ("url", "schema"):
            raise
        value = error.details.get("value")
        raise ValidationError.field(option, value, str(error.details.get("reason", error.message))) from None


def _migrate_store(args: argparse.Namespace) -> int:
    source_url, target_url = store_url(args.source), store_url(args.target)
    if source_url == target_url:
        raise ValidationError.field("target", _db_option(target_url), "is the source itself")
    with contextlib.ExitStack() as opened:
        source = _store_for(source_url, "source", create=False)
        opened.callback(source.close)
        target = _store_for(target_url, "target", create=True)
        opened.callback(target.close)
        copy_to = getattr(source, "copy_to", None)  # compliance_store.copy, reached through the store
        if copy_to is None:
            raise ValidationError.field("source", _db_option(source_url), "this store cannot be copied from")
        try:
            report = copy_to(target, replace=args.replace)
        except Conflict as error:
            if error.details.get("reason") != "target_not_empty":
                raise
            raise Conflict(
                "the target already holds data: migrate into an empty store, or pass --replace to delete "
                "every row of the target first (in the same transaction as the copy)",
                error.details,
            ) from None
    _emit(report.as_json())
    return 0


def first_run_banner(platform: Platform, server_url: str, db: str, *, program: str = "compliance") -> str | None:
    """Bootstrap an empty database and return the banner showing its Owner key (the only time
    the key is ever shown); None when the database already has an organization.

    :param db: the store URL the server opened, shown in the banner's hints as ``--db`` (a
        SQLite file as its path, a password as ``PASSWORD``)
    :param program: how the hints run the command (see ``_program``)
    """
    with platform.uow.read() as session:
        if session[ORGANIZATIONS].count() > 0:
            return None
    boot = platform.bootstrap_if_empty(DEFAULT_ORGANIZATION)
    if boot is None:
        return None
    secret = boot.owner_key.secret
    rule = "=" * 78
    lines = [
        rule,
        f'  First run: created the organization "{boot.organization.name}" and its Owner API key.',
        "",
        f"    organizationId  {boot.organization.id}",
        f"    API key         {secret}",
        f"    API             {server_url}/v1",
        "",
        "  The key is shown only this once (only its hash is stored). Keep it now, e.g.:",
        f"    export KEY={secret}",
        f'    curl -H "X-API-Key: $KEY" {server_url}/v1/vendors',
        "",
    ]
    if db.startswith("memory:"):
        lines.append("  memory:// lives inside this server: its data and keys go when it stops.")
    else:
        command, where = shlex.quote(program), shlex.quote(_db_option(db))
        lines += [
            f"  Lost the key, or need more? On this machine (ROLE: {ROLES}):",
            f"  More keys:      {command} keys create --db {where} --org {boot.organization.id} --name NAME --role ROLE",
            f"  Organizations:  {command} org list --db {where}",
        ]
    lines.append(rule)
    return "\n".join(lines)


def _serve(args: argparse.Namespace) -> int:
    url = store_url(args.db)
    in_memory = url.startswith("memory:")
    workers = 1 if in_memory else args.workers or os.cpu_count() or 1
    if in_memory and (args.workers or 1) > 1:
        print("memory:// lives in one process: serving with 1 worker", file=sys.stderr, flush=True)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
    )

    def prepare(platform: Platform, server_url: str) -> None:
        banner = first_run_banner(platform, server_url, url, program=_program())
        if banner is not None:
            print(banner, flush=True)

    def ready(server_url: str) -> None:
        print(
            f"Compliance API listening on {server_url}/v1 ({workers} worker process"
            f"{'es' if workers > 1 else ''}, {args.threads} threads each). Press Ctrl+C to stop.",
            flush=True,
        )

    try:
        serve_platform(
            url,
            args.host,
            args.port,
            workers,
            args.threads,
            prepare=prepare,
            on_ready=ready,
            access_log=not args.quiet,
            deliver=not args.no_deliver,
            settings=webhook_settings(),
        )
    except ServerError as error:
        _error("internal_error", str(error), {}, _passwords([url]))
        return 1
    print("Stopped.", file=sys.stderr, flush=True)
    return 0


def _worker(args: argparse.Namespace) -> int:
    url = store_url(args.db)
    if url.startswith("memory:"):
        raise ValidationError.field("db", url, "a memory:// store lives inside its server: deliver from `serve`")
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
    )
    configure_logging(access_log=False)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with (
            _open(args.db, settings=webhook_settings()) as platform,
            periodic_purge(platform),
            delivering(platform, interval=args.interval),
        ):
            print(f"Delivering webhooks from {_db_option(url)} (pid {os.getpid()}). Stop with Ctrl+C.", flush=True)
            while not stop.wait(1.0):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("Stopped.", file=sys.stderr, flush=True)
    return 0


def _openapi(args: argparse.Namespace) -> int:
    _emit(openapi_document())
    return 0


# --- parser -----------------------------------------------------------------------------------


def _whole(low: int, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        if value < low or (high is not None and value > high):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bound}, not {value}")
        return value

    return parse


_positive = _whole(1)
_port = _whole(0, 65535)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _options(parser: argparse.ArgumentParser, **fields: str) -> None:
    """Let errors from this command name its options: each option under the names core may give
    its value (``expires_at``, ``expiresAt`` for ``--expires-at``), plus ``fields`` (core's name ->
    option) where core calls it something else (``url`` for ``--db``)."""
    names: dict[str, str] = {}
    for action in parser._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if long and action.dest not in ("help", "version"):
            names[action.dest] = names[_camel(action.dest)] = long[0]
    if "db" in names:
        names["url"] = names["db"]
    if "org" in names:
        names["organization_id"] = names["organizationId"] = names["org"]
    names.update(fields)
    parser.set_defaults(options=names)


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """What a command group does when run without one of its commands: print its help."""

    def run(args: argparse.Namespace) -> int:
        print(parser.format_help(), end="", file=sys.stderr, flush=True)
        return 2

    return run


_STORES = "a SQLite file, or a store URL (sqlite:///path.db, postgresql://user@host:5432/db?schema=name)"


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help="a SQLite file, or a store URL (sqlite:///path.db, postgresql://user@host:5432/db?schema=name, "
        f"memory://); default: $COMPLIANCE_DB, else ./{DEFAULT_DB}",
    )


def _add_org(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--org", required=True, metavar="ORG_ID", help="the organization's id (org_...)")


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rpm", type=_positive, metavar="N", help="negotiated requests per minute per API key (enterprise plan only)"
    )
    parser.add_argument(
        "--burst",
        type=_positive,
        metavar="N",
        help="negotiated burst per API key (enterprise plan only; default twice --rpm)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="compliance",
        description="Set up organizations and API keys, and serve the compliance /v1 API. "
        "Output is JSON; errors are one JSON object on stderr.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.set_defaults(run=_help(parser))
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    init = commands.add_parser(
        "init",
        help="create an organization and its Owner API key",
        description="Create the database if needed, an organization and an Owner API key; print "
        '{"organizationId", "apiKey"}. The key is shown only this once.',
    )
    _add_db(init)
    init.add_argument("--org-name", required=True, metavar="NAME", help="the organization's name")
    init.add_argument(
        "--plan",
        default=Plan.PROFESSIONAL.value,
        metavar="PLAN",
        help=f"one of {PLANS} (default: professional); sets the rate limits",
    )
    _add_limits(init)
    _options(init, name="--org-name")
    init.set_defaults(run=_init)

    org = commands.add_parser("org", help="manage an organization", description="Manage an organization.")
    org.set_defaults(run=_help(org))
    org_commands = org.add_subparsers(dest="org_command", metavar="COMMAND")
    set_plan = org_commands.add_parser(
        "set-plan",
        help="change the organization's plan (rate limits)",
        description="Change an organization's plan, and so its per-key rate limits; print the organization.",
    )
    _add_db(set_plan)
    _add_org(set_plan)
    set_plan.add_argument("--plan", required=True, metavar="PLAN", help=f"one of {PLANS}")
    _add_limits(set_plan)
    _options(set_plan)
    set_plan.set_defaults(run=_set_plan)

    org_list = org_commands.add_parser(
        "list",
        help="list the organizations (id, name, plan)",
        description="Print every organization in the database as a JSON list: its id (for --org), "
        "name, plan and rate limits. Nothing secret is shown.",
    )
    _add_db(org_list)
    _options(org_list)
    org_list.set_defaults(run=_org_list)

    keys = commands.add_parser("keys", help="manage API keys", description="Manage an organization's API keys.")
    keys.set_defaults(run=_help(keys))
    key_commands = keys.add_subparsers(dest="keys_command", metavar="COMMAND")
    create = key_commands.add_parser(
        "create",
        help="create an API key and print it once",
        description='Create an API key; print {"id", "key"}. The key is shown only this once.',
    )
    _add_db(create)
    _add_org(create)
    create.add_argument("--name", required=True, help="what the key is for")
    create.add_argument("--role", required=True, help=f"the role the key acts with: {ROLES}")
    create.add_argument(
        "--expires-at",
        metavar="ISO",
        help="expiry as an ISO 8601 date-time, e.g. 2027-01-31T00:00:00Z (default: never)",
    )
    create.add_argument(
        "--person-id",
        metavar="ID",
        help="the person the key acts as (required for the employee and contractor roles)",
    )
    _options(create)
    create.set_defaults(run=_keys_create)

    listing = key_commands.add_parser(
        "list",
        help="list API keys (never their secrets)",
        description="Print the organization's API keys as a JSON list, without secrets or hashes.",
    )
    _add_db(listing)
    _add_org(listing)
    _options(listing)
    listing.set_defaults(run=_keys_list)

    revoke = key_commands.add_parser(
        "revoke", help="revoke an API key", description="Revoke an API key at once; print the revoked key."
    )
    _add_db(revoke)
    _add_org(revoke)
    revoke.add_argument("--key", required=True, metavar="KEY_ID", help="the key's id (key_...)")
    _options(revoke, key_id="--key", keyId="--key")
    revoke.set_defaults(run=_keys_revoke)

    serve = commands.add_parser(
        "serve",
        help="serve the /v1 API",
        description="Serve the /v1 API from several waitress processes sharing one socket. On an empty "
        f'database, first create "{DEFAULT_ORGANIZATION}" and print its Owner API key once.',
    )
    _add_db(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=_port,
        default=3333,
        help="port to listen on (default: 3333; 0 picks a free port, printed at start)",
    )
    serve.add_argument("--workers", type=_positive, metavar="N", help="server processes (default: one per CPU)")
    serve.add_argument(
        "--threads",
        type=_positive,
        default=DEFAULT_THREADS,
        metavar="N",
        help=f"request threads per process (default: {DEFAULT_THREADS})",
    )
    serve.add_argument(
        "--quiet",
        action="store_true",
        help="write no access log (by default one JSON line per request on stderr: time, request id, "
        "key id, route, status, duration; never a key, query or body)",
    )
    serve.add_argument(
        "--no-deliver",
        action="store_true",
        help="do not deliver webhooks from this server (run `compliance worker` for that instead)",
    )
    _options(serve)
    serve.set_defaults(run=_serve)

    worker = commands.add_parser(
        "worker",
        help="deliver webhooks (without serving the API)",
        description="Deliver webhook events from the database until stopped (SIGTERM or Ctrl+C), and purge "
        "expired idempotency records. Several workers, and servers that deliver, may share one SQLite or "
        "PostgreSQL database: each attempt is claimed by exactly one of them. Set "
        "COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1 to allow private and loopback targets (development).",
    )
    _add_db(worker)
    worker.add_argument(
        "--interval",
        type=float,
        default=POLL_INTERVAL,
        metavar="SECONDS",
        help=f"seconds between two looks at the database when idle (default: {POLL_INTERVAL:g})",
    )
    _options(worker)
    worker.set_defaults(run=_worker)

    maintenance = commands.add_parser(
        "maintenance",
        help="purge idempotency records and old published events, sweep policy reviews and risk acceptances,"
        " refresh statistics",
        description="Delete the idempotency records older than 24 hours (they are never replayed "
        "again), move published policies past their review date to needs_review, return the risks "
        "whose acceptance has reached its expiry date to review, and print "
        '{"purgedIdempotencyRecords": N, "policiesDueForReview": M, "lapsedRiskAcceptances": K}. '
        "On SQLite, also analyse the tables again when one has grown or shrunk twofold since its "
        'statistics were taken, and list them as "analyzedTables". A running server also does this '
        "periodically; run it from cron for a database no server is serving.",
    )
    _add_db(maintenance)
    _options(maintenance)
    maintenance.set_defaults(run=_maintenance)

    migrate = commands.add_parser(
        "migrate-store",
        help="copy an instance into another store (SQLite to PostgreSQL or back), verified",
        description="Copy every row of every table (organizations, API keys and their usage, rate-limit "
        "buckets, idempotency records, the outbox, every area's records, archived ones included) from one "
        "store into another, in one read transaction on the source and one write transaction on the "
        "target; then read the target back and compare each table's row count and checksum with the "
        "source's. Print the report as JSON. Nothing is written unless everything matches. Stop the "
        "servers writing to the source first: what they write after the copy has started is not copied.",
    )
    migrate.add_argument("--from", dest="source", required=True, metavar="PATH|URL", help=f"the source: {_STORES}")
    migrate.add_argument(
        "--to",
        dest="target",
        required=True,
        metavar="PATH|URL",
        help=f"the target: {_STORES}; created and migrated if new, refused if it holds any row (see --replace)",
    )
    migrate.add_argument(
        "--replace",
        action="store_true",
        help="delete every row of the target's tables first, in the same transaction as the copy",
    )
    _options(migrate)
    migrate.set_defaults(run=_migrate_store)

    openapi = commands.add_parser(
        "openapi",
        help="print the OpenAPI 3.0 document",
        description="Print the OpenAPI 3.0 document of the /v1 API as JSON.",
    )
    openapi.set_defaults(run=_openapi)
    return parser


def _quiet_libraries() -> None:
    """Keep libraries' log records off stderr unless logging is configured (``serve`` does): a
    command's stderr is its one JSON error. (Without a handler anywhere, Python prints warnings
    such as psycopg_pool's "error connecting" on stderr as plain text.)"""
    logger = logging.getLogger("psycopg")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 error, 2 bad input)."""
    parser = build_parser()
    hide = _passwords(sys.argv[1:] if argv is None else argv)
    _quiet_libraries()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help and --version
        return stop.code if isinstance(stop.code, int) else 0
    except UsageError as error:
        _error("validation_error", error.message, {"usage": error.usage}, hide)
        return 2
    try:
        return int(args.run(args))
    except ValidationError as error:
        message, details = _as_options(error, getattr(args, "options", {}))
        _error(error.code, message, details, hide)
        return 2
    except ComplianceError as error:
        _error(error.code, error.message, error.details, hide)
        return 1
    except KeyboardInterrupt:  # Ctrl+C before serve's own handlers are in place
        return 130
