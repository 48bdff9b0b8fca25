"""``compliance keys create``, ``list`` and ``revoke``: an organization's API keys, from the
machine (a lost Owner key is replaced this way)."""

from __future__ import annotations

import argparse

from compliance_core import PageRequest, Role
from compliance_core.areas.api_keys import ApiKey, NewApiKey
from compliance_core.kernel.pages import MAX_PER_PAGE

from ..wire import Wire
from .output import emit
from .stores import open_platform

__all__ = ["ROLES", "create_key", "list_keys", "revoke_key"]

ROLES = ", ".join(r.value for r in Role)


def create_key(args: argparse.Namespace) -> int:
    data = NewApiKey(name=args.name, role=args.role, expires_at=args.expires_at, person_id=args.person_id)
    with open_platform(args.db) as platform:
        issued = platform.api_keys.create(platform.actor(args.org), data)
    emit({"id": issued.key.id, "key": issued.secret})
    return 0


def list_keys(args: argparse.Namespace) -> int:
    with open_platform(args.db) as platform:
        actor = platform.actor(args.org)
        keys: list[ApiKey] = []
        number = 1
        while True:
            page = platform.api_keys.list(actor, PageRequest(page=number, per_page=MAX_PER_PAGE))
            keys.extend(page.items)
            if page.page >= page.total_pages:
                break
            number += 1
        emit(Wire(platform.renderer).unstructure(keys))  # as GET /v1/api-keys shows them: no secret, no hash
    return 0


def revoke_key(args: argparse.Namespace) -> int:
    with open_platform(args.db) as platform:
        key = platform.api_keys.revoke(platform.actor(args.org), args.key)
        emit(Wire(platform.renderer).unstructure(key))
    return 0
