"""Compatibility alias: the public names of :mod:`memory_graph.recall.tokenize` (moved there)."""

from __future__ import annotations

from .recall.tokenize import (
    TOKENIZER_VERSION,
    index_text,
    index_tokens,
    is_cjk,
    tokenize,
)

__all__ = [
    "TOKENIZER_VERSION",
    "index_text",
    "index_tokens",
    "is_cjk",
    "tokenize",
]
