"""The store shell: each method builds a generator op (``_ops_*``) and runs it.

The async store in ``_async.py`` is the source; the sync store in ``_sync.py`` is generated
from it by ``tools/unasync.py``, and ``tests/test_unasync.py`` fails when the generated file is
out of date, so the twins cannot drift. ``tests/test_public_api.py`` checks that
both classes expose the same methods with the same signatures.
"""

from __future__ import annotations

# sync: -
import asyncio

# sync: from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from .._identity import IdentityLevel, Owner
from .._time import Clock
from .._types import (
    CommitResult,
    DecisionKind,
    Grant,
    Kind,
    Limits,
    Operation,
    Persona,
    Preference,
    PreferenceResult,
    Profile,
    ProfileResult,
    Proposal,
    Record,
    SearchHit,
    Sensitivity,
    Trust,
)
from ..evidence import EvidenceEntry
from . import _ops_evidence as EV
from . import _ops_proposals as P
from . import _ops_reads as R
from . import _ops_threads as TH
from . import _ops_views as V
from . import _ops_writes as W
from . import _search as S
from ._base import StoreBase, pool_kwargs
from ._driver import Op, PoolOptions, map_unavailable, open_async_pool, run_async
from ._ops_bulk import add_many_op
from ._ops_persona import (
    complete_onboarding_op,
    ensure_bootstrap_op,
    get_persona_op,
    set_persona_op,
)
from ._ops_records import reinforce_op
from ._ops_rejections import list_expired_op
from ._privacy import AsyncPrivacyMethods
from ._setup import resolve_dsn, setup_op
from ._vector import (
    embeddings_ready_op,
    enable_embeddings_op,
    hybrid_search_op,
    hybrid_snapshot_op,
    pending_embeddings_op,
    vector_errors,
    write_embeddings_op,
)

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["AsyncMemoryStore"]

T = TypeVar("T")


class AsyncMemoryStore(StoreBase, AsyncPrivacyMethods):
    """Governed long-term user memory on PostgreSQL.

    Args:
        pool: an open ``psycopg_pool.AsyncConnectionPool`` (``autocommit=False``).
        limits: size and count limits.
        clock: the injectable clock.
        dsn: the DSN the pool connects to (exposed as :attr:`dsn`).
        embeddings: an optional LangChain ``Embeddings``; with it, and pgvector enabled in the
            database (:meth:`enable_embeddings`), :meth:`search` fuses a dense leg with the
            lexical one. No model is called inside a transaction.

    Example:
        >>> async with AsyncMemoryStore.from_dsn() as store:  # doctest: +SKIP
        ...     await store.setup()
        ...     (await store.set_preference(Owner("alice"), "reply.language", "en")).status
        'CREATED'
    """

    def __init__(
        self,
        pool: AsyncConnectionPool[Any],
        *,
        limits: Limits | None = None,
        clock: Clock | None = None,
        dsn: str | None = None,
        embeddings: Embeddings | None = None,
    ) -> None:
        super().__init__(limits=limits, clock=clock, dsn=dsn, embeddings=embeddings)
        self._pool = pool
        self._pool_options = PoolOptions(max_size=pool.max_size, pool_timeout=pool.timeout)

    # --- lifecycle ------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        dsn: str | None = None,
        *,
        data_dir: str | Path | None = None,
        limits: Limits | None = None,
        clock: Clock | None = None,
        max_size: int = 8,
        embeddings: Embeddings | None = None,
        connect_timeout: float = 5.0,
        pool_timeout: float = 5.0,
    ) -> AsyncMemoryStore:
        """Open a store (``dsn``, else ``$MEMORY_GRAPH_DSN``, else embedded); close it after use.

        Args:
            max_size: pooled connections at most (default 8).
            connect_timeout: seconds one connection attempt may take (default 5).
            pool_timeout: seconds a call waits for a connection before it raises
                ``StorageUnavailableError`` (default 5): how long a call blocks while the
                server is down. Connections are checked on checkout, so the first call
                after a server restart succeeds.

        Raises:
            StorageUnavailableError: the server cannot be reached or started.
            ConfigurationError: a pool option is not a positive number.
        """
        opts = PoolOptions(max_size, connect_timeout, pool_timeout)
        # sync: -
        # Starting the embedded server blocks; keep it off the event loop.
        # sync: resolved = resolve_dsn(dsn, data_dir=data_dir)
        resolved = await asyncio.to_thread(resolve_dsn, dsn, data_dir=data_dir)
        pool = await open_async_pool(resolved, opts, **pool_kwargs())
        store = cls(pool, limits=limits, clock=clock, dsn=resolved, embeddings=embeddings)
        store._pool_options = opts
        return store

    @classmethod
    @asynccontextmanager
    async def from_dsn(
        cls,
        dsn: str | None = None,
        *,
        data_dir: str | Path | None = None,
        limits: Limits | None = None,
        clock: Clock | None = None,
        max_size: int = 8,
        embeddings: Embeddings | None = None,
        connect_timeout: float = 5.0,
        pool_timeout: float = 5.0,
    ) -> AsyncIterator[AsyncMemoryStore]:
        """Context manager around :meth:`open` that closes the pool on exit."""
        store = await cls.open(
            dsn,
            data_dir=data_dir,
            limits=limits,
            clock=clock,
            max_size=max_size,
            embeddings=embeddings,
            connect_timeout=connect_timeout,
            pool_timeout=pool_timeout,
        )
        try:
            yield store
        finally:
            await store.close()

    async def close(self) -> None:
        """Close the connection pool."""
        await self._pool.close()

    async def __aenter__(self) -> AsyncMemoryStore:
        """``async with await AsyncMemoryStore.open() as store:`` closes the pool on exit."""
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _run(self, op: Op[T], *, readonly: bool = False) -> T:
        with map_unavailable():
            async with self._pool.connection() as conn:
                return await run_async(conn, op, readonly=readonly)

    async def _read(self, op: Op[T]) -> T:
        return await self._run(op, readonly=True)

    async def setup(self) -> list[int]:
        """Apply pending migrations (idempotent). Returns the versions applied now."""
        return await self._run(setup_op())

    # --- reads ----------------------------------------------------------------------------

    async def get_profile(self, owner: Owner) -> Profile:
        """The user's profile (empty, revision 0, when none)."""
        return await self._read(R.get_profile_op(owner))

    async def get_preferences(
        self, owner: Owner, *, as_of: datetime | None = None
    ) -> list[Preference]:
        """Active, unexpired preferences; shadowed ones are ``overridden``."""
        return await self._read(R.get_preferences_op(owner, as_of=as_of, clock=self._clock))

    async def get_record(self, owner: Owner, record_id: str) -> Record:
        """One visible record. Raises NotFoundError when not visible to ``owner``."""
        return await self._read(R.get_record_op(owner, record_id))

    async def list_records(
        self,
        owner: Owner,
        *,
        kinds: Iterable[Kind] | None = None,
        include_inactive: bool = False,
        as_of: datetime | None = None,
        key: str | None = None,
    ) -> list[Record]:
        """Visible records, active and unexpired unless ``include_inactive``; ``key`` filters."""
        return await self._read(
            R.list_records_op(
                owner,
                kinds=kinds,
                include_inactive=include_inactive,
                as_of=as_of,
                key=key,
                clock=self._clock,
            )
        )

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
        return await self._search(owner, query, limit, kinds, trusts, sensitivities, as_of)

    async def search_confirmed(
        self, owner: Owner, query: str, *, limit: int | None = None, as_of: datetime | None = None
    ) -> list[SearchHit]:
        """Search narrowed server-side to user-confirmed, non-sensitive records."""
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
        if hybrid is not None and self._embeddings is not None and await self._ready():
            args, at = hybrid
            try:  # outside any transaction: a model call never holds a connection
                vector = self._query_vector(await self._embeddings.aembed_query(args.query))
            except Exception as exc:  # any model failure degrades to lexical
                self._embedding_failed(exc)
            else:
                return await self._read(
                    hybrid_search_op(
                        owner,
                        args,
                        as_of=at,
                        query_vector=vector,
                        model=self._model,
                        limits=self._limits,
                        cache=self._recall,
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

    async def _ready(self) -> bool:
        if self._vectors_ready is None:
            self._vectors_ready = await self._read(embeddings_ready_op())
        return self._vectors_ready

    async def enable_embeddings(self) -> None:
        """Create the pgvector extension and the embeddings table (idempotent).

        Call :meth:`setup` first. Embeddings are optional index data outside the migrations.

        Raises:
            ConfigurationError: pgvector is not available (use the embedded server or install
                pgvector), or ``setup()`` has not run.
        """
        with vector_errors():
            await self._run(enable_embeddings_op())
        self._vectors_ready = True

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
        model = self._index_plan(batch_size)
        self._require_vectors(await self._run(embeddings_ready_op()))
        pending = await self._run(pending_embeddings_op(owner, self._model, now=self._clock()))
        vectors: list[list[float]] = []
        for start in range(0, len(pending), batch_size):
            texts = [p.text for p in pending[start : start + batch_size]]
            vectors.extend(await model.aembed_documents(texts))
        return await self._run(write_embeddings_op(owner, self._model, pending, vectors))

    async def audit_log(self, owner: Owner, *, limit: int = 100) -> list[dict[str, Any]]:
        """The newest audit rows visible to ``owner``, newest first."""
        return await self._read(R.audit_log_op(owner, limit=limit))

    # --- thread owners ---------------------------------------------------------------------

    async def claim_thread(self, owner: Owner, thread_id: str) -> bool:
        """Record ``owner`` as the principal of ``thread_id``, or check that it already is.

        Returns ``True`` when the thread was claimed now, ``False`` when ``owner`` already
        owned it.

        Raises:
            ThreadOwnerError: another principal (user, workspace or agent) started the thread.
            ValidationError: ``thread_id`` is not a non-blank string of at most 512 bytes.
        """
        before = await self._read(
            TH.claim_thread_op(owner, thread_id, claim=False, now=self._clock())
        )
        if before:
            return False
        return await self._run(
            TH.claim_thread_op(owner, thread_id, claim=True, now=self._clock())
        )

    async def check_thread(self, owner: Owner, thread_id: str) -> bool:
        """``True`` if ``owner`` started ``thread_id``, ``False`` if nobody has claimed it.

        Raises:
            ThreadOwnerError: another principal started the thread.
        """
        return await self._read(
            TH.claim_thread_op(owner, thread_id, claim=False, now=self._clock())
        )

    async def list_threads(self, owner: Owner) -> list[str]:
        """Every thread id started by ``owner``'s user (any workspace or agent), oldest first."""
        return await self._read(TH.list_threads_op(owner))

    # --- tool evidence ---------------------------------------------------------------------

    async def record_evidence(
        self, owner: Owner, thread_id: str, entries: Sequence[EvidenceEntry], *,
        max_per_thread: int = 200,
    ) -> list[EvidenceEntry]:
        """Index tool results of ``thread_id`` (claimed for ``owner``); no result text is kept.

        Entries past ``max_per_thread`` for the thread, and entries for a message already
        indexed, are left out. Returns the entries stored now.

        Raises:
            ThreadOwnerError: another principal started the thread.
        """
        return await self._run(
            EV.record_evidence_op(
                owner, thread_id, entries, max_per_thread=max_per_thread, now=self._clock()
            )
        )

    async def get_evidence(self, owner: Owner, thread_id: str, ref: str) -> EvidenceEntry:
        """The evidence entry ``ref`` of ``thread_id`` for ``owner``.

        Raises:
            NotFoundError: no such entry for this principal and thread.
            ValidationError: a malformed reference or thread id.
        """
        return await self._read(EV.get_evidence_op(owner, thread_id, ref))

    async def list_evidence(self, owner: Owner, thread_id: str) -> list[EvidenceEntry]:
        """The evidence entries of ``thread_id`` for ``owner``, oldest first."""
        return await self._read(EV.list_evidence_op(owner, thread_id))

    # --- proposals ------------------------------------------------------------------------

    async def propose(
        self,
        owner: Owner,
        operation: Operation,
        args: Mapping[str, Any],
        *,
        level: IdentityLevel | None = None,
        target_id: str | None = None,
        base_version: int | None = None,
        idempotency_key: str | None = None,
        evidence: Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        ttl: timedelta | None = None,
    ) -> Proposal:
        """Create (or replay) a proposal; nothing is written until it is approved.

        A new write (add, set/delete_preference) needs an explicit ``level``; a replace or
        remove lives at its target's level (a different ``level`` is a ``ScopeError``); a
        profile patch is ``user``. ``replayed`` is ``True`` on the returned proposal when the
        same idempotency key and payload were proposed before. Untrusted lifetimes are
        clamped (``Limits.max_lifetime``, ``Limits.max_proposal_ttl``) and a given
        ``confidence`` is dropped: the store sets it.
        """
        return await self._run(
            P.propose_op(
                owner,
                operation,
                args,
                level=level,
                target_id=target_id,
                base_version=base_version,
                idempotency_key=idempotency_key,
                evidence=evidence,
                thread_id=thread_id,
                ttl=ttl,
                clock=self._clock,
                limits=self._limits,
            )
        )

    async def get_proposal(self, owner: Owner, proposal_id: str) -> Proposal:
        """One proposal of ``owner``. Raises NotFoundError otherwise."""
        return await self._read(P.get_proposal_op(owner, proposal_id))

    async def list_pending(self, owner: Owner, *, thread_id: str | None = None) -> list[Proposal]:
        """The inbox: pending, unexpired proposals, oldest first."""
        return await self._read(P.list_pending_op(owner, thread_id=thread_id, clock=self._clock))

    async def list_expired(self, owner: Owner, *, thread_id: str | None = None) -> list[Proposal]:
        """Proposals that expired undecided recently (``Limits.expired_window``), newest first."""
        return await self._read(
            list_expired_op(owner, thread_id=thread_id, clock=self._clock, limits=self._limits)
        )

    async def decide(
        self,
        owner: Owner,
        proposal_id: str,
        decision: DecisionKind,
        *,
        args: Mapping[str, Any] | None = None,
        message: str | None = None,
        actor: str = "human",
    ) -> CommitResult:
        """Approve, edit or reject a proposal; the final status is returned as data."""
        return await self._run(
            P.decide_op(
                owner,
                proposal_id,
                decision,
                args=args,
                message=message,
                actor=actor,
                clock=self._clock,
                limits=self._limits,
            )
        )

    # --- trusted writes -------------------------------------------------------------------

    async def set_preference(
        self,
        owner: Owner,
        key: str,
        value: str,
        *,
        level: IdentityLevel = "user",
        source: str = "api",
        source_event_id: str | None = None,
        expires_at: datetime | None = None,
        updated_at: datetime | None = None,
    ) -> PreferenceResult:
        """Set a preference with seed semantics. Raises StaleWriteError on an older write."""
        return await self._run(
            W.set_preference(
                owner,
                key,
                value,
                level=level,
                source=source,
                source_event_id=source_event_id,
                expires_at=expires_at,
                updated_at=updated_at,
                store=self,
            )
        )

    async def delete_preference(
        self,
        owner: Owner,
        key: str,
        *,
        level: IdentityLevel = "user",
        updated_at: datetime | None = None,
    ) -> PreferenceResult:
        """Delete a preference: DELETED with the previous value, or UNCHANGED (revision 0)."""
        return await self._run(
            W.delete_preference(owner, key, level=level, updated_at=updated_at, store=self)
        )

    async def patch_profile(
        self, owner: Owner, patch: Mapping[str, str | None], *, updated_at: datetime | None = None
    ) -> ProfileResult:
        """Patch named profile fields (``None`` deletes). Raises UnknownFieldError."""
        return await self._run(W.patch_profile(owner, patch, updated_at=updated_at, store=self))

    async def add(
        self,
        owner: Owner,
        kind: Kind,
        content: str,
        *,
        level: IdentityLevel = "user",
        key: str | None = None,
        knowledge: Any = None,
        trust: Trust = "user-confirmed",
        sensitivity: Sensitivity = "private",
        confidence: float | None = None,
        evidence: Mapping[str, Any] | None = None,
        expires_at: datetime | None = None,
    ) -> CommitResult:
        """Add a record (a duplicate raises confidence instead: write_status UNCHANGED)."""
        return await self._run(
            W.add(
                owner,
                kind,
                content,
                level=level,
                key=key,
                knowledge=knowledge,
                trust=trust,
                sensitivity=sensitivity,
                confidence=confidence,
                evidence=evidence,
                expires_at=expires_at,
                store=self,
            )
        )

    async def add_many(
        self,
        owner: Owner,
        items: Sequence[Mapping[str, Any]],
        *,
        level: IdentityLevel = "user",
        skip_refused: bool = False,
    ) -> list[CommitResult]:
        """Bulk trusted load: many ``add`` items of one identity committed in one statement.

        Each item is a mapping of :meth:`add`'s arguments (``kind``, ``content`` and optional
        ``knowledge``, ``key``, ``trust``, ``sensitivity``, ``confidence``, ``evidence``,
        ``expires_at``), validated and guarded exactly as :meth:`add` does. Then, in one
        transaction, duplicates and capacity are read in one statement and every new record,
        its index and its ``create`` audit row are written in one statement. Unlike a loop of
        :meth:`add`, no proposal rows are written (audit rows carry actor ``api``) and a
        duplicate (already active, or earlier in the batch) is ``UNCHANGED`` without raising
        confidence.

        Returns one result per item, in order: ``approved`` with ``CREATED`` or
        ``UNCHANGED``, or, with ``skip_refused``, ``rejected`` (with the guard's message) for
        an item the sensitive-data guard refused.

        Raises:
            ValidationError: an invalid item, or a guard refusal without ``skip_refused``;
                nothing is written.
            LimitExceededError: more items than ``Limits.max_records_per_identity``, or the
                identity's capacity would be exceeded; nothing is written.
        """
        return await self._run(
            add_many_op(
                owner,
                items,
                level=level,
                skip_refused=skip_refused,
                clock=self._clock,
                limits=self._limits,
            )
        )

    async def replace(
        self,
        owner: Owner,
        record_id: str,
        content: str,
        *,
        base_version: int,
        knowledge: Any = None,
        expires_at: datetime | None = None,
    ) -> CommitResult:
        """Compare-and-set replace; ``conflicted`` when the record moved past base_version."""
        return await self._run(
            W.replace(
                owner,
                record_id,
                content,
                base_version=base_version,
                knowledge=knowledge,
                expires_at=expires_at,
                store=self,
            )
        )

    async def remove(self, owner: Owner, record_id: str, *, base_version: int) -> CommitResult:
        """Compare-and-set removal (a status change); ``conflicted`` on a stale base."""
        return await self._run(W.remove(owner, record_id, base_version=base_version, store=self))

    async def reinforce(
        self, owner: Owner, record_id: str, *, source_event_id: str | None = None
    ) -> Record:
        """A repeat mention: raise an active record's confidence without a new row.

        With ``source_event_id`` the same mention raises it once, however often it is retried.
        """
        return await self._run(
            reinforce_op(
                owner,
                record_id,
                source_event_id=source_event_id,
                clock=self._clock,
                limits=self._limits,
            )
        )

    # --- grants ---------------------------------------------------------------------------

    async def create_grant(
        self,
        owner: Owner,
        *,
        expires_at: datetime,
        kinds: Iterable[str],
        operations: Iterable[str],
        max_mutations: int,
        max_bytes: int,
    ) -> Grant:
        """Create a bounded auto-approval grant for exactly ``owner``."""
        return await self._run(
            P.create_grant_op(
                owner,
                expires_at=expires_at,
                kinds=kinds,
                operations=operations,
                max_mutations=max_mutations,
                max_bytes=max_bytes,
                clock=self._clock,
            )
        )

    async def get_grant(self, owner: Owner, grant_id: str) -> Grant:
        """A grant of exactly ``owner``, with its stored usage."""
        return await self._read(P.get_grant_op(owner, grant_id))

    async def decide_with_grant(
        self, owner: Owner, proposal_id: str, grant_id: str
    ) -> CommitResult | None:
        """Approve under a grant if it allows; otherwise ``None`` (the proposal stays pending)."""
        return await self._run(
            P.decide_with_grant_op(
                owner, proposal_id, grant_id, clock=self._clock, limits=self._limits
            )
        )

    # --- projections, interchange, persona ------------------------------------------------

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
        text = self._snapshot_text(task_step, latest_input, goal)
        if text is not None and self._embeddings is not None and await self._ready():
            try:  # outside any transaction: a model call never holds a connection
                vector = self._query_vector(await self._embeddings.aembed_query(text))
            except Exception as exc:  # any model failure degrades to lexical
                self._embedding_failed(exc)
            else:
                return await self._read(
                    hybrid_snapshot_op(
                        owner,
                        query_vector=vector,
                        model=self._model,
                        task_step=task_step,
                        latest_input=latest_input,
                        goal=goal,
                        as_of=as_of,
                        limit=limit,
                        max_bytes=max_bytes,
                        max_tokens=max_tokens,
                        clock=self._clock,
                        limits=self._limits,
                        cache=self._recall,
                    )
                )
        return await self._read(
            S.snapshot_op(
                owner,
                task_step=task_step,
                latest_input=latest_input,
                goal=goal,
                as_of=as_of,
                limit=limit,
                max_bytes=max_bytes,
                max_tokens=max_tokens,
                clock=self._clock,
                limits=self._limits,
                cache=self._recall,
            )
        )

    async def context_block(self, owner: Owner, *, as_of: datetime | None = None) -> str:
        """Assistant values and identity, profile and explicit preferences (plus bootstrap)."""
        return await self._read(V.context_block_op(owner, as_of=as_of, clock=self._clock))

    async def memory_md(self, owner: Owner, *, as_of: datetime | None = None) -> str:
        """``MEMORY.md`` (profile, preferences, records), rebuilt from the database."""
        return await self._read(V.memory_md_op(owner, as_of=as_of, clock=self._clock))

    async def export(self, owner: Owner) -> dict[str, Any]:
        """The versioned JSON export of the owner's visible, active memory."""
        return await self._read(V.export_op(owner, clock=self._clock))

    async def import_document(
        self, owner: Owner, document: Any, *, thread_id: str | None = None
    ) -> list[Proposal]:
        """Validate a whole export document, then create one proposal per entry."""
        return await self._run(
            V.import_document_op(
                owner, document, thread_id=thread_id, clock=self._clock, limits=self._limits
            )
        )

    async def get_persona(self, owner: Owner) -> Persona | None:
        """The assistant persona of ``owner`` (per agent), or ``None``."""
        return await self._read(get_persona_op(owner))

    async def set_persona(
        self,
        owner: Owner,
        *,
        assistant_values: str | None = None,
        assistant_identity: str | None = None,
    ) -> Persona:
        """Set the assistant's values and/or identity (``None`` leaves a field unchanged)."""
        return await self._run(
            set_persona_op(
                owner,
                assistant_values=assistant_values,
                assistant_identity=assistant_identity,
                now=self._clock(),
            )
        )

    async def ensure_bootstrap(self, owner: Owner, text: str) -> bool:
        """Store the one-time onboarding instruction unless one exists. True if stored."""
        return await self._run(ensure_bootstrap_op(owner, text, now=self._clock()))

    async def complete_onboarding(self, owner: Owner) -> Persona:
        """Mark onboarding complete and remove the bootstrap (needs profile and persona)."""
        return await self._run(complete_onboarding_op(owner, now=self._clock()))
