"""Guarded extraction: the public face of :mod:`memory_graph.extraction`.

``from memory_graph.extract import create_extractor, extract_candidates, plan_writes``.
"""

from __future__ import annotations

from .extraction import *  # noqa: F403 - this module is the package's public alias
from .extraction import __all__ as __all__
