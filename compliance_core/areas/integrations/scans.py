"""Results of outside scanners read as check results: SARIF 2.1.0 (code scanners, Semgrep,
CodeQL, Trivy...) and OCSF findings (Prowler, AWS Security Hub's OCSF export...). Both are JSON
written by tools the organization already runs; reading them here turns each finding into a
resource's verdict, so an import opens and closes findings exactly as a run of a check does.

Only the structure each standard defines is read (``runs[].results[]`` and the driver's rules for
SARIF; ``finding_info``, ``severity_id``, ``status_code``/``compliance.status`` and ``resources``
for OCSF); anything else in the file is kept out of the evidence, which stays small.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from ...kernel.errors import ValidationError
from ...kernel.severities import Severity
from ...kernel.uploads import Upload, file_content
from ...kernel.validation import choice
from .providers import Access, AuthType, Category, CheckSpec, Manifest, ProviderError, ResourceResult, Variable

__all__ = [
    "ScanFormat",
    "ScanImport",
    "ScannerImport",
    "SCANNER_IMPORT",
    "read_scan",
    "MAX_SCAN_RESULTS",
    "MAX_SCAN_BYTES",
]

MAX_SCAN_BYTES = 50 * 1024 * 1024

MAX_SCAN_RESULTS = 5000


class ScanFormat(enum.StrEnum):
    SARIF = "sarif"
    OCSF = "ocsf"


@attrs.frozen(kw_only=True)
class ScanImport:
    """A scanner's results file: SARIF or OCSF JSON, in base64 or as a multipart file part."""

    format: ScanFormat = attrs.field(converter=choice(ScanFormat))
    content: str | Upload = attrs.field(converter=file_content(MAX_SCAN_BYTES, required=True))


SCANNER_IMPORT = Manifest(
    slug="scanner-import",
    name="Scanner results (SARIF, OCSF)",
    description=(
        "Results of the scanners the organization already runs (code scanning as SARIF; Prowler, "
        "AWS Security Hub and other posture tools as OCSF), imported as check results."
    ),
    category=Category.SCANNER,
    auth_type=AuthType.NONE,
    runs=False,
    variables=(
        Variable(
            id="source",
            label="Where the results come from",
            default="",
            help_text="The CI job or scanner console that produced them, named on the findings they open.",
        ),
    ),
    checks=(
        CheckSpec(
            id=ScanFormat.SARIF.value,
            name="Code scanning results (SARIF)",
            description="Each SARIF result is a code location passing or failing one of the scanner's rules.",
            control_refs=("iso27001:A.8.28", "iso27001:A.8.29", "soc2:CC8.1"),
        ),
        CheckSpec(
            id=ScanFormat.OCSF.value,
            name="Security findings (OCSF)",
            description="Each OCSF finding is a resource passing or failing one of the scanner's checks.",
            control_refs=("iso27001:A.8.8", "iso27001:A.8.9", "soc2:CC7.1"),
        ),
    ),
)


class ScannerImport:
    """Core's own provider: nothing to reach, its results come in through imports."""

    manifest = SCANNER_IMPORT

    def test(self, access: Access) -> None:
        return None

    def run(self, check_id: str, access: Access) -> list[ResourceResult]:
        raise ProviderError("the results of this provider are imported, not run")


_SARIF_LEVELS = {"error": Severity.HIGH, "warning": Severity.MEDIUM, "note": Severity.LOW, "none": Severity.INFO}
_SARIF_PASSING = {"pass", "notApplicable", "informational"}
_OCSF_SEVERITIES = {
    1: Severity.INFO,
    2: Severity.LOW,
    3: Severity.MEDIUM,
    4: Severity.HIGH,
    5: Severity.CRITICAL,
    6: Severity.CRITICAL,
}


def read_scan(file_format: ScanFormat, content: bytes, field: str = "content") -> list[ResourceResult]:
    """The verdict of every finding in the file, or a ``validation_error`` on ``field`` saying
    what in the file is not the format it claims to be."""
    try:
        document = json.loads(content)
    except (UnicodeDecodeError, ValueError):
        document = _json_lines(content, field)
    reader = _sarif if file_format is ScanFormat.SARIF else _ocsf
    try:
        results = list(reader(document))
    except (KeyError, TypeError, AttributeError, ValueError) as broken:
        raise ValidationError.field(field, None, f"is not a {file_format.upper()} document: {broken}") from None
    if len(results) > MAX_SCAN_RESULTS:
        raise ValidationError.field(field, len(results), f"holds more than {MAX_SCAN_RESULTS} results; split the file")
    return results


def _json_lines(content: bytes, field: str) -> list[Any]:
    """OCSF is often written one finding a line (JSON Lines)."""
    try:
        return [json.loads(line) for line in content.decode().splitlines() if line.strip()]
    except (UnicodeDecodeError, ValueError):
        raise ValidationError.field(field, None, "is neither JSON nor JSON Lines") from None


def _text(value: Any, limit: int) -> str:
    return str(value or "").strip()[:limit]


def _sarif(document: Any) -> Iterator[ResourceResult]:
    if not isinstance(document, Mapping) or not isinstance(document.get("runs"), list):
        raise ValueError("no runs")
    for run in document["runs"]:
        driver = run["tool"]["driver"]
        tool = _text(driver.get("name"), 100) or "scanner"
        rules = {rule.get("id"): rule for rule in driver.get("rules") or [] if isinstance(rule, Mapping)}
        ordered = [rule for rule in driver.get("rules") or [] if isinstance(rule, Mapping)]
        for result in run.get("results") or []:
            rule_id = result.get("ruleId")
            index = result.get("ruleIndex")
            rule = rules.get(rule_id) or (
                ordered[index] if isinstance(index, int) and 0 <= index < len(ordered) else {}
            )
            rule_id = rule_id or rule.get("id") or "rule"
            location = _sarif_location(result)
            message = _text((result.get("message") or {}).get("text"), 2000)
            level = result.get("level") or (rule.get("defaultConfiguration") or {}).get("level") or "warning"
            help_text = (rule.get("help") or {}).get("text") or (rule.get("fullDescription") or {}).get("text")
            yield ResourceResult(
                passed=result.get("kind", "fail") in _SARIF_PASSING,
                resource_type="code_location" if location else "rule",
                resource_id=_text(f"{tool}:{rule_id}@{location}" if location else f"{tool}:{rule_id}", 500),
                title=_text(f"{rule_id}: {message.splitlines()[0] if message else rule_id}", 255),
                description=message,
                severity=_SARIF_LEVELS.get(level, Severity.MEDIUM),
                remediation=_text(help_text, 2000),
                evidence={"tool": tool, "ruleId": rule_id, "location": location, "level": level},
            )


def _sarif_location(result: Mapping[str, Any]) -> str:
    for location in result.get("locations") or []:
        physical = location.get("physicalLocation") or {}
        uri = (physical.get("artifactLocation") or {}).get("uri")
        if uri:
            line = (physical.get("region") or {}).get("startLine")
            return f"{uri}:{line}" if line else str(uri)
    return ""


def _ocsf(document: Any) -> Iterator[ResourceResult]:
    if isinstance(document, Mapping):
        document = document.get("findings", [document])
    if not isinstance(document, list):
        raise ValueError("no findings")
    for finding in document:
        info = finding.get("finding_info") or {}
        resources = finding.get("resources") or [{}]
        resource = resources[0] if isinstance(resources[0], Mapping) else {}
        resource_id = resource.get("uid") or resource.get("name") or info.get("uid") or finding.get("uid")
        if not resource_id:
            raise ValueError("a finding names no resource and has no uid")
        title = info.get("title") or finding.get("message") or "finding"
        yield ResourceResult(
            passed=_ocsf_passed(finding),
            resource_type=_text(resource.get("type"), 100) or "resource",
            resource_id=_text(f"{info.get('uid') or title}@{resource_id}", 500),
            title=_text(title, 255),
            description=_text(info.get("desc") or finding.get("status_detail"), 2000),
            severity=_OCSF_SEVERITIES.get(finding.get("severity_id"), Severity.MEDIUM),
            remediation=_text((finding.get("remediation") or {}).get("desc"), 2000),
            evidence={
                "product": ((finding.get("metadata") or {}).get("product") or {}).get("name"),
                "findingUid": info.get("uid"),
                "resource": resource_id,
                "status": finding.get("status_code") or (finding.get("compliance") or {}).get("status"),
            },
        )


def _ocsf_passed(finding: Mapping[str, Any]) -> bool:
    """Prowler writes ``status_code`` PASS or FAIL; a Compliance Finding has
    ``compliance.status`` (or ``status_id`` 1 pass, 3 fail); a finding the scanner marks
    resolved (``status_id`` 4) passes; any other finding is a failure it reports."""
    status_code = str(finding.get("status_code") or "").upper()
    if status_code in ("PASS", "FAIL"):
        return status_code == "PASS"
    compliance = finding.get("compliance") or {}
    if compliance.get("status_id") in (1, 3):
        return bool(compliance["status_id"] == 1)
    if compliance.get("status"):
        return str(compliance["status"]).lower() == "pass"
    return finding.get("status_id") == 4
