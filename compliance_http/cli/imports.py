"""``compliance import``: a register's records from a CSV or XLSX file, straight into a store
(the same checks, events and audit entries as ``POST /v1/<register>/import``), with a progress
bar on a terminal."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from compliance_core import ValidationError
from compliance_core.areas import AREAS
from compliance_core.kernel.registers import FileFormat, Register, RegisterFile, register_of

from ..wire import Wire
from .output import emit
from .progress import progress_bar
from .stores import open_platform

__all__ = ["IMPORTABLE", "import_register"]

IMPORTABLE: dict[str, Register[Any, Any]] = {
    area.name: found for area in AREAS if area.api is not None and (found := register_of(area.api)) is not None
}
"""Area name -> the register its service imports into (people, risks, vendors)."""


def import_register(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise ValidationError.field("file", args.file, "no such file")
    file_format = args.format or path.suffix.lstrip(".").lower()
    if file_format not in {f.value for f in FileFormat}:
        raise ValidationError.field("format", file_format, "must be csv or xlsx (or name a .csv or .xlsx file)")
    data = RegisterFile.of(path.read_bytes(), file_format, dry_run=args.dry_run)
    register = IMPORTABLE[args.register]
    with open_platform(args.db) as platform:
        service = platform.services[args.register]
        with progress_bar(f"import {args.register}") as update:
            report = register.load(service, platform.actor(args.org), data, progress=update)
        emit(Wire(platform.renderer).unstructure(report))
    return 0
