"""Checking an export that came back: is it exactly what this instance signed?

``verify`` answers ``valid`` only when all of these hold, and otherwise lists each that fails:

- it is a ZIP holding ``manifest.json``, ``manifest.sig`` and ``public-key.pem``;
- ``manifest.sig`` is a valid Ed25519 signature of the exact bytes of ``manifest.json`` under
  THIS instance's key (an export signed by another instance, or re-signed, fails), and the
  manifest and ``public-key.pem`` name this instance's key;
- every file the manifest lists is in the ZIP once, with the SHA-256 and size it lists;
- the ZIP holds nothing else.

The files are hashed only under a valid signature: the sizes a manifest lists are then ours, and
a forged manifest cannot make the check decompress more than the export holds. The upload is
spooled to a temporary file (a ZIP is read from its end) and never held whole in memory.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import tempfile
import zipfile
from collections import Counter
from typing import IO, Any

from ...kernel.blobs import CHUNK_BYTES, Source
from ...kernel.errors import TooLarge
from ...kernel.signing import Signer
from ...kernel.uploads import chunks_of
from .bundle import MANIFEST, PUBLIC_KEY, SIGNATURE, SIGNED_FILES
from .models import Verification

__all__ = ["MAX_VERIFY_BYTES", "verify", "spool"]

MAX_VERIFY_BYTES = 1024**3
"""The largest export ``verify`` reads (1 GiB, the blob store's default limit)."""
_SPOOL_IN_MEMORY = 8 * 1024 * 1024


def spool(source: Source, field: str = "fileData") -> IO[bytes]:
    """The upload in a temporary file (in memory up to 8 MiB), refused past ``MAX_VERIFY_BYTES``."""
    spooled: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)  # noqa: SIM115 (returned)
    size = 0
    try:
        for chunk in chunks_of(source):
            size += len(chunk)
            if size > MAX_VERIFY_BYTES:
                raise TooLarge.field(field, size, f"must be at most {MAX_VERIFY_BYTES} bytes")
            spooled.write(chunk)
    except BaseException:
        spooled.close()
        raise
    spooled.seek(0)
    return spooled


def verify(upload: IO[bytes], signer: Signer) -> Verification:
    try:
        archive = zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, OSError, ValueError):
        return Verification(valid=False, problems=("the file is not a ZIP archive",))
    with archive:
        return _check(archive, signer)


def _check(archive: zipfile.ZipFile, signer: Signer) -> Verification:
    problems: list[str] = []
    names = Counter(info.filename for info in archive.infolist())
    problems += [f"{name} is in the ZIP {count} times" for name, count in sorted(names.items()) if count > 1]
    missing = [name for name in SIGNED_FILES if name not in names]
    if missing:
        problems += [f"{name} is missing" for name in missing]
        return Verification(valid=False, problems=tuple(problems))
    manifest = _read(archive, MANIFEST)
    signature_text = _read(archive, SIGNATURE)
    try:
        signature = base64.b64decode(signature_text.strip(), validate=True)
    except (binascii.Error, ValueError):
        signature = b""
    signed = signer.verify(manifest, signature)
    if not signed:
        problems.append(f"{SIGNATURE} is not this instance's signature of {MANIFEST} ({signer.fingerprint})")
    if _read(archive, PUBLIC_KEY).decode("ascii", "replace").strip() != signer.public_key_pem.strip():
        problems.append(f"{PUBLIC_KEY} is not this instance's public key")
    try:
        document: Any = json.loads(manifest.decode("utf-8"))
        listed = [(str(f["path"]), str(f["sha256"]), int(f["size"])) for f in document["files"]]
        fingerprint = document.get("signing", {}).get("fingerprint")
    except (UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError):
        problems.append(f"{MANIFEST} is not a manifest of this format")
        return Verification(valid=False, problems=tuple(problems))
    if fingerprint != signer.fingerprint:
        problems.append(f"the manifest names the key {fingerprint}, not this instance's {signer.fingerprint}")
    paths = {path for path, _, _ in listed}
    for name in sorted(set(names) - paths - set(SIGNED_FILES)):
        problems.append(f"{name} is in the ZIP but not in the manifest")
    for path, sha256, size in sorted(listed):
        if path not in names:
            problems.append(f"{path} is in the manifest but not in the ZIP")
        elif signed:
            found, found_size = _digest(archive, path, size)
            if found_size != size:
                problems.append(f"{path} has {found_size} bytes, not the {size} the manifest lists")
            elif found != sha256:
                problems.append(f"{path} does not match its SHA-256 in the manifest")
    return Verification(valid=not problems, problems=tuple(problems), files=len(listed), fingerprint=fingerprint)


def _read(archive: zipfile.ZipFile, name: str, limit: int = 64 * 1024 * 1024) -> bytes:
    """A signing file, read whole (bounded: a manifest of 64 MiB lists about 150,000 files)."""
    try:
        with archive.open(name) as file:
            return file.read(limit)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return b""


def _digest(archive: zipfile.ZipFile, path: str, size: int) -> tuple[str | None, int]:
    """The SHA-256 and size of an entry, reading at most one byte past ``size``."""
    digest = hashlib.sha256()
    read = 0
    try:
        with archive.open(path) as file:
            while read <= size:
                chunk = file.read(min(CHUNK_BYTES, size + 1 - read))
                if not chunk:
                    break
                digest.update(chunk)
                read += len(chunk)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return None, read  # a CRC error or a damaged entry: it does not match
    return digest.hexdigest(), read
