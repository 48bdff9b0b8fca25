"""``python -m compliance_store.schema NAME`` (``make migration NAME=...``): write the next
migration of each SQL store from the difference between the areas' declarations and the schema
the existing migrations make, or say there is none.

PostgreSQL is needed for its scratch schema: ``--postgres URL``, else
``$COMPLIANCE_POSTGRES_URL``, else the local server the tests use. ``--check`` writes nothing and
exits 1 when a migration is missing (for CI).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import psycopg

from .. import postgres, sqlite
from .diff import Change, Refused, changes
from .expected import POSTGRES, SQLITE, declared_tables
from .scratch import postgres_schema, sqlite_schema
from .write import MIGRATION_NAME, write_migration

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def _directory(package: object) -> Path:
    return Path(getattr(package, "__file__", "")).parent / "migrations"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compliance_store.schema", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", nargs="?", help="what the migration does, in snake case (vendors_owner)")
    parser.add_argument("--postgres", metavar="URL", help="a PostgreSQL server for the scratch schema")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a migration is missing")
    args = parser.parse_args(argv)
    if not args.check and (args.name is None or not MIGRATION_NAME.match(args.name)):
        parser.error("NAME is required, lower-case snake case (make migration NAME=vendors_owner)")
    server = args.postgres or os.environ.get("COMPLIANCE_POSTGRES_URL", DEFAULT_POSTGRES_URL)
    declared = declared_tables()
    found: dict[str, list[Change]] = {}
    try:
        found[SQLITE] = changes(declared, sqlite_schema(), SQLITE)
        found[POSTGRES] = changes(declared, postgres_schema(server), POSTGRES)
    except Refused as refused:
        print("refused: these differences are written by hand, not generated:", file=sys.stderr)
        for problem in refused.problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    except psycopg.OperationalError as error:
        print(
            f"no PostgreSQL server for the scratch schema ({str(error).strip()}): pass --postgres URL", file=sys.stderr
        )
        return 1
    if not any(found.values()):
        print("no changes")
        return 0
    if args.check:
        print("a migration is missing: run make migration NAME=...", file=sys.stderr)
        return 1
    for dialect, package in ((SQLITE, sqlite), (POSTGRES, postgres)):
        if found[dialect]:
            print(write_migration(_directory(package), args.name, found[dialect], dialect))
        else:
            print(f"no changes for {dialect}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
