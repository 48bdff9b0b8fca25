"""Identifier generation as a port.

Ids are ``<prefix>_<hex unix seconds><16 hex random>`` like the reference platform's, so they
sort roughly by creation time; tests inject ``SequentialIds`` for readable, repeatable ids.
"""

from __future__ import annotations

import itertools
import secrets
import time
from typing import Protocol

import attrs

__all__ = ["IdGenerator", "RandomIds", "SequentialIds"]


class IdGenerator(Protocol):
    def new(self, prefix: str) -> str: ...


class RandomIds:
    def new(self, prefix: str) -> str:
        return f"{prefix}_{int(time.time()):x}{secrets.token_hex(8)}"


@attrs.define
class SequentialIds:
    _counter: itertools.count = attrs.field(factory=lambda: itertools.count(1), alias="_counter")

    def new(self, prefix: str) -> str:
        return f"{prefix}_{next(self._counter):08d}"
