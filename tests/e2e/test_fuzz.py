"""Schemathesis over a real `compliance serve`: every declared operation, every check,
every phase (examples, coverage, fuzzing, and stateful, which follows the document's links from
each create to the routes of the record it made), and zero failures.

The fuzzer runs as the ``st`` command line, so a failure reads as Schemathesis prints it: the
check, the response and a curl command that reproduces it. The run is reproducible: generation
is derandomized (``deterministic``), one worker sends the requests in a fixed order, and no
example database or cache is carried from one run to the next. The organization is on the
enterprise plan with a rate limit no fuzz reaches, so no 429 appears. The hooks in
``fuzz_hooks`` keep the fuzzer's own key alive and tell a document that allows too much from a
rule across fields, records or time (see there).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from compliance_http.routes import default_endpoints
from e2e_support import COMPLIANCE, ServerProcess

pytestmark = [pytest.mark.slow, pytest.mark.long]

SCHEMATHESIS = str(Path(sys.executable).with_name("st"))
MAX_EXAMPLES = 8
"""Cases per operation in the examples and fuzzing phases. The coverage phase, which has no such
bound, sends the schema's boundary and invalid values for every field of every operation, the
bulk of the run; the generic suites add 40 generated bodies per operation in-process."""
STATEFUL_SCENARIOS = 50
STATEFUL_STEPS = 8
HANG_SECONDS = 900
"""Only a guard against a hung run: how long the fuzz takes is printed, never asserted (timings
belong to the benchmarks; docs/performance.md has the latest)."""


_AUTOMATION_RULES = {
    "url": "https to a public address unless private targets are allowed; needed by assertions; probes only",
    "assertions": "the fields each assertion's type reads; probes only",
    "callableName": "an installed automation callable; callables only",
    "schedule": "an RFC 5545 rule that occurs",
}
"""A task automation's rules across its fields and the world, on its create and its change."""

CROSS_FIELD_RULES: dict[tuple[str, str], str] = {
    ("PATCH /v1/findings/{findingId}", "revisionNote"): "required, and only allowed, while status is needs_revision",
    ("PATCH /v1/vendors/{vendorId}", "transferMechanism"): "required by the country and processesPersonalData",
    ("POST /v1/vendors", "nextReviewDue"): "not before lastReviewedAt",
    ("POST /v1/vendors", "transferMechanism"): "required by the country and processesPersonalData",
    ("POST /v1/api-keys", "expiresAt"): "in the future (the clock)",
    ("POST /v1/api-keys", "personId"): "a person of the organization whose role may act with the key's role",
    ("POST /v1/people/bulk", "email"): "not repeated by another entry",
    ("POST /v1/people", "email"): "not taken by another person",
    ("POST /v1/findings", "templateId"): "a finding template of the organization",
    ("POST /v1/findings", "title"): "required unless templateId names a template (which gives one)",
    ("POST /v1/findings", "severity"): "required unless templateId names a template that gives one",
    ("POST /v1/policies", "assigneeId"): "a person of the organization",
    ("POST /v1/policies", "signerIds"): "people of the organization",
    ("PATCH /v1/policies/{policyId}", "signerIds"): "people of the organization",
    ("PATCH /v1/policies/{policyId}", "assigneeId"): "a person of the organization",
    ("POST /v1/policies/{policyId}/submit-for-approval", "approverId"): "a person of the organization",
    ("POST /v1/risks", "ownerId"): "a person of the organization",
    ("PATCH /v1/risks/{riskId}", "ownerId"): "a person of the organization",
    ("PATCH /v1/risks/{riskId}", "status"): "accepted only on a risk already accepted",
    ("POST /v1/risks/{riskId}/accept", "expiresOn"): "after today (the clock)",
    ("POST /v1/webhooks", "url"): "a host that resolves to a public address (the world)",
    ("PATCH /v1/webhooks/{webhookId}", "url"): "a host that resolves to a public address (the world)",
    (
        "POST /v1/framework-imports",
        "content",
    ): "a file in its format whose every row or element reads (the file's bytes)",
    ("POST /v1/framework-imports", "frameworkId"): "not the id of a framework already installed or imported",
    ("POST /v1/framework-imports", "name"): "required when the file is a sheet",
    ("POST /v1/framework-imports", "baseFramework"): "a framework installed or imported, for a profile",
    ("POST /v1/framework-imports", "controlKinds"): "kinds that select at least one requirement of the file",
    (
        "GET /v1/evidence-export/all",
        "frameworkId",
    ): "a scope of at most 60 PDFs, else a job (the organization's records)",
    ("POST /v1/vendors/import", "content"): "a CSV or XLSX file whose every row makes a vendor (the file's rows)",
    ("POST /v1/risks/import", "content"): "a CSV or XLSX file whose every row makes a risk (the file's rows)",
    ("POST /v1/people/import", "content"): "a CSV or XLSX file whose every row makes a person (the file's rows)",
    ("PUT /v1/organization/logo", "content"): "a whole PNG or JPEG image within the size limits (the file's bytes)",
    ("PATCH /v1/context", "change"): "answers of the organization's context, each once and not also removed",
    ("PATCH /v1/context", "remove"): "answers of the organization's context, none also changed",
    ("POST /v1/framework-editor/task-template", "frameworkId"): "a framework of the catalogue (the installed files)",
    ("POST /v1/framework-editor/task-template", "requirementIds"): "live requirements of that framework's catalog",
    ("POST /v1/framework-editor/task-template", "frequency"): "an RFC 5545 rule that occurs",
    ("PATCH /v1/framework-editor/task-template/{templateId}", "requirementIds"): "live requirements of its framework",
    ("PATCH /v1/framework-editor/task-template/{templateId}", "frequency"): "an RFC 5545 rule that occurs",
    ("POST /v1/controls/{controlId}/link", "kind"): "a kind of record an area of the platform links to controls",
    ("POST /v1/controls/{controlId}/link", "targetId"): "a record of that kind in the organization",
    ("POST /v1/controls/{controlId}/unlink", "kind"): "a kind of record an area of the platform links to controls",
    ("POST /v1/controls/{controlId}/unlink", "targetId"): "a record of that kind in the organization",
    ("POST /v1/mappings/import", "sourceFramework"): "a framework of the catalogue",
    ("POST /v1/mappings/import", "targetFramework"): "a framework of the catalogue",
    ("POST /v1/mappings/import", "mappings"): "requirements of sourceFramework and targetFramework",
    ("POST /v1/soa", "frameworkId"): "a framework the organization enabled",
    ("POST /v1/policies", "controlIds"): "controls of the organization",
    ("PATCH /v1/policies/{policyId}", "controlIds"): "controls of the organization",
    ("POST /v1/risks", "controlIds"): "controls of the organization",
    ("PATCH /v1/risks/{riskId}", "controlIds"): "controls of the organization",
    ("POST /v1/findings", "controlId"): "a control of the organization",
    ("PATCH /v1/findings/{findingId}", "controlId"): "a control of the organization",
    ("POST /v1/comments", "entityType"): "a kind of record an area of the platform takes comments on",
    ("POST /v1/comments", "entityId"): "a record of that kind in the organization that the caller sees",
    ("POST /v1/comments", "userId"): "the caller's own person",
    ("PUT /v1/comments/{commentId}", "userId"): "the caller's own person",
    ("GET /v1/comments", "entityType"): "a kind of record an area of the platform takes comments on",
    ("GET /v1/comments", "authorId"): "for staff listing across records, their own person",
    ("POST /v1/tasks", "assigneeId"): "a person of the organization",
    ("POST /v1/tasks", "riskIds"): "risks of the organization",
    ("POST /v1/tasks", "vendorIds"): "vendors of the organization",
    ("POST /v1/tasks", "policyIds"): "policies of the organization",
    ("POST /v1/tasks", "controlIds"): "controls of the organization",
    ("POST /v1/tasks", "frequency"): "an RFC 5545 rule that occurs",
    ("PATCH /v1/tasks/{taskId}", "assigneeId"): "a person of the organization",
    ("PATCH /v1/tasks/{taskId}", "riskIds"): "risks of the organization",
    ("PATCH /v1/tasks/{taskId}", "vendorIds"): "vendors of the organization",
    ("PATCH /v1/tasks/{taskId}", "policyIds"): "policies of the organization",
    ("PATCH /v1/tasks/{taskId}", "controlIds"): "controls of the organization",
    ("PATCH /v1/tasks/{taskId}", "frequency"): "an RFC 5545 rule that occurs",
    ("PATCH /v1/tasks/{taskId}", "approverId"): "an active owner or admin of the organization",
    ("POST /v1/tasks/{taskId}/submit-for-review", "approverId"): "an active owner or admin of the organization",
    ("PATCH /v1/tasks/bulk", "taskIds"): "tasks of the organization",
    ("PATCH /v1/tasks/bulk", "status"): "status, dueDate or reviewDate given",
    ("PATCH /v1/tasks/bulk/assignee", "taskIds"): "tasks of the organization",
    ("PATCH /v1/tasks/bulk/assignee", "assigneeId"): "a person of the organization",
    ("DELETE /v1/tasks/bulk", "taskIds"): "tasks of the organization",
    ("POST /v1/tasks/bulk/submit-for-review", "taskIds"): "tasks of the organization",
    ("POST /v1/tasks/bulk/submit-for-review", "approverId"): "an active owner or admin of the organization",
    ("POST /v1/task-management/reassign", "fromPersonId"): "a person of the organization",
    ("POST /v1/task-management/reassign", "toPersonId"): "a person of the organization, not fromPersonId",
    ("POST /v1/task-management/reschedule", "taskIds"): "tasks of the organization, each with a due date",
    ("POST /v1/task-management/reschedule", "days"): "keeps each due date within the calendar",
    ("POST /v1/vendors", "assigneeId"): "a person of the organization",
    ("PATCH /v1/vendors/{vendorId}", "assigneeId"): "a person of the organization",
    ("POST /v1/attachments", "taskId"): "a task of the organization",
    ("POST /v1/integrations/connections", "provider"): "a provider installed on the instance (its plugins)",
    ("POST /v1/integrations/connections", "credentials"): "the credential fields of that provider's manifest",
    ("POST /v1/integrations/connections", "variables"): "variables of that provider's manifest, each of its type",
    (
        "PUT /v1/integrations/connections/{connectionId}/credentials",
        "credentials",
    ): "the credential fields of the connection's provider",
    (
        "POST /v1/integrations/variables/connections/{connectionId}",
        "values",
    ): "variables of the connection's provider, each of its type",
    ("POST /v1/integrations/checks/connections/{connectionId}/run", "checkId"): "a check of the connection's provider",
    (
        "POST /v1/integrations/checks/connections/{connectionId}/import",
        "format",
    ): "a format the connection's provider takes",
    (
        "POST /v1/integrations/checks/connections/{connectionId}/import",
        "content",
    ): "a SARIF or OCSF document whose every result reads (the file's bytes)",
    **{
        (operation, field): reason
        for operation in ("POST /v1/tasks/{taskId}/automations", "PATCH /v1/tasks/{taskId}/automations/{automationId}")
        for field, reason in _AUTOMATION_RULES.items()
    },
    **{
        (operation, field): "the content of the evidence's kind and nothing of another kind's"
        for operation in (
            "POST /v1/attachments",
            "POST /v1/tasks/{taskId}/attachments",
            "POST /v1/tasks/{taskId}/attachments/{attachmentId}/versions",
        )
        for field in ("fileData", "fileName", "fileType", "url", "note")
    },
    **{
        (operation, "validUntil"): "after collectedAt"
        for operation in (
            "POST /v1/attachments",
            "POST /v1/tasks/{taskId}/attachments",
            "POST /v1/tasks/{taskId}/attachments/{attachmentId}/versions",
        )
    },
}
"""The rules that may refuse a request the document allows, each relating its field to another
field, another record, the clock or the world (a JSON Schema sees one value at a time); ``page``
and ``cursor`` (two parameters, and a cursor is opaque like an id) are added for every paged
operation. A refusal outside this table is the document allowing what the server refuses."""


def _allowed_refusal(operation: str, field: str) -> bool:
    if field in ("page", "cursor"):
        return any(
            f"{e.method} {_documented(path)}" == operation or f"HEAD {_documented(path)}" == operation
            for e in default_endpoints()
            if e.operation.paged
            for path in e.paths
        )
    return (operation, field.split("[", 1)[0].split(".", 1)[0]) in CROSS_FIELD_RULES


def _documented(path: str) -> str:
    return re.sub(r"{(\w+)}", lambda m: "{" + re.sub(r"_(\w)", lambda c: c[1].upper(), m[1]) + "}", path)


def _operations() -> set[str]:
    """Every operation declared on the wire, as Schemathesis names them, but HEAD: a HEAD answers
    as its GET without the body (the generic suites hold every one to that), so fuzzing it again
    would only double the run."""
    return {f"{e.method} {_documented(path)}" for e in default_endpoints() for path in e.paths}


class Fuzz:
    """A server with one enterprise organization, the key the fuzzer acts with, and the run."""

    def __init__(self, tmp: Path, serve: Callable[..., ServerProcess]) -> None:
        self.tmp = tmp
        db = tmp / "fuzz.db"
        init = subprocess.run(
            [COMPLIANCE, "init", "--db", str(db), "--org-name", "Fuzz", "--plan", "enterprise"]
            + ["--rpm", "1000000", "--burst", "1000000"],
            capture_output=True,
            text=True,
            check=True,
        )
        self.key = json.loads(init.stdout)["apiKey"]
        self.server = serve(db, workers=2)
        self.key_id = next(key["id"] for key in self.get("/v1/api-keys")["data"] if self.key.startswith(key["prefix"]))

    def get(self, path: str) -> Any:
        answer = httpx.get(f"{self.server.url}{path}", headers={"X-API-Key": self.key})
        assert answer.status_code == 200, answer.text
        return answer.json()

    def run(self) -> tuple[subprocess.CompletedProcess[str], float]:
        config = self.tmp / "schemathesis.toml"
        config.write_text(
            f"""
color = false

[generation]
max-examples = {MAX_EXAMPLES}
deterministic = true
database = "none"

[phases.coverage]
unexpected-methods = []

[phases.stateful]
max-steps = {STATEFUL_STEPS}

[phases.stateful.generation]
max-examples = {STATEFUL_SCENARIOS}

[cache]
enabled = false

[reports.junit]
enabled = true
path = "{self.tmp / "junit.xml"}"

[auth.openapi.ApiKey]
api_key = "{self.key}"
"""
        )
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "fuzz_hooks",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])),
            "FUZZ_KEY_ID": self.key_id,
            "FUZZ_LOG": str(self.tmp / "hooks.jsonl"),
        }
        # The document the server serves, read from a file: loaded from its URL, Schemathesis
        # leaves out the operation that serves it.
        document = self.tmp / "openapi.json"
        document.write_bytes(httpx.get(f"{self.server.url}/v1/openapi.json").content)
        started = time.monotonic()
        try:
            result = subprocess.run(
                [SCHEMATHESIS, "--config-file", str(config), "run", str(document)]
                + ["--url", self.server.url, "--checks", "all", "--workers", "1", "--exclude-method", "HEAD"],
                capture_output=True,
                text=True,
                env=env,
                timeout=HANG_SECONDS,
            )
        except subprocess.TimeoutExpired as hung:  # what it printed says where it was
            printed = hung.stdout.decode(errors="replace") if isinstance(hung.stdout, bytes) else hung.stdout
            pytest.fail(f"Schemathesis ran over {HANG_SECONDS} s; it printed:\n{printed}")
        return result, time.monotonic() - started

    def hooks(self, kind: str) -> list[dict[str, Any]]:
        """What the hooks did: ``redirected`` writes and ``dropped`` refusals."""
        log = self.tmp / "hooks.jsonl"
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        return [record for record in records if record["kind"] == kind]

    def tested(self) -> set[str]:
        """The operations the JUnit report has a result for."""
        report = (self.tmp / "junit.xml").read_text()
        return set(re.findall(r'<testcase name="([A-Z]+ /[^"]*)"', report))


def test_schemathesis_finds_nothing(tmp_path: Path, serve: Callable[..., ServerProcess]) -> None:
    fuzz = Fuzz(tmp_path, serve)
    result, seconds = fuzz.run()
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"Schemathesis failed (exit {result.returncode}):\n{output}"
    assert fuzz.tested() == _operations(), f"not every operation declared was fuzzed:\n{output}"
    assert re.search(r"API Links:\s+[1-9]", output), f"the stateful phase followed no link:\n{output}"
    assert fuzz.get(f"/v1/api-keys/{fuzz.key_id}")["status"] == "active"
    dropped = fuzz.hooks("dropped")
    refusals = [
        # an error of a row of an imported file names the file's column; the body field is the file
        (d["operation"], str(d["details"]["field"] if "row" in error else error.get("field")), str(error.get("reason")))
        for d in dropped
        for error in d["details"].get("errors", [d["details"]])
    ]
    reasons = sorted({f"{operation} {field}: {reason}" for operation, field, reason in refusals})
    print(f"\nSchemathesis: {seconds:.1f} s, {len(fuzz.hooks('redirected'))} writes to its own key redirected")
    print(f"{len(fuzz.hooks('busy'))} answers 503 from a busy renderer (documented for bounded work)")
    print(f"{len(dropped)} schema-valid requests refused by the cross-field rules:", *reasons, sep="\n  ")
    print(output[output.rfind("\n", 0, output.find(" SUMMARY ")) + 1 :])
    strays = sorted({f"{o} {f}: {r}" for o, f, r in refusals if not _allowed_refusal(o, f)})
    assert not strays, "schema-valid requests refused by rules the document could state:\n  " + "\n  ".join(strays)
