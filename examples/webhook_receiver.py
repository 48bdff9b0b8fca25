"""A webhook receiver for trying the platform's webhooks on your own machine: it listens on
localhost, checks each delivery's signature with the endpoint's secret before trusting it, and
prints the events it accepted.

    export WEBHOOK_SECRET=whsec_...   # the secret POST /v1/webhooks answered (shown once)
    .venv/bin/python examples/webhook_receiver.py --port 8000

The server delivers to a private address such as 127.0.0.1 only when it was started with
COMPLIANCE_ALLOW_PRIVATE_WEBHOOKS=1 (development: docs/webhooks.md). Stop it with Ctrl+C, or let
``--count`` stop it after that many events.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def listen(port: int, secret: str, events: queue.Queue[dict[str, Any]]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            # the signature covers the raw body: check it before parsing anything
            expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, self.headers.get("X-Service-Signature", "")):
                print("refused a request whose signature does not match the secret", file=sys.stderr, flush=True)
                self.send_response(401)  # a 4xx is never retried
                self.end_headers()
                return
            self.send_response(204)  # any 2xx: delivered
            self.end_headers()
            events.put(json.loads(body))

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> int:
    parser = argparse.ArgumentParser(description="Print the webhook events delivered to http://127.0.0.1:PORT/.")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument("--count", type=int, help="stop after this many events (default: run until Ctrl+C)")
    parser.add_argument(
        "--timeout", type=float, help="stop after this many seconds (exit 1 if --count events have not arrived by then)"
    )
    args = parser.parse_args()
    secret = os.environ.get("WEBHOOK_SECRET")
    if not secret:
        print("Set WEBHOOK_SECRET to the endpoint's secret (whsec_...).", file=sys.stderr)
        return 2
    events: queue.Queue[dict[str, Any]] = queue.Queue()
    server = listen(args.port, secret, events)
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    seen: set[str] = set()
    try:
        while args.count is None or len(seen) < args.count:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                event = events.get(timeout=left)
            except queue.Empty:
                print(f"{len(seen)} events arrived in {args.timeout:g} s", file=sys.stderr)
                return 0 if args.count is None else 1
            if event["id"] in seen:  # delivered again (an answer that came too late): done already
                continue
            seen.add(event["id"])
            print(f"{event['type']} {event['id']}: {event['data'].get('title') or event['data']['id']}", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
