"""The ``compliance`` command: set up organizations and API keys, and serve the /v1 API.

Every command prints JSON on stdout (except ``serve``, which prints a banner and its URL) and
every failure one JSON error on stderr, ``{"error": {"code", "message", "details"}}``: exit code 2
for bad input, 1 for other errors. ``COMPLIANCE_DB`` is the default for every ``--db``.

    compliance init --db compliance.db --org-name "Acme"
    compliance serve --db compliance.db --port 3333
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from compliance_core import ComplianceError, PageRequest, Platform, Role, ValidationError
from compliance_core.areas.api_keys import ApiKey, NewApiKey
from compliance_core.areas.organizations import ORGANIZATIONS, Plan
from compliance_core.kernel.pagination import MAX_PER_PAGE
from compliance_core.kernel.rendering import json_value
from compliance_core.platform import version

from .openapi import openapi_document
from .server import DEFAULT_THREADS, ServerError, serve_platform
from .wire import Wire

__all__ = ["main", "build_parser", "store_url", "DEFAULT_DB", "DEFAULT_ORGANIZATION"]

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


def _open(db: str | None, *, create: bool = False) -> Platform:
    """Open the store; only ``init`` and ``serve`` may create a new SQLite file, so a mistyped
    ``--db`` elsewhere is an error instead of a new empty database."""
    url = store_url(db)
    if not create and url.startswith(_SQLITE) and not Path(url[len(_SQLITE) :]).exists():
        raise ValidationError.field(
            "db", db if db is not None else url, "no database there yet: create one with `compliance init`"
        )
    return Platform.open(url)


def _emit(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str), flush=True)


def _error(code: str, message: str, details: Mapping[str, Any]) -> None:
    body = {"error": {"code": code, "message": message, "details": json_value(dict(details))}}
    print(json.dumps(body, default=str), file=sys.stderr, flush=True)


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


def _keys_create(args: argparse.Namespace) -> int:
    data = NewApiKey(name=args.name, role=args.role, expires_at=args.expires_at)
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


def first_run_banner(platform: Platform, server_url: str) -> str | None:
    """Bootstrap an empty database and return the banner showing its Owner key (the only time
    the key is ever shown); None when the database already has an organization."""
    with platform.uow.read() as session:
        if session[ORGANIZATIONS].count() > 0:
            return None
    boot = platform.bootstrap(DEFAULT_ORGANIZATION)
    rule = "=" * 78
    return "\n".join(
        [
            rule,
            f'  First run: created the organization "{boot.organization.name}" and its Owner API key.',
            "",
            f"    organizationId  {boot.organization.id}",
            f"    API key         {boot.owner_key.secret}",
            f"    API             {server_url}/v1",
            "",
            "  The key is shown only this once (only its hash is stored). Keep it now, e.g.:",
            f'    curl -H "X-API-Key: {boot.owner_key.secret}" {server_url}/v1/vendors',
            f"  More keys: compliance keys create --org {boot.organization.id} --name NAME --role ROLE",
            rule,
        ]
    )


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
        banner = first_run_banner(platform, server_url)
        if banner is not None:
            print(banner, flush=True)

    def ready(server_url: str) -> None:
        print(
            f"Compliance API listening on {server_url}/v1 ({workers} worker process"
            f"{'es' if workers > 1 else ''}, {args.threads} threads each). Press Ctrl+C to stop.",
            flush=True,
        )

    try:
        serve_platform(url, args.host, args.port, workers, args.threads, prepare=prepare, on_ready=ready)
    except ServerError as error:
        _error("internal_error", str(error), {})
        return 1
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


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="SQLite file, or a store URL (memory://, sqlite:///path.db); "
        f"default: $COMPLIANCE_DB, else ./{DEFAULT_DB}",
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
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    init.set_defaults(run=_init)

    org = commands.add_parser("org", help="manage an organization", description="Manage an organization.")
    org_commands = org.add_subparsers(dest="org_command", metavar="COMMAND", required=True)
    set_plan = org_commands.add_parser(
        "set-plan",
        help="change the organization's plan (rate limits)",
        description="Change an organization's plan, and so its per-key rate limits; print the organization.",
    )
    _add_db(set_plan)
    _add_org(set_plan)
    set_plan.add_argument("--plan", required=True, metavar="PLAN", help=f"one of {PLANS}")
    _add_limits(set_plan)
    set_plan.set_defaults(run=_set_plan)

    keys = commands.add_parser("keys", help="manage API keys", description="Manage an organization's API keys.")
    key_commands = keys.add_subparsers(dest="keys_command", metavar="COMMAND", required=True)
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
    create.set_defaults(run=_keys_create)

    listing = key_commands.add_parser(
        "list",
        help="list API keys (never their secrets)",
        description="Print the organization's API keys as a JSON list, without secrets or hashes.",
    )
    _add_db(listing)
    _add_org(listing)
    listing.set_defaults(run=_keys_list)

    revoke = key_commands.add_parser(
        "revoke", help="revoke an API key", description="Revoke an API key at once; print the revoked key."
    )
    _add_db(revoke)
    _add_org(revoke)
    revoke.add_argument("--key", required=True, metavar="KEY_ID", help="the key's id (key_...)")
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
    serve.set_defaults(run=_serve)

    openapi = commands.add_parser(
        "openapi",
        help="print the OpenAPI 3.0 document",
        description="Print the OpenAPI 3.0 document of the /v1 API as JSON.",
    )
    openapi.set_defaults(run=_openapi)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 error, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.run(args))
    except SystemExit as stop:  # --help and --version
        return stop.code if isinstance(stop.code, int) else 0
    except UsageError as error:
        _error("validation_error", error.message, {"usage": error.usage})
        return 2
    except ComplianceError as error:
        _error(error.code, error.message, error.details)
        return 2 if isinstance(error, ValidationError) else 1
    except KeyboardInterrupt:  # Ctrl+C before serve's own handlers are in place
        return 130
