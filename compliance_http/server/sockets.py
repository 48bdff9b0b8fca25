"""The listening socket: bound once, in the supervisor, and inherited by every worker."""

from __future__ import annotations

import socket

from compliance_core import ValidationError

__all__ = ["bind", "url_for"]


def bind(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """Bind and listen once, in the parent; port 0 picks a free port (see ``getsockname``)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as error:
        raise ValidationError.field("host", host, f"cannot be resolved: {error.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError as error:
        sock.close()
        raise ValidationError.field("port", port, f"cannot listen on {host}:{port}: {error.strerror}") from None
    return sock


def url_for(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"
