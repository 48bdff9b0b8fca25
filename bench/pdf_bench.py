"""Policy PDF rendering on adversarial Markdown: time per size at n, 2n, 4n and 8n characters and
the growth per doubling (about 2x when rendering is linear; the heading pattern this replaced
grew about 8x, cubic). ``python -m bench.pdf_bench`` runs it alone; ``python -m bench`` with it.

It times ``FpdfPolicies`` in this process (parse and layout: the work a PDF worker does), best
of ``repeats``, so the figures hold no process start-up or pipe transfer.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Callable, Sequence

from compliance_core.areas.policies import PolicyDocument
from compliance_pdf.policies import FpdfPolicies

__all__ = ["CASES", "run_pdf_bench", "format_pdf", "main"]

CASES: dict[str, Callable[[int], str]] = {
    "heading of spaces": lambda n: "#" + " " * n + "x",
    "heading, spaces and hashes": lambda n: "# T" + " #" * (n // 4) + " " * (n // 2),
    "run of hashes": lambda n: "#" * n,
    "run of stars": lambda n: "x " + "*" * n,
    "run of underscores": lambda n: "x " + "_" * n,
    "nested markers": lambda n: "**_" * (n // 6) + "core" + "_**" * (n // 6),
    "unclosed emphasis": lambda n: "*a " * (n // 3),
    "dense styles": lambda n: "**a** __b__ " * (n // 12),
    "open brackets": lambda n: "[" * n + "x",
    "nested lists": lambda n: "- " * (n // 2) + "deep",
    "prose": lambda n: "Lorem ipsum dolor sit amet. " * (n // 28),
}
AT = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def _seconds(renderer: FpdfPolicies, content: str, repeats: int) -> float:
    document = PolicyDocument(name="Bench", description="", version=1, content=content, published_at=AT)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        renderer.render("Bench", [document], AT)
        best = min(best, time.perf_counter() - start)
    return best


def run_pdf_bench(base: int = 12_500, repeats: int = 3) -> list[tuple[str, list[tuple[int, float]]]]:
    """Per case, ``(size, best seconds)`` at base, 2, 4 and 8 times base characters."""
    sizes = [base * factor for factor in (1, 2, 4, 8)]
    renderer = FpdfPolicies()  # as a worker keeps one: the fonts are parsed once, not per case
    return [(name, [(size, _seconds(renderer, make(size), repeats)) for size in sizes]) for name, make in CASES.items()]


def format_pdf(rows: Sequence[tuple[str, list[tuple[int, float]]]]) -> str:
    sizes = [size for size, _ in rows[0][1]] if rows else []
    header = f"{'Policy PDF, adversarial input':30}" + "".join(f"{f'{size:,} ch':>12}" for size in sizes)
    lines = [header + f"{'growth/doubling':>18}"]
    for name, timings in rows:
        seconds = [s for _, s in timings]
        ratios = [b / a for a, b in zip(seconds, seconds[1:], strict=False) if a > 0]
        growth = sum(ratios) / len(ratios) if ratios else float("nan")
        lines.append(f"{name:30}" + "".join(f"{s * 1000:>9.1f} ms" for s in seconds) + f"{growth:>17.2f}x")
    lines.append("(best of the repeats; linear growth is about 2x per doubling, quadratic 4x, cubic 8x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pdf_bench", description=__doc__)
    parser.add_argument("--base", type=int, default=12_500, help="smallest input in characters (default 12500)")
    parser.add_argument("--repeats", type=int, default=3, help="renders per size, best kept (default 3)")
    args = parser.parse_args(argv)
    print(format_pdf(run_pdf_bench(args.base, args.repeats)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
