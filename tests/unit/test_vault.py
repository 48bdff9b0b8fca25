"""The vault port and its AES-GCM adapter: a sealed credential is unreadable without the keyring
that sealed it, opens only for its own purpose, survives key rotation, and the keyring file is
made once, with mode 0600, whoever opens it first."""

from __future__ import annotations

import base64
import json
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.kernel.errors import InternalError, ValidationError
from compliance_core.kernel.vault import UnreadableSecret, Vault, default_vault_url, open_vault, vault_of
from compliance_vault import AesGcmVault, add_key

SECRET = b"ghp_0123456789abcdefSECRETtoken"
PURPOSE = "connection:con_1"


@pytest.fixture(params=["memory", "file"])
def vault(request: pytest.FixtureRequest, tmp_path: Path) -> Vault:
    """Each adapter, opened through the port by URL as the platform opens it."""
    url = "memory://" if request.param == "memory" else (tmp_path / "keyring.json").as_uri()
    return open_vault(url)


@pytest.fixture
def keyring(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "secrets" / "keyring.json"


def test_a_sealed_secret_opens_for_its_purpose_and_holds_no_plaintext(vault: Vault) -> None:
    token = vault.seal(SECRET, purpose=PURPOSE)
    assert vault.open(token, purpose=PURPOSE) == SECRET
    assert token.isascii() and token.startswith(f"v1.{vault.key_ids[-1]}.")
    stored = token.encode("ascii")
    assert SECRET not in stored and b"SECRET" not in stored and PURPOSE.encode() not in stored
    assert vault.seal(SECRET, purpose=PURPOSE) != token  # a fresh nonce each time
    assert vault.open(vault.seal(b"", purpose=PURPOSE), purpose=PURPOSE) == b""


def test_a_token_does_not_open_for_another_purpose(vault: Vault) -> None:
    token = vault.seal(SECRET, purpose=PURPOSE)
    for other in ("connection:con_2", "connection:con_1 ", "refresh:con_1", "CONNECTION:con_1"):
        with pytest.raises(UnreadableSecret) as raised:
            vault.open(token, purpose=other)
        assert raised.value.code == "internal_error"
        assert "SECRET" not in str(raised.value) and token not in str(raised.value)
    with pytest.raises(ValidationError):
        vault.seal(SECRET, purpose="")
    with pytest.raises(ValidationError):
        vault.open(token, purpose="")


def test_any_altered_character_or_byte_fails_to_open(vault: Vault) -> None:
    token = vault.seal(b"short", purpose=PURPOSE)
    for position, character in enumerate(token):
        replacement = "A" if character != "A" else "B"
        altered = token[:position] + replacement + token[position + 1 :]
        with pytest.raises(UnreadableSecret):
            vault.open(altered, purpose=PURPOSE)
    for broken in ("", "v1", "v1..", f"v2.{vault.key_ids[-1]}.{token.split('.')[2]}", token + ".x", token[:-10]):
        with pytest.raises(UnreadableSecret):
            vault.open(broken, purpose=PURPOSE)
        with pytest.raises(UnreadableSecret):
            vault.needs_resealing(broken)


def test_a_flipped_bit_in_the_ciphertext_fails_to_open(vault: Vault) -> None:
    token = vault.seal(SECRET, purpose=PURPOSE)
    version, key_id, payload = token.split(".")
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    for index in (0, 11, 12, len(raw) // 2, len(raw) - 1):  # nonce, ciphertext, tag
        flipped = bytearray(raw)
        flipped[index] ^= 0x01
        encoded = base64.urlsafe_b64encode(bytes(flipped)).decode().rstrip("=")
        with pytest.raises(UnreadableSecret, match="altered"):
            vault.open(f"{version}.{key_id}.{encoded}", purpose=PURPOSE)


def test_another_instance_secret_cannot_open_a_token(tmp_path: Path) -> None:
    ours = open_vault((tmp_path / "ours.json").as_uri())
    theirs = open_vault((tmp_path / "theirs.json").as_uri())
    token = ours.seal(SECRET, purpose=PURPOSE)
    with pytest.raises(UnreadableSecret, match="does not hold") as raised:
        theirs.open(token, purpose=PURPOSE)
    assert raised.value.details == {"purpose": PURPOSE, "keyId": ours.key_ids[-1]}
    # even a keyring that happens to use the same key id has another key: the tag does not check
    stolen = json.loads((tmp_path / "theirs.json").read_text())
    stolen["keys"][0]["id"] = ours.key_ids[-1]
    (tmp_path / "theirs.json").write_text(json.dumps(stolen))
    with pytest.raises(UnreadableSecret, match="altered"):
        open_vault((tmp_path / "theirs.json").as_uri()).open(token, purpose=PURPOSE)


def test_a_lost_keyring_leaves_tokens_unreadable(keyring: Path) -> None:
    token = open_vault(keyring.as_uri()).seal(SECRET, purpose=PURPOSE)
    keyring.unlink()
    with pytest.raises(UnreadableSecret, match="does not hold"):
        open_vault(keyring.as_uri()).open(token, purpose=PURPOSE)  # a new keyring, new keys


def test_rotation_keeps_old_tokens_open_and_reseal_moves_them(vault: Vault) -> None:
    first = vault.key_ids[-1]
    old = vault.seal(SECRET, purpose=PURPOSE)
    assert not vault.needs_resealing(old)
    assert vault.reseal(old, purpose=PURPOSE) == old
    second = vault.rotate()
    assert vault.key_ids == (first, second) and second != first
    assert vault.open(old, purpose=PURPOSE) == SECRET
    assert vault.needs_resealing(old)
    new = vault.seal(SECRET, purpose=PURPOSE)
    assert new.split(".")[1] == second and not vault.needs_resealing(new)
    moved = vault.reseal(old, purpose=PURPOSE)
    assert moved.split(".")[1] == second and not vault.needs_resealing(moved)
    assert vault.open(moved, purpose=PURPOSE) == SECRET
    with pytest.raises(UnreadableSecret):
        vault.reseal(old, purpose="connection:con_2")  # resealing opens first: the purpose still binds
    third = vault.rotate()
    assert vault.key_ids == (first, second, third)
    assert [vault.open(token, purpose=PURPOSE) for token in (old, new, moved)] == [SECRET] * 3


def test_the_keyring_file_is_made_once_with_mode_0600_and_shared(keyring: Path) -> None:
    one = open_vault(keyring.as_uri())
    assert stat.S_IMODE(os.stat(keyring).st_mode) == 0o600
    made = keyring.read_bytes()
    two = open_vault(keyring.as_uri())
    assert keyring.read_bytes() == made and one.key_ids == two.key_ids
    assert two.open(one.seal(SECRET, purpose=PURPOSE), purpose=PURPOSE) == SECRET
    assert SECRET not in made
    # a rotation by one process is seen by the others: they open its tokens and seal under it
    rotated = one.rotate()
    assert two.key_ids[-1] == rotated
    assert two.open(one.seal(SECRET, purpose=PURPOSE), purpose=PURPOSE) == SECRET
    assert two.seal(SECRET, purpose=PURPOSE).split(".")[1] == rotated
    assert open_vault(keyring.as_uri()).key_ids == one.key_ids  # written down, not only in memory
    assert stat.S_IMODE(os.stat(keyring).st_mode) == 0o600
    assert sorted(path.name for path in keyring.parent.iterdir()) == ["keyring.json", "keyring.json.lock"]


def _together(count: int, work: Callable[[int], None]) -> None:
    start = threading.Barrier(count)

    def run(index: int) -> None:
        start.wait()
        work(index)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_first_uses_agree_and_concurrent_rotations_keep_every_key(keyring: Path) -> None:
    opened: list[tuple[str, ...]] = []
    _together(8, lambda _: opened.append(open_vault(keyring.as_uri()).key_ids))
    assert len(set(opened)) == 1 and len(opened[0]) == 1
    assert [path.name for path in keyring.parent.iterdir()] == ["keyring.json"]  # no temporary file left
    vaults = [open_vault(keyring.as_uri()) for _ in range(6)]
    added: list[str] = []
    _together(6, lambda index: added.append(vaults[index].rotate()))
    held = open_vault(keyring.as_uri()).key_ids
    assert len(held) == 7 and set(added) <= set(held)
    key, keys = add_key(keyring)
    assert keys[-1] == key and len(keys) == 8
    assert "secret" not in repr(key) and key.secret.hex() not in repr(keys)


def test_an_unreadable_keyring_is_refused(tmp_path: Path) -> None:
    for name, content in [
        ("garbage.json", "not json"),
        ("other.json", json.dumps({"keyring": "something else", "format": 1, "keys": []})),
        ("empty.json", json.dumps({"keyring": "compliance-vault", "format": 1, "keys": []})),
        ("short.json", json.dumps({"keyring": "compliance-vault", "format": 1, "keys": [{"id": "a", "key": "AAAA"}]})),
        ("future.json", json.dumps({"keyring": "compliance-vault", "format": 2, "keys": []})),
    ]:
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(InternalError):
            open_vault(path.as_uri())
    with pytest.raises(ValidationError):
        open_vault("vault://somewhere")
    with pytest.raises(ValidationError):
        open_vault("file://host/keyring.json")


def test_settings_and_the_environment_choose_the_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPLIANCE_VAULT_KEY_FILE", raising=False)
    path = tmp_path / "configured.json"
    with Platform.open("memory://", clock=FrozenClock(), ids=SequentialIds(), settings={"vault": path.as_uri()}) as p:
        context = p.services["evidence_export"].exporter.context
        assert not path.exists()  # opened on first use only
        found = vault_of(context)
        assert found is vault_of(context) and path.exists()
        assert found.key_ids == open_vault(path.as_uri()).key_ids
    mine = open_vault("memory://")
    with Platform.open("memory://", settings={"vault": mine}) as p:
        assert vault_of(p.services["evidence_export"].exporter.context) is mine
    with Platform.open("memory://") as p:
        assert isinstance(vault_of(p.services["evidence_export"].exporter.context), AesGcmVault)
    assert default_vault_url("sqlite:////srv/c.db", {}) == "file:///srv/c.db-vault-keyring.json"
    assert default_vault_url("postgresql://db/x", {}) is None
    assert default_vault_url("postgresql://db/x", {"COMPLIANCE_VAULT_KEY_FILE": str(path)}) == path.as_uri()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plaintext=st.binary(max_size=4096), purpose=st.text(min_size=1, max_size=200))
def test_any_bytes_for_any_purpose_round_trip(vault: Vault, plaintext: bytes, purpose: str) -> None:
    token = vault.seal(plaintext, purpose=purpose)
    assert vault.open(token, purpose=purpose) == plaintext
    assert token.isascii() and token.count(".") == 2
    with pytest.raises(UnreadableSecret):
        vault.open(token, purpose=purpose + "x")
