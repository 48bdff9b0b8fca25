"""Call a running compliance server from Python: the same models and errors as in-process.

    make serve                                # one terminal: its first-run banner shows an Owner key
    export COMPLIANCE_URL=http://127.0.0.1:3333 COMPLIANCE_API_KEY=comp_...   # another: the banner's lines
    .venv/bin/python examples/over_http.py

COMPLIANCE_URL is the server's address (default http://127.0.0.1:3333); COMPLIANCE_API_KEY is an API
key, which the banner prints once (more keys: ``compliance keys create``).
"""

from __future__ import annotations

import os
import sys
import uuid

from compliance_core import Client, PageRequest, ValidationError
from compliance_core.areas.vendors import NewVendor, VendorFilter
from compliance_http.client import HTTPTransport


def main() -> int:
    api_key = os.environ.get("COMPLIANCE_API_KEY")
    if not api_key:
        print(
            "Set COMPLIANCE_API_KEY to an API key (the first-run banner of compliance serve prints its export line).",
            file=sys.stderr,
        )
        return 2
    url = os.environ.get("COMPLIANCE_URL", "http://127.0.0.1:3333")

    # The key decides the organization and the role; the client has one method per operation.
    client = Client(HTTPTransport(url, api_key))

    # An Idempotency-Key makes a retried create safe: the server answers a repeat with the
    # vendor it created the first time instead of making a second one.
    request_id = str(uuid.uuid4())
    first = client.vendors.create(
        NewVendor(
            name="Cloud Hosting GmbH",
            country="DE",
            criticality="critical",
            processes_personal_data=True,
            dpa_status="signed",
        ),
        idempotency_key=request_id,
    )
    retry = client.vendors.create(
        NewVendor(
            name="Cloud Hosting GmbH",
            country="DE",
            criticality="critical",
            processes_personal_data=True,
            dpa_status="signed",
        ),
        idempotency_key=request_id,
    )
    print(f"created {first.name} once: {first.id == retry.id}")
    client.vendors.create(NewVendor(name="Office Snacks"))

    # Page through a filtered list: increase page until it reaches total_pages.
    number = 1
    while True:
        page = client.vendors.list(VendorFilter(criticality="critical"), PageRequest(page=number, per_page=20))
        for vendor in page.items:
            print(f"  critical: {vendor.name} ({vendor.country})")
        if page.page >= page.total_pages:
            break
        number += 1

    # The server's validation errors arrive as the same ValidationError, with field and value.
    try:
        client.vendors.create(NewVendor(name="Analytics Co", country="US", processes_personal_data=True))
    except ValidationError as error:
        print(f"rejected: {error.details['field']} {error.details['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
