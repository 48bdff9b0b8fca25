"""The baseline: a Falcon app with one route answering fixed bytes, served exactly as the full
stack is (same process count, same server), so the ratio measures only the platform's own work.

``python -m bench.bare --port P --workers N --body FILE --content-type TYPE``
"""

from __future__ import annotations

import argparse
import functools

import falcon

from compliance_http.server import DEFAULT_THREADS, serve_forever

__all__ = ["create_bare_app", "serve_bare"]


class _Fixed:
    def __init__(self, body: bytes, content_type: str) -> None:
        self._body = body
        self._content_type = content_type

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.data = self._body
        resp.content_type = self._content_type


def create_bare_app(body: bytes, content_type: str, path: str = "/v1/vendors") -> falcon.App:
    app = falcon.App()
    app.add_route(path, _Fixed(body, content_type))
    return app


def serve_bare(body: bytes, content_type: str, host: str, port: int, workers: int, threads: int) -> None:
    """Through the project's own prefork server, so both sides bind, fork and serve alike."""
    serve_forever(functools.partial(create_bare_app, body, content_type), host, port, workers, threads)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bare")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--body", required=True, help="file holding the exact response bytes")
    parser.add_argument("--content-type", default="application/json")
    args = parser.parse_args(argv)
    with open(args.body, "rb") as handle:
        body = handle.read()
    serve_bare(body, args.content_type, args.host, args.port, args.workers, args.threads)


if __name__ == "__main__":
    main()
