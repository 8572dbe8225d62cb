"""The async store's recall: search, the recall snapshot, the optional dense leg, turn entry.

Mixed into :class:`~memory_graph.AsyncMemoryStore`. With embeddings configured and enabled,
the query is embedded here, outside any transaction, and the hybrid ops of ``ops/vector.py``
run with its vector; without them, or when the model fails, the lexical ops of
``ops/search.py`` run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from ...errors import ConfigurationError
from ...identity import Owner
from ...recall.hybrid import dense_weight
from ...types import Kind, SearchHit, Sensitivity, Trust
from ...validate import owner as check_owner
from ..driver import Op
from ..ops import proposals as P
from ..ops import search as S
from ..ops import views as V
from ..ops.entry import TurnEntry, turn_entry_op
from ..ops.hybrid import hybrid_search_op, hybrid_snapshot_op
from ..ops.vector import embeddings_ready_op, enable_embeddings_op, vector_errors
from .base_async import AsyncStoreShell

__all__ = ["AsyncRecallMethods"]


class AsyncRecallMethods(AsyncStoreShell):
    """Lexical or hybrid recall over the owner's visible, active records."""

    async def search(
        self,
        owner: Owner,
        query: str,
        *,
        limit: int | None = None,
        kinds: Iterable[Kind] | None = None,
        trusts: Iterable[Trust] | None = None,
        sensitivities: Iterable[Sensitivity] | None = None,
        as_of: datetime | None = None,
    ) -> list[SearchHit]:
        """Lexical recall over visible, active records (sensitive excluded unless asked).

        With embeddings configured and enabled, the lexical and dense rankings are fused by
        reciprocal rank (scores are then fused scores); if the query embedding fails, the
        lexical results are returned and a warning is logged.
        """
        check_owner(owner)
        return await self._search(owner, query, limit, kinds, trusts, sensitivities, as_of)

    async def search_confirmed(
        self, owner: Owner, query: str, *, limit: int | None = None, as_of: datetime | None = None
    ) -> list[SearchHit]:
        """Search narrowed server-side to user-confirmed, non-sensitive records."""
        check_owner(owner)
        return await self._search(owner, query, limit, None, ["user-confirmed"], ["private"], as_of)

    async def _search(
        self,
        owner: Owner,
        query: str,
        limit: int | None,
        kinds: Iterable[Kind] | None,
        trusts: Iterable[Trust] | None,
        sensitivities: Iterable[Sensitivity] | None,
        as_of: datetime | None,
    ) -> list[SearchHit]:
        hybrid = self._hybrid_args(
            query, limit=limit, kinds=kinds, trusts=trusts, sensitivities=sensitivities, as_of=as_of
        )
        vector = await self._dense_vector(None if hybrid is None else hybrid[0].query)
        if hybrid is not None and vector is not None:
            args, at = hybrid
            return await self._read(
                hybrid_search_op(
                    owner,
                    args,
                    as_of=at,
                    query_vector=vector,
                    model=self._model,
                    limits=self._limits,
                    cache=self._recall,
                    weight=dense_weight(args.query, self._embeddings),
                    kind=self._vector_kind,
                )
            )
        return await self._read(
            S.search_op(
                owner,
                query,
                limit=limit,
                kinds=kinds,
                trusts=trusts,
                sensitivities=sensitivities,
                as_of=as_of,
                clock=self._clock,
                limits=self._limits,
                cache=self._recall,
            )
        )

    async def _dense_vector(self, text: str | None) -> list[float] | None:
        """The query vector of ``text`` when a dense leg applies, else ``None``.

        ``None`` too when the model fails (a warning is logged): recall degrades to lexical.
        Vectors are cached by text (the most recent 256), so a text is embedded once.
        The model is called outside any transaction, so it never holds a connection.
        """
        if text is None or self._embeddings is None or not await self._ready():
            return None
        cached = self._query_vectors.get(text)
        if cached is not None:
            return cached
        try:
            vector = self._query_vector(await self._embeddings.aembed_query(text))
        except Exception as exc:  # any model failure degrades to lexical
            self._embedding_failed(exc)
            return None
        self._query_vectors.put(text, vector)
        return vector

    async def enable_embeddings(self, *, pgvector: bool | None = None) -> str:
        """Create the embeddings table (idempotent), with pgvector where the server has it.

        Call :meth:`setup` first. Embeddings are optional index data outside the migrations.
        Without pgvector, vectors are stored as unit-length ``real[]`` and the dense leg's
        exact scan computes their dot products in plain SQL: the same ranking, slower per
        record (``bench/bench_recall.py`` measures both).

        Args:
            pgvector: ``True`` requires pgvector; ``False`` stores ``real[]`` vectors even
                where pgvector exists; ``None`` (default) uses pgvector when available. An
                existing table keeps its kind.

        Returns:
            ``"vector"`` (pgvector) or ``"array"`` (``real[]``).

        Raises:
            ConfigurationError: ``setup()`` has not run; ``pgvector=True`` and it is not
                available (or may not be created by this role); the existing table is of the
                other kind than ``pgvector`` asks for.
        """
        if pgvector is not None and not isinstance(pgvector, bool):
            raise ConfigurationError("pgvector must be True, False or None")
        with vector_errors():
            kind = await self._run(enable_embeddings_op(pgvector))
        self._vectors_found(kind)
        return kind

    async def index_embeddings(self, owner: Owner, *, batch_size: int = 64) -> int:
        """Embed the owner's active, non-sensitive records that lack a current vector.

        The model is called outside any transaction, ``batch_size`` texts at a time; the
        vectors are then written in one transaction (a record changed meanwhile is skipped).
        Vectors of removed or sensitive records are dropped.

        Returns:
            How many records were embedded now (0 when all are up to date).

        Raises:
            ConfigurationError: no embeddings configured, or not enabled in the database.
        """
        check_owner(owner)
        model = self._index_plan(batch_size)
        self._require_vectors(await self._run(embeddings_ready_op()))
        return await self._embed_pending(owner, model, batch_size)

    async def snapshot(
        self,
        owner: Owner,
        *,
        task_step: str | None = None,
        latest_input: str | None = None,
        goal: str | None = None,
        as_of: datetime | None = None,
        limit: int | None = None,
        max_bytes: int | None = None,
        max_tokens: int | None = None,
    ) -> str:
        """The framed ``<memory_source>`` recall block ("" when nothing fits).

        ``limit`` counts records; a disagreement group that does not fit in it shows its
        marker line instead of its sides. With embeddings configured and enabled, the dense
        hits of the plan's first text follow the lexical ones (a failed query embedding
        degrades to lexical, with a warning).
        """
        check_owner(owner)
        args = {
            "task_step": task_step,
            "latest_input": latest_input,
            "goal": goal,
            "as_of": as_of,
            "limit": limit,
            "max_bytes": max_bytes,
            "max_tokens": max_tokens,
        }
        return await self._read(await self._snapshot_op(owner, args))

    async def _snapshot_op(self, owner: Owner, args: Mapping[str, Any]) -> Op[str]:
        """The recall snapshot's op for ``args`` (:meth:`snapshot`'s keywords): hybrid when
        a dense leg applies and the plan's first text embeds (embedded here, outside any
        transaction), else lexical."""
        vector = await self._dense_vector(
            self._snapshot_text(args.get("task_step"), args.get("latest_input"), args.get("goal"))
        )
        frame: dict[str, Any] = {
            "limit": None,
            "max_bytes": None,
            "max_tokens": None,
            "as_of": None,
            **args,
            "clock": self._clock,
            "limits": self._limits,
            "cache": self._recall,
        }
        if vector is None:
            return S.snapshot_op(owner, **frame)
        return hybrid_snapshot_op(
            owner, query_vector=vector, model=self._model, kind=self._vector_kind, **frame
        )

    async def _turn_entry(
        self, owner: Owner, *, thread_id: str | None, recall: Mapping[str, Any] | None
    ) -> TurnEntry:
        """The memory agent's turn entry: context block, recall snapshot (``recall``: its
        keyword arguments) and the thread's pending proposals, in one statement
        (``storage/ops/entry.py``).

        With embeddings configured the recall query is embedded first, outside any
        transaction (a failed embedding degrades to lexical, as in :meth:`snapshot`); the
        dense leg is then ranked from the recall pool, so the statement stays one.
        """
        snap = None if recall is None else await self._snapshot_op(owner, recall)
        pending = None
        if thread_id is not None:
            pending = P.list_pending_op(owner, thread_id=thread_id, clock=self._clock)
        return await self._read(
            turn_entry_op(V.context_block_op(owner, as_of=None, clock=self._clock), snap, pending)
        )
