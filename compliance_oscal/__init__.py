"""OSCAL's models for the platform's framework imports: compliance-trestle's pydantic classes
behind core's ``OscalModels`` port (entry point group ``compliance.oscal``), so an imported
catalog or profile is checked against the OSCAL schema itself, not only against what the
platform's reader needs. Installed with the ``oscal`` extra."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic
from trestle.oscal.catalog import Catalog
from trestle.oscal.profile import Profile

__all__ = ["TrestleModels"]

_MODELS: dict[str, type[Any]] = {"catalog": Catalog, "profile": Profile}


class TrestleModels:
    def problems(self, model: str, document: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
        try:
            _MODELS[model].parse_obj(document)
        except pydantic.ValidationError as error:
            return [
                (".".join(str(part) for part in problem["loc"]), problem["msg"], problem.get("input"))
                for problem in error.errors()
            ]
        return []
