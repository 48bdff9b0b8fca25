"""The registry-driven suites (``generic_suite``) on the memory store, and what the registry
itself promises: every declared operation is on the wire and in the committed document."""

from __future__ import annotations

import json
from pathlib import Path

from generic_suite import *  # noqa: F403 (the suites, collected here on this store)
from generic_suite import DOCUMENT, world_on

from compliance_core.areas import AREAS
from compliance_http.routes import default_endpoints

worlds, world = world_on("memory")


def test_every_registered_operation_is_on_the_wire() -> None:
    routed = {e.operation.name for e in default_endpoints()}
    declared = {op.name for area in AREAS for op in area.operations}
    assert declared == routed - {"health", "openapi"}


def test_the_committed_document_is_the_one_the_suites_check() -> None:
    committed = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
    assert json.loads(committed.read_text()) == json.loads(json.dumps(DOCUMENT))
