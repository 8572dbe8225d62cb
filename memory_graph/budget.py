"""Compatibility alias: the public names of :mod:`memory_graph.recall.budget` (moved there)."""

from __future__ import annotations

from .recall.budget import (
    Block,
    Budget,
    TokenCounter,
    fill_frame,
)

__all__ = [
    "Block",
    "Budget",
    "TokenCounter",
    "fill_frame",
]
