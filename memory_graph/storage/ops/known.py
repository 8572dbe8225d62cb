"""Preference rows a store last wrote: a hint that lets its next write of the key skip a read.

A keyed preference write (``set_preference``) is optimistic (:mod:`~.prefs`): it reads
the key's row without a lock, decides, and commits in one statement gated on that row. A
store that wrote the key itself already knows the row its write left, so its next write of
the key decides from that and sends only the commit statement: one round trip.

The entry is only a hint. The gate compares the *whole* state the decision used (id,
version, status, value, source, event, expiry, ``updated_at``), so an entry that any other
writer made stale (another process, a review approved in this one, a rolled-back
transaction, an erasure) makes the statement write nothing; the write then drops the entry
and goes the locked way, deciding from the row read under the key's lock.
"""

from __future__ import annotations

import threading
from typing import Any

from ...identity import Identity

__all__ = ["KnownPrefs"]

PrefKey = tuple[str, str, str, str]


def pref_key(ident: Identity, key: str) -> PrefKey:
    """The map key of one (identity, preference key)."""
    return (ident.scope_id, ident.agent_key, ident.workspace_key, key)


class KnownPrefs:
    """The rows this store's optimistic preference writes left, at most ``size`` of them.

    Thread-safe (one store serves many threads); the oldest entry goes first when full.
    Rows have the shape :func:`~.prefs.pref_row` reads.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._rows: dict[PrefKey, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: PrefKey) -> dict[str, Any] | None:
        """The row last written for ``key``, or ``None``."""
        with self._lock:
            return self._rows.get(key)

    def put(self, key: PrefKey, row: dict[str, Any]) -> None:
        """Remember ``row`` (an active row) as the key's."""
        with self._lock:
            self._rows.pop(key, None)
            if len(self._rows) >= self._size:
                del self._rows[next(iter(self._rows))]
            self._rows[key] = row

    def drop(self, key: PrefKey) -> None:
        """Forget the key's row (it changed elsewhere, or was deleted)."""
        with self._lock:
            self._rows.pop(key, None)

    def forget(self, scope_id: str) -> None:
        """Forget every row of one user scope (the user was erased)."""
        with self._lock:
            for k in [k for k in self._rows if k[0] == scope_id]:
                del self._rows[k]

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)
