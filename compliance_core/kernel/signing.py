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

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from .plugged import beside_database, open_by_scheme, opened_once

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
    return cast(Signer, open_by_scheme(SIGNING_ENTRY_POINTS, "signing", "signing key adapter", url))


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
    return beside_database(store_url, "-signing-key.pem")


def signer_of(context: Any) -> Signer:
    """The platform's key, opened on first use and kept for the platform's lifetime (in
    ``context.shared``), so a platform that signs nothing loads no adapter."""
    found = opened_once(
        context,
        SETTINGS_KEY,
        default_signing_url,
        open_signer,
        "signing key",
        f"or {KEY_FILE_VARIABLE} (a path shared by every server of the instance)",
    )
    return cast(Signer, found)
