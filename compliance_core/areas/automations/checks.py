"""Running an automation's check and judging it: the ``Prober`` port an HTTP probe goes through,
the installed callables, and the verdict.

Core makes no network connection: an HTTP probe goes through a ``Prober``, whose adapter
(``compliance_http.probe``, on httpx) is found through the ``compliance.probers`` entry points,
or given in the settings (``Platform(settings={"automations": AutomationSettings(prober=...)})``).
The adapter resolves the host and checks every address against the platform's outbound rule
(``kernel.outbound``) just before connecting. Callables are found through the
``compliance.automations`` entry points: ``name = "package.module:function"``, a function taking
the run's context (a dict) and answering ``{"passed": bool, "output": ..., "reason": str}``.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs

from ...kernel.errors import ValidationError
from .jsonpath import evaluate, parse_path
from .models import MAX_OUTPUT, Assertion, AssertionType, AutomationKind, Definition, RunStatus

__all__ = [
    "PROBER_ENTRY_POINTS",
    "CALLABLE_ENTRY_POINTS",
    "ProbeRequest",
    "ProbeResponse",
    "Prober",
    "AutomationSettings",
    "Outcome",
    "Checks",
    "judge",
]

PROBER_ENTRY_POINTS = "compliance.probers"
CALLABLE_ENTRY_POINTS = "compliance.automations"


@attrs.frozen(kw_only=True)
class ProbeRequest:
    """One HTTP probe.

    :param allow_private: plain http and private or loopback addresses may be reached (the
        platform's outbound switch, ``kernel.outbound.private_targets_allowed``)
    """

    url: str
    method: str
    timeout: float
    allow_private: bool


@attrs.frozen(kw_only=True)
class ProbeResponse:
    """What a probe saw; ``error`` says why there is no answer (refused, unreachable, timed out).

    :param body: the head of the body (an adapter reads at most ``MAX_OUTPUT`` bytes of it)
    :param certificate_expires_at: the server certificate's end of validity (https only)
    """

    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    certificate_expires_at: dt.datetime | None = None
    error: str | None = None


class Prober(Protocol):
    def probe(self, request: ProbeRequest) -> ProbeResponse:
        """Make the request within ``request.timeout`` seconds; never raises for what the
        target does (an answer, a refusal or a failure is a ``ProbeResponse``)."""
        ...


Checker = Callable[[dict[str, Any]], Any]


@attrs.frozen(kw_only=True)
class AutomationSettings:
    """What the embedding application chooses (``settings={"automations": ...}``).

    :param prober: how HTTP probes are made (default: the installed ``compliance.probers`` adapter)
    :param callables: the callables by name (default: the installed ``compliance.automations``
        entry points)
    """

    prober: Prober | None = None
    callables: Mapping[str, Checker] | None = None


@attrs.frozen(kw_only=True)
class Outcome:
    status: RunStatus
    reason: str
    output: str
    duration_ms: int


class Checks:
    """The platform's checks: its prober and its callables, each found once, on first use (a
    platform that never runs an automation loads neither)."""

    def __init__(self, settings: AutomationSettings) -> None:
        self._prober = settings.prober
        self._callables = settings.callables

    def callable_names(self) -> list[str]:
        if self._callables is not None:
            return sorted(self._callables)
        return sorted({entry.name for entry in importlib.metadata.entry_points(group=CALLABLE_ENTRY_POINTS)})

    def check_callable(self, name: str) -> None:
        """Refuse (on ``callableName``) a name no installed callable has, listing those that are."""
        names = self.callable_names()
        if name not in names:
            installed = ", ".join(names) or "none"
            raise ValidationError.field(
                "callableName", name, f"no automation callable has this name; installed: {installed}"
            )

    def _callable(self, name: str) -> Checker:
        if self._callables is not None:
            return self._callables[name]
        for entry in importlib.metadata.entry_points(group=CALLABLE_ENTRY_POINTS):
            if entry.name == name:
                found: Checker = entry.load()
                return found
        raise LookupError(name)

    def prober(self) -> Prober:
        if self._prober is None:
            for entry in importlib.metadata.entry_points(group=PROBER_ENTRY_POINTS):
                self._prober = entry.load()()
                break
            else:
                raise LookupError(f"no HTTP prober is installed (entry point group {PROBER_ENTRY_POINTS!r})")
        return self._prober

    def run(self, definition: Definition, context: dict[str, Any], allow_private: bool, now: dt.datetime) -> Outcome:
        """Run the check (outside any write: it may take up to its timeout) and judge it."""
        started = time.monotonic()
        try:
            status, reason, output = self._run(definition, context, allow_private, now)
        except Exception as error:  # a callable's or adapter's own failure is the run's error, not ours
            status, reason, output = RunStatus.ERROR, f"the check raised {type(error).__name__}: {error}", ""
        duration = round((time.monotonic() - started) * 1000)
        return Outcome(
            status=status, reason=_clean(reason)[:2000], output=_clean(output)[:MAX_OUTPUT], duration_ms=duration
        )

    def _run(
        self, definition: Definition, context: dict[str, Any], allow_private: bool, now: dt.datetime
    ) -> tuple[RunStatus, str, str]:
        if definition.kind is AutomationKind.CALLABLE:
            if definition.callable_name is None:
                return RunStatus.ERROR, "the automation names no callable yet", ""
            try:
                checker = self._callable(definition.callable_name)
            except LookupError:
                return RunStatus.ERROR, f"no automation callable {definition.callable_name!r} is installed", ""
            return _verdict(checker(dict(context)))
        if definition.url is None:
            return RunStatus.ERROR, "the automation has no URL to probe yet", ""
        request = ProbeRequest(
            url=definition.url,
            method=definition.method.value,
            timeout=float(definition.timeout_seconds),
            allow_private=allow_private,
        )
        response = self.prober().probe(request)
        output = _described(response)
        if response.error is not None:
            return RunStatus.ERROR, response.error, output
        status, reason = judge(definition.assertions, response, now)
        return status, reason, output


def _clean(text: str) -> str:
    """Text every store keeps: PostgreSQL refuses NUL in text, which a binary body may hold."""
    return text.replace("\x00", "\ufffd")


def _verdict(result: Any) -> tuple[RunStatus, str, str]:
    """A callable's answer: a mapping (or an object) with ``passed`` and ``output``."""
    if isinstance(result, Mapping):
        passed, output, reason = result.get("passed"), result.get("output", ""), result.get("reason")
    else:
        passed = getattr(result, "passed", None)
        output, reason = getattr(result, "output", ""), getattr(result, "reason", None)
    if not isinstance(passed, bool):
        return RunStatus.ERROR, "the callable answered no passed: true or false", _text(result)
    status = RunStatus.PASSED if passed else RunStatus.FAILED
    said = str(reason) if reason else ("the callable passed" if passed else "the callable failed")
    return status, said, _text(output)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _described(response: ProbeResponse) -> str:
    """The run's output for a probe: status line, headers, then the body's head."""
    if response.status is None:
        return ""
    lines = [f"HTTP {response.status}", *(f"{name}: {value}" for name, value in response.headers)]
    if response.certificate_expires_at is not None:
        lines.append(f"(tls certificate valid until {response.certificate_expires_at.isoformat()})")
    return "\n".join(lines) + "\n\n" + response.body.decode("utf-8", "replace")


def judge(assertions: tuple[Assertion, ...], response: ProbeResponse, now: dt.datetime) -> tuple[RunStatus, str]:
    """Passed when every assertion holds (none given: a 2xx status); else failed, naming the
    first assertion that does not hold."""
    status = response.status or 0
    if not assertions:
        if 200 <= status < 300:
            return RunStatus.PASSED, f"answered {status}"
        return RunStatus.FAILED, f"answered {status}, not a 2xx status (no assertions given)"
    document: Any = None
    parsed = False
    for index, assertion in enumerate(assertions):
        problem: str | None = None
        kind = assertion.type
        if kind is AssertionType.STATUS_EQUALS:
            if status != assertion.status:
                problem = f"status is {status}, not {assertion.status}"
        elif kind is AssertionType.STATUS_IN:
            if status not in assertion.statuses:
                problem = f"status is {status}, not one of {list(assertion.statuses)}"
        elif kind in (AssertionType.JSON_PATH_EQUALS, AssertionType.JSON_PATH_EXISTS):
            if not parsed:
                try:
                    document, parsed = json.loads(response.body), True
                except ValueError:
                    return RunStatus.FAILED, f"assertions[{index}]: the body is not JSON (or longer than read)"
            found, value = evaluate(parse_path(assertion.path or "$"), document)
            if not found:
                problem = f"the body has no value at {assertion.path}"
            elif kind is AssertionType.JSON_PATH_EQUALS:
                seen = value if isinstance(value, str) else json.dumps(value)
                if seen != assertion.value:
                    problem = f"{assertion.path} is {seen!r}, not {assertion.value!r}"
        elif kind in (AssertionType.HEADER_EQUALS, AssertionType.HEADER_CONTAINS):
            values = [value for name, value in response.headers if name.lower() == assertion.header]
            expected = assertion.value or ""
            if not values:
                problem = f"no {assertion.header} header"
            elif kind is AssertionType.HEADER_EQUALS and expected not in values:
                problem = f"{assertion.header} is {values[0]!r}, not {expected!r}"
            elif kind is AssertionType.HEADER_CONTAINS and not any(expected in value for value in values):
                problem = f"{assertion.header} ({values[0]!r}) does not contain {expected!r}"
        elif kind is AssertionType.TLS_EXPIRES_AFTER_DAYS:
            expires = response.certificate_expires_at
            if expires is None:
                problem = "no TLS certificate was seen (the URL is not https)"
            else:
                left = (expires - now).total_seconds() / 86400
                if left <= (assertion.days or 0):
                    problem = f"the TLS certificate expires in {left:.1f} days, not more than {assertion.days}"
        if problem is not None:
            return RunStatus.FAILED, f"assertions[{index}] ({kind.value}): {problem}"
    return RunStatus.PASSED, f"all {len(assertions)} assertion(s) held (status {status})"
