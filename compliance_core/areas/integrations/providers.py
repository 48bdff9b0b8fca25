"""The ``Provider`` port: what an integration (GitHub, AWS, an HTTPS endpoint) declares in its
manifest and does when a connection to it is tested or its checks run.

Core makes no network connection. A provider is an adapter outside core, found through the
``compliance.providers`` entry points (``name = "package.module:factory"``, a factory taking the
platform's settings and answering a ``Provider``) or given in the settings
(``Platform(settings={"providers": [...]})``, which then replaces the installed ones). The
manifest is data: the connections, variables and checks areas read it to validate what a user
sends (credential fields, variable values) and to list what a provider offers, so a new provider
is one adapter and its manifest, with no change to core.

A check answers one ``ResourceResult`` per resource it looked at (a repository, a user, a
certificate): passed or failed, with the severity and remediation of a failure and the evidence it
saw. The checks area stores them as a run, diffs them against the previous run and opens or closes
findings.
"""

from __future__ import annotations

import enum
import importlib.metadata
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from ...kernel.errors import NotFound
from ...kernel.severities import Severity

__all__ = [
    "PROVIDER_ENTRY_POINTS",
    "SETTINGS_KEY",
    "Category",
    "AuthType",
    "VariableType",
    "CredentialField",
    "Variable",
    "CheckSpec",
    "Manifest",
    "Access",
    "ResourceResult",
    "ProviderError",
    "Provider",
    "Catalogue",
    "catalogue_of",
]

PROVIDER_ENTRY_POINTS = "compliance.providers"
SETTINGS_KEY = "providers"


class Category(enum.StrEnum):
    CLOUD = "cloud"
    SOURCE_HOSTING = "source_hosting"
    WORKSPACE = "workspace"
    IDENTITY = "identity"
    ENDPOINT = "endpoint"
    SCANNER = "scanner"


class AuthType(enum.StrEnum):
    NONE = "none"
    """Nothing to store: the provider reaches what it checks without an account."""
    API_KEY = "api_key"
    OAUTH2 = "oauth2"
    AWS_ROLE = "aws_role"
    BASIC = "basic"


class VariableType(enum.StrEnum):
    TEXT = "text"
    URL = "url"
    NUMBER = "number"
    BOOLEAN = "boolean"
    SELECT = "select"


@attrs.frozen(kw_only=True)
class CredentialField:
    """A credential a user gives when connecting (an API token, a role ARN). ``secret`` fields
    are sealed by the vault and never answered back; the others show in the connection."""

    id: str
    label: str
    required: bool = True
    secret: bool = True
    help_text: str = ""


@attrs.frozen(kw_only=True)
class Variable:
    """A setting of a connection its checks read (the URL to check, days of warning before a
    certificate expires), with its type, default and, for ``select``, its options."""

    id: str
    label: str
    type: VariableType = VariableType.TEXT
    required: bool = False
    default: str | None = None
    help_text: str = ""
    options: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class CheckSpec:
    """A check a provider runs: what it looks at, how serious a failure is by default, and the
    controls (``framework:requirement``, e.g. ``iso27001:A.8.24``) and task templates it gives
    evidence for."""

    id: str
    name: str
    description: str
    severity: Severity = Severity.MEDIUM
    control_refs: tuple[str, ...] = ()
    task_templates: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class Manifest:
    slug: str
    name: str
    description: str
    category: Category
    auth_type: AuthType
    credential_fields: tuple[CredentialField, ...] = ()
    variables: tuple[Variable, ...] = ()
    checks: tuple[CheckSpec, ...] = ()
    docs_url: str | None = None
    """Where the provider's own API is documented."""
    runs: bool = True
    """False for a provider whose results are imported (``.../import``), never run."""

    def check(self, check_id: str) -> CheckSpec:
        for spec in self.checks:
            if spec.id == check_id:
                return spec
        raise NotFound.resource("check", check_id)


@attrs.frozen(kw_only=True)
class Access:
    """What a provider works with for one connection: its opened credentials and its variables'
    values (each as text, defaults filled in), and whether private addresses may be reached (the
    platform's outbound switch, ``kernel.outbound``)."""

    credentials: Mapping[str, str]
    variables: Mapping[str, str]
    allow_private: bool = False


@attrs.frozen(kw_only=True)
class ResourceResult:
    """One resource a check looked at and its verdict; ``evidence`` is what the check saw, as
    JSON-ready values (no secret: it is stored and shown)."""

    passed: bool
    resource_type: str
    resource_id: str
    title: str
    description: str = ""
    severity: Severity | None = None
    """A failure's severity; None takes the check's default."""
    remediation: str = ""
    evidence: Mapping[str, Any] = attrs.field(factory=dict)


class ProviderError(Exception):
    """The provider could not do what was asked (credentials refused, the service unreachable,
    a variable it cannot use): the reason, in words a user can act on, is stored on the
    connection or the run, and a test of the connection answers it."""


class Provider(Protocol):
    @property
    def manifest(self) -> Manifest: ...

    def test(self, access: Access) -> None:
        """Reach the provider with ``access``; raise ``ProviderError`` saying why it failed."""
        ...

    def run(self, check_id: str, access: Access) -> Sequence[ResourceResult]:
        """Run one of the manifest's checks; raise ``ProviderError`` when it cannot run at all."""
        ...


@attrs.frozen
class Catalogue:
    """The providers a platform offers, by slug."""

    providers: Mapping[str, Provider]

    def get(self, slug: str) -> Provider:
        found = self.providers.get(slug)
        if found is None:
            raise NotFound.resource("provider", slug)
        return found

    def manifests(self) -> list[Manifest]:
        return [self.providers[slug].manifest for slug in sorted(self.providers)]

    def path_ids(self, slug: str) -> dict[str, str]:
        """Real values for the path ids that name a provider's manifest entries rather than
        records (no create makes them): the provider and its first variable that has a default
        (one that can be cleared), for the generated examples and generic tests."""
        manifest = self.get(slug).manifest
        found = {"provider_slug": slug}
        clearable = [variable.id for variable in manifest.variables if variable.default is not None]
        if clearable:
            found["variable_id"] = clearable[0]
        return found


def catalogue_of(settings: Mapping[str, Any], *, built_in: Sequence[Provider] = ()) -> Catalogue:
    """``built_in`` (core's own, which reach no outside service), then ``settings["providers"]``
    (providers), else every installed ``compliance.providers`` entry point's factory called with
    the settings; a later provider replaces an earlier one of the same slug."""
    given = settings.get(SETTINGS_KEY)
    if given is None:
        given = [entry.load()(settings) for entry in importlib.metadata.entry_points(group=PROVIDER_ENTRY_POINTS)]
    return Catalogue({provider.manifest.slug: provider for provider in [*built_in, *given]})
