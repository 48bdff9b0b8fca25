"""What the instance-wide ports (blob store, signing key, vault keyring) share: an adapter chosen
by its URL's scheme among a group of entry points, a default beside a SQLite database, and one
instance per platform, opened on first use.

Each port keeps its own names (``open_blobs``, ``signer_of``, ...), its settings key and its
messages; this module holds the one way they are found and opened.
"""

from __future__ import annotations

import importlib.metadata
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import InternalError, ValidationError

__all__ = ["open_by_scheme", "beside_database", "opened_once"]


def open_by_scheme(group: str, field: str, what: str, url: str, **options: Any) -> Any:
    """The adapter of the ``group`` entry point named as ``url``'s scheme, called with ``url``
    and ``options``; a scheme nothing installed serves is a ``validation_error`` on ``field``."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    found = importlib.metadata.entry_points(group=group)
    for entry in found:
        if entry.name == scheme:
            return entry.load()(url, **options)
    known = sorted(entry.name for entry in found)
    raise ValidationError.field(field, url, f"no {what} for this URL scheme; installed: {', '.join(known) or 'none'}")


def beside_database(store_url: str, suffix: str) -> str | None:
    """``file://`` beside a SQLite database (its path with ``suffix`` appended, as SQLite names
    its ``-wal`` file), ``memory://`` for a store in memory, None for a server database (its
    servers share no directory: configure one).

    >>> beside_database("sqlite:////srv/compliance.db", "-blobs")
    'file:///srv/compliance.db-blobs'
    >>> beside_database("memory://", "-x"), beside_database("postgresql://db/x", "-x")
    ('memory://', None)
    """
    if store_url.startswith("memory:"):
        return "memory://"
    if store_url.startswith("sqlite:///"):
        path = store_url[len("sqlite:///") :]
        if path == ":memory:":
            return "memory://"
        return Path(path + suffix).absolute().as_uri()
    return None


def opened_once(
    context: Any,
    key: str,
    default_url: Callable[[str], str | None],
    opener: Callable[[str], Any],
    what: str,
    hint: str,
) -> Any:
    """``settings[key]`` (an adapter, or a URL ``opener`` opens), else ``default_url(store URL)``,
    opened on first use and kept in ``context.shared`` for the platform's lifetime, so a platform
    that never needs the port loads no adapter. Neither: an ``InternalError`` naming ``what`` is
    missing and, in ``hint``, how else to configure it."""
    shared: dict[str, Any] = context.shared
    found = shared.get(key)
    if found is None:
        chosen = context.settings.get(key)
        store_url: str = context.uow.store.url
        if chosen is None:
            chosen = default_url(store_url)
        if chosen is None:
            scheme = urllib.parse.urlsplit(store_url).scheme
            raise InternalError(f"no {what} is configured for this {scheme} store: set settings[{key!r}] {hint}")
        found = shared.setdefault(key, opener(chosen) if isinstance(chosen, str) else chosen)
    return found
