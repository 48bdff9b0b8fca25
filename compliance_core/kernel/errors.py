"""One error tree for every transport.

Core raises these; the HTTP adapter maps ``code`` to a status and the spec's error body, and the
in-process client lets them through untouched, so a caller sees the same failure either way.
"""

from __future__ import annotations

import datetime as dt
import enum
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = [
    "ComplianceError",
    "ValidationError",
    "TooLarge",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "RateLimited",
    "InternalError",
    "ServiceUnavailable",
    "ERROR_CLASSES",
    "require",
    "bounded",
    "cut_text",
    "MAX_ECHO_CHARS",
    "MAX_ECHO_ITEMS",
    "MAX_ECHO_DEPTH",
    "MAX_ECHO_BUDGET",
    "MAX_LISTED_ERRORS",
]

MAX_ECHO_CHARS = 100
"""Characters of one echoed string kept in ``details`` (then ``…``)."""
MAX_ECHO_ITEMS = 10
"""Items of one echoed list, or keys of one echoed object, kept in ``details``."""
MAX_ECHO_DEPTH = 3
"""Levels of nesting kept in ``details``; deeper containers become a short summary."""
MAX_ECHO_BUDGET = 1000
"""Characters (each value counting at least one) one echoed value may use in all."""
MAX_LISTED_ERRORS = 50
"""Most fields one validation error lists in ``details.errors`` (a body of 10,000 unknown keys
is still answered in a bounded size)."""
MAX_ID_IN_MESSAGE = 64
"""Characters of a missing resource's id repeated in a 404's message."""
_ELLIPSIS = "\u2026"
_SAFE_INTEGER = 2**53
"""Larger integers are summarised: JSON encoders such as orjson refuse them, and turning a
100,000-digit integer into text raises in Python itself."""
_PLAIN = (float, dt.date, dt.time, dt.timedelta)


def cut_text(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit`` and ``…``."""
    return text if len(text) <= limit else text[:limit] + _ELLIPSIS


def bounded(
    value: Any,
    *,
    max_chars: int = MAX_ECHO_CHARS,
    max_items: int = MAX_ECHO_ITEMS,
    max_depth: int = MAX_ECHO_DEPTH,
    budget: int = MAX_ECHO_BUDGET,
) -> tuple[Any, bool]:
    """A copy of ``value`` small enough to echo in an error's ``details``, and whether anything
    was cut.

    Rendering an error must never fail and never grow with the input: strings are cut to
    ``max_chars`` characters plus ``…``; lists, tuples and sets keep ``max_items`` items and
    objects ``max_items`` keys, with a ``"… N more"`` marker; containers below ``max_depth``
    levels become a summary such as ``"<list of 3 items>"``; integers beyond 2**53 and values of
    other types (bytes, models) become a summary of their type; and the whole answer uses at most
    about ``budget`` characters. The walk recurses at most ``max_depth`` levels, so a list nested
    1,000 deep costs three calls, not a ``RecursionError``.

    >>> bounded("x" * 500)[0] == "x" * 100 + "\u2026"
    True
    >>> bounded([[[["deep"]]]])
    ([[['<list of 1 items>']]], True)
    >>> bounded({"a": 1})
    ({'a': 1}, False)
    """
    cut = False
    left = budget

    def spend(amount: int) -> None:
        nonlocal left
        left -= max(1, amount)

    def walk(item: Any, depth: int) -> Any:
        nonlocal cut
        if item is None or isinstance(item, bool):
            spend(1)
            return item
        if isinstance(item, str):
            limit = max(0, min(max_chars, left))
            if len(item) > limit:
                cut = True
                item = item[:limit] + _ELLIPSIS
            spend(len(item))
            return item
        if isinstance(item, int) and not isinstance(item, enum.Enum):
            spend(1)
            if -_SAFE_INTEGER <= item <= _SAFE_INTEGER:
                return item
            cut = True
            return f"<integer of {item.bit_length()} bits>"
        if isinstance(item, enum.Enum):
            return walk(item.value, depth)
        if isinstance(item, _PLAIN):
            spend(1)
            return item
        if isinstance(item, (list, tuple, set, frozenset)):
            kind = type(item).__name__ if isinstance(item, (list, tuple)) else "set"
            if depth >= max_depth or left <= 0:
                cut = True
                summary = f"<{kind} of {len(item)} items>"
                spend(len(summary))
                return summary
            spend(1)
            items = []
            for element in itertools.islice(item, max_items):
                if left <= 0:
                    break
                items.append(walk(element, depth + 1))
            if len(items) < len(item):
                cut = True
                items.append(f"{_ELLIPSIS} {len(item) - len(items)} more")
            return tuple(items) if isinstance(item, tuple) else items
        if isinstance(item, Mapping):
            if depth >= max_depth or left <= 0:
                cut = True
                summary = f"<object with {len(item)} keys>"
                spend(len(summary))
                return summary
            spend(1)
            result: dict[str, Any] = {}
            for key, element in itertools.islice(item.items(), max_items):
                if left <= 0:
                    break
                name = walk(key, max_depth) if isinstance(key, (str, int)) else f"<{type(key).__name__}>"
                result[str(name)] = walk(element, depth + 1)
            if len(result) < len(item):
                cut = True
                result[_ELLIPSIS] = f"{len(item) - len(result)} more keys"
            return result
        cut = True
        summary = f"<{type(item).__name__}>"
        spend(len(summary))
        return summary

    return walk(value, 0), cut


class ComplianceError(Exception):
    code = "internal_error"

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.details!r})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.message == other.message and self.details == other.details

    __hash__ = Exception.__hash__


class ValidationError(ComplianceError):
    """Bad input. ``details`` names the field, the offending value and the reason."""

    code = "validation_error"

    @classmethod
    def field(cls, field: str, value: Any, reason: str) -> ValidationError:
        """The error for one field. The field name and the value are echoed bounded (see
        ``bounded``): ``"truncated": true`` in ``details`` says something was cut."""
        raw = str(field)
        name = cut_text(raw, MAX_ECHO_CHARS)
        echoed, truncated = bounded(value)
        details: dict[str, Any] = {"field": name, "value": echoed, "reason": reason}
        if truncated or name != raw:
            details["truncated"] = True
        return cls(f"{name}: {reason}", details)

    @classmethod
    def every(cls, errors: Sequence[ValidationError]) -> ValidationError:
        """One error for all that is wrong with a body, so a caller fixes it in one go.

        ``details.errors`` lists each field's ``field``, ``value`` and ``reason`` (an error that
        lists several already is flattened into the list), at most ``MAX_LISTED_ERRORS`` of them
        with ``"truncated": true`` when there were more; ``field``, ``value`` and ``reason`` at the
        top repeat the first entry, as a one-field error has them, so a client that reads only
        those keeps working.

        >>> one = ValidationError.field("title", 5, "must be a string")
        >>> two = ValidationError.field("order", -1, "must be an integer from 0 to 10000")
        >>> error = ValidationError.every([one, two])
        >>> [entry["field"] for entry in error.details["errors"]], error.details["field"]
        (['title', 'order'], 'title')
        """
        entries: list[dict[str, Any]] = []
        for error in errors:
            listed = error.details.get("errors")
            if isinstance(listed, list):
                entries += listed
            else:
                entries.append({key: value for key, value in error.details.items() if key != "errors"})
        if not entries:
            raise ValueError("ValidationError.every needs at least one error")
        first = entries[0]
        details: dict[str, Any] = {**first, "errors": entries[:MAX_LISTED_ERRORS]}
        if len(entries) > MAX_LISTED_ERRORS:
            details["truncated"] = True
        if len(entries) == 1:
            message = f"{first.get('field')}: {first.get('reason')}"
        else:
            message = f"{len(entries)} fields are invalid, first {first.get('field')}: {first.get('reason')}"
        return cls(message, details)


class TooLarge(ValidationError):
    """Content over a documented size limit (a request body, an uploaded file). Still the spec's
    ``validation_error``; the HTTP adapter answers it with HTTP's own status for it, 413."""


class Unauthorized(ComplianceError):
    code = "unauthorized"


class Forbidden(ComplianceError):
    code = "forbidden"


class NotFound(ComplianceError):
    """Also what another organization's resource looks like: existence is never leaked."""

    code = "not_found"

    @classmethod
    def resource(cls, kind: str, resource_id: str) -> NotFound:
        """The 404 for ``kind`` ``resource_id``; a long id is cut (64 characters in the message,
        100 in ``details`` with ``"truncated": true``), so the answer never grows with it."""
        shown, truncated = bounded(resource_id)
        text = shown if isinstance(shown, str) else str(shown)
        details: dict[str, Any] = {"resource": kind, "id": shown}
        if truncated:
            details["truncated"] = True
        return cls(f"{kind} {cut_text(text, MAX_ID_IN_MESSAGE)} not found", details)


def require(value: T | None, kind: str, resource_id: str) -> T:
    """The value, or NotFound for ``kind``: how every service turns a missing row into a 404."""
    if value is None:
        raise NotFound.resource(kind, resource_id)
    return value


class Conflict(ComplianceError):
    code = "conflict"


class RateLimited(ComplianceError):
    code = "rate_limited"

    def __init__(self, message: str, retry_after: int, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, {"retryAfter": retry_after, **(details or {})})
        self.retry_after = retry_after


class InternalError(ComplianceError):
    code = "internal_error"


class ServiceUnavailable(InternalError):
    """Work refused for now, not a fault: a bounded resource (the PDF renderer's worker processes)
    is busy, or the work passed its time limit and was ended so it could not hold a server thread.

    The spec has one code for server-side failures, so it stays ``internal_error`` (safe to retry
    with the same idempotency key); adapters answer it as "unavailable" (HTTP 503) with
    ``retry_after`` seconds, which ``details`` also carries as ``retryAfter``, as for 429.
    """

    def __init__(self, message: str, retry_after: int, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, {"retryAfter": retry_after, **(details or {})})
        self.retry_after = retry_after


ERROR_CLASSES: dict[str, type[ComplianceError]] = {
    cls.code: cls for cls in (ValidationError, Unauthorized, Forbidden, NotFound, Conflict, RateLimited, InternalError)
}
