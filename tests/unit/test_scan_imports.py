"""Scanner results imported as check results: SARIF 2.1.0 and OCSF (one document, an array, or
JSON Lines as Prowler writes them) read into resource verdicts, and an import into a connection
opening a finding per failing resource, keeping it while the resource keeps failing and closing it
when the resource passes or is gone from the next import."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from compliance_core import FrozenClock, Platform, SequentialIds
from compliance_core.areas.findings import FindingFilter, FindingSource, FindingStatus
from compliance_core.areas.integrations import CheckRunStatus, NewConnection, RunChecks, ScanImport
from compliance_core.areas.integrations.scans import ScanFormat, read_scan
from compliance_core.kernel.errors import Conflict, ValidationError
from compliance_core.kernel.pages import PageRequest
from compliance_core.kernel.permissions import Actor
from compliance_core.kernel.severities import Severity
from compliance_store.memory import MemoryStore


def _sarif(*results: dict[str, Any]) -> dict[str, Any]:
    return {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "Semgrep",
                        "rules": [
                            {
                                "id": "hardcoded-secret",
                                "defaultConfiguration": {"level": "error"},
                                "help": {"text": "Move the secret to the vault and rotate it."},
                            }
                        ],
                    }
                },
                "results": list(results),
            }
        ],
    }


def _result(uri: str, line: int, **fields: Any) -> dict[str, Any]:
    return {
        "ruleId": "hardcoded-secret",
        "message": {"text": "A password is written in the source."},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}}],
        **fields,
    }


def _prowler(check: str, resource: str, status: str, severity_id: int = 4) -> dict[str, Any]:
    return {
        "class_uid": 2004,
        "metadata": {"product": {"name": "Prowler"}},
        "finding_info": {"uid": check, "title": f"{check} is enforced", "desc": "Checked by Prowler."},
        "severity_id": severity_id,
        "status_code": status,
        "resources": [{"uid": resource, "type": "AwsIamUser"}],
        "remediation": {"desc": "Enforce it."},
    }


def test_sarif_results_become_verdicts_with_the_rules_help() -> None:
    document = _sarif(_result("app/db.py", 12), _result("app/ok.py", 3, kind="pass", level="note"))
    failing, passing = read_scan(ScanFormat.SARIF, json.dumps(document).encode())
    assert (failing.passed, failing.severity, failing.resource_id) == (
        False,
        Severity.HIGH,
        "Semgrep:hardcoded-secret@app/db.py:12",
    )
    assert failing.remediation == "Move the secret to the vault and rotate it."
    assert failing.title == "hardcoded-secret: A password is written in the source."
    assert passing.passed and passing.severity is Severity.LOW


def test_ocsf_reads_a_document_an_array_and_json_lines() -> None:
    findings = [_prowler("iam_user_mfa", "arn:aws:iam::1:user/bob", "FAIL"), _prowler("s3_block", "bucket", "PASS")]
    lines = "\n".join(json.dumps(finding) for finding in findings).encode()
    for content in (json.dumps(findings).encode(), lines, json.dumps({"findings": findings}).encode()):
        bob, bucket = read_scan(ScanFormat.OCSF, content)
        assert (bob.passed, bob.severity, bob.resource_type) == (False, Severity.HIGH, "AwsIamUser")
        assert bob.resource_id == "iam_user_mfa@arn:aws:iam::1:user/bob" and bucket.passed
    compliance = {
        "finding_info": {"uid": "c1", "title": "Encrypted"},
        "compliance": {"status_id": 1},
        "resources": [{"uid": "disk"}],
    }
    assert read_scan(ScanFormat.OCSF, json.dumps(compliance).encode())[0].passed


@pytest.mark.parametrize(
    "file_format, content",
    [
        (ScanFormat.SARIF, b"not json at all\x00"),
        (ScanFormat.SARIF, b'{"version": "2.1.0"}'),
        (ScanFormat.OCSF, b'[{"finding_info": {}}]'),
    ],
)
def test_a_file_that_is_not_its_format_is_refused_naming_the_field(file_format: ScanFormat, content: bytes) -> None:
    with pytest.raises(ValidationError) as refused:
        read_scan(file_format, content)
    assert refused.value.details["field"] == "content"


@pytest.fixture
def platform() -> Platform:
    return Platform(MemoryStore(), clock=FrozenClock(), ids=SequentialIds())


@pytest.fixture
def owner(platform: Platform) -> Actor:
    return platform.actor(platform.bootstrap("Acme").organization.id)


def _import(platform: Platform, owner: Actor, connection_id: str, file_format: str, document: Any) -> Any:
    content = base64.b64encode(json.dumps(document).encode()).decode()
    return platform.integration_checks.import_results(
        owner, connection_id, ScanImport(format=file_format, content=content)
    )


def _findings(platform: Platform, owner: Actor) -> list[Any]:
    return list(platform.findings.list(owner, FindingFilter(), PageRequest(per_page=100)).items)


def test_imports_open_keep_and_close_findings(platform: Platform, owner: Actor) -> None:
    scanner = platform.integration_connections.create(owner, NewConnection(provider="scanner-import", name="Semgrep"))
    assert scanner.status.value == "active"
    run = _import(platform, owner, scanner.id, "sarif", _sarif(_result("a.py", 1), _result("b.py", 2)))
    assert (run.check_id, run.status, run.failed_count) == ("sarif", CheckRunStatus.FAILED, 2)
    assert {f.source for f in _findings(platform, owner)} == {FindingSource.INTEGRATION}
    assert len(_findings(platform, owner)) == 2

    _import(platform, owner, scanner.id, "sarif", _sarif(_result("a.py", 1)))  # b.py fixed: gone from the file
    assert sorted(f.status for f in _findings(platform, owner)) == [FindingStatus.CLOSED, FindingStatus.OPEN]

    _import(platform, owner, scanner.id, "sarif", _sarif())
    assert all(f.status is FindingStatus.CLOSED for f in _findings(platform, owner))


def test_an_import_provider_is_not_run_and_a_run_provider_takes_no_import(platform: Platform, owner: Actor) -> None:
    scanner = platform.integration_connections.create(owner, NewConnection(provider="scanner-import"))
    with pytest.raises(Conflict):
        platform.integration_checks.run_checks(owner, scanner.id, RunChecks())
    assert platform.integration_checks.run_due(platform.clock.now()) == 0
    with pytest.raises(ValidationError) as refused:
        _import(platform, owner, scanner.id, "sarif", {"runs": "nope"})
    assert refused.value.details["field"] == "content"
