"""The PDF adapter: policy documents laid out with fpdf2 (a maintained, pure-Python PDF writer).

Core finds it through the ``compliance.pdf`` entry point (``RenderPool.from_environ``: the layout
of ``FpdfPolicies`` run on worker processes with a time limit) and never imports it. The text is
set in embedded Noto Sans and Noto Sans Arabic, shipped by their PyPI wheels (``fonts``).
"""

from __future__ import annotations

from .policies import FpdfPolicies
from .pool import RenderPool

__all__ = ["FpdfPolicies", "RenderPool"]
