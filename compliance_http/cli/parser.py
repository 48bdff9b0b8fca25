"""The command line's grammar: every command, its options and their help, each bound to the
function that runs it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

from compliance_core.areas import AREAS
from compliance_core.areas.organizations import Plan
from compliance_core.platform import declared_chores, version

from ..delivery import POLL_INTERVAL
from ..openapi import openapi_document
from ..server import DEFAULT_THREADS
from .imports import IMPORTABLE, import_register
from .keys import ROLES, create_key, list_keys, revoke_key
from .maintenance import maintenance as run_maintenance
from .migrate import migrate_store
from .organizations import PLANS, create_organization, list_organizations
from .organizations import init as run_init
from .organizations import set_plan as run_set_plan
from .output import emit
from .serve import DEFAULT_ORGANIZATION
from .serve import serve as run_serve
from .stores import DEFAULT_DB
from .worker import worker as run_worker

__all__ = ["UsageError", "build_parser"]


class UsageError(Exception):
    """A command line argparse rejects; reported as a JSON validation error like any other."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message, self.format_usage().strip())


def _openapi(args: argparse.Namespace) -> int:
    emit(openapi_document())
    return 0


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
    init.set_defaults(run=run_init)

    org = commands.add_parser("org", help="manage an organization", description="Manage an organization.")
    org.set_defaults(run=_help(org))
    org_commands = org.add_subparsers(dest="org_command", metavar="COMMAND")
    org_create = org_commands.add_parser(
        "create",
        help="add an organization and its Owner API key to an existing database",
        description="Add an organization and its Owner API key to a database that exists already (`compliance "
        'init` creates one); print {"organizationId", "apiKey"}. The key is shown only this once.',
    )
    _add_db(org_create)
    org_create.add_argument("--name", required=True, metavar="NAME", help="the organization's name")
    org_create.add_argument(
        "--plan",
        default=Plan.PROFESSIONAL.value,
        metavar="PLAN",
        help=f"one of {PLANS} (default: professional); sets the rate limits",
    )
    _add_limits(org_create)
    _options(org_create)
    org_create.set_defaults(run=create_organization)
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
    set_plan.set_defaults(run=run_set_plan)

    org_list = org_commands.add_parser(
        "list",
        help="list the organizations (id, name, plan)",
        description="Print every organization in the database as a JSON list: its id (for --org), "
        "name, plan and rate limits. Nothing secret is shown.",
    )
    _add_db(org_list)
    _options(org_list)
    org_list.set_defaults(run=list_organizations)

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
    create.set_defaults(run=create_key)

    listing = key_commands.add_parser(
        "list",
        help="list API keys (never their secrets)",
        description="Print the organization's API keys as a JSON list, without secrets or hashes.",
    )
    _add_db(listing)
    _add_org(listing)
    _options(listing)
    listing.set_defaults(run=list_keys)

    revoke = key_commands.add_parser(
        "revoke", help="revoke an API key", description="Revoke an API key at once; print the revoked key."
    )
    _add_db(revoke)
    _add_org(revoke)
    revoke.add_argument("--key", required=True, metavar="KEY_ID", help="the key's id (key_...)")
    _options(revoke, key_id="--key", keyId="--key")
    revoke.set_defaults(run=revoke_key)

    serve = commands.add_parser(
        "serve",
        help="serve the /v1 API",
        description="Serve the /v1 API from several waitress processes sharing one socket. On an empty "
        f'database, first create "{DEFAULT_ORGANIZATION}" and print its Owner API key once. Webhooks '
        "go to public https URLs only; set COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1 in its environment to allow "
        "plain http and private or loopback targets (development: a receiver on this machine). Set "
        "COMPLIANCE_FRAMEWORKS_DIR to the directory holding NIST's OSCAL files to serve the framework "
        "catalogue (docs/frameworks.md).",
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
    serve.add_argument(
        "--cors-origin",
        action="append",
        metavar="ORIGIN",
        help="let scripts of this browser origin (e.g. https://app.example.com) call the API; repeat for "
        "more (default: COMPLIANCE_CORS_ORIGINS, origins separated by commas or spaces; none if unset)",
    )
    _options(serve)
    serve.set_defaults(run=run_serve)

    chores = "; ".join(f"{chore.name} ({chore.report})" for chore in declared_chores(AREAS))
    counts = ", ".join(f'"{chore.report}": N' for chore in declared_chores(AREAS))
    worker = commands.add_parser(
        "worker",
        help="deliver webhooks (without serving the API)",
        description="Deliver webhook events from the database until stopped (SIGTERM or Ctrl+C), and run "
        "the scheduled chores (see maintenance). Several workers, and servers that deliver, may share one SQLite or "
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
    worker.set_defaults(run=run_worker)

    maintenance = commands.add_parser(
        "maintenance",
        help="run every scheduled chore once (purges, review sweeps, lapses), refresh statistics",
        description="Run once, now, every chore the areas declare (what a running server's lead worker "
        f"does on a schedule): {chores}. Print each one's count under its key, "
        f"{{{counts}}}. "
        "On SQLite, also analyse the tables again when one has grown or shrunk twofold since its "
        'statistics were taken, and list them as "analyzedTables". A failing chore does not stop the '
        "others: the counts of those that ran are printed and the failures are the error. Run it from "
        "cron for a database no server is serving.",
    )
    _add_db(maintenance)
    _options(maintenance)
    maintenance.set_defaults(run=run_maintenance)

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
    migrate.set_defaults(run=migrate_store)

    imports = commands.add_parser(
        "import",
        help="import people, risks or vendors from a CSV or XLSX file",
        description="Import a register's records from a CSV or XLSX file (the columns of its export; "
        "others are ignored) into an organization, as its Owner: every row is checked first, then all are "
        "created in one transaction with their events and audit entries, or none. With --dry-run, print "
        "every row's errors (row, field, value, reason) and write nothing. Prints the report as JSON; a "
        "progress bar is drawn on stderr when it is a terminal.",
    )
    imports.add_argument("register", choices=sorted(IMPORTABLE), help="the register to import into")
    imports.add_argument("file", metavar="FILE", help="the .csv or .xlsx file")
    _add_db(imports)
    _add_org(imports)
    imports.add_argument("--format", choices=("csv", "xlsx"), help="the file's format (default: its extension)")
    imports.add_argument("--dry-run", action="store_true", help="check every row and write nothing")
    _options(imports)
    imports.set_defaults(run=import_register)

    openapi = commands.add_parser(
        "openapi",
        help="print the OpenAPI 3.0 document",
        description="Print the OpenAPI 3.0 document of the /v1 API as JSON.",
    )
    openapi.set_defaults(run=_openapi)
    return parser
