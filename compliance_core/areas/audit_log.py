"""The audit trail as callers read it: every write to the organization's records, as the unit
of work appends them (``kernel/audit.py``), read per organization or, filtered by
``entityType`` and ``entityId``, per record.

Owners, Admins and Auditors read it; employees and contractors do not. Nobody changes it: the
area declares reads only, so no route, client method or service call can edit or delete an entry.
"""

from __future__ import annotations

import attrs

from ..kernel.audit import AUDIT_LOG, AuditEntry, AuditFilter
from ..kernel.pagination import Page, PageCache, PageRequest
from ..kernel.permissions import READERS, Action, Actor, authorize
from ..kernel.records import fetch, list_page
from ..kernel.registry import Area, Operation
from ..kernel.uow import UnitOfWork

__all__ = ["AUDIT_READ", "AuditLogService", "AREA"]

AUDIT_READ = Action("audit_log:read", READERS)
"""Auditors read everything an organization did; staff below Admin see only the records."""


@attrs.define
class AuditLogService:
    uow: UnitOfWork
    pages: PageCache

    def list(
        self, actor: Actor, filters: AuditFilter | None = None, page: PageRequest | None = None
    ) -> Page[AuditEntry]:
        authorize(actor, AUDIT_READ)
        with self.uow.read() as session:
            return list_page(
                session, AUDIT_LOG, self.pages, actor.organization_id, filters or AuditFilter(), page or PageRequest()
            )

    def get(self, actor: Actor, entry_id: str) -> AuditEntry:
        authorize(actor, AUDIT_READ)
        with self.uow.read() as session:
            return fetch(session, AUDIT_LOG, actor.organization_id, entry_id)


AREA = Area(
    name="audit_log",
    service=lambda context: AuditLogService(context.uow, context.pages),
    actions=(AUDIT_READ,),
    records=(AUDIT_LOG,),
    operations=(
        Operation(name="audit_log.list", action=AUDIT_READ, filters=AuditFilter, paged=True, result=AuditEntry),
        Operation(name="audit_log.get", action=AUDIT_READ, ids=("entry_id",), result=AuditEntry),
    ),
)
