"""The signing port's adapter: one key per file whoever makes it first, mode 0600, refusals of a
file that holds no Ed25519 key, and the settings that choose the key."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.kernel.errors import InternalError, ValidationError
from compliance_core.kernel.signing import open_signer, signer_of
from compliance_signing import Ed25519Signer, open_key_file


def test_concurrent_first_uses_agree_on_one_key(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "instance.pem"
    found: list[str] = []
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        found.append(open_key_file(path.as_uri()).fingerprint)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["instance.pem"]  # no temporary file left


def test_a_signature_checks_only_for_its_own_bytes_and_key() -> None:
    first, second = open_signer("memory://"), open_signer("memory://")
    assert isinstance(first, Ed25519Signer) and first.fingerprint != second.fingerprint
    signature = first.sign(b"manifest")
    assert first.verify(b"manifest", signature)
    assert not first.verify(b"manifest!", signature)
    assert not second.verify(b"manifest", signature)
    assert not first.verify(b"manifest", b"short")
    assert first.public_key_pem.startswith("-----BEGIN PUBLIC KEY-----")


def test_a_file_holding_no_ed25519_key_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "ec.pem"
    other.write_bytes(
        generate_private_key(SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    with pytest.raises(InternalError):
        open_key_file(other.as_uri())
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a key")
    with pytest.raises(InternalError):
        open_key_file(garbage.as_uri())
    with pytest.raises(ValidationError):
        open_signer("vault://somewhere")


def test_settings_choose_the_key(tmp_path: Path) -> None:
    path = tmp_path / "configured.pem"
    with Platform.open("memory://", clock=FrozenClock(), ids=SequentialIds(), settings={"signing": path.as_uri()}) as p:
        context = p.services["evidence_export"].exporter.context
        assert signer_of(context).fingerprint == open_key_file(path.as_uri()).fingerprint
    mine = open_signer("memory://")
    with Platform.open("memory://", settings={"signing": mine}) as p:
        assert signer_of(p.services["evidence_export"].exporter.context) is mine
