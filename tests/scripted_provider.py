"""A provider whose answers a test sets: the double of an outside service for tests of the
integrations areas and of the stores (the built-in providers are tested against real servers)."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from compliance_core.areas.integrations import (
    Access,
    AuthType,
    Category,
    CheckSpec,
    CredentialField,
    Manifest,
    ProviderError,
    ResourceResult,
    Variable,
    VariableType,
)
from compliance_core.kernel.severities import Severity

MANIFEST = Manifest(
    slug="scripted",
    name="Scripted service",
    description="A provider whose answers the test sets.",
    category=Category.IDENTITY,
    auth_type=AuthType.API_KEY,
    credential_fields=(
        CredentialField(id="token", label="API token"),
        CredentialField(id="account", label="Account", secret=False, required=False),
    ),
    variables=(
        Variable(id="url", label="URL", type=VariableType.URL, required=True),
        Variable(id="days", label="Days", type=VariableType.NUMBER, default="30"),
        Variable(id="mode", label="Mode", type=VariableType.SELECT, options=("fast", "deep"), default="fast"),
    ),
    checks=(
        CheckSpec(id="mfa", name="MFA enforced", description="Every user has MFA.", severity=Severity.HIGH),
        CheckSpec(id="tls", name="TLS", description="Only modern TLS."),
    ),
)


@attrs.define
class Scripted:
    """The double of an outside service: what it answers is set by the test."""

    reachable: bool = True
    answers: dict[str, Sequence[ResourceResult] | ProviderError] = attrs.field(factory=dict)
    seen: list[Access] = attrs.field(factory=list)

    @property
    def manifest(self) -> Manifest:
        return MANIFEST

    def test(self, access: Access) -> None:
        self.seen.append(access)
        if not self.reachable:
            raise ProviderError("the token was refused (401)")

    def run(self, check_id: str, access: Access) -> Sequence[ResourceResult]:
        self.seen.append(access)
        answer = self.answers.get(check_id, ())
        if isinstance(answer, ProviderError):
            raise answer
        return answer


def user_result(name: str, passed: bool) -> ResourceResult:
    return ResourceResult(
        passed=passed,
        resource_type="user",
        resource_id=name,
        title=f"{name} has MFA" if passed else f"{name} has no MFA",
        remediation="" if passed else "Turn on MFA for the user.",
        evidence={"user": name, "mfa": passed},
    )
