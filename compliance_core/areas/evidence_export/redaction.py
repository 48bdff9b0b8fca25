"""Secrets taken out of JSON evidence before it leaves the platform in an export.

Automation output and configuration dumps often carry credentials. The rule: a key of any
object, at any depth, whose name, lower-cased with ``-``, ``_``, ``.`` and spaces removed,
contains one of ``SECRET_WORDS`` (``password``, ``secret``, ``token``, ``apikey``,
``authorization``, ``privatekey``, ...) has its value, whatever it is (text, number, object or
list), replaced by ``"[redacted]"``. Keys are matched by name, never values by content: a value
that looks like a key under an innocent name is kept, so a reader can see what was removed and
why. The result is written with its keys in their order, two-space indents and UTF-8, so the same
JSON always gives the same bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["REDACTED", "SECRET_WORDS", "MAX_REDACTED_BYTES", "is_secret_key", "redact", "redact_json"]

REDACTED = "[redacted]"
SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "authorization",
    "privatekey",
    "credential",
    "cookie",
    "sessionid",
    "signature",
    "clientsecret",
)
MAX_REDACTED_BYTES = 64 * 1024 * 1024
"""JSON evidence larger than this is not parsed (it would be held whole in memory): it is left
out of an export and named in the manifest as left out."""
_SEPARATORS = re.compile(r"[-_.\s]")


def is_secret_key(name: str) -> bool:
    """>>> is_secret_key("X-Api-Key"), is_secret_key("client_secret"), is_secret_key("tokens_used")
    (True, True, True)
    >>> is_secret_key("username")
    False
    """
    folded = _SEPARATORS.sub("", name.lower())
    return any(word in folded for word in SECRET_WORDS)


def redact(value: Any) -> Any:
    """``value`` with the value of every secret key replaced, without recursion (a deeply nested
    document must not exhaust the stack)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        current, parent, key = stack.pop()
        if isinstance(current, dict):
            copy: dict[str, Any] = {}
            parent[key] = copy
            for name, item in current.items():
                if is_secret_key(str(name)):
                    copy[name] = REDACTED
                else:
                    copy[name] = None
                    stack.append((item, copy, name))
        elif isinstance(current, list):
            items: list[Any] = [None] * len(current)
            parent[key] = items
            for index, item in enumerate(current):
                stack.append((item, items, index))
        else:
            parent[key] = current
    return root[0]


def redact_json(data: bytes) -> bytes | None:
    """The JSON document ``data`` redacted, or None when it is not JSON (it cannot be redacted,
    so it must not be exported as it is)."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    try:
        text = json.dumps(redact(document), ensure_ascii=False, indent=2)
    except (ValueError, RecursionError):
        return None
    return text.encode("utf-8") + b"\n"
