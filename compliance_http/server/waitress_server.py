"""waitress as the workers run it: its options, and the spec's answers to the requests it refuses
itself.

Requests waitress answers before any app sees them (a malformed request line or header, a body
over waitress's limit, an invalid Content-Length) are answered in the spec's error shape too,
with an X-Request-Id: ``SpecChannel``'s error task writes that body, and the channel reads what
the client is still sending before it closes, so the client gets the answer rather than a
connection reset.
"""

from __future__ import annotations

import copy
import logging
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.task import ErrorTask

from ..errors import code_for_status, new_request_id
from ..middleware import ACCESS_LOG, access_line
from ..resources import BODY_LIMIT_REASON, MAX_BODY_BYTES
from ..wire import JSON, Wire

__all__ = [
    "LINGER_BYTES",
    "LINGER_SECONDS",
    "MAX_REQUEST_BODY",
    "WAITRESS_OPTIONS",
    "BodyLimit",
    "SpecChannel",
    "SpecErrorTask",
    "channel_with",
]

log = logging.getLogger(__name__)

MAX_REQUEST_BODY = MAX_BODY_BYTES + 64 * 1024
"""waitress's own body limit, just above the documented one (``resources.MAX_BODY_BYTES``): a
body up to 64 KiB over ours reaches the app, whose check answers 413; beyond that, waitress
refuses the request as soon as Content-Length announces it (or, chunked, once that much has
arrived), without buffering it, and ``SpecErrorTask`` answers the same 413."""
LINGER_SECONDS = 5.0
"""How long a connection refused by waitress keeps reading (and discarding) what the client still
sends after the answer, before it closes: closing with unread data resets the connection, and a
client still sending its body would lose the answer."""
LINGER_BYTES = 64 * 1024 * 1024
"""The most such a connection discards before it closes anyway."""
WAITRESS_OPTIONS: dict[str, Any] = {
    "ident": "compliance",
    "channel_timeout": 60,  # close idle keep-alive connections after a minute
    "connection_limit": 1000,
    "asyncore_use_poll": True,  # select() breaks above 1024 descriptors
    "clear_untrusted_proxy_headers": True,
    "max_request_body_size": MAX_REQUEST_BODY,
    "expose_tracebacks": False,
}


class SpecErrorTask(ErrorTask):
    """waitress's answer to a request it refuses itself (malformed, too large, or an app that
    failed before sending anything), written as the spec's error body with a fresh request id
    instead of waitress's plain text. The status stays waitress's; the code follows it
    (``errors.code_for_status``): 400, 413 and 431 are ``validation_error``, 5xx
    ``internal_error``. Rendering it cannot fail, and a 500 is logged with the request id and the
    traceback of the failure behind it."""

    def execute(self) -> None:
        rid = new_request_id()
        error = self.request.error
        status = f"{error.code} {error.reason}"
        try:
            body = _error_body(self.request, self.channel.server.adj, rid)
        except Exception:
            log.exception("could not describe waitress's error %r (requestId=%s)", error, rid)
            status = "500 Internal Server Error"
            body = Wire.error("internal_error", "internal server error", {}, rid)
        self.status = status
        self.response_headers.extend([("Content-Type", JSON), ("X-Request-Id", rid)])
        self.set_close_on_finish()
        if isinstance(self.channel, SpecChannel):
            self.channel.linger = True
        self.content_length = len(body)
        self.write(body)
        if ACCESS_LOG.isEnabledFor(logging.INFO):
            try:
                ACCESS_LOG.info(
                    access_line(
                        request_id=rid,
                        key_id=None,
                        method=_method_of(self.request),
                        route=None,
                        status=int(error.code),
                        duration_ms=(time.time() - self.start_time) * 1000,
                    )
                )
            except Exception:
                log.exception("could not write the access log (requestId=%s)", rid)


def _method_of(request: Any) -> str | None:
    """The request's method, if waitress got as far as reading one that looks like a method."""
    method = getattr(request, "command", None)
    if isinstance(method, str) and method.isascii() and method.isalpha() and len(method) <= 16:
        return method
    return None


_FIELD_OF_REASON = {
    "Content-Length is invalid": "Content-Length",
    "Invalid header": "headers",
    "Bad URI": "requestLine",
    "Start line is invalid": "requestLine",
    "Malformed HTTP method": "requestLine",
    "Malformed HTTP version": "requestLine",
    "Transfer-Encoding requested is not supported.": "Transfer-Encoding",
}


def _error_body(request: Any, adj: Any, rid: str) -> bytes:
    error = request.error
    status = int(error.code)
    code = code_for_status(status)
    if status == 413:
        declared = request.content_length or request.body_bytes_received or None
        most = getattr(request, "most_body_bytes", None)
        reason = BODY_LIMIT_REASON if most is None else f"must be at most {most} bytes"
        details: dict[str, Any] = {"field": "body", "value": declared, "reason": reason}
        return Wire.error(code, f"body: {reason}", details, rid)
    if status == 431:
        reason = f"must be at most {adj.max_request_header_size} bytes"
        return Wire.error(code, f"headers: {reason}", {"field": "headers", "reason": reason}, rid)
    if status == 500:  # the app (or waitress) failed before it sent anything
        exc_info = sys.exc_info()
        log.error("unhandled error below the app (requestId=%s)", rid, exc_info=exc_info if exc_info[0] else None)
        return Wire.error(code, "internal server error; retrying with the same Idempotency-Key is safe", {}, rid)
    reason = str(error.body)[:200]  # waitress's own words ("Invalid header"): no request data
    field = _FIELD_OF_REASON.get(reason)
    details = {"reason": reason} if field is None else {"field": field, "reason": reason}
    return Wire.error(code, f"{'malformed' if status == 400 else 'unsupported'} request: {reason}", details, rid)


BodyLimit = Callable[[str, str], "int | None"]
"""The most a route's body may hold (method, path), or None for waitress's own limit."""


class RoutedBodyParser(HTTPRequestParser):
    """waitress's request parser, with the body limit of the request's route once its request
    line is read (``body_limit``): a route taking a file lets it through that far, and any other
    body is still refused, unread, just above ``MAX_BODY_BYTES``."""

    body_limit: BodyLimit
    most_body_bytes: int | None = None
    adj: Any

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        most = self.body_limit(self.command, self.path)
        if most is not None:
            self.most_body_bytes = most
            self.adj = copy.copy(self.adj)  # the server's, shared by every request
            self.adj.max_request_body_size = most + 1  # waitress refuses at ``>=``


def channel_with(body_limit: BodyLimit) -> type[SpecChannel]:
    """``SpecChannel`` with the body limits of an app's routes."""
    parser = type("RoutedBodyParser", (RoutedBodyParser,), {"body_limit": staticmethod(body_limit)})
    return type("RoutedSpecChannel", (SpecChannel,), {"parser_class": parser})


class SpecChannel(HTTPChannel):
    """waitress's connection, with ``SpecErrorTask`` for the requests it refuses and a lingering
    close after them: the answer goes out, the sending side is shut, and what the client still
    sends (the rest of a body too large) is read and discarded for up to ``LINGER_SECONDS`` or
    ``LINGER_BYTES`` before the connection closes, so the client reads the answer instead of a
    connection reset.

    Only a lingering connection needs other ``readable``/``writable``/read/write behaviour, and
    waitress asks every connection those on every turn of its loop, so a channel becomes a
    ``_LingeringChannel`` when it starts to linger and the ordinary path runs waitress's own
    methods untouched."""

    error_task_class = SpecErrorTask
    linger = False
    """Set by the error task: close with a lingering close."""

    def handle_close(self) -> None:
        if self.linger and self.connected and not self.total_outbufs_len:
            self.linger = False
            try:
                self.socket.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            else:
                self.will_close = False
                self.close_when_flushed = False
                self.__class__ = _LingeringChannel
                self._drain_until = time.monotonic() + LINGER_SECONDS
                self._drained = 0
                return
        self._close_now()

    def _close_now(self) -> None:
        self.linger = False
        if self.socket is not None and self.connected:
            HTTPChannel.handle_close(self)


class _LingeringChannel(SpecChannel):
    """A refused connection draining what its client still sends (see ``SpecChannel``)."""

    _drain_until: float
    _drained: int

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:  # nothing to write: only a time to stop
        return bool(self.will_close) or time.monotonic() >= self._drain_until

    def handle_write(self) -> None:
        self._close_now()

    def handle_read(self) -> None:
        try:
            data = self.socket.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        self._drained += len(data)
        if not data or self._drained >= LINGER_BYTES or time.monotonic() >= self._drain_until:
            self._close_now()

    def handle_close(self) -> None:
        self._close_now()
