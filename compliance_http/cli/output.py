"""What every command prints: JSON on stdout, one JSON error on stderr, and no password in
either (a store URL's password is replaced by ``***`` wherever it would appear)."""

from __future__ import annotations

import json
import os
import re
import sys
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from compliance_core import ValidationError
from compliance_core.kernel.rendering import json_value

__all__ = ["as_options", "emit", "passwords", "report_error", "scrub"]


def emit(value: Any) -> None:
    print(json.dumps(value, indent=2, default=str), flush=True)


def report_error(code: str, message: str, details: Mapping[str, Any], hide: Sequence[str] = ()) -> None:
    """One JSON error on stderr; each string of ``hide`` (the passwords of the store URLs given)
    is replaced by ``***`` wherever it appears, whatever put it there."""
    body = scrub({"error": {"code": code, "message": message, "details": json_value(dict(details))}}, hide)
    print(json.dumps(body, default=str), file=sys.stderr, flush=True)


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def passwords(words: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The passwords in the URLs of the command line's words (``--db``, ``--from``, ``--to``,
    ``--db=...``, a mistyped option) and of ``COMPLIANCE_DB``: in the URL's user part or as a
    ``password=`` parameter, as typed, percent-decoded and percent-encoded. Longest first, so a
    password containing another is hidden whole."""
    environ = os.environ if environ is None else environ
    found: set[str] = set()
    for url in _URL.findall(" ".join([*words, environ.get("COMPLIANCE_DB") or ""])):
        try:
            parts = urllib.parse.urlsplit(url)
            password = parts.password
        except ValueError:
            continue
        values = [password] if password else []
        values += [value for name, value in urllib.parse.parse_qsl(parts.query) if name == "password" and value]
        for value in values:
            found.update({value, urllib.parse.unquote(value), urllib.parse.quote(value, safe="")})
    return sorted(found, key=len, reverse=True)


def scrub(value: Any, hide: Sequence[str]) -> Any:
    if not hide:
        return value
    if isinstance(value, str):
        for secret in hide:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {scrub(key, hide): scrub(item, hide) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item, hide) for item in value]
    return value


def as_options(error: ValidationError, options: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The error's message and details with core's field name (``url``, ``expiresAt``) replaced
    by the option the user typed (``--db``, ``--expires-at``); a field no option gave is kept."""
    details = dict(error.details)
    field = details.get("field")
    option = options.get(field) if isinstance(field, str) else None
    if field is None or option is None:
        return error.message, details
    details["field"] = option
    message = error.message
    if message.startswith(f"{field}:"):
        message = option + message[len(field) :]
    return message, details
