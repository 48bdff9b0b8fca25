"""Policies as a library: publish one, have an employee sign it, re-publish, and save the PDF.

    .venv/bin/python examples/policies.py   # from the checkout, once make serve or make test made .venv

Publishing freezes the text as a numbered version and asks everyone to sign that version; an
employee's key (or actor) acts as a person and signs only as that person.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from compliance_core import Forbidden, Platform
from compliance_core.areas.people import NewPerson
from compliance_core.areas.policies import NewPolicy, PolicyPatch, PublishPolicy

TEXT = """# Acceptable use

Company devices are for **work**.

- Lock your screen when you leave it
- Report lost devices at once
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, Platform.open("memory://") as platform:
        owner = platform.actor(platform.bootstrap("Acme Ltd").organization.id)
        ann = platform.people.create(owner, NewPerson(name="Ann Example", email="ann@acme.example"))
        # Ann's calls act as Ann (over HTTP: an employee key created with personId).
        as_ann = platform.actor(owner.organization_id, "employee", person_id=ann.id)

        policy = platform.policies.create(owner, NewPolicy(name="Acceptable use", content=TEXT, frequency="yearly"))
        policy = platform.policies.publish(owner, policy.id, PublishPolicy(changelog="First edition"))
        print(f"version {policy.version} published; next review {policy.next_review_date}")
        platform.policies.acknowledge(as_ann, policy.id)
        signed = platform.policies.sign_off(owner, policy.id)
        print(f"signed by {signed.acknowledged} of {signed.required}")

        platform.policies.update(owner, policy.id, PolicyPatch(content=TEXT + "- Never share passwords\n"))
        policy = platform.policies.publish(owner, policy.id, PublishPolicy(changelog="Passwords"))
        signed = platform.policies.sign_off(owner, policy.id)
        print(f"version {policy.version} published; signed by {signed.acknowledged} of {signed.required}")

        try:
            platform.policies.publish(as_ann, policy.id, PublishPolicy())
        except Forbidden as error:
            print(f"refused: {error.message}")

        pdf = Path(folder) / "acceptable-use.pdf"
        pdf.write_bytes(platform.policies.download(owner, policy.id).read())
        print(f"PDF starts with {pdf.read_bytes()[:5].decode()}")


if __name__ == "__main__":
    main()
