"""The old import path of ``pages`` and ``page_cache``, for the modules that still import it this
round (the area modules, ``platform``, ``kernel.operations``, ``kernel.uow`` and ``bench``, being
rewritten by issue 17's operations and writes work): import from ``pages`` and ``page_cache``
instead. It goes when they do; nothing else may import it
(``tests/architecture/test_pagination_path.py``)."""

from __future__ import annotations

from .page_cache import DEFAULT_BUDGET, PageCache
from .pages import MAX_PER_PAGE, Page, PageRequest, check_position

__all__ = ["DEFAULT_BUDGET", "MAX_PER_PAGE", "Page", "PageCache", "PageRequest", "check_position"]
