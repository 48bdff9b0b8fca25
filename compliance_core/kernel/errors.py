"""One error tree for every transport.

Core raises these; the HTTP adapter maps ``code`` to a status and the spec's error body, and the
in-process client lets them through untouched, so a caller sees the same failure either way.
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")

__all__ = [
    "ComplianceError",
    "ValidationError",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "Conflict",
    "RateLimited",
    "InternalError",
    "ERROR_CLASSES",
    "require",
]


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
        return cls(f"{field}: {reason}", {"field": field, "value": value, "reason": reason})


class Unauthorized(ComplianceError):
    code = "unauthorized"


class Forbidden(ComplianceError):
    code = "forbidden"


class NotFound(ComplianceError):
    """Also what another organization's resource looks like: existence is never leaked."""

    code = "not_found"

    @classmethod
    def resource(cls, kind: str, resource_id: str) -> NotFound:
        return cls(f"{kind} {resource_id} not found", {"resource": kind, "id": resource_id})


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


ERROR_CLASSES: dict[str, type[ComplianceError]] = {
    cls.code: cls for cls in (ValidationError, Unauthorized, Forbidden, NotFound, Conflict, RateLimited, InternalError)
}
