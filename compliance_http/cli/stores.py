"""Where a command's store is: ``--db`` (else ``COMPLIANCE_DB``, else ./compliance.db) as a store
URL, opened as a platform, and shown back without its password."""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compliance_core import Platform, ValidationError
from compliance_core.areas.frameworks import Frameworks
from compliance_core.areas.webhooks import WebhookPolicy
from compliance_core.kernel.blobs import SETTINGS_KEY, open_blobs

__all__ = [
    "DEFAULT_DB",
    "SQLITE",
    "blobs_setting",
    "open_platform",
    "serve_settings",
    "shown_db",
    "store_url",
    "webhook_settings",
]

DEFAULT_DB = "compliance.db"
SQLITE = "sqlite:///"


def store_url(db: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``--db`` (else ``COMPLIANCE_DB``, else ./compliance.db) as a store URL: a file path
    becomes ``sqlite:///<absolute path>``; a URL (``memory://``, ``sqlite:///...``) is kept."""
    environ = os.environ if environ is None else environ
    value = db if db is not None else environ.get("COMPLIANCE_DB") or DEFAULT_DB
    if not value.strip():
        raise ValidationError.field("db", value, "must be a file path or a store URL")
    if "://" in value:
        return value
    return SQLITE + str(Path(value).expanduser().resolve())


def webhook_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The platform settings ``serve`` and ``worker`` read from the environment:
    ``COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1`` lets webhooks reach private, loopback and link-local
    addresses over plain http (development and tests; the metadata address stays refused)."""
    environ = os.environ if environ is None else environ
    return {"webhooks": WebhookPolicy(allow_private=environ.get("COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS") == "1")}


def serve_settings(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What ``serve``, ``worker`` and ``maintenance`` read from the environment (their chores
    touch the same evidence files and frameworks the server does): the webhook settings,
    ``COMPLIANCE_FRAMEWORKS_DIR``, the directory holding the framework catalogue's published
    OSCAL files (docs/frameworks.md); without it the catalogue lists no framework."""
    environ = os.environ if environ is None else environ
    settings = webhook_settings(environ)
    directory = environ.get("COMPLIANCE_FRAMEWORKS_DIR")
    if directory:
        settings["frameworks"] = Frameworks(directory=Path(directory).expanduser())
    blobs = blobs_setting(environ)
    if blobs is not None:
        settings[SETTINGS_KEY] = blobs
    return settings


def blobs_setting(environ: Mapping[str, str] | None = None) -> str | None:
    """Where evidence files go (docs/blobs.md): ``COMPLIANCE_BLOBS_URL`` (``file:///dir``,
    ``s3://bucket/prefix?endpoint=...&region=...``) or ``COMPLIANCE_BLOBS_DIR`` (a directory);
    neither: None, and the platform keeps them beside a SQLite database. The URL is opened once
    here so that a mistyped one stops the server at start-up, not at the first upload; each
    server process then opens its own adapter from it."""
    environ = os.environ if environ is None else environ
    url = environ.get("COMPLIANCE_BLOBS_URL") or None
    directory = environ.get("COMPLIANCE_BLOBS_DIR") or None
    if url and directory:
        raise ValidationError.field(
            "COMPLIANCE_BLOBS_DIR", directory, "set COMPLIANCE_BLOBS_URL or COMPLIANCE_BLOBS_DIR, not both"
        )
    if directory:
        url = Path(directory).expanduser().resolve().as_uri()
    if url:
        open_blobs(url).close()
    return url


def open_platform(db: str | None, *, create: bool = False, settings: Mapping[str, Any] | None = None) -> Platform:
    """Open the store; only ``init`` and ``serve`` may create a new SQLite file, so a mistyped
    ``--db`` elsewhere is an error instead of a new empty database."""
    url = store_url(db)
    if not create and url.startswith(SQLITE) and not Path(url[len(SQLITE) :]).exists():
        raise ValidationError.field(
            "db", db if db is not None else url, "no database there yet: create one with `compliance init`"
        )
    return Platform.open(url, settings=settings)


def shown_db(url: str) -> str:
    """``url`` as a ``--db`` value to print: a SQLite file as its path, and any password in a
    URL replaced by ``PASSWORD`` (what is printed ends up in terminals and logs)."""
    if url.startswith(SQLITE):
        return url[len(SQLITE) :]
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    user = urllib.parse.quote(parts.username or "", safe="")
    host = parts.netloc.rsplit("@", 1)[1]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:PASSWORD@{host}"))
