"""The instance's vault: the port that seals secrets (an integration's API token, an OAuth refresh
token) before they are stored, and opens them when the instance must use them.

A row holding a credential is only as safe as the database's worst backup, so the column holds a
sealed token, unreadable without the instance's keyring, never the secret itself. Core seals
through this Protocol only; the keys and the cryptography (AES-256-GCM) live in an adapter outside
core (``compliance_vault``, on the ``cryptography`` package), found by URL scheme through the
``compliance.vault`` entry points, as signing keys and stores are:

- ``file:///path/to/keyring.json``: a keyring file, made on first use (mode 0600) and read from
  then on, so every process of the instance opens what any of them sealed;
- ``memory://``: a keyring made for the life of the platform (tests, a platform over memory).

Which one a platform uses: ``settings["vault"]`` (a ``Vault`` or a URL), else the
``COMPLIANCE_VAULT_KEY_FILE`` environment variable (a path), else a keyring beside a SQLite
database (``<database>-vault-keyring.json``), else memory for a store in memory. PostgreSQL has no
default: its servers share no directory, so the keyring file is configured.

A keyring holds several keys so the key can rotate: the newest seals, every key opens, and a token
names the key that sealed it (``v1.<key id>.<nonce and ciphertext>``), so a token sealed before a
rotation still opens after it and can be resealed under the new key at leisure.

``purpose`` says what a secret is for and whose it is (``connection:con_1``); the vault binds it
to the token, so a token copied into another record's column does not open there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from .errors import InternalError
from .plugged import beside_database, open_by_scheme, opened_once

__all__ = [
    "VAULT_ENTRY_POINTS",
    "SETTINGS_KEY",
    "KEY_FILE_VARIABLE",
    "TOKEN_VERSION",
    "UnreadableSecret",
    "Vault",
    "open_vault",
    "default_vault_url",
    "vault_of",
]

VAULT_ENTRY_POINTS = "compliance.vault"
SETTINGS_KEY = "vault"
"""``Platform(settings={"vault": ...})``: a ``Vault``, or a URL ``open_vault`` understands."""
KEY_FILE_VARIABLE = "COMPLIANCE_VAULT_KEY_FILE"
TOKEN_VERSION = "v1"
"""The first part of every token this version seals: a later format gets a new one, so a token
always says how to read it."""


class UnreadableSecret(InternalError):
    """A stored token the vault cannot open: altered, sealed for another purpose, sealed by another
    instance's keyring, or under a key the keyring no longer holds.

    An ``internal_error``: the token comes from the instance's own database, not from the caller,
    so nothing the caller sends can fix it. The message names the key and the purpose, never the
    token's contents.
    """


class Vault(Protocol):
    """The instance's keyring: seals secrets for storage and opens what it sealed."""

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The ids of the keys it holds, oldest first; the last one seals."""
        ...

    def seal(self, plaintext: bytes, *, purpose: str) -> str:
        """A token for ``plaintext`` that only this keyring opens, and only for ``purpose``:
        ASCII text without the secret in it, safe to store in a text column."""
        ...

    def open(self, token: str, *, purpose: str) -> bytes:
        """The plaintext ``token`` was sealed from; ``UnreadableSecret`` when it was sealed for
        another purpose, altered, or under a key this keyring does not hold."""
        ...

    def needs_resealing(self, token: str) -> bool:
        """Whether ``token`` was sealed under a key other than the newest (it still opens while its
        key is held); ``UnreadableSecret`` when it is not a token at all."""
        ...

    def reseal(self, token: str, *, purpose: str) -> str:
        """``token`` sealed again under the newest key (the same token when it already is), for a
        caller that stores the answer in place of the old one."""
        ...

    def rotate(self) -> str:
        """Adds a new key, which seals from now on (the old ones stay, to open), and returns its id."""
        ...


def open_vault(url: str) -> Vault:
    """The keyring at ``url`` (``file:///...`` or ``memory://``) from the adapter installed for its
    scheme (``compliance.vault`` entry points)."""
    return cast(Vault, open_by_scheme(VAULT_ENTRY_POINTS, "vault", "vault adapter", url))


def default_vault_url(store_url: str, environ: Mapping[str, str] | None = None) -> str | None:
    """Where the instance's keyring is when ``settings`` say nothing.

    >>> default_vault_url("sqlite:////srv/compliance.db", {})
    'file:///srv/compliance.db-vault-keyring.json'
    >>> default_vault_url("memory://", {}), default_vault_url("postgresql://db/x", {})
    ('memory://', None)
    >>> default_vault_url("postgresql://db/x", {"COMPLIANCE_VAULT_KEY_FILE": "/etc/c/keyring.json"})
    'file:///etc/c/keyring.json'
    """
    environ = os.environ if environ is None else environ
    configured = environ.get(KEY_FILE_VARIABLE, "").strip()
    if configured:
        return Path(configured).absolute().as_uri()
    return beside_database(store_url, "-vault-keyring.json")


def vault_of(context: Any) -> Vault:
    """The platform's keyring, opened on first use and kept for the platform's lifetime (in
    ``context.shared``), so a platform that stores no secret loads no adapter and makes no file."""
    found = opened_once(
        context,
        SETTINGS_KEY,
        default_vault_url,
        open_vault,
        "vault keyring",
        f"or {KEY_FILE_VARIABLE} (a path shared by every server of the instance)",
    )
    return cast(Vault, found)
