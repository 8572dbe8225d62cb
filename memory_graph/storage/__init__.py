"""PostgreSQL storage: the only package that imports psycopg.

Public names: :class:`MemoryStore` and its async twin :class:`AsyncMemoryStore`.
"""

from __future__ import annotations

from ._async import AsyncMemoryStore
from ._setup import resolve_dsn
from ._sync import MemoryStore

__all__ = ["AsyncMemoryStore", "MemoryStore", "resolve_dsn"]
