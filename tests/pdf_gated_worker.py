"""A PDF worker that holds each job until a file appears: a real renderer blocked on an event,
for the tests of the render pool's limits (``python pdf_gated_worker.py STARTED RELEASE``).

It appends a line to STARTED when a job arrives, waits until RELEASE exists, then renders the job
with ``FpdfPolicies`` and answers like ``compliance_pdf.worker``.
"""

from __future__ import annotations

import pickle
import sys
import time
from pathlib import Path

from compliance_pdf.policies import FpdfPolicies
from compliance_pdf.pool import READY, read_frame, write_frame


def main() -> None:
    started, release = Path(sys.argv[1]), Path(sys.argv[2])
    jobs, replies = sys.stdin.buffer, sys.stdout.buffer
    renderer = FpdfPolicies()
    write_frame(replies, READY)
    while (job := read_frame(jobs)) is not None:
        with started.open("a") as marks:
            marks.write("job\n")
        while not release.exists():
            time.sleep(0.01)
        title, documents, generated_at = pickle.loads(job)
        write_frame(replies, pickle.dumps(("ok", renderer.render(title, documents, generated_at))))


if __name__ == "__main__":
    main()
