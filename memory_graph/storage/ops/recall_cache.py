"""The in-process recall pool of each owner, kept coherent by the recall version stamp.

Each store keeps, per owner, the owner's visible active records with their ranking documents
and, built on first use, a :class:`~memory_graph.recall.candidates.PoolIndex` (prepared
documents, postings and statistics); after a write the new pool keeps, with each view of the
pool it replaced, the ids that changed since, and its view is derived from that one
(:meth:`_View.derived`, :meth:`~memory_graph.recall.candidates.PoolIndex.changed`): the cost
follows the changed records and their threads, not the pool. Many changes (over an eighth
of the pool), no previous view or an index that needs compacting fall back to a build
(which still reuses the prepared documents,
:meth:`~memory_graph.recall.candidates.PoolIndex.updated`). Every recall starts with one small
statement (:func:`pool_op`) that reads the owner's four identity stamps (``mg_recall_stamp``,
schema v7). An unchanged pool therefore costs one round trip and is ranked without
re-reading it; a changed one costs a second statement that reads the stamps again and, in the
same snapshot, the rows whose ``rseq`` is newer than the stamps the pool holds; a write in
any process is seen by the next recall in every process, because a write takes its identity's
next stamp under a row lock held to commit (stamps commit in order, so no row newer than a
stamp read can be missed).
A delete, a row leaving its identity, or stamps that went backwards (a restored database)
make the next recall reload the owner's pool in full.

The pool is replaced, never mutated, so a ranking in progress keeps a consistent view.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from sys import intern
from typing import Any

from ...errors import ConfigurationError
from ...identity import Owner
from ...recall.fuse import rank_legs
from ...recall.model import Ranked
from ...recall.query import ParsedQuery, parse_query
from ...recall.rank import rank, rank_prepared
from ...recall.render import record_lines
from ...types import Disagreement, Record, SearchHit
from ..driver import Op, Query
from .recall_view import _document, _Entry, _View
from .rows import record_from_row
from .search_sql import CANDIDATE_COLS

__all__ = [
    "MAX_DISAGREEMENT_IDS",
    "RECALL_CACHE_ENV",
    "OwnerPool",
    "RecallCache",
    "disagreements_of",
    "held_pool_op",
    "pool_op",
    "rank_pool",
]

MAX_DISAGREEMENT_IDS = 4
_Stamps = dict[tuple[str, str], tuple[int, int]]


_POOL_BYTES = 16384
"""Estimated bytes of an empty pool (its dicts, lock and views)."""
_RECORD_BYTES = 3500
_CHAR_BYTES = 4
_TOKEN_BYTES = 110
"""Estimated bytes of a pooled record: a base plus its text and its index postings,
calibrated on the resident size of a worker holding many searched pools (about 10% above
what ``tracemalloc`` counts: the allocator's own overhead; ``bench/bench_memory.py``)."""


_SHARED_COLS = (
    "scope_id",
    "level",
    "agent_key",
    "workspace_key",
    "kind",
    "trust",
    "sensitivity",
    "source",
    "status",
    "thread_id",
    "key",
)
"""Row columns whose values repeat across an owner's records (interned on load)."""


def vector_bytes(vector: Any) -> int:
    """Estimated bytes of a held vector (a numpy array, or ``None``) and its dict slot."""
    return 200 + (0 if vector is None else int(vector.nbytes))


def _entry_bytes(e: _Entry) -> int:
    return _RECORD_BYTES + _CHAR_BYTES * len(e.doc.text) + _TOKEN_BYTES * len(e.doc.tokens)


class OwnerPool:
    """One owner's active records at a set of stamps (immutable; views built lazily)."""

    __slots__ = (
        "_claims",
        "_lines",
        "_lock",
        "_previous",
        "_views",
        "dense",
        "entries",
        "nbytes",
        "stamps",
        "vectors",
    )

    def __init__(
        self,
        entries: Mapping[str, _Entry],
        stamps: _Stamps,
        previous: Mapping[tuple[str, ...], tuple[_View, frozenset[str]]] | None = None,
        lines: Mapping[str, tuple[Record, tuple[str, ...]]] | None = None,
        nbytes: int | None = None,
        vectors: Mapping[str, dict[str, tuple[Record, Any]]] | None = None,
    ) -> None:
        self.entries = dict(entries)
        # The pool's estimated bytes once searched (entries, index, rendered lines): what
        # RecallCache bounds.
        self.nbytes = (
            _POOL_BYTES + sum(map(_entry_bytes, self.entries.values()))
            if nbytes is None
            else nbytes
        )
        self.stamps = dict(stamps)
        self._views: dict[tuple[str, ...], _View] = {}
        # Views of earlier pools not yet replaced here, each with the ids that changed since.
        self._previous: dict[tuple[str, ...], tuple[_View, frozenset[str]]] = dict(previous or {})
        self._claims: dict[str, list[Record]] | None = None
        self._lock = threading.Lock()
        # Rendered lines by record id, with the record they render (see record_lines).
        self._lines: dict[str, tuple[Record, tuple[str, ...]]] = dict(lines or {})
        # The dense leg's vectors (``ops/dense.py``): by model, by record id, with the record
        # they were computed from; and its memo of stacked matrices (rebuilt when they grow).
        self.vectors: dict[str, dict[str, tuple[Record, Any]]] = {
            m: dict(v) for m, v in (vectors or {}).items()
        }
        self.dense: dict[tuple[Any, ...], Any] = {}

    def applied(self, rows: Iterable[dict[str, Any]], stamps: _Stamps) -> OwnerPool:
        """A new pool with ``rows`` (newer versions, or rows that left the active set; their
        repeated values are interned in place)."""
        entries = dict(self.entries)
        changed: set[str] = set()
        nbytes = self.nbytes
        for row in rows:
            rid = str(row["id"])
            if row["status"] != "active":
                if (gone := entries.pop(rid, None)) is not None:
                    changed.add(rid)
                    nbytes -= _entry_bytes(gone)
                continue
            old = entries.get(rid)
            for col in _SHARED_COLS:  # values many records repeat: one object per value
                if type(value := row[col]) is str:
                    row[col] = intern(value)
            record = record_from_row(row)
            if old is not None and old.record == record:
                continue
            entries[rid] = entry = _Entry(record, _document(record))
            nbytes += _entry_bytes(entry) - (0 if old is None else _entry_bytes(old))
            changed.add(rid)
        delta = frozenset(changed)
        with self._lock:
            previous = {k: (v, ids | delta) for k, (v, ids) in self._previous.items()}
            previous.update((k, (v, delta)) for k, v in self._views.items())
        # Rendered lines carry over for the records that stay (the very same objects).
        lines = dict(self._lines)
        for rid in delta:
            lines.pop(rid, None)
        # So do the dense leg's vectors (a changed record's vector is read again).
        vectors: dict[str, dict[str, tuple[Record, Any]]] = {}
        for model, held in self.vectors.items():
            vectors[model] = kept = {}
            for rid, vec in held.items():
                if rid in delta:
                    nbytes -= vector_bytes(vec[1])
                else:
                    kept[rid] = vec
        return OwnerPool(entries, stamps, previous, lines, nbytes, vectors)

    def record_lines(self, record: Record) -> tuple[str, ...]:
        """:func:`~memory_graph.recall.render.record_lines` of ``record``, kept with the pool.

        A record is immutable and its lines depend on nothing else, so every recall of the
        pool renders each record once; the memo is keyed by id and checked by identity, so
        another object with the same id (a newer version) is rendered afresh.
        """
        held = self._lines.get(record.id)
        if held is not None and held[0] is record:
            return held[1]
        lines = record_lines(record)
        entry = self.entries.get(record.id)
        if entry is not None and entry.record is record:  # only the pool's own records
            self._lines[record.id] = (record, lines)
        return lines

    def view(self, sensitivities: Sequence[str]) -> _View:
        """The index over the active records of these sensitivities, and its entries."""
        key = tuple(sorted(set(sensitivities)))
        found = self._views.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._views.get(key)
            if found is None:
                prev, changed = self._previous.pop(key, (None, frozenset[str]()))
                if prev is not None and len(changed) <= max(8, len(self.entries) // 8):
                    found = _View.derived(prev, self.entries, key, changed)
                if found is None:
                    chosen = sorted(
                        (e for e in self.entries.values() if e.record.sensitivity in key),
                        key=lambda e: e.record.id,
                    )
                    found = _View(chosen, prev)
                self._views[key] = found
        return found

    def claims(self) -> dict[str, list[Record]]:
        """Active private records with a claim, by claim key."""
        claims = self._claims
        if claims is None:
            claims = {}
            for e in self.entries.values():
                r = e.record
                k = r.knowledge
                if r.sensitivity == "private" and k is not None and k.claim is not None:
                    claims.setdefault(k.claim.key, []).append(r)
            self._claims = claims
        return claims


RECALL_CACHE_ENV = "MEMORY_GRAPH_RECALL_CACHE_MB"
"""The environment variable that sets the default recall cache size (megabytes)."""

DEFAULT_RECALL_CACHE_MB = 256.0


class RecallCache:
    """Owner pools of one store, bounded by their estimated bytes (:func:`pool_bytes`).

    Least recently used owners are dropped first, so the owners being served stay; the pool
    just used is kept even when it alone is over the bound (dropping it would reload it on
    the owner's next recall). ``max_bytes``: the bound (see :meth:`of_megabytes`).
    """

    def __init__(self, max_bytes: int = int(DEFAULT_RECALL_CACHE_MB * 2**20)) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ConfigurationError("the recall cache size must be a non-negative number")
        self._pools: OrderedDict[tuple[str, ...], OwnerPool] = OrderedDict()
        self._max = max_bytes
        self._bytes = 0
        self._lock = threading.Lock()

    @classmethod
    def of_megabytes(cls, megabytes: float | None = None) -> RecallCache:
        """A cache of ``megabytes`` (default ``$MEMORY_GRAPH_RECALL_CACHE_MB``, else 256).

        Raises:
            ConfigurationError: the size (or the variable) is not a non-negative number.
        """
        value: Any = megabytes
        what = "recall_cache_mb"
        if value is None:
            raw = os.environ.get(RECALL_CACHE_ENV, "").strip()
            what = RECALL_CACHE_ENV
            try:
                value = float(raw) if raw else DEFAULT_RECALL_CACHE_MB
            except ValueError:
                raise ConfigurationError(
                    f"{RECALL_CACHE_ENV} must be a number of megabytes, not {raw[:40]!r}"
                ) from None
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
        ):
            raise ConfigurationError(f"{what} must be a non-negative number of megabytes")
        return cls(int(value * 2**20))

    @property
    def max_bytes(self) -> int:
        """The bound, in (estimated) bytes."""
        return self._max

    @property
    def nbytes(self) -> int:
        """The estimated bytes of the pools held now."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._pools)

    def get(self, key: tuple[str, ...]) -> OwnerPool | None:
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
            return pool

    def peek(self, owner: Owner) -> OwnerPool | None:
        """The owner's held pool, if any (its place in the eviction order unchanged)."""
        with self._lock:
            return self._pools.get(_owner_key(owner))

    def put(self, key: tuple[str, ...], pool: OwnerPool) -> None:
        with self._lock:
            old = self._pools.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._pools[key] = pool
            self._bytes += pool.nbytes
            while self._bytes > self._max and len(self._pools) > 1:
                _key, dropped = self._pools.popitem(last=False)
                self._bytes -= dropped.nbytes

    def grew(self, owner: Owner, pool: OwnerPool, nbytes: int) -> None:
        """Count ``nbytes`` more for ``pool``, the owner's (data it gained since it was put)."""
        with self._lock:
            pool.nbytes += nbytes
            if self._pools.get(_owner_key(owner)) is pool:
                self._bytes += nbytes

    def clear(self) -> None:
        """Drop every pool (the next recall of each owner reloads it)."""
        with self._lock:
            self._pools.clear()
            self._bytes = 0


def _owner_key(owner: Owner) -> tuple[str, ...]:
    pairs = sorted((i.agent_key, i.workspace_key) for i in owner.identities())
    return (owner.scope_id, *(f"{a}\x1f{w}" for a, w in pairs))


def _pool_query(owner: Owner, held: _Stamps | None) -> Query:
    """Stamps of the owner's identities, and (same snapshot) the rows newer than ``held``.

    Without ``held`` every active row is read; with it, every row (any status) whose
    ``rseq`` is above the held stamp of its identity.
    """
    pairs = sorted({(i.agent_key, i.workspace_key) for i in owner.identities()})
    branches = []
    params: list[Any] = [owner.scope_id]
    for a, w in pairs:
        params += [a, w]
    params.append(owner.scope_id)
    for a, w in pairs:
        since = -1 if held is None else held.get((a, w), (0, 0))[0]
        branches.append(
            "(r.agent_key = %s AND r.workspace_key = %s AND r.rseq > %s"
            + (" AND r.status = 'active')" if held is None else ")")
        )
        params += [a, w, since]
    idents = ", ".join("(%s, %s)" for _ in pairs)
    sql = (
        "SELECT st.stamps, x.* FROM (SELECT coalesce(json_agg(json_build_array(s.agent_key, "
        "s.workspace_key, s.stamp, s.resets)), '[]')::text AS stamps FROM mg_recall_stamp s "
        f"WHERE s.scope_id = %s AND (s.agent_key, s.workspace_key) IN ({idents})) st "
        f"LEFT JOIN LATERAL (SELECT {CANDIDATE_COLS} FROM mg_records r WHERE r.scope_id = %s "
        f"AND ({' OR '.join(branches)})) x ON true"
    )
    return Query(sql, params)


def _stamps(raw: Any) -> _Stamps:
    data = json.loads(raw) if isinstance(raw, str) else (raw or [])
    return {(str(a), str(w)): (int(s), int(r)) for a, w, s, r in data}


def _needs_reload(held: _Stamps, seen: _Stamps) -> bool:
    for ident, (stamp, resets) in seen.items():
        old_stamp, old_resets = held.get(ident, (0, 0))
        if resets != old_resets or stamp < old_stamp:
            return True
    return any(ident not in seen and st != (0, 0) for ident, st in held.items())


def _stamp_query(owner: Owner) -> Query:
    """The owner's identity stamps (a primary-key read, cheap to plan and to run)."""
    pairs = sorted({(i.agent_key, i.workspace_key) for i in owner.identities()})
    idents = ", ".join("(%s, %s)" for _ in pairs)
    params: list[Any] = [owner.scope_id]
    for a, w in pairs:
        params += [a, w]
    return Query(
        "SELECT coalesce(json_agg(json_build_array(s.agent_key, s.workspace_key, s.stamp, "
        "s.resets)), '[]')::text AS stamps FROM mg_recall_stamp s "
        f"WHERE s.scope_id = %s AND (s.agent_key, s.workspace_key) IN ({idents})",
        params,
        fetch="one",
    )


def pool_op(owner: Owner, cache: RecallCache) -> Op[OwnerPool]:
    """The owner's current pool (see the module doc).

    A held pool whose stamps are unchanged costs one statement (the stamps); a changed one
    a second statement reading the stamps again and, in the same snapshot, the changed rows
    (or all rows, after a delete); an owner without a pool one statement (stamps and rows).
    """
    key = _owner_key(owner)
    pool = cache.get(key)
    held: _Stamps | None = None
    if pool is not None:
        row = yield _stamp_query(owner)
        seen = _stamps(row["stamps"] if row else None)
        if seen == pool.stamps:
            return pool
        if not _needs_reload(pool.stamps, seen):
            held = pool.stamps
    rows = yield _pool_query(owner, held)
    seen = _stamps(rows[0]["stamps"]) if rows else {}
    base = pool if held is not None and pool is not None else OwnerPool({}, {})
    fresh = base.applied([row for row in rows if row["id"] is not None], seen)
    cache.put(key, fresh)
    return fresh


def held_pool_op(owner: Owner, cache: RecallCache) -> Op[OwnerPool | None]:
    """The owner's pool brought up to date (:func:`pool_op`) when ``cache`` holds one, else
    ``None`` without a statement (loading a pool costs more than one plain read)."""
    if cache.get(_owner_key(owner)) is None:
        return None
    return (yield from pool_op(owner, cache))


def _live(record: Record, at: datetime) -> bool:
    return record.expires_at is None or record.expires_at > at


def disagreements_of(
    records: Iterable[Record],
) -> tuple[dict[str, Disagreement], dict[str, list[Record]]]:
    """Disagreement groups among ``records`` (visible, active, unexpired, private, claimed).

    Returns:
        ``(by record id, members by claim key)``; a group needs at least two distinct values;
        ids are ordered by identity precedence then id, at most 4 per disagreement.
    """
    groups: dict[str, list[Record]] = {}
    for r in records:
        if r.knowledge is not None and r.knowledge.claim is not None:
            groups.setdefault(r.knowledge.claim.key, []).append(r)
    by_id: dict[str, Disagreement] = {}
    for key, members in groups.items():
        members.sort(key=lambda r: (r.identity.precedence, r.id))
        values = {m.knowledge.claim.value for m in members if m.knowledge and m.knowledge.claim}
        if len(values) < 2:
            continue
        dis = Disagreement(
            key=key, count=len(members), ids=tuple(m.id for m in members[:MAX_DISAGREEMENT_IDS])
        )
        for m in members:
            by_id[m.id] = dis
    return by_id, groups


def pool_disagreements(
    pool: OwnerPool, at: datetime, hits: Iterable[Record]
) -> tuple[dict[str, Disagreement], dict[str, list[Record]]]:
    """The disagreement groups of the claim keys among ``hits`` (from the pool)."""
    keys = {
        r.knowledge.claim.key
        for r in hits
        if r.sensitivity == "private" and r.knowledge is not None and r.knowledge.claim is not None
    }
    if not keys:
        return {}, {}
    claims = pool.claims()
    members = [r for k in sorted(keys) for r in claims.get(k, ()) if _live(r, at)]
    return disagreements_of(members)


def rank_pool(
    pool: OwnerPool,
    query: str | ParsedQuery,
    *,
    limit: int,
    depth: int,
    kinds: Iterable[str],
    trusts: Iterable[str],
    sensitivities: Sequence[str],
    at: datetime,
) -> list[Ranked]:
    """Rank the pool's live records for ``query`` (all of them, by prior, when blank).

    ``query`` is a text or its parse (:func:`~memory_graph.recall.query.parse_query` at
    ``at``: a parse is not tokenized again). The candidates are the best ``depth`` by the
    index's pre-score; the pool statistics (over the active records of the asked
    sensitivities) give the IDF.
    """
    view = pool.view(sensitivities)
    index, entries = view.index, view.entries
    kind_set = frozenset(kinds)
    allow = view.allow(kind_set, frozenset(trusts), at)
    parsed = query if isinstance(query, ParsedQuery) else parse_query(query, now=at)
    if not parsed.text.strip():
        where = sorted(p for kind in kind_set for p in view.by_kind.get(kind, ()))
        docs = [entries[pos].doc for pos in where if allow is None or allow(pos)]
        return rank("", docs, limit=limit, include_sensitive=True)
    if not parsed.terms.weights:
        return []

    def rank_one(q: ParsedQuery) -> list[Ranked]:
        qt = q.terms
        window = q.window
        chosen = (
            index.select(qt, depth=depth, allow=allow, window=window, when=q.when)
            if qt.weights
            else []
        )
        prepared = [index.prepared[pos] for pos in chosen]
        return rank_prepared(
            q,
            prepared,
            limit=limit,
            stats=index.stats,
            terms=qt,
            include_sensitive=True,
            window=window,
        )

    # recall.fuse: a query's legs (several questions, a restated one), expansion, hop pass
    return rank_legs(parsed, rank_one, limit=limit, stats=index.stats)


def hits_of(
    pool: OwnerPool, ranked: Sequence[Ranked], by_dis: Mapping[str, Disagreement]
) -> list[SearchHit]:
    """Search hits of ranked pool documents."""
    return [
        SearchHit(
            record=pool.entries[r.doc.id].record, score=r.score, disagreement=by_dis.get(r.doc.id)
        )
        for r in ranked
    ]
