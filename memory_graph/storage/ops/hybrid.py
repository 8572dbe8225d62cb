"""Hybrid recall: the dense leg, ranked in process over the owner's recall pool, fused with
the lexical one (:func:`hybrid_search_op`, :func:`hybrid_snapshot_op`).

Where numpy is installed (every local model needs it; :data:`IN_PROCESS`), the owner's pool
(``recall_cache.OwnerPool``) holds, per model, the unit vector of each of its records, read
from ``mg_embeddings`` once per record version, and a hybrid recall ranks the dense leg there:
one matrix product over the records the lexical search may return (same visibility, kinds,
trusts, sensitivities and expiry, since it is the same pool and view). A search whose pool
holds a vector for every such record costs no statement beyond the pool's stamp check; one
that lacks some reads those, and only those, in one statement, then not again for
:data:`ABSENT_SECONDS` (so a vector another process wrote is used within that time, and an
owner whose records were never indexed costs no statement per search). A pool replaced after
a write keeps the vectors of the records that did not change.

The ranking is the SQL one's (:func:`~.vector.build_dense_query`): cosine similarity, best
first, ties by record id, similarity at or below 0 left out; a vector of another dimension
or with a non-finite or all-zero component is never used. Without numpy the dense leg is that
statement, and its records a second one.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from ...identity import Owner
from ...recall.hybrid import fuse_legs
from ...recall.query import parse_query
from ...time import Clock
from ...types import Disagreement, Limits, Record, SearchHit
from ...validate import KINDS, TRUSTS, aware
from ..driver import Op, Query
from .recall_cache import OwnerPool, RecallCache, pool_disagreements, pool_op, vector_bytes
from .rows import record_from_row
from .search import (
    SearchArgs,
    build_disagreement_query,
    disagreements_from_rows,
    search_op,
    search_pool,
    snapshot_op,
)
from .vector import VectorKind, build_dense_query, kind_literal

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy comes with every local model
    np = None  # type: ignore[assignment]

__all__ = [
    "DENSE_FUSED",
    "DENSE_WEIGHT",
    "IN_PROCESS",
    "ABSENT_SECONDS",
    "dense_rank_op",
    "forget_absent",
    "fusion_depth",
    "hybrid_search_op",
    "hybrid_snapshot_op",
    "unit_vector",
]

IN_PROCESS = np is not None
"""Whether the dense leg is ranked in process (numpy is installed; tests turn it off to run
the SQL ranking)."""

_LOCK = threading.Lock()  # vectors added to a pool, its matrices built: short, in process

_VECTORS_SQL = (
    "SELECT record_id::text AS id, version, embedding::text AS v FROM mg_embeddings "
    "WHERE scope_id = %s AND model = %s AND dim = %s AND record_id = ANY(%s::uuid[])"
)


def unit_vector(values: Any, dim: int | None = None) -> Any:
    """``values`` (numbers, or a ``'[..]'`` / ``'{..}'`` literal) as a unit float32 array;
    ``None`` when it is empty, not ``dim`` long, non-finite or all zeros.

    Examples:
        >>> unit_vector("[3,4]").tolist()
        [0.6000000238418579, 0.800000011920929]
        >>> unit_vector([0, 0]) is None, unit_vector("{1,nan}") is None, unit_vector([1], 2)
        (True, True, None)
    """
    try:
        if isinstance(values, str):
            values = values.strip().strip("[]{}").split(",")
        vec = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if vec.ndim != 1 or not vec.size or (dim is not None and vec.size != dim):
        return None
    if not np.all(np.isfinite(vec)):
        return None
    top = float(np.max(np.abs(vec)))
    if top == 0.0:
        return None
    vec = vec / top  # scaled first, so the squares cannot overflow or underflow
    return (vec / np.linalg.norm(vec)).astype(np.float32)


class _Matrix:
    """The held vectors of one view's records, stacked: positions, rows, what is missing."""

    __slots__ = ("held", "matrix", "missing", "nbytes", "positions")

    # Rows are in record id order, so a stable sort of the scores breaks ties by id.

    def __init__(self, pool: OwnerPool, model: str, key: tuple[str, ...], dim: int) -> None:
        view = pool.view(key)
        held = pool.vectors.get(model, {})
        found: list[tuple[str, int, Any]] = []
        missing: list[Record] = []
        for kind_positions in view.by_kind.values():
            for pos in kind_positions:
                record = view.entries[pos].record
                got = held.get(record.id)
                if got is not None and got[0].version == record.version:
                    if got[1] is not None and got[1].shape == (dim,):  # None: unrankable
                        found.append((record.id, pos, got[1]))
                elif record.sensitivity != "sensitive":  # sensitive records have none
                    missing.append(record)
        found.sort(key=lambda f: f[0])
        self.positions = np.asarray([f[1] for f in found], dtype=np.int64)
        self.matrix = (
            np.stack([f[2] for f in found]) if found else np.zeros((0, dim), dtype=np.float32)
        )
        self.missing = missing
        self.held = len(held)
        self.nbytes = int(self.matrix.nbytes + self.positions.nbytes)


def _matrix(
    owner: Owner, pool: OwnerPool, cache: RecallCache, model: str, key: tuple[str, ...], dim: int
) -> _Matrix:
    """The pool's matrix of ``model`` vectors over view ``key``, built again when the pool
    gained vectors since (they only grow: a changed record makes a new pool)."""
    memo_key = (model, key, dim)
    with _LOCK:
        found: _Matrix | None = pool.dense.get(memo_key)
        if found is not None and found.held == len(pool.vectors.get(model, {})):
            return found
        built = _Matrix(pool, model, key, dim)
        pool.dense[memo_key] = built
    cache.grew(owner, pool, built.nbytes - (0 if found is None else found.nbytes))
    return built


def _add(
    owner: Owner,
    pool: OwnerPool,
    cache: RecallCache,
    model: str,
    wanted: Sequence[Record],
    rows: Iterable[dict[str, Any]],
    dim: int,
) -> None:
    by_id = {r.id: r for r in wanted}
    grown = 0
    with _LOCK:
        held = pool.vectors.setdefault(model, {})
        for row in rows:
            record = by_id.get(str(row["id"]))
            if record is None or int(row["version"]) != record.version:
                continue  # a vector of an older version: a current one will come
            if record.id not in held:  # an unrankable vector (all zeros) is held as None
                vec = unit_vector(row["v"], dim)
                held[record.id] = (record, vec)
                grown += vector_bytes(vec)
    if grown:
        cache.grew(owner, pool, grown)


ABSENT_SECONDS = 10.0
"""How long a record found without a vector is not asked for again by the pool that asked
(a write makes a new pool, and this store's own ``index_embeddings`` forgets the asking at
once: :func:`forget_absent`); so a vector another process writes is used within this time,
and an owner whose records were never indexed costs no statement per search."""


_ASKED = object()  # the first element of the pool's dense memo keys of what it asked for


def _wanted(pool: OwnerPool, model: str, dim: int, missing: Sequence[Record]) -> list[Record]:
    """The missing records not found absent within :data:`ABSENT_SECONDS`. A record is
    marked absent only once a read came back without it (:func:`_absent`), so a search
    racing another one's read asks too, rather than ranking without the vector."""
    if not missing:
        return []
    now = time.monotonic()
    with _LOCK:
        asked: dict[str, float] = pool.dense.get((_ASKED, model, dim), {})
        return [r for r in missing if now - asked.get(r.id, -math.inf) >= ABSENT_SECONDS]


def _absent(pool: OwnerPool, model: str, dim: int, ids: Iterable[str]) -> None:
    now = time.monotonic()
    with _LOCK:
        asked: dict[str, float] = pool.dense.setdefault((_ASKED, model, dim), {})
        held = pool.vectors.get(model, {})
        for rid in ids:
            if rid not in held:
                asked[rid] = now


def forget_absent(cache: RecallCache, owner: Owner) -> None:
    """Forget which of the owner's records its held pool found without a vector, so the next
    search asks again (after this store wrote vectors)."""
    pool = cache.peek(owner)
    if pool is None:
        return
    with _LOCK:
        for key in [k for k in pool.dense if k[0] is _ASKED]:
            del pool.dense[key]


def dense_rank_op(
    owner: Owner,
    pool: OwnerPool,
    cache: RecallCache,
    *,
    vector: Sequence[float],
    model: str,
    kinds: Iterable[str],
    trusts: Iterable[str],
    sensitivities: Sequence[str],
    at: datetime,
    depth: int,
) -> Op[list[str]]:
    """The ids of the ``depth`` records of ``pool`` nearest ``vector``, best first.

    Reads the vectors the pool lacks (one statement, only when it lacks some); see the
    module doc for the ranking.
    """
    query = unit_vector(vector)
    if query is None or depth < 1:
        return []
    dim = int(query.size)
    key = tuple(sorted(set(sensitivities)))
    view = pool.view(key)  # built (when new) outside the lock: a big pool's index takes time
    built = _matrix(owner, pool, cache, model, key, dim)
    wanted = _wanted(pool, model, dim, built.missing)
    if wanted:
        ids = [r.id for r in wanted]
        rows = yield Query(_VECTORS_SQL, [owner.scope_id, model, dim, ids])
        _add(owner, pool, cache, model, wanted, rows, dim)
        _absent(pool, model, dim, ids)
        built = _matrix(owner, pool, cache, model, key, dim)
    if not built.positions.size:
        return []
    allow = view.allow(frozenset(kinds), frozenset(trusts), at)
    scores = built.matrix @ query
    order = np.argsort(-scores, kind="stable")[: int(np.count_nonzero(scores > 0.0))]
    positions = built.positions[order].tolist()
    entries = view.entries
    if allow is None:
        return [entries[pos].record.id for pos in positions[:depth]]
    out: list[str] = []
    for pos in positions:
        if allow(pos):
            out.append(entries[pos].record.id)
            if len(out) == depth:
                break
    return out


def hybrid_snapshot_op(
    owner: Owner,
    *,
    query_vector: Sequence[float],
    model: str,
    task_step: str | None,
    latest_input: str | None,
    goal: str | None,
    as_of: datetime | None,
    limit: int | None,
    max_bytes: int | None,
    max_tokens: int | None,
    clock: Clock,
    limits: Limits,
    cache: RecallCache | None = None,
    kind: VectorKind = "vector",
) -> Op[str]:
    """The recall block with a dense leg: the plan's lexical hits keep their places, then the
    dense hits of the query vector (computed from the plan's first text), then standing
    guidance. Ranked in process from the pool (:data:`IN_PROCESS`, with a cache), else one
    statement more than :func:`snapshot_op` (the dense ranking)."""
    at = clock() if as_of is None else aware(as_of, "as_of")
    k = limits.snapshot_limit if limit is None else limit
    depth = min(limits.max_search_limit, k) if isinstance(k, int) and k > 0 else 1
    frame: dict[str, Any] = {
        "task_step": task_step,
        "latest_input": latest_input,
        "goal": goal,
        "as_of": at,
        "limit": limit,
        "max_bytes": max_bytes,
        "max_tokens": max_tokens,
        "clock": clock,
        "limits": limits,
        "cache": cache,
    }
    # What the dense leg of a recall block ranks (the snapshot's own filters), either way.
    within: dict[str, Any] = {
        "kinds": KINDS,
        "trusts": TRUSTS,
        "sensitivities": ["private"],
        "depth": depth,
    }
    if IN_PROCESS and cache is not None:
        held = cache

        def dense(pool: OwnerPool, when: datetime) -> Op[list[str]]:
            return dense_rank_op(
                owner,
                pool,
                held,
                vector=query_vector,
                model=model,
                at=when,
                **within,
            )

        return (yield from snapshot_op(owner, **frame, dense=dense))
    sql, params = build_dense_query(
        owner,
        kind_literal(query_vector, kind),
        dim=len(query_vector),
        model=model,
        as_of=at,
        kind=kind,
        **within,
    )
    rows = yield Query(sql, params)
    return (yield from snapshot_op(owner, **frame, dense_ids=[str(row["id"]) for row in rows]))


DENSE_WEIGHT = 1.0
"""The dense ranking's weight in the fusion of :func:`hybrid_search_op` (the lexical one's
is 1)."""

DENSE_FUSED = 5
"""How many of the dense ranking's first places enter the fusion
(:func:`memory_graph.recall.hybrid.fuse_legs`); its later places only fill after them."""


def fusion_depth(limit: int, limits: Limits) -> int:
    """How many candidates each leg contributes to the fusion of a top-``limit`` search."""
    return min(limits.max_search_limit, max(3 * limit, 30))


def _dedup_key(record: Record) -> str:
    return f"{record.content_hash}|{record.knowledge!r}"


def hybrid_search_op(
    owner: Owner,
    args: SearchArgs,
    *,
    as_of: datetime,
    query_vector: Sequence[float],
    model: str,
    limits: Limits,
    cache: RecallCache | None = None,
    weight: float = 1.0,
    kind: VectorKind = "vector",
) -> Op[list[SearchHit]]:
    """Lexical and dense rankings of one snapshot, fused by reciprocal rank. Reads only.

    With a cache and numpy (:data:`IN_PROCESS`) both rankings come from the owner's pool:
    one statement when the pool and its vectors are current. Otherwise the dense ranking
    and its records are one statement more.

    Args:
        owner: The owner.
        args: Validated search arguments (a non-blank query).
        as_of: Activity instant (both legs use it).
        query_vector: The query embedding.
        model: The model key.
        limits: The configured limits.
        weight: The dense ranking's weight for this query (times :data:`DENSE_WEIGHT`; the
            lexical one's is 1; :func:`memory_graph.recall.hybrid.dense_weight`).
        kind: How ``mg_embeddings`` stores vectors (:func:`~.vector.embeddings_ready_op`).

    Returns:
        At most ``args.limit`` hits, best fused score first, duplicates dropped; lexical hits
        keep their disagreement markers.
    """
    depth = fusion_depth(args.limit, limits)
    # Unfused (weight 0), the lexical ranking is exactly the lexical search's (a deeper
    # lexical search may order its first places differently); dense hits only fill after it.
    fused_in = weight * DENSE_WEIGHT > 0
    lexical_args = SearchArgs(
        args.query, depth if fused_in else args.limit, args.kinds, args.trusts, args.sensitivities
    )
    pool: OwnerPool | None = None
    if IN_PROCESS and cache is not None:
        pool = yield from pool_op(owner, cache)
        parsed = parse_query(args.query, now=as_of)
        lexical = search_pool(pool, parsed, lexical_args, as_of) if parsed.tokens else []
        dense_ids = yield from dense_rank_op(
            owner,
            pool,
            cache,
            vector=query_vector,
            model=model,
            kinds=args.kinds,
            trusts=args.trusts,
            sensitivities=args.sensitivities,
            at=as_of,
            depth=depth,
        )
        entries = pool.entries
        records: dict[str, Record] = {i: entries[i].record for i in dense_ids}
    else:
        lexical = yield from search_op(
            owner,
            args.query,
            limit=lexical_args.limit,
            kinds=args.kinds,
            trusts=args.trusts,
            sensitivities=args.sensitivities,
            as_of=as_of,
            clock=lambda: as_of,
            limits=limits,
            cache=cache,
        )
        sql, params = build_dense_query(
            owner,
            kind_literal(query_vector, kind),
            dim=len(query_vector),
            model=model,
            kinds=args.kinds,
            trusts=args.trusts,
            sensitivities=args.sensitivities,
            as_of=as_of,
            depth=depth,
            kind=kind,
            records=True,
        )
        rows = yield Query(sql, params)
        dense_ids = [str(row["id"]) for row in rows]
        records = {row["id"]: record_from_row(row) for row in rows}
    by_id = {h.record.id: h for h in lexical}
    fused = fuse_legs(
        [h.record.id for h in lexical],
        dense_ids,
        weight=weight * DENSE_WEIGHT,
        head=DENSE_FUSED,
        scores=[h.score for h in lexical],
    )
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for rid, score in fused:
        if rid in by_id:
            hit = by_id[rid]
            hit = SearchHit(record=hit.record, score=score, disagreement=hit.disagreement)
        elif rid in records:
            hit = SearchHit(record=records[rid], score=score)
        else:  # not reached: every dense id came with its record
            continue
        key = _dedup_key(hit.record)
        if key in seen:
            continue
        seen.add(key)
        hits.append(hit)
        if len(hits) == args.limit:
            break
    dense_only = [
        h
        for h in hits
        if h.record.id not in by_id
        and h.record.knowledge is not None
        and h.record.knowledge.claim is not None
        and h.record.sensitivity != "sensitive"
    ]
    if dense_only:
        markers: dict[str, Disagreement]
        if pool is not None:
            markers = pool_disagreements(pool, as_of, [h.record for h in dense_only])[0]
        else:
            keys = [h.record.knowledge.claim.key for h in dense_only]  # type: ignore[union-attr]
            dsql, dparams = build_disagreement_query(owner, as_of=as_of, claim_keys=keys)
            drows = yield Query(dsql, dparams)
            markers = disagreements_from_rows(drows)[0]
        hits = [
            SearchHit(h.record, h.score, markers.get(h.record.id))
            if h.record.id not in by_id
            else h
            for h in hits
        ]
    return hits
