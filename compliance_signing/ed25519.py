"""Ed25519 keys: in a PEM file generated on first use, or in memory.

The file is created the way the blob store creates files: written to a temporary file beside it
(mode 0600 from the start, never readable by others even for a moment), fsynced, then hard-linked
to its name, which fails if the name exists. Two processes starting at once on a new instance
therefore both end up reading the one key that won, never two keys, and never a half-written one.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import urllib.parse
import urllib.request
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from compliance_core.kernel.errors import InternalError, ValidationError

__all__ = ["Ed25519Signer", "open_key_file", "open_memory_key", "load_or_create"]


class Ed25519Signer:
    """The ``Signer`` port on one Ed25519 private key."""

    algorithm = "Ed25519"

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private = private_key
        self._public: Ed25519PublicKey = private_key.public_key()
        raw = self._public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.fingerprint = "sha256:" + hashlib.sha256(raw).hexdigest()
        self.public_key_pem = self._public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def sign(self, data: bytes) -> bytes:
        return self._private.sign(data)

    def verify(self, data: bytes, signature: bytes) -> bool:
        try:
            self._public.verify(signature, data)
        except InvalidSignature:
            return False
        return True

    def __repr__(self) -> str:
        return f"Ed25519Signer({self.fingerprint})"


def open_memory_key(url: str = "memory://") -> Ed25519Signer:
    """A new key for the life of the caller (``memory://``)."""
    return Ed25519Signer(Ed25519PrivateKey.generate())


def open_key_file(url: str) -> Ed25519Signer:
    """The key in the file at ``file:///path`` (made on first use)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "file" or not parts.path:
        raise ValidationError.field("signing", url, "must be a file:/// URL naming the key file")
    return Ed25519Signer(load_or_create(Path(urllib.request.url2pathname(parts.path))))


def load_or_create(path: Path) -> Ed25519PrivateKey:
    """The private key in ``path``, generated there first when there is no such file."""
    if not path.exists():
        _create(path)
    data = path.read_bytes()
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise InternalError(f"the signing key file {path} holds no readable private key") from error
    if not isinstance(key, Ed25519PrivateKey):
        raise InternalError(f"the signing key file {path} holds a key that is not Ed25519")
    return key


def _create(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.part")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
            file.flush()
            os.fsync(file.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process made the key first: theirs is the instance's key
    finally:
        temporary.unlink(missing_ok=True)
