"""Compatibility alias: the public names of :mod:`memory_graph.recall.hybrid` (moved there)."""

from __future__ import annotations

from .recall.hybrid import (
    RRF_K,
    model_key,
    rrf,
    vector_literal,
)

__all__ = [
    "RRF_K",
    "model_key",
    "rrf",
    "vector_literal",
]
