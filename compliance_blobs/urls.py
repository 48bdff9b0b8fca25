"""What the adapters' URLs say beyond their scheme: the query's options, checked and typed, so a
misspelt option is an error at start-up instead of a silent default."""

from __future__ import annotations

import urllib.parse
from collections.abc import Collection, Mapping

from compliance_core.kernel.blobs import DEFAULT_MAX_BYTES
from compliance_core.kernel.errors import ValidationError

__all__ = ["query_options", "size_option"]


def query_options(url: str, allowed: Collection[str]) -> dict[str, str]:
    """The query parameters of ``url`` (each at most once), refusing any not in ``allowed``."""
    parts = urllib.parse.urlsplit(url)
    found: dict[str, str] = {}
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True, strict_parsing=False):
        if name not in allowed:
            raise ValidationError.field("blobs", url, f"unknown option {name!r}; known: {', '.join(sorted(allowed))}")
        if name in found:
            raise ValidationError.field("blobs", url, f"option {name!r} is given twice")
        found[name] = value
    return found


def size_option(options: Mapping[str, str], name: str, url: str, default: int = DEFAULT_MAX_BYTES) -> int:
    """A byte count from the query (digits only), at least 1."""
    text = options.get(name)
    if text is None:
        return default
    if not text.isdigit() or int(text) < 1:
        raise ValidationError.field("blobs", url, f"{name} must be a positive number of bytes")
    return int(text)
