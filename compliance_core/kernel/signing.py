"""The instance's signing key: the port an export signs its manifest with.

An auditor who receives an evidence export checks it without trusting the channel it came by: the
manifest is signed with this instance's Ed25519 key, whose public half the instance publishes. Core
signs through this Protocol only; the key and the cryptography live in an adapter outside core
(``compliance_signing``, on the ``cryptography`` package), found by URL scheme through the
``compliance.signing`` entry points, as stores and blob stores are:

- ``file:///path/to/key.pem``: a PKCS #8 PEM file, generated on first use (mode 0600) and read
  from then on, so every process of the instance signs with the same key;
- ``memory://``: a key made for the life of the platform (tests, a platform over memory).

Which one a platform uses: ``settings["signing"]`` (a ``Signer`` or a URL), else the
``COMPLIANCE_SIGNING_KEY_FILE`` environment variable (a path), else a key file beside a SQLite
database (``<database>-signing-key.pem``), else memory for a store in memory. PostgreSQL has no
default: its servers share no directory, so the key file is configured.
"""

from __future__ import annotations

import importlib.metadata
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from .errors import InternalError, ValidationError

__all__ = [
    "SIGNING_ENTRY_POINTS",
    "SETTINGS_KEY",
    "KEY_FILE_VARIABLE",
    "Signer",
    "open_signer",
    "default_signing_url",
    "signer_of",
]

SIGNING_ENTRY_POINTS = "compliance.signing"
SETTINGS_KEY = "signing"
"""``Platform(settings={"signing": ...})``: a ``Signer``, or a URL ``open_signer`` understands."""
KEY_FILE_VARIABLE = "COMPLIANCE_SIGNING_KEY_FILE"


class Signer(Protocol):
    """One private key of the instance, used to sign and to check its own signatures."""

    @property
    def algorithm(self) -> str:
        """``Ed25519``."""
        ...

    @property
    def public_key_pem(self) -> str:
        """The public key as a PEM ``PUBLIC KEY`` block (SubjectPublicKeyInfo)."""
        ...

    @property
    def fingerprint(self) -> str:
        """``sha256:`` and the hex SHA-256 of the raw public key: what a person compares."""
        ...

    def sign(self, data: bytes) -> bytes:
        """The signature of exactly ``data``."""
        ...

    def verify(self, data: bytes, signature: bytes) -> bool:
        """Whether ``signature`` is this key's signature of exactly ``data``."""
        ...


def open_signer(url: str) -> Signer:
    """The key at ``url`` (``file:///...`` or ``memory://``) from the adapter installed for its
    scheme (``compliance.signing`` entry points)."""
    scheme = url.split("://", 1)[0] if "://" in url else ""
    found = importlib.metadata.entry_points(group=SIGNING_ENTRY_POINTS)
    for entry in found:
        if entry.name == scheme:
            signer: Signer = entry.load()(url)
            return signer
    known = sorted(entry.name for entry in found)
    raise ValidationError.field(
        "signing", url, f"no signing key adapter for this URL scheme; installed: {', '.join(known) or 'none'}"
    )


def default_signing_url(store_url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the instance's key is when ``settings`` say nothing.

    >>> default_signing_url("sqlite:////srv/compliance.db", {})
    'file:///srv/compliance.db-signing-key.pem'
    >>> default_signing_url("memory://", {}), default_signing_url("postgresql://db/x", {})
    ('memory://', None)
    >>> default_signing_url("postgresql://db/x", {"COMPLIANCE_SIGNING_KEY_FILE": "/etc/c/key.pem"})
    'file:///etc/c/key.pem'
    """
    environ = os.environ if environ is None else environ
    configured = environ.get(KEY_FILE_VARIABLE, "").strip()
    if configured:
        return Path(configured).absolute().as_uri()
    if store_url.startswith("memory:"):
        return "memory://"
    if store_url.startswith("sqlite:///"):
        path = store_url[len("sqlite:///") :]
        if path == ":memory:":
            return "memory://"
        return Path(path + "-signing-key.pem").absolute().as_uri()
    return None


def signer_of(context: Any) -> Signer:
    """The platform's key, opened on first use and kept for the platform's lifetime (in
    ``context.shared``), so a platform that signs nothing loads no adapter."""
    shared: dict[str, Any] = context.shared
    found = shared.get(SETTINGS_KEY)
    if found is None:
        found = shared.setdefault(SETTINGS_KEY, _resolve(context.settings, context.uow.store.url))
    return cast(Signer, found)


def _resolve(settings: Mapping[str, Any], store_url: str) -> Signer:
    chosen = settings.get(SETTINGS_KEY)
    if chosen is None:
        chosen = default_signing_url(store_url)
    if chosen is None:
        scheme = urllib.parse.urlsplit(store_url).scheme
        raise InternalError(
            f"no signing key is configured for this {scheme} store: set settings['signing'] "
            f"or {KEY_FILE_VARIABLE} (a path shared by every server of the instance)"
        )
    if isinstance(chosen, str):
        return open_signer(chosen)
    return cast(Signer, chosen)
