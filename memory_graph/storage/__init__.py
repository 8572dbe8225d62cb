"""PostgreSQL storage: the only package that imports psycopg.

Public names: :class:`MemoryStore` and its async twin :class:`AsyncMemoryStore`.
"""

from __future__ import annotations

from .server.setup import resolve_dsn
from .shell.store_async import AsyncMemoryStore
from .shell.store_sync import MemoryStore

__all__ = ["AsyncMemoryStore", "MemoryStore", "resolve_dsn"]
