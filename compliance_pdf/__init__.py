"""The PDF adapter: policy documents laid out with fpdf2 (a maintained, pure-Python PDF writer).

Core finds it through the ``compliance.pdf`` entry point (``FpdfPolicies``) and never imports it.
"""

from __future__ import annotations

from .policies import FpdfPolicies

__all__ = ["FpdfPolicies"]
