"""The schema each SQL store should hold, derived from the areas' declarations, and the
generator of the next frozen migration from what the existing migrations make.

``expected`` reads a declaration (the stored attrs model and its ``Records``: filters, facets,
partition) into tables, columns, filter indexes and counted facets; ``introspect`` reads the same
from a database the migrations built; ``diff`` compares them into changes (or refuses what must be
written by hand); ``write`` turns the changes into a migration file per store. ``python -m
compliance_store.schema NAME`` (``make migration NAME=...``) runs them in that order.
"""

from __future__ import annotations

from .diff import Change, Refused, changes
from .expected import Column, DeclaredTable, declared_tables
from .write import write_migration

__all__ = ["Change", "Column", "DeclaredTable", "Refused", "changes", "declared_tables", "write_migration"]
