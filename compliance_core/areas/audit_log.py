"""The audit trail as callers read it: every write to the organization's records, as the unit
of work appends them (``kernel/audit.py``), read per organization or, filtered by
``entityType`` and ``entityId``, per record.

Owners, Admins and Auditors read it; employees and contractors do not. Nobody changes it: the
area declares reads only, so no route, client method or service call can edit or delete an entry.
"""

from __future__ import annotations

import attrs

from ..kernel.audit import AUDIT_LOG
from ..kernel.operations import Standard
from ..kernel.page_cache import PageCache
from ..kernel.permissions import READERS, Action
from ..kernel.registers import Register
from ..kernel.registry import Area, Route
from ..kernel.uow import UnitOfWork

__all__ = ["AUDIT_READ", "AuditLogService", "AREA"]

AUDIT_READ = Action("audit_log:read", READERS)
"""Auditors read everything an organization did; staff below Admin see only the records."""


_TABLE = Standard(AUDIT_LOG, id="entry_id")
_REGISTER = Register(AUDIT_LOG)
_ALL = "/v1/audit-log"


@attrs.define
class AuditLogService:
    uow: UnitOfWork
    pages: PageCache

    list = _TABLE.list(AUDIT_READ, Route("GET", "/v1/audit-log", "List audit entries (who changed what, when)"))
    get = _TABLE.get(AUDIT_READ, Route("GET", "/v1/audit-log/{entry_id}", "Read one audit entry"))
    export_csv, export_xlsx = _REGISTER.exports(AUDIT_READ, _ALL, "audit entries")


AREA = Area(
    name="audit_log",
    tag="Audit",
    service=lambda context: AuditLogService(context.uow, context.pages),
    api=AuditLogService,
    actions=(AUDIT_READ,),
    records=(AUDIT_LOG,),
)
