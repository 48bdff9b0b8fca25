"""``compliance worker``: webhook delivery and the chores, without serving the API."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

from compliance_core import ValidationError

from ..delivery import delivering
from ..server import configure_logging, running_chores
from .stores import open_platform, serve_settings, shown_db, store_url

__all__ = ["worker"]


def worker(args: argparse.Namespace) -> int:
    url = store_url(args.db)
    if url.startswith("memory:"):
        raise ValidationError.field("db", url, "a memory:// store lives inside its server: deliver from `serve`")
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
    )
    configure_logging(access_log=False)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        with (
            open_platform(args.db, settings=serve_settings()) as platform,
            running_chores(platform),
            delivering(platform, interval=args.interval),
        ):
            print(f"Delivering webhooks from {shown_db(url)} (pid {os.getpid()}). Stop with Ctrl+C.", flush=True)
            while not stop.wait(1.0):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("Stopped.", file=sys.stderr, flush=True)
    return 0
