"""``compliance migrate-store``: copy an instance into another store, verified (the copy itself is
the store's: ``compliance_store.copy``, reached through the source store)."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from compliance_core import Conflict, ValidationError
from compliance_core.kernel.uow import Store
from compliance_core.platform import open_store

from .output import emit
from .progress import copy_bar
from .stores import SQLITE, shown_db, store_url

__all__ = ["migrate_store", "store_for"]


def store_for(url: str, option: str, *, create: bool) -> Store:
    """Open the store at ``url`` for ``migrate-store``; an error about the URL names ``option``
    (``source`` or ``target``, reported as ``--from``/``--to``)."""
    if url.startswith("memory:"):
        raise ValidationError.field(option, url, "memory:// lives inside one process: there is nothing to copy")
    if not create and url.startswith(SQLITE) and not Path(url[len(SQLITE) :]).exists():
        raise ValidationError.field(option, shown_db(url), "no database there")
    try:
        return open_store(url)
    except ValidationError as error:
        if error.details.get("field") not in ("url", "schema"):
            raise
        value = error.details.get("value")
        raise ValidationError.field(option, value, str(error.details.get("reason", error.message))) from None


def migrate_store(args: argparse.Namespace) -> int:
    source_url, target_url = store_url(args.source), store_url(args.target)
    if source_url == target_url:
        raise ValidationError.field("target", shown_db(target_url), "is the source itself")
    with contextlib.ExitStack() as opened:
        source = store_for(source_url, "source", create=False)
        opened.callback(source.close)
        target = store_for(target_url, "target", create=True)
        opened.callback(target.close)
        copy_to = getattr(source, "copy_to", None)  # compliance_store.copy, reached through the store
        if copy_to is None:
            raise ValidationError.field("source", shown_db(source_url), "this store cannot be copied from")
        try:
            report = copy_to(target, replace=args.replace, progress=copy_bar())
        except Conflict as error:
            if error.details.get("reason") != "target_not_empty":
                raise
            raise Conflict(
                "the target already holds data: migrate into an empty store, or pass --replace to delete "
                "every row of the target first (in the same transaction as the copy)",
                error.details,
            ) from None
    emit(report.as_json())
    return 0
