"""Compatibility alias: the public names of :mod:`memory_graph.recall.plan` (moved there)."""

from __future__ import annotations

from .recall.plan import (
    STANDING_KINDS,
    STANDING_TRUSTS,
    merge_hits,
    plan_queries,
)

__all__ = [
    "STANDING_KINDS",
    "STANDING_TRUSTS",
    "merge_hits",
    "plan_queries",
]
