"""/v1/people: the organization's members."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.people import NewPerson, PeopleService, PersonFilter, PersonPatch
from compliance_core.platform import Platform

from ..wire import Wire
from . import Collection, Item, idempotency_key, json_body, send


class PersonBulk:
    """All-or-nothing creation of up to 1000 people; the wire merges its own findings about each
    entry (unknown fields) into core's list of bad entries."""

    def __init__(self, people: PeopleService, wire: Wire) -> None:
        self._people = people
        self._wire = wire

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        members = self._wire.members(json_body(req, self._wire))
        people = self._people.bulk_create(req.context.actor, members, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.batch(people))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    people = platform.people
    collection = Collection(people, wire, NewPerson, PersonFilter)
    item = Item(people, wire, PersonPatch)
    return {
        "people.list": collection,
        "people.create": collection,
        "people.bulk_create": PersonBulk(people, wire),
        "people.get": item,
        "people.update": item,
    }
