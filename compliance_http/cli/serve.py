"""``compliance serve``: the /v1 API, with the first-run banner that shows a new database's
Owner key once."""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import shutil
import sys
from pathlib import Path

from compliance_core import Platform
from compliance_core.areas.organizations import ORGANIZATIONS

from ..cors import cors_origins
from ..server import ServerError, serve_platform
from .keys import ROLES
from .output import passwords, report_error
from .stores import serve_settings, shown_db, store_url

__all__ = ["DEFAULT_ORGANIZATION", "first_run_banner", "program", "serve"]

DEFAULT_ORGANIZATION = "Default organization"


def program() -> str:
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
        "  The key is shown only this once (only its hash is stored). Keep it now: paste these",
        "  two lines into your shell; the docs' commands and the programs in examples/ read them:",
        f"    export COMPLIANCE_URL={server_url}",
        f"    export COMPLIANCE_API_KEY={secret}",
        "  Then try:",
        '    curl -H "X-API-Key: $COMPLIANCE_API_KEY" "$COMPLIANCE_URL/v1/vendors"',
        "",
    ]
    if db.startswith("memory:"):
        lines.append("  memory:// lives inside this server: its data and keys go when it stops.")
    else:
        command, where = shlex.quote(program), shlex.quote(shown_db(db))
        lines += [
            f"  Lost the key, or need more? On this machine (ROLE: {ROLES}):",
            f"  More keys:      {command} keys create --db {where} --org {boot.organization.id} --name NAME --role ROLE",
            f"  Organizations:  {command} org list --db {where}",
        ]
    lines.append(rule)
    return "\n".join(lines)


def serve(args: argparse.Namespace) -> int:
    url = store_url(args.db)
    if args.cors_origin:
        origins = cors_origins(args.cors_origin)
    else:
        origins = cors_origins([os.environ.get("COMPLIANCE_CORS_ORIGINS", "")], field="COMPLIANCE_CORS_ORIGINS")
    in_memory = url.startswith("memory:")
    workers = 1 if in_memory else args.workers or os.cpu_count() or 1
    if in_memory and (args.workers or 1) > 1:
        print("memory:// lives in one process: serving with 1 worker", file=sys.stderr, flush=True)
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
    )

    def prepare(platform: Platform, server_url: str) -> None:
        banner = first_run_banner(platform, server_url, url, program=program())
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
            settings=serve_settings(),
            cors_origins=origins,
        )
    except ServerError as error:
        report_error("internal_error", str(error), {}, passwords([url]))
        return 1
    print("Stopped.", file=sys.stderr, flush=True)
    return 0
