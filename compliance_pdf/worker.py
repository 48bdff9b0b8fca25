"""A PDF worker process: ``python -m compliance_pdf.worker``, started by ``compliance_pdf.pool``.

It reads jobs from stdin and answers on stdout, one frame each (``pool.FRAME``: an 8-byte length,
then a pickle), until stdin closes; then it exits. Rendering here, not on a server's request
thread, keeps fpdf2 (pure Python, GIL-bound) from slowing every other request, and lets the pool
end a render that passes its time limit by ending the process.
"""

from __future__ import annotations

import pickle
import signal
import sys
from typing import BinaryIO

from .pool import READY, read_frame, write_frame


def serve(jobs: BinaryIO, replies: BinaryIO) -> None:
    """Answer every job on ``jobs`` with ``("ok", pdf)`` or ``("error", reason)`` on ``replies``."""
    from .policies import FpdfPolicies

    renderer = FpdfPolicies()
    write_frame(replies, READY)
    while True:
        job = read_frame(jobs)
        if job is None:
            return
        title, documents, generated_at = pickle.loads(job)
        try:
            reply: tuple[str, object] = ("ok", renderer.render(title, documents, generated_at))
        except Exception as error:  # reported to the pool, which answers 500 and logs it
            reply = ("error", f"{type(error).__name__}: {error}")
        write_frame(replies, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def main() -> None:
    # Ctrl+C on `compliance serve` reaches the whole process group: the server stops its pool,
    # which closes our stdin; a KeyboardInterrupt here would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    jobs, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed by a library may corrupt the replies
    serve(jobs, replies)


if __name__ == "__main__":
    main()
