"""React to what happens in the platform, in your own process: subscribe to its typed events.

    .venv/bin/python examples/subscribe_to_events.py   # from the checkout, once make serve or make test made .venv

Receivers run after the write has committed, so what they read is already stored, and a write
that fails (or rolls back) never reaches them. Each receiver gets the stored outbox message
(``message.payload`` is the event body webhooks send) and the typed event (``event.subject`` is
the record, ``event.previous`` the old values of what changed). Every write also leaves an entry
in the audit trail, which the last lines read back.
"""

from __future__ import annotations

from typing import Any

from compliance_core import PageRequest, Platform, ValidationError
from compliance_core.areas.findings import FindingPatch, FindingSeverityChanged, NewFinding
from compliance_core.areas.vendors import NewVendor, VendorPatch
from compliance_core.kernel.audit import AuditFilter
from compliance_core.kernel.events import OutboxMessage


def main() -> None:
    with Platform.open("memory://") as platform:
        boot = platform.bootstrap("Acme Ltd")
        owner = platform.actor(boot.organization.id)

        # Every event, by its wire type and body. A receiver is kept until the platform is
        # closed (the platform holds it strongly, so a lambda or closure works too).
        def log(message: OutboxMessage, event: Any) -> None:
            data = message.payload["data"]
            print(f"event {message.type}: {data.get('name') or data.get('title')}")

        platform.signals.connect(None, log)

        # One kind of event, by its class: a finding whose severity changed.
        def escalate(message: OutboxMessage, event: FindingSeverityChanged) -> None:
            print(f"  severity of {event.subject.title!r}: {event.previous['severity']} -> {event.subject.severity}")

        platform.signals.connect(FindingSeverityChanged, escalate)

        vendor = platform.vendors.create(owner, NewVendor(name="Cloud Hosting GmbH", country="DE"))
        platform.vendors.update(owner, vendor.id, VendorPatch(criticality="critical"))
        finding = platform.findings.create(owner, NewFinding(title="TLS 1.0 enabled", severity="medium"))
        platform.findings.update(owner, finding.id, FindingPatch(severity="high"))

        # A refused write records nothing, so no receiver hears of it.
        try:
            platform.vendors.create(owner, NewVendor(name="Analytics Co", country="US", processes_personal_data=True))
        except ValidationError as error:
            print(f"rejected, no event: {error.details['field']}")

        # The audit trail holds one entry per event: who, what, when and the changed fields,
        # newest first.
        trail = platform.audit_log.list(owner, AuditFilter(entity_id=vendor.id), PageRequest())
        for entry in trail.items:
            if entry.action.endswith(".created"):  # a created record lists the fields it was given
                print(f"audit {entry.action} by {entry.actor_type}: {len(entry.changes)} fields set")
            else:  # a change lists each changed field's old and new value
                print(f"audit {entry.action} by {entry.actor_type}: {entry.changes}")


if __name__ == "__main__":
    main()
