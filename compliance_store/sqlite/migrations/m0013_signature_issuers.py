"""0013_signature_issuers: who issued each API key, and each signature's key (issue 16).

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

from sqlite_utils import Database

__all__ = ["apply"]


def apply(db: Database) -> None:
    db.execute('ALTER TABLE "api_keys" ADD COLUMN "issued_by_person_id" TEXT')
    db.execute('ALTER TABLE "api_keys" ADD COLUMN "self_issued" INTEGER NOT NULL DEFAULT 0')
    db.execute(
        'UPDATE "api_keys" SET "issued_by_person_id" = '
        '(SELECT "issuer"."person_id" FROM "api_keys" AS "issuer" WHERE "issuer"."id" = "api_keys"."created_by") '
        'WHERE "created_by" IS NOT NULL'
    )
    db.execute(
        'UPDATE "api_keys" SET "self_issued" = 1 WHERE "person_id" IS NOT NULL AND "created_by" LIKE \'local:%\''
    )
    db.execute('ALTER TABLE "policy_acknowledgements" ADD COLUMN "key_issued_by" TEXT')
    db.execute('ALTER TABLE "policy_acknowledgements" ADD COLUMN "key_issued_by_person_id" TEXT')
    db.execute(
        'UPDATE "policy_acknowledgements" SET '
        '"key_issued_by" = (SELECT "created_by" FROM "api_keys" WHERE "api_keys"."id" = "acknowledged_by"), '
        '"key_issued_by_person_id" = '
        '(SELECT "issued_by_person_id" FROM "api_keys" WHERE "api_keys"."id" = "acknowledged_by")'
    )
    db.execute('ALTER TABLE "audit_log" ADD COLUMN "key_issued_by" TEXT')
    db.execute('ALTER TABLE "audit_log" ADD COLUMN "key_issued_by_person_id" TEXT')
    db.execute('ALTER TABLE "policy_versions" ADD COLUMN "approval_key_issued_by" TEXT')
    db.execute('ALTER TABLE "policy_versions" ADD COLUMN "approval_key_issued_by_person_id" TEXT')
    db.execute('UPDATE "policies" SET "in_force" = 0 WHERE "archived" = 1 AND "in_force" = 1')
