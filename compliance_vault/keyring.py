"""Keyrings: the vault's 256-bit keys, in a JSON file made on first use, or in memory.

The file holds every key the instance ever sealed with, oldest first::

    {"keyring": "compliance-vault", "format": 1,
     "keys": [{"id": "3f9a1c2b", "added": "2026-11-27T09:40:00+00:00", "key": "<base64url>"}]}

It is created the way the signing key is: written to a temporary file beside it (mode 0600 from
the start, never readable by others even for a moment), fsynced, then hard-linked to its name, which
fails if the name exists; so two processes starting at once on a new instance both end up with the
one keyring that won. A rotation rewrites the file under an exclusive lock on ``<file>.lock``
(read, append, write a temporary file, rename over the old one), so two rotations at once keep
both new keys and a reader sees the whole old file or the whole new one. Keys are only ever added:
removing one makes every token sealed under it unreadable.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import json
import os
import re
import secrets
from collections.abc import Collection, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from compliance_core.kernel.errors import InternalError

fcntl: ModuleType | None
try:
    import fcntl
except ImportError:  # Windows: rotations in one process at a time only
    fcntl = None

__all__ = [
    "KEY_BYTES",
    "Key",
    "KEY_ID",
    "MemoryKeyring",
    "FileKeyring",
    "new_key",
    "load_or_create",
    "add_key",
    "b64",
    "unb64",
]

KEY_BYTES = 32
"""AES-256."""
KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
"""What a key id may be: it sits between dots in a token and in associated data."""
_FORMAT_NAME = "compliance-vault"
_FORMAT = 1


class Key(NamedTuple):
    id: str
    secret: bytes
    added: str
    """When it was made (ISO 8601, UTC): what an operator reads to decide when to rotate."""

    def __repr__(self) -> str:
        return f"Key(id={self.id!r}, added={self.added!r})"  # never the secret, in a log or a traceback


def new_key(taken: Collection[str] = ()) -> Key:
    """A random key under an id none of ``taken`` has."""
    while True:
        key_id = secrets.token_hex(4)
        if key_id not in taken:
            added = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
            return Key(key_id, secrets.token_bytes(KEY_BYTES), added)


class MemoryKeyring:
    """Keys for the life of the object (``memory://``)."""

    def __init__(self) -> None:
        self._keys: tuple[Key, ...] = (new_key(),)

    def held(self) -> tuple[Key, ...]:
        return self._keys

    def add(self) -> Key:
        key = new_key({key.id for key in self._keys})
        self._keys = (*self._keys, key)
        return key

    def __repr__(self) -> str:
        return "MemoryKeyring()"


class FileKeyring:
    """The keys in the keyring file at ``path`` (made on first use).

    The file is read again whenever it changed since it was last read (one ``stat`` per call), so a
    key another process added opens this process's tokens too, and this process seals under it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys = load_or_create(path)
        self._stamp = _stamp(path)

    def held(self) -> tuple[Key, ...]:
        stamp = _stamp(self.path)
        if stamp is not None and stamp != self._stamp:
            self._keys = _read(self.path)
            self._stamp = stamp
        return self._keys

    def add(self) -> Key:
        key, self._keys = add_key(self.path)
        self._stamp = _stamp(self.path)
        return key

    def __repr__(self) -> str:
        return f"FileKeyring({str(self.path)!r})"


def load_or_create(path: Path) -> tuple[Key, ...]:
    """The keys in ``path``, which is made first, with one new key, when there is no such file."""
    if not path.exists():
        _create(path, _encode((new_key(),)))
    return _read(path)


def add_key(path: Path) -> tuple[Key, tuple[Key, ...]]:
    """Adds a new key to the keyring file at ``path`` (the others stay) and returns it and the
    keys the file now holds, newest last."""
    with _locked(path):
        keys = _read(path)
        key = new_key({key.id for key in keys})
        keys = (*keys, key)
        _replace(path, _encode(keys))
    return key, keys


def _encode(keys: tuple[Key, ...]) -> bytes:
    document = {
        "keyring": _FORMAT_NAME,
        "format": _FORMAT,
        "keys": [{"id": key.id, "added": key.added, "key": b64(key.secret)} for key in keys],
    }
    return (json.dumps(document, indent=2) + "\n").encode("ascii")


def _read(path: Path) -> tuple[Key, ...]:
    try:
        document: Any = json.loads(path.read_bytes())
    except FileNotFoundError as error:
        raise InternalError(f"the vault keyring {path} is missing: restore it from a backup") from error
    except (OSError, ValueError) as error:
        raise InternalError(f"the vault keyring {path} is not readable: {error}") from error
    if not isinstance(document, dict) or document.get("keyring") != _FORMAT_NAME:
        raise InternalError(f"the vault keyring {path} is not a compliance-vault keyring")
    if document.get("format") != _FORMAT:
        raise InternalError(
            f"the vault keyring {path} has format {document.get('format')!r}; this version reads {_FORMAT}"
        )
    entries = document.get("keys")
    if not isinstance(entries, list) or not entries:
        raise InternalError(f"the vault keyring {path} holds no keys")
    keys: list[Key] = []
    for number, entry in enumerate(entries):
        key_id = entry.get("id") if isinstance(entry, dict) else None
        secret = unb64(entry.get("key")) if isinstance(entry, dict) else None
        if not isinstance(key_id, str) or not KEY_ID.fullmatch(key_id) or secret is None or len(secret) != KEY_BYTES:
            raise InternalError(f"the vault keyring {path} has an unreadable key at position {number}")
        if any(key.id == key_id for key in keys):
            raise InternalError(f"the vault keyring {path} has key id {key_id} twice")
        added = entry.get("added")
        keys.append(Key(key_id, secret, added if isinstance(added, str) else ""))
    return tuple(keys)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None  # gone while running: keep the keys already read rather than fail every call
    return (found.st_ino, found.st_mtime_ns, found.st_size)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    descriptor = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)


def _write_temporary(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.part")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    return temporary


def _create(path: Path, data: bytes) -> None:
    temporary = _write_temporary(path, data)
    try:
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process made the keyring first: theirs is the instance's
        _fsync_directory(path.parent)
    finally:
        temporary.unlink(missing_ok=True)


def _replace(path: Path, data: bytes) -> None:
    temporary = _write_temporary(path, data)
    try:
        os.replace(temporary, path)
        _fsync_directory(path.parent)
    finally:
        temporary.unlink(missing_ok=True)


def _fsync_directory(directory: Path) -> None:
    if os.name == "nt":
        return
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def b64(data: bytes) -> str:
    """Unpadded base64url: what a token and the keyring file hold."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def unb64(text: Any) -> bytes | None:
    """The bytes of unpadded base64url ``text``; None for anything else, including an encoding
    that is not the one ``b64`` writes (unused low bits set), so no two texts mean the same bytes."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text):
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if b64(data) == text else None
