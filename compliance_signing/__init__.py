"""The signing key adapter: the instance's Ed25519 key on the ``cryptography`` package.

Core signs through ``compliance_core.kernel.signing.Signer`` and finds this adapter through the
``compliance.signing`` entry points (``file`` and ``memory``), so core imports no cryptography.
``cryptography`` (the Python Cryptographic Authority's package, on OpenSSL) is used rather than a
hand-written Ed25519: signatures an auditor relies on deserve the library everyone audits.
"""

from __future__ import annotations

from .ed25519 import Ed25519Signer, open_key_file, open_memory_key

__all__ = ["Ed25519Signer", "open_key_file", "open_memory_key"]
