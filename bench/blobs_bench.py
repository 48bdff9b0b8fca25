"""Evidence files streamed through the local blob store: a 1 GB upload generated as it is read
(never held), then read back and hashed, with the peak memory of each (issue 20: "a 1 GB upload
streams with flat memory"). ``python -m bench.blobs_bench`` runs it alone; ``python -m bench``
with it.

Peak memory is measured two ways: tracemalloc's peak of Python allocations during the call (what
the code holds), and the growth of the process's maximum resident set (what the machine saw,
buffers of the C libraries included). The file goes through the adapter exactly as an upload
would: ``Intake`` counting, hashing and type-checking, a temporary file fsynced, then linked in.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from compliance_blobs.local import LocalBlobs
from compliance_core.kernel.blobs import CHUNK_BYTES

__all__ = ["BlobRun", "run_blobs_bench", "format_blobs", "main"]

DEFAULT_BYTES = 10**9
T = TypeVar("T")


@attrs.frozen(kw_only=True)
class BlobRun:
    what: str
    size: int
    seconds: float
    traced_peak: int
    """tracemalloc's peak during the call (bytes)."""
    rss_growth: int
    """How much the process's maximum resident set grew during the call (bytes)."""


def _pdf(size: int) -> Iterator[bytes]:
    """``size`` bytes of a PDF-looking upload, made chunk by chunk: one random block with a
    counter in front, so no two chunks are equal and nothing is held but the block."""
    block = os.urandom(CHUNK_BYTES)
    header = b"%PDF-1.7\n"
    yield header
    left = size - len(header)
    number = 0
    while left > 0:
        chunk = (number.to_bytes(8, "big") + block[8:])[:left]
        yield chunk
        left -= len(chunk)
        number += 1


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _measured(what: str, size: int, call: Callable[[], T]) -> tuple[BlobRun, T]:
    rss = _max_rss()
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = call()
        seconds = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return BlobRun(what=what, size=size, seconds=seconds, traced_peak=peak, rss_growth=_max_rss() - rss), result


def run_blobs_bench(size: int = DEFAULT_BYTES, directory: Path | None = None) -> list[BlobRun]:
    """Upload ``size`` bytes to a fresh local store, read them back, and check the hash."""
    with tempfile.TemporaryDirectory(prefix="compliance-blobs-bench-", dir=directory) as root:
        store = LocalBlobs(Path(root) / "blobs")
        put, info = _measured("put (upload)", size, lambda: store.put("org_bench", _pdf(size)))

        def read() -> str:
            digest = hashlib.sha256()
            with store.open("org_bench", info.sha256) as chunks:
                for chunk in chunks:
                    digest.update(chunk)
            return digest.hexdigest()

        read_run, digest = _measured("open (download) + sha256", size, read)
        if digest != info.sha256 or info.size != size:
            raise RuntimeError("the stored file differs from the upload")
        return [put, read_run]


def format_blobs(runs: Sequence[BlobRun]) -> str:
    lines = [
        "Blob streaming (local directory adapter, fsync on)",
        f"{'':28} {'bytes':>14} {'seconds':>8} {'MB/s':>7} {'traced peak':>12} {'max RSS growth':>15}",
    ]
    for run in runs:
        lines.append(
            f"{run.what:28} {run.size:>14,} {run.seconds:>8.2f} {run.size / run.seconds / 1e6:>7.0f} "
            f"{run.traced_peak / 2**20:>8.2f} MiB {run.rss_growth / 2**20:>11.2f} MiB"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.blobs_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=DEFAULT_BYTES, help=f"upload size (default {DEFAULT_BYTES})")
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary store goes (default: $TMPDIR)")
    args: Any = parser.parse_args(argv)
    print(format_blobs(run_blobs_bench(args.bytes, args.dir)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
