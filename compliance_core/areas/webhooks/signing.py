"""Webhook secrets and the signature headers every delivery carries.

Two signatures, so receivers can verify with what they have: the spec's ``X-Service-Signature``
(lowercase hex HMAC-SHA256 of the raw body, keyed with the secret string as shown, UTF-8), and the
Standard Webhooks headers (``webhook-id``, ``webhook-timestamp``, ``webhook-signature`` =
``v1,`` + base64 HMAC-SHA256 of ``id.timestamp.body`` keyed with the base64-decoded part of the
secret after ``whsec_``), which the ``standardwebhooks`` libraries verify as they are.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

__all__ = ["SECRET_PREFIX", "new_secret", "signature_headers"]

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """``whsec_`` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signature_headers(secret: str, event_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers that sign ``body`` for one attempt (``webhook-id`` is the event's id, the
    same on every retry and redelivery, so a receiver can drop repeats)."""
    service = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{event_id}.{timestamp}.".encode() + body
    standard = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return {
        "X-Service-Signature": service,
        "webhook-id": event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": f"v1,{standard}",
    }
