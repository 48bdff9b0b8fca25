"""``compliance init``, ``org create``, ``org set-plan`` and ``org list``: organizations, made and
changed by the operator of the machine (no API key needed)."""

from __future__ import annotations

import argparse

from compliance_core.areas.organizations import ORGANIZATIONS, Plan

from ..wire import Wire
from .output import emit
from .stores import open_platform

__all__ = ["PLANS", "create_organization", "init", "list_organizations", "set_plan"]

PLANS = ", ".join(p.value for p in Plan)


def init(args: argparse.Namespace) -> int:
    with open_platform(args.db, create=True) as platform:
        boot = platform.bootstrap(args.org_name, args.plan, rpm=args.rpm, burst=args.burst)
    emit({"organizationId": boot.organization.id, "apiKey": boot.owner_key.secret})
    return 0


def create_organization(args: argparse.Namespace) -> int:
    """Another organization in a database that already exists (``init`` makes the database too),
    so a mistyped ``--db`` is an error instead of a new file holding one organization."""
    with open_platform(args.db) as platform:
        boot = platform.bootstrap(args.name, args.plan, rpm=args.rpm, burst=args.burst)
    emit({"organizationId": boot.organization.id, "apiKey": boot.owner_key.secret})
    return 0


def set_plan(args: argparse.Namespace) -> int:
    with open_platform(args.db) as platform:
        organization = platform.organizations.set_plan(
            platform.actor(args.org), args.plan, rpm=args.rpm, burst=args.burst
        )
        emit(Wire(platform.renderer).unstructure(organization))
    return 0


def list_organizations(args: argparse.Namespace) -> int:
    with open_platform(args.db) as platform:
        with platform.uow.read() as session:
            organizations = session[ORGANIZATIONS].list_all()
        emit(Wire(platform.renderer).unstructure(organizations))
    return 0
