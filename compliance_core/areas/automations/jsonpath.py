"""The JSONPath subset assertions use: one value by a definite path.

``$`` is the document; ``.name`` or ``['name']`` (``["name"]``) a member; ``[2]`` (or ``[-1]``,
from the end) an element. No wildcards, slices, filters or recursive descent: an assertion names
one value, and a path that could name several would leave "equals" ambiguous.

Why not a library: core imports the standard library only (jsonpath-ng is built on PLY and
evaluates the whole RFC 9535 language, filters included, on customer-written paths), and this
subset is a few dozen lines a reader can check. A path is parsed when the automation is saved,
so a typo is a ``validation_error`` then, not a failed run later.

>>> evaluate(parse_path("$.checks[0]['name']"), {"checks": [{"name": "db"}]})
(True, 'db')
>>> evaluate(parse_path("$.missing"), {})
(False, None)
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PATH_PATTERN", "JsonPathError", "parse_path", "evaluate"]

Step = str | int

_NAME = re.compile(r"\.([A-Za-z_$][A-Za-z0-9_$-]*)")
_QUOTED = re.compile(r"""\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]""")
_INDEX = re.compile(r"\[(-?[0-9]{1,9})\]")


PATH_PATTERN = r"""^\$(\.[A-Za-z_$][A-Za-z0-9_$-]*|\['([^'\\]|\\.)*'\]|\["([^"\\]|\\.)*"\]|\[-?[0-9]{1,9}\])*$"""
"""The subset as one regular expression, for the document (``parse_path`` reads the same)."""


class JsonPathError(ValueError):
    """A path outside the subset (the message says where)."""


def parse_path(path: str) -> tuple[Step, ...]:
    """The steps of ``path``: member names (str) and indices (int)."""
    if not path.startswith("$"):
        raise JsonPathError("must start with $ (the document)")
    steps: list[Step] = []
    position = 1
    while position < len(path):
        for pattern in (_NAME, _QUOTED, _INDEX):
            found = pattern.match(path, position)
            if found is None:
                continue
            if pattern is _INDEX:
                steps.append(int(found.group(1)))
            elif pattern is _QUOTED:
                raw = found.group(1) if found.group(1) is not None else found.group(2)
                steps.append(re.sub(r"\\(.)", r"\1", raw))
            else:
                steps.append(found.group(1))
            position = found.end()
            break
        else:
            raise JsonPathError(
                f"cannot read the path at character {position + 1} ({path[position : position + 10]!r}); "
                "use .name, ['name'] or [index] (no wildcards, slices or filters)"
            )
    return tuple(steps)


def evaluate(steps: tuple[Step, ...], document: Any) -> tuple[bool, Any]:
    """Whether the document has a value at the path, and that value (None when it has not)."""
    value = document
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return False, None
            value = value[step]
        else:
            if not isinstance(value, dict) or step not in value:
                return False, None
            value = value[step]
    return True, value
