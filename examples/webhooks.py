"""Receive the platform's events as signed webhooks, and check each signature.

    .venv/bin/python examples/webhooks.py   # from the checkout, once make serve or make test made .venv

A small receiver listens on localhost (which is why private targets are allowed here: in
production endpoints are public https URLs), the platform delivers to it from a thread, and the
receiver verifies ``X-Service-Signature`` with nothing but ``hmac`` before trusting a body.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from compliance_core import Platform
from compliance_core.areas.findings import FindingPatch, NewFinding
from compliance_core.areas.webhooks import NewWebhook, WebhookPolicy
from compliance_http.delivery import delivering


def receiver(secret: list[str], inbox: queue.Queue[str]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            expected = hmac.new(secret[0].encode(), body, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(expected, self.headers["X-Service-Signature"]):
                self.send_response(401)  # not from the platform: ignore it
            else:
                event = json.loads(body)
                inbox.put(f"{event['type']}: {event['data'].get('title', event['data']['id'])}")
                self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    secret: list[str] = []
    inbox: queue.Queue[str] = queue.Queue()
    server = receiver(secret, inbox)
    settings = {"webhooks": WebhookPolicy(allow_private=True)}
    with Platform.open("memory://", settings=settings) as platform, delivering(platform, interval=0.1):
        owner = platform.actor(platform.bootstrap("Acme Ltd").organization.id)
        url = f"http://127.0.0.1:{server.server_address[1]}/events"
        issued = platform.webhooks.create(owner, NewWebhook(url=url, events=["finding.created", "finding.updated"]))
        secret.append(issued.secret or "")  # shown once: keep it where the receiver can read it

        finding = platform.findings.create(owner, NewFinding(title="MFA not enforced", severity="high"))
        platform.findings.update(owner, finding.id, FindingPatch(severity="critical"))
        # Deliveries run side by side, so events may arrive in any order (each carries its own
        # createdAt and id): sorted here to print the same lines every time.
        for line in sorted(inbox.get(timeout=10) for _ in range(2)):
            print(line)
    server.shutdown()


if __name__ == "__main__":
    main()
