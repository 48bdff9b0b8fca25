"""0011_signature_issuers: who issued each API key, and each signature's key (issue 16).

An API key records the person its issuing key (``created_by``) acted as and whether it is its
person's own (``self_issued``): only such a key takes the decisions reserved to its person. Keys
issued before are filled in from what the table already holds: the issuing key's person comes
from that key's row (keys are never deleted), and a key counts as its person's own only when the
operator issued it (``created_by`` a ``local:`` principal), because a chain of keys issued through
the API before this migration cannot prove the person made it. Acknowledgements and approvals
gain the issuer of the key that signed, and so does every audit entry; older acknowledgements
are filled in from their key (older audit entries keep no issuer).
An archived policy is not in force.

Frozen: literal names only.
"""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["apply"]


def apply(cur: psycopg.Cursor[Any]) -> None:
    cur.execute('ALTER TABLE "api_keys" ADD COLUMN "issued_by_person_id" text')
    cur.execute('ALTER TABLE "api_keys" ADD COLUMN "self_issued" boolean NOT NULL DEFAULT false')
    cur.execute(
        'UPDATE "api_keys" SET "issued_by_person_id" = "issuer"."person_id" FROM "api_keys" AS "issuer" '
        'WHERE "issuer"."id" = "api_keys"."created_by"'
    )
    cur.execute(
        'UPDATE "api_keys" SET "self_issued" = true WHERE "person_id" IS NOT NULL AND "created_by" LIKE \'local:%\''
    )
    cur.execute('ALTER TABLE "policy_acknowledgements" ADD COLUMN "key_issued_by" text')
    cur.execute('ALTER TABLE "policy_acknowledgements" ADD COLUMN "key_issued_by_person_id" text')
    cur.execute(
        'UPDATE "policy_acknowledgements" SET "key_issued_by" = "key"."created_by", '
        '"key_issued_by_person_id" = "key"."issued_by_person_id" FROM "api_keys" AS "key" '
        'WHERE "key"."id" = "policy_acknowledgements"."acknowledged_by"'
    )
    cur.execute('ALTER TABLE "audit_log" ADD COLUMN "key_issued_by" text')
    cur.execute('ALTER TABLE "audit_log" ADD COLUMN "key_issued_by_person_id" text')
    cur.execute('ALTER TABLE "policy_versions" ADD COLUMN "approval_key_issued_by" text')
    cur.execute('ALTER TABLE "policy_versions" ADD COLUMN "approval_key_issued_by_person_id" text')
    cur.execute('UPDATE "policies" SET "in_force" = false WHERE "archived" AND "in_force"')
