"""The ``Vault`` port on AES-256-GCM (``cryptography``'s ``AESGCM``) over a keyring.

A token is ``v1.<key id>.<base64url of nonce, ciphertext and tag>``: a fresh random 96-bit nonce
per seal (NIST SP 800-38D's limit of 2**32 random nonces per key is far beyond the credentials an
instance stores, and rotation starts a new key), and as associated data the token's version, its
key id and the purpose, so a token opens only for the purpose it was sealed for, and changing any
character of it (the version, the key id or the payload) makes it fail to open.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from compliance_core.kernel.errors import ValidationError, cut_text
from compliance_core.kernel.vault import TOKEN_VERSION, UnreadableSecret

from .keyring import KEY_ID, FileKeyring, Key, MemoryKeyring, b64, unb64

__all__ = ["AesGcmVault", "open_keyring_file", "open_memory_vault"]

NONCE_BYTES = 12
TAG_BYTES = 16


class Keyring(Protocol):
    def held(self) -> tuple[Key, ...]: ...

    def add(self) -> Key: ...


class AesGcmVault:
    """The ``Vault`` port on the keys of ``keyring``: the newest seals, every one opens."""

    def __init__(self, keyring: Keyring) -> None:
        self.keyring = keyring
        self._ciphers: dict[str, tuple[bytes, AESGCM]] = {}

    @property
    def key_ids(self) -> tuple[str, ...]:
        return tuple(key.id for key in self.keyring.held())

    def seal(self, plaintext: bytes, *, purpose: str) -> str:
        key = self.keyring.held()[-1]
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._cipher(key).encrypt(nonce, plaintext, _associated(key.id, _checked(purpose)))
        return f"{TOKEN_VERSION}.{key.id}.{b64(nonce + sealed)}"

    def open(self, token: str, *, purpose: str) -> bytes:
        key_id, payload = _parse(token)
        shown = cut_text(_checked(purpose), 100)
        key = next((key for key in self.keyring.held() if key.id == key_id), None)
        if key is None:
            raise UnreadableSecret(
                f"the secret for {shown} was sealed under key {key_id}, which this vault's keyring does not "
                "hold (another instance's keyring, or a lost one)",
                {"purpose": shown, "keyId": key_id},
            )
        try:
            return self._cipher(key).decrypt(payload[:NONCE_BYTES], payload[NONCE_BYTES:], _associated(key_id, purpose))
        except InvalidTag:
            raise UnreadableSecret(
                f"the secret for {shown} does not open under key {key_id}: it was altered, or sealed for "
                "another purpose",
                {"purpose": shown, "keyId": key_id},
            ) from None

    def needs_resealing(self, token: str) -> bool:
        key_id, _ = _parse(token)
        return key_id != self.keyring.held()[-1].id

    def reseal(self, token: str, *, purpose: str) -> str:
        plaintext = self.open(token, purpose=purpose)  # an altered token is refused, never kept
        if not self.needs_resealing(token):
            return token
        return self.seal(plaintext, purpose=purpose)

    def rotate(self) -> str:
        return self.keyring.add().id

    def _cipher(self, key: Key) -> AESGCM:
        cached = self._ciphers.get(key.id)
        if cached is None or cached[0] != key.secret:
            cached = self._ciphers[key.id] = (key.secret, AESGCM(key.secret))
        return cached[1]

    def __repr__(self) -> str:
        return f"AesGcmVault({self.keyring!r})"


def open_memory_vault(url: str = "memory://") -> AesGcmVault:
    """A new keyring for the life of the caller (``memory://``)."""
    return AesGcmVault(MemoryKeyring())


def open_keyring_file(url: str) -> AesGcmVault:
    """The keyring in the file at ``file:///path`` (made on first use)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or not parts.path:
        raise ValidationError.field("vault", url, "must be a file:/// URL naming the keyring file")
    return AesGcmVault(FileKeyring(Path(urllib.request.url2pathname(parts.path))))


def _checked(purpose: str) -> str:
    if not isinstance(purpose, str) or not purpose:
        raise ValidationError.field("purpose", purpose, "must be a non-empty text naming what the secret is for")
    return purpose


def _associated(key_id: str, purpose: str) -> bytes:
    return f"{TOKEN_VERSION}.{key_id}.{purpose}".encode("utf-8", "surrogatepass")


def _parse(token: str) -> tuple[str, bytes]:
    parts = token.split(".") if isinstance(token, str) else []
    payload = unb64(parts[2]) if len(parts) == 3 else None
    if (
        payload is None
        or parts[0] != TOKEN_VERSION
        or not KEY_ID.fullmatch(parts[1])
        or len(payload) < NONCE_BYTES + TAG_BYTES
    ):
        raise UnreadableSecret(f"not a {TOKEN_VERSION} token of this vault")
    return parts[1], payload
