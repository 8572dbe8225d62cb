"""The async store's proposals, decisions, grants and document import.

Mixed into :class:`~memory_graph.AsyncMemoryStore`. ``decide`` is the only commit path of an
untrusted write (``storage/ops/proposals.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ...identity import IdentityLevel, Owner
from ...types import CommitResult, DecisionKind, Grant, Operation, Proposal
from ...validate import owner as check_owner
from ..ops import grants as G
from ..ops import proposals as P
from ..ops import views as V
from ..ops.rejections import list_expired_op
from .base_async import AsyncStoreShell

__all__ = ["AsyncProposalMethods"]


class AsyncProposalMethods(AsyncStoreShell):
    """Propose, inspect and decide writes; bounded auto-approval grants."""

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
        check_owner(owner)
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
        check_owner(owner)
        return await self._read(P.get_proposal_op(owner, proposal_id))

    async def list_pending(self, owner: Owner, *, thread_id: str | None = None) -> list[Proposal]:
        """The inbox: pending, unexpired proposals, oldest first."""
        check_owner(owner)
        return await self._read(P.list_pending_op(owner, thread_id=thread_id, clock=self._clock))

    async def list_expired(self, owner: Owner, *, thread_id: str | None = None) -> list[Proposal]:
        """Proposals that expired undecided recently (``Limits.expired_window``), newest first."""
        check_owner(owner)
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
        """Approve, edit or reject a proposal; the final status is returned as data.

        With hybrid recall configured and enabled, an approved write is embedded right
        after its commit, outside the transaction (a model failure is logged; the commit
        stands and :meth:`index_embeddings` catches up).
        """
        check_owner(owner)
        result = await self._run(
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
        await self._embed_committed(owner, result)
        return result

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
        check_owner(owner)
        return await self._run(
            G.create_grant_op(
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
        check_owner(owner)
        return await self._read(G.get_grant_op(owner, grant_id))

    async def decide_with_grant(
        self, owner: Owner, proposal_id: str, grant_id: str
    ) -> CommitResult | None:
        """Approve under a grant if it allows; otherwise ``None`` (the proposal stays pending).

        An approved write is embedded after the commit, as in :meth:`decide`.
        """
        check_owner(owner)
        result = await self._run(
            G.decide_with_grant_op(
                owner, proposal_id, grant_id, clock=self._clock, limits=self._limits
            )
        )
        await self._embed_committed(owner, result)
        return result

    async def import_document(
        self, owner: Owner, document: Any, *, thread_id: str | None = None
    ) -> list[Proposal]:
        """Validate a whole export document, then create one proposal per entry."""
        check_owner(owner)
        return await self._run(
            V.import_document_op(
                owner, document, thread_id=thread_id, clock=self._clock, limits=self._limits
            )
        )
