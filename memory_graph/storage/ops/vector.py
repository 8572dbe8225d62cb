"""The optional dense leg of recall: schema, SQL builders and the ops both twins run.

Embeddings are derived index data, not memory. They live in ``mg_embeddings``, outside the
ordered migrations (``store.enable_embeddings()`` creates it): as pgvector ``vector`` columns
where the server has pgvector, else as unit-length ``real[]`` ranked by a dot product in plain
SQL (slower per record, the same ranking; the table's column type says which, ``VectorKind``).
A vector is keyed by ``(scope_id, model, record_id)`` and remembers the record ``version`` it
was computed from; a vector whose record was replaced since, removed, expired or became
invisible is never returned, because the dense query joins ``mg_records`` with the same
visibility and filters as the lexical search.

The dense search is **exact**: cosine distance over the owner's own rows only, in a
materialised CTE, so no ANN index (whose candidates are taken from the whole table before the
per-user filter) can be chosen. A user's pool is small, so the scan is cheap.

Vectors travel as text literals (``'[0.1,0.2]'::vector``, or ``'{0.6,0.8}'::real[]``). No
model is ever called here: the store shells call the model outside any transaction.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal, NamedTuple

from psycopg import errors as pgerrors

from ...errors import ConfigurationError
from ...identity import Owner
from ...recall.hybrid import vector_literal
from ...recall.tokenize import index_text
from ..driver import Op, Query
from ..partitions import partitioned_sql
from ..schema import SETUP_LOCK_KEY
from .rows import RECORD_COLS, knowledge_from_json, visible

__all__ = [
    "EMBEDDINGS_ARRAY_SQL",
    "EMBEDDINGS_SQL",
    "PendingEmbedding",
    "VectorKind",
    "build_dense_query",
    "embeddings_ready_op",
    "enable_embeddings_op",
    "kind_literal",
    "pending_embeddings_op",
    "unit_literal",
    "vector_errors",
    "write_embeddings_op",
]

NO_PGVECTOR = (
    "pgvector is not available on this PostgreSQL server: use the embedded server "
    "(it ships pgvector) or install pgvector, then call `store.enable_embeddings()`"
)

EMBEDDINGS_SQL = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE IF NOT EXISTS mg_embeddings (
    scope_id text NOT NULL,
    record_id uuid NOT NULL,
    model text NOT NULL,
    dim integer NOT NULL,
    version integer NOT NULL,
    embedding vector NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope_id, model, record_id)
);
CREATE INDEX IF NOT EXISTS mg_embeddings_record ON mg_embeddings (scope_id, record_id);
"""
"""The optional schema (idempotent). Deliberately no ANN index: the dense leg is exact."""

EMBEDDINGS_ARRAY_SQL = EMBEDDINGS_SQL.replace(
    "CREATE EXTENSION IF NOT EXISTS vector;\n", ""
).replace("embedding vector NOT NULL", "embedding real[] NOT NULL")
"""The same table without pgvector: unit-length ``real[]`` vectors, ranked by their dot
product with the unit query vector in plain SQL (:func:`build_dense_query`)."""

VectorKind = Literal["vector", "array"]
"""How ``mg_embeddings`` stores vectors: pgvector's ``vector``, or ``real[]`` without it."""

_KIND = (
    "SELECT format_type(a.atttypid, a.atttypmod) AS t FROM pg_attribute a "
    "WHERE a.attrelid = to_regclass('mg_embeddings') AND a.attname = 'embedding'"
)


def _kind(row: Any) -> VectorKind | None:
    if not row:
        return None
    return "vector" if str(row["t"]).startswith("vector") else "array"


_REAL_MIN = 1.2e-38


def unit_literal(values: Sequence[float]) -> str:
    """A unit-length ``real[]`` literal of ``values`` (``'{0.6,0.8}'``), for the array kind.

    Raises:
        ValueError: the vector is empty, has a non-finite component, or is all zeros.

    Examples:
        >>> unit_literal([3, 4])
        '{0.6,0.8}'
        >>> unit_literal([1, 1e-45])
        '{1.0,0.0}'
    """
    vector_literal(values)  # empty or non-finite: ValueError
    out = [float(v) for v in values]
    top = max(abs(v) for v in out)
    if top == 0.0:
        raise ValueError("an embedding has length zero")
    out = [v / top for v in out]  # scaled first, so the squares cannot underflow
    norm = math.sqrt(sum(v * v for v in out))
    # real is float4: a component below its smallest normal is stored as 0 (no underflow).
    unit = (v / norm for v in out)
    return "{" + ",".join(repr(u if abs(u) >= _REAL_MIN else 0.0) for u in unit) + "}"


def kind_literal(values: Sequence[float], kind: VectorKind) -> str:
    """The literal of ``values`` for the table's kind (:func:`vector_literal` or
    :func:`unit_literal`); an all-zero vector is stored as it is in either kind, where the
    dense ranking never returns it (its similarity is undefined or 0).

    Raises:
        ValueError: the vector is empty or has a non-finite component.
    """
    if kind == "vector":
        return vector_literal(values)
    if vector_literal(values) and not any(values):  # all zeros: stored, never ranked
        return "{" + ",".join("0.0" for _ in values) + "}"
    return unit_literal(values)


_LIVE = (
    "r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > %s) "
    "AND r.sensitivity <> 'sensitive'"
)


@contextmanager
def vector_errors() -> Iterator[None]:
    """Map the errors of creating the extension onto ``ConfigurationError``."""
    try:
        yield
    except (pgerrors.InsufficientPrivilege, pgerrors.UndefinedFile) as exc:
        raise ConfigurationError(f"{NO_PGVECTOR} ({exc.diag.message_primary})") from exc


def enable_embeddings_op(pgvector: bool | None = None) -> Op[VectorKind]:
    """Create ``mg_embeddings`` (idempotent): with pgvector when the server has it, else
    with ``real[]`` vectors ranked in plain SQL.

    Args:
        pgvector: ``True`` requires pgvector, ``False`` stores ``real[]`` vectors even where
            pgvector exists, ``None`` uses pgvector when the server has it. An existing
            table keeps its kind (``True``/``False`` must then match it).

    Returns:
        The kind of the table.

    Raises:
        ConfigurationError: ``setup()`` has not run; pgvector is required and missing; or the
            existing table is of the other kind.
    """
    yield Query("SELECT pg_advisory_xact_lock(%s)", [SETUP_LOCK_KEY], "none")
    row = yield Query(
        "SELECT to_regclass('mg_records') IS NOT NULL AS ready, EXISTS (SELECT 1 FROM "
        "pg_available_extensions WHERE name = 'vector') AS available",
        fetch="one",
    )
    if not row["ready"]:
        raise ConfigurationError("memory-graph tables are missing: call `store.setup()` first")
    have = _kind((yield Query(_KIND, fetch="one")))
    want: VectorKind = "vector" if pgvector or (pgvector is None and row["available"]) else "array"
    if have is not None:
        if pgvector is not None and have != want:
            raise ConfigurationError(
                f"mg_embeddings already stores {have} vectors (enable_embeddings(pgvector="
                f"{pgvector}) asks for {want}); forget the vectors (DROP TABLE mg_embeddings) "
                "to change"
            )
        return have
    if want == "vector" and not row["available"]:
        raise ConfigurationError(NO_PGVECTOR)
    # Partitioned like the migrations' tables when setup() partitioned them.
    meta = yield Query("SELECT value FROM mg_meta WHERE key = 'partitions'", fetch="one")
    schema = EMBEDDINGS_SQL if want == "vector" else EMBEDDINGS_ARRAY_SQL
    yield Query(partitioned_sql(schema, int(meta["value"]) if meta else 0), fetch="none")
    return want


def embeddings_ready_op() -> Op[VectorKind | None]:
    """The kind of ``mg_embeddings``, or ``None`` when it does not exist."""
    return _kind((yield Query(_KIND, fetch="one")))


class PendingEmbedding(NamedTuple):
    """A record that needs a vector for the configured model."""

    record_id: str
    version: int
    text: str


def pending_embeddings_op(owner: Owner, model: str, *, now: datetime) -> Op[list[PendingEmbedding]]:
    """Drop the owner's vectors of removed or sensitive records; list records lacking one.

    A record lacks a vector when it has none for ``model`` or its vector was computed from an
    older version. Sensitive records are never embedded, so their text never reaches an
    embedding provider.

    Args:
        owner: The owner; only its four identities are touched.
        model: The model key (:func:`memory_graph.recall.hybrid.model_key`).
        now: Expiry instant.

    Returns:
        The records to embed, by id.
    """
    cond, params = visible(owner, "r")
    yield Query(
        "DELETE FROM mg_embeddings e USING mg_records r WHERE e.scope_id = %s "
        f"AND r.scope_id = e.scope_id AND r.id = e.record_id AND {cond} "
        "AND (r.status <> 'active' OR r.sensitivity = 'sensitive')",
        [owner.scope_id, *params],
        "none",
    )
    rows = yield Query(
        "SELECT r.id::text AS id, r.version, r.content, r.knowledge FROM mg_records r "
        "LEFT JOIN mg_embeddings e ON e.scope_id = r.scope_id AND e.model = %s "
        f"AND e.record_id = r.id WHERE {cond} AND {_LIVE} "
        "AND (e.record_id IS NULL OR e.version <> r.version) ORDER BY r.id",
        [model, *params, now],
    )
    return [
        PendingEmbedding(
            row["id"],
            int(row["version"]),
            index_text(row["content"], knowledge_from_json(row["knowledge"])),
        )
        for row in rows
    ]


def write_embeddings_op(
    owner: Owner,
    model: str,
    items: Sequence[PendingEmbedding],
    vectors: Sequence[Sequence[float]],
    *,
    kind: VectorKind = "vector",
) -> Op[int]:
    """Store vectors, each only if its record is still active at the embedded version.

    Args:
        owner: The owner.
        model: The model key.
        items: The records that were embedded.
        vectors: One vector per item, in order.
        kind: How the table stores vectors (``array``: unit length).

    Returns:
        How many vectors were written.

    Raises:
        ValueError: the counts differ, or a vector is empty or not finite.
    """
    if len(items) != len(vectors):
        raise ValueError(f"the model returned {len(vectors)} vectors for {len(items)} texts")
    if not items:
        return 0
    cond, params = visible(owner, "r")
    if kind == "vector":
        dims, vec = "vector_dims(v.vec::vector)", "v.vec::vector"
    else:
        dims, vec = "cardinality(v.vec::real[])", "v.vec::real[]"
    count = yield Query(
        "INSERT INTO mg_embeddings (scope_id, record_id, model, dim, version, embedding) "
        f"SELECT r.scope_id, r.id, %s, {dims}, r.version, {vec} "
        "FROM unnest(%s::uuid[], %s::int[], %s::text[]) AS v(record_id, version, vec) "
        "JOIN mg_records r ON r.scope_id = %s AND r.id = v.record_id "
        f"AND r.version = v.version WHERE {cond} AND r.status = 'active' "
        "AND r.sensitivity <> 'sensitive' "
        "ON CONFLICT (scope_id, model, record_id) DO UPDATE SET dim = EXCLUDED.dim, "
        "version = EXCLUDED.version, embedding = EXCLUDED.embedding, "
        "recorded_at = EXCLUDED.recorded_at",
        [
            model,
            [i.record_id for i in items],
            [i.version for i in items],
            [kind_literal(v, kind) for v in vectors],
            owner.scope_id,
            *params,
        ],
        "rowcount",
    )
    return int(count)


def build_dense_query(
    owner: Owner,
    vector: str,
    *,
    dim: int,
    model: str,
    kinds: Sequence[str],
    trusts: Sequence[str],
    sensitivities: Sequence[str],
    as_of: datetime,
    depth: int,
    kind: VectorKind = "vector",
    records: bool = False,
) -> tuple[str, list[Any]]:
    """SQL for the exact dense ranking of the owner's visible records.

    Only vectors of ``model`` and ``dim`` computed from the record's current version count,
    and the record must pass the lexical search's filters. Rows with cosine similarity at or
    below 0 (distance >= 1, or NaN for a zero vector) are left out.

    Args:
        owner: The owner; only its four identities are visible.
        vector: The query vector as a pgvector literal.
        dim: Its dimension.
        model: The model key.
        kinds: Kinds to keep.
        trusts: Trust levels to keep.
        sensitivities: Sensitivities to keep.
        as_of: Rows must be unexpired at this instant.
        depth: How many ids to return.
        kind: How the table stores vectors: pgvector's cosine distance (``vector``), or one
            minus the dot product of unit ``real[]`` vectors (``array``; ``vector`` is then
            a ``real[]`` literal of the unit query vector, :func:`unit_literal`).
        records: Also select each ranked row's record (:data:`~.rows.RECORD_COLS`), so the
            caller needs no second statement.

    Returns:
        The SQL text and its parameters; rows carry ``id`` and ``distance``, best first.
    """
    cond, params = visible(owner, "r")
    # The query vector is parsed once (``q``), not once per row.
    query, distance = (
        ("%s::vector", "(e.embedding <=> q.v)")
        if kind == "vector"
        else (
            "%s::real[]",
            "(1.0 - (SELECT sum(a::float8 * b) FROM unnest(e.embedding, q.v) AS t(a, b)))",
        )
    )
    # The owner's vectors by primary key, each record by primary key (fenced with OFFSET 0),
    # so the plan does not depend on table statistics.
    sql = (
        f"WITH q AS MATERIALIZED (SELECT {query} AS v), "
        f"cand AS MATERIALIZED (SELECT r.id, {distance} AS distance "
        "FROM q CROSS JOIN mg_embeddings e CROSS JOIN LATERAL (SELECT * FROM mg_records r0 "
        "WHERE r0.scope_id = e.scope_id AND r0.id = e.record_id OFFSET 0) r "
        "WHERE e.scope_id = %s AND e.model = %s AND e.dim = %s "
        f"AND e.version = r.version AND {cond} AND r.status = 'active' "
        "AND (r.expires_at IS NULL OR r.expires_at > %s) AND r.kind = ANY(%s) "
        "AND r.trust = ANY(%s) AND r.sensitivity = ANY(%s)) "
    )
    args: list[Any] = [vector, owner.scope_id, model, dim, *params, as_of]
    args += [list(kinds), list(trusts), list(sensitivities), depth]
    if not records:
        sql += (
            "SELECT id::text AS id, distance FROM cand WHERE distance < 1.0 "
            "ORDER BY distance, id LIMIT %s"
        )
    else:  # the ranked rows with their records (each by primary key), in the same statement
        sql += (
            ", top AS MATERIALIZED (SELECT id AS rid, distance AS rdist FROM cand "
            "WHERE distance < 1.0 ORDER BY distance, id LIMIT %s) "
            f"SELECT {RECORD_COLS}, rdist AS distance FROM top CROSS JOIN LATERAL "
            "(SELECT * FROM mg_records r1 WHERE r1.scope_id = %s AND r1.id = top.rid "
            "OFFSET 0) rec ORDER BY rdist, rid"
        )
        args.append(owner.scope_id)
    return sql, args
