"""/v1/people: the organization's members."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/people/{person_id}"

ROUTES = group(
    "People",
    ("GET", "/v1/people", "people.list", "List the organization's people"),
    ("POST", "/v1/people", "people.create", "Add a person", 201),
    (
        "POST",
        "/v1/people/bulk",
        "people.bulk_create",
        "Add up to 1000 people at once; any invalid entry rejects the whole batch",
        201,
    ),
    ("GET", _ONE, "people.get", "Read one person"),
    ("PATCH", _ONE, "people.update", "Change some of a person's fields"),
)
