"""``compliance``'s entry point: parse, run one command, and turn what it raises into one JSON
error and an exit code."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from compliance_core import ComplianceError, ValidationError

from .output import as_options, passwords, report_error
from .parser import UsageError, build_parser

__all__ = ["main"]


def _quiet_libraries() -> None:
    """Keep libraries' log records off stderr unless logging is configured (``serve`` does): a
    command's stderr is its one JSON error. (Without a handler anywhere, Python prints warnings
    such as psycopg_pool's "error connecting" on stderr as plain text.)"""
    logger = logging.getLogger("psycopg")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (0 ok, 1 error, 2 bad input)."""
    parser = build_parser()
    hide = passwords(sys.argv[1:] if argv is None else argv)
    _quiet_libraries()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help and --version
        return stop.code if isinstance(stop.code, int) else 0
    except UsageError as error:
        report_error("validation_error", error.message, {"usage": error.usage}, hide)
        return 2
    try:
        return int(args.run(args))
    except ValidationError as error:
        message, details = as_options(error, getattr(args, "options", {}))
        report_error(error.code, message, details, hide)
        return 2
    except ComplianceError as error:
        report_error(error.code, error.message, error.details, hide)
        return 1
    except KeyboardInterrupt:  # Ctrl+C before serve's own handlers are in place
        return 130
