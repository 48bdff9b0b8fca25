"""The vault adapter: the instance's keyring of AES-256 keys, on the ``cryptography`` package.

Core seals secrets through ``compliance_core.kernel.vault.Vault`` and finds this adapter through
the ``compliance.vault`` entry points (``file`` and ``memory``), so core imports no cryptography.
AES-GCM comes from ``cryptography`` (the Python Cryptographic Authority's package, on OpenSSL),
never from hand-written code: the credentials it guards open the customers' other systems.
"""

from __future__ import annotations

from .aesgcm import AesGcmVault, open_keyring_file, open_memory_vault
from .keyring import FileKeyring, MemoryKeyring, add_key

__all__ = ["AesGcmVault", "FileKeyring", "MemoryKeyring", "add_key", "open_keyring_file", "open_memory_vault"]
