"""Use the compliance platform as a library: no server, no HTTP, the same rules as the API.

    .venv/bin/python examples/in_process.py   # from the checkout, once make serve or make test made .venv

It keeps its data in a SQLite file inside a temporary folder, so every run starts afresh. In your
own app, open a file you keep (``Platform.open("sqlite:///compliance.db")``) or a throwaway
``Platform.open("memory://")``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from compliance_core import PageRequest, Platform, ValidationError
from compliance_core.areas.vendors import NewVendor, VendorFilter


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        # One Platform per process: it wires the store into every service.
        with Platform.open(f"sqlite:///{Path(folder) / 'example.db'}") as platform:
            # A new organization and its first Owner API key (the key is for HTTP callers).
            boot = platform.bootstrap("Acme Ltd")
            # Every call names who is acting; an Actor carries the organization and a role, and
            # services check the role's permissions exactly as the HTTP API does.
            owner = platform.actor(boot.organization.id)

            # Field values are the API's wire values ("critical", "signed", ISO country codes).
            platform.vendors.create(
                owner,
                NewVendor(
                    name="Cloud Hosting GmbH",
                    country="DE",
                    criticality="critical",
                    ict_service=True,
                    processes_personal_data=True,
                    dpa_status="signed",
                ),
            )
            platform.vendors.create(owner, NewVendor(name="Office Snacks", category="other"))
            platform.vendors.create(
                owner,
                NewVendor(
                    name="Mail Delivery Inc",
                    country="US",
                    criticality="important",
                    processes_personal_data=True,
                    # Personal data leaving the EEA needs a legal ground for the transfer.
                    transfer_mechanism="standard_contractual_clauses",
                ),
            )

            # Filters combine with AND; lists come back a page at a time.
            personal = platform.vendors.list(
                owner, VendorFilter(processes_personal_data=True), PageRequest(page=1, per_page=50)
            )
            print(f"{personal.total} vendors process personal data:")
            for vendor in personal.items:
                print(f"  - {vendor.name} ({vendor.country}, {vendor.criticality})")

            # Bad input raises ValidationError naming the field, the value and the reason.
            try:
                platform.vendors.create(
                    owner, NewVendor(name="Analytics Co", country="US", processes_personal_data=True)
                )
            except ValidationError as error:
                print(f"rejected: {error.details['field']} {error.details['reason']}")


if __name__ == "__main__":
    main()
