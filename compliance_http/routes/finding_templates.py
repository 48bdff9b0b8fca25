"""/v1/finding-template: canned finding texts (the reference platform's path, singular)."""

from __future__ import annotations

from .rows import group

_ONE = "/v1/finding-template/{template_id}"

ROUTES = group(
    "Finding Templates",
    ("GET", "/v1/finding-template", "finding_templates.list", "List finding templates"),
    ("POST", "/v1/finding-template", "finding_templates.create", "Add a finding template", 201),
    ("GET", _ONE, "finding_templates.get", "Read one finding template"),
    ("PATCH", _ONE, "finding_templates.update", "Change some of a finding template's fields"),
    ("DELETE", _ONE, "finding_templates.delete", "Delete a finding template (findings made from it keep their text)"),
)
