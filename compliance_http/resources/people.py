"""/v1/people: the organization's members."""

from __future__ import annotations

from typing import Any

import falcon

from compliance_core.people import NewPerson, PeopleService, PersonFilter, PersonPatch
from compliance_core.platform import Platform

from ..wire import Wire
from . import idempotency_key, json_body, send


class _Resource:
    def __init__(self, people: PeopleService, wire: Wire) -> None:
        self._people = people
        self._wire = wire


class PersonCollection(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters, page = self._wire.list_query(req.params, PersonFilter)
        send(req, resp, self._wire.page(self._people.list(req.context.actor, filters, page), req.context.actor))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        data = self._wire.command(json_body(req, self._wire), NewPerson)
        person = self._people.create(req.context.actor, data, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.dumps(person))


class PersonBulk(_Resource):
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        members = self._wire.members(json_body(req, self._wire))
        people = self._people.bulk_create(req.context.actor, members, idempotency_key=idempotency_key(req))
        send(req, resp, self._wire.batch(people))


class PersonItem(_Resource):
    def on_get(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        send(req, resp, self._wire.dumps(self._people.get(req.context.actor, person_id)))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, person_id: str) -> None:
        patch = self._wire.command(json_body(req, self._wire), PersonPatch)
        send(req, resp, self._wire.dumps(self._people.update(req.context.actor, person_id, patch)))


def build(platform: Platform, wire: Wire) -> dict[str, Any]:
    """Operation -> the resource that serves it."""
    collection = PersonCollection(platform.people, wire)
    item = PersonItem(platform.people, wire)
    return {
        "people.list": collection,
        "people.create": collection,
        "people.bulk_create": PersonBulk(platform.people, wire),
        "people.get": item,
        "people.update": item,
    }
