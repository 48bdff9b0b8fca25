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

One module per command group (``organizations``, ``keys``, ``serve``, ``worker``,
``maintenance``, ``migrate``), the grammar in ``parser``, the entry point in ``entry``.
"""

from __future__ import annotations

from .entry import main
from .parser import build_parser
from .serve import DEFAULT_ORGANIZATION, first_run_banner
from .stores import DEFAULT_DB, store_url

__all__ = ["main", "build_parser", "store_url", "first_run_banner", "DEFAULT_DB", "DEFAULT_ORGANIZATION"]
