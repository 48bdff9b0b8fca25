"""0001_initial: the tables, keys and list indexes of the first release.

Frozen: the statements are the exact text the first release's sqlite-utils calls produced, so a
database created now is byte-for-byte one created then, whatever sqlite-utils later generates.
Every list filter has an index leading with the organization (and, for vendors, ``archived``)
and ending in ``(created_at, id)``: a filtered page is one index range scan in page order.
"""

from __future__ import annotations

from sqlite_utils import Database

__all__ = ["apply"]

_STATEMENTS = (
    """CREATE TABLE "organizations" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "name" TEXT NOT NULL,
   "plan" TEXT NOT NULL,
   "rate_limit_rpm" INTEGER,
   "rate_limit_burst" INTEGER,
   "created_at" TEXT NOT NULL,
   "updated_at" TEXT NOT NULL
)""",
    """CREATE TABLE "api_keys" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "organization_id" TEXT NOT NULL,
   "name" TEXT NOT NULL,
   "role" TEXT NOT NULL,
   "prefix" TEXT NOT NULL,
   "secret_hash" TEXT NOT NULL,
   "created_at" TEXT NOT NULL,
   "expires_at" TEXT,
   "revoked_at" TEXT,
   "last_used_at" TEXT,
   "created_by" TEXT
)""",
    """CREATE UNIQUE INDEX "api_keys_secret_hash"
    ON "api_keys" ("secret_hash")""",
    """CREATE INDEX "api_keys_list"
    ON "api_keys" ("organization_id", "created_at", "id")""",
    """CREATE TABLE "key_usage" (
   "key_id" TEXT NOT NULL,
   "day" TEXT NOT NULL,
   "requests" INTEGER NOT NULL,
   PRIMARY KEY ("key_id", "day")
)""",
    """CREATE TABLE "vendors" (
   "id" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "name" TEXT NOT NULL,
   "description" TEXT NOT NULL,
   "category" TEXT NOT NULL,
   "status" TEXT NOT NULL,
   "inherent_probability" TEXT NOT NULL,
   "inherent_impact" TEXT NOT NULL,
   "residual_probability" TEXT NOT NULL,
   "residual_impact" TEXT NOT NULL,
   "website" TEXT,
   "assignee_id" TEXT,
   "country" TEXT,
   "criticality" TEXT NOT NULL,
   "ict_service" INTEGER NOT NULL,
   "processes_personal_data" INTEGER NOT NULL,
   "is_sub_processor" INTEGER NOT NULL,
   "dpa_status" TEXT,
   "dpa_signed_at" TEXT,
   "dpa_url" TEXT,
   "last_reviewed_at" TEXT,
   "next_review_due" TEXT,
   "sub_processors" TEXT NOT NULL DEFAULT '[]',
   "transfer_mechanism" TEXT,
   "archived" INTEGER NOT NULL DEFAULT 0,
   "archived_at" TEXT,
   "created_at" TEXT NOT NULL,
   "updated_at" TEXT NOT NULL,
   PRIMARY KEY ("organization_id", "id")
)""",
    """CREATE INDEX "vendors_list"
    ON "vendors" ("organization_id", "archived", "created_at", "id")""",
    """CREATE INDEX "vendors_by_criticality"
    ON "vendors" ("organization_id", "archived", "criticality", "created_at", "id")""",
    """CREATE INDEX "vendors_by_processes_personal_data"
    ON "vendors" ("organization_id", "archived", "processes_personal_data", "created_at", "id")""",
    """CREATE INDEX "vendors_by_ict_service"
    ON "vendors" ("organization_id", "archived", "ict_service", "created_at", "id")""",
    """CREATE INDEX "vendors_by_category"
    ON "vendors" ("organization_id", "archived", "category", "created_at", "id")""",
    """CREATE INDEX "vendors_by_country"
    ON "vendors" ("organization_id", "archived", "country", "created_at", "id")""",
    """CREATE INDEX "vendors_by_dpa_status"
    ON "vendors" ("organization_id", "archived", "dpa_status", "created_at", "id")""",
    """CREATE INDEX "vendors_by_status"
    ON "vendors" ("organization_id", "archived", "status", "created_at", "id")""",
    """CREATE INDEX "vendors_by_assignee_id"
    ON "vendors" ("organization_id", "archived", "assignee_id", "created_at", "id")""",
    """CREATE TABLE "people" (
   "id" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "name" TEXT NOT NULL,
   "email" TEXT NOT NULL,
   "role" TEXT NOT NULL,
   "department" TEXT NOT NULL,
   "job_title" TEXT,
   "is_active" INTEGER NOT NULL,
   "created_at" TEXT NOT NULL,
   "updated_at" TEXT NOT NULL,
   PRIMARY KEY ("organization_id", "id")
)""",
    """CREATE UNIQUE INDEX "people_email"
    ON "people" ("organization_id", "email")""",
    """CREATE INDEX "people_list"
    ON "people" ("organization_id", "created_at", "id")""",
    """CREATE INDEX "people_by_role"
    ON "people" ("organization_id", "role", "created_at", "id")""",
    """CREATE INDEX "people_by_department"
    ON "people" ("organization_id", "department", "created_at", "id")""",
    """CREATE INDEX "people_by_is_active"
    ON "people" ("organization_id", "is_active", "created_at", "id")""",
    """CREATE TABLE "findings" (
   "id" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "title" TEXT NOT NULL,
   "severity" TEXT NOT NULL,
   "status" TEXT NOT NULL,
   "type" TEXT NOT NULL,
   "source" TEXT NOT NULL,
   "content" TEXT NOT NULL,
   "revision_note" TEXT,
   "created_by" TEXT,
   "created_at" TEXT NOT NULL,
   "updated_at" TEXT NOT NULL,
   "closed_at" TEXT,
   PRIMARY KEY ("organization_id", "id")
)""",
    """CREATE INDEX "findings_list"
    ON "findings" ("organization_id", "created_at", "id")""",
    """CREATE INDEX "findings_by_status"
    ON "findings" ("organization_id", "status", "created_at", "id")""",
    """CREATE INDEX "findings_by_severity"
    ON "findings" ("organization_id", "severity", "created_at", "id")""",
    """CREATE INDEX "findings_by_type"
    ON "findings" ("organization_id", "type", "created_at", "id")""",
    """CREATE INDEX "findings_by_source"
    ON "findings" ("organization_id", "source", "created_at", "id")""",
    """CREATE TABLE "idempotency" (
   "organization_id" TEXT NOT NULL,
   "principal" TEXT NOT NULL,
   "key" TEXT NOT NULL,
   "operation" TEXT NOT NULL,
   "fingerprint" TEXT NOT NULL,
   "result" TEXT NOT NULL,
   "created_at" TEXT NOT NULL,
   PRIMARY KEY ("organization_id", "principal", "key")
)""",
    """CREATE INDEX "idempotency_created_at"
    ON "idempotency" ("created_at")""",
    """CREATE TABLE "rate_limit_buckets" (
   "key_id" TEXT PRIMARY KEY NOT NULL,
   "tokens" REAL NOT NULL,
   "updated_at" TEXT NOT NULL
)""",
    """CREATE TABLE "outbox" (
   "id" TEXT PRIMARY KEY NOT NULL,
   "type" TEXT NOT NULL,
   "organization_id" TEXT NOT NULL,
   "subject_id" TEXT NOT NULL,
   "payload" TEXT NOT NULL,
   "occurred_at" TEXT NOT NULL,
   "published_at" TEXT
)""",
    """CREATE INDEX "outbox_pending"
    ON "outbox" ("published_at", "occurred_at", "id")""",
)


def apply(db: Database) -> None:
    for statement in _STATEMENTS:
        db.execute(statement)
