"""The async store's thread owners and tool evidence.

Mixed into :class:`~memory_graph.AsyncMemoryStore`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...evidence import EvidenceEntry
from ...identity import Owner
from ...validate import owner as check_owner
from ..ops import evidence as EV
from ..ops import threads as TH
from .base_async import AsyncStoreShell

__all__ = ["AsyncThreadMethods"]


class AsyncThreadMethods(AsyncStoreShell):
    """Which principal started a thread, and the tool evidence indexed for it."""

    async def claim_thread(
        self, owner: Owner, thread_id: str, *, space: str = TH.DATABASE_SPACE
    ) -> bool:
        """Record ``owner`` as the principal of ``thread_id``, or check that it already is.

        Args:
            owner: the principal.
            thread_id: the LangGraph thread id.
            space: the claim space of the checkpointer holding the thread (``""``: any
                persistent checkpointer, the default; see ``memory_graph.storage.ops.threads``).

        Returns ``True`` when the thread was claimed now, ``False`` when ``owner`` already
        owned it.

        Raises:
            ThreadOwnerError: another principal (user, workspace or agent) started the thread.
            ValidationError: ``thread_id`` is not a non-blank string of at most 512 bytes.
        """
        check_owner(owner)
        before = await self._read(
            TH.claim_thread_op(owner, thread_id, claim=False, now=self._clock(), space=space)
        )
        if before:
            return False
        return await self._run(
            TH.claim_thread_op(owner, thread_id, claim=True, now=self._clock(), space=space)
        )

    async def check_thread(
        self, owner: Owner, thread_id: str, *, space: str = TH.DATABASE_SPACE
    ) -> bool:
        """``True`` if ``owner`` started ``thread_id``, ``False`` if nobody has claimed it.

        Raises:
            ThreadOwnerError: another principal started the thread.
        """
        check_owner(owner)
        return await self._read(
            TH.claim_thread_op(owner, thread_id, claim=False, now=self._clock(), space=space)
        )

    async def _own_thread(
        self, owner: Owner, thread_id: str, space: str = TH.DATABASE_SPACE
    ) -> bool:
        """Claim ``thread_id`` for ``owner`` or check that it is ``owner``'s: one round trip.

        The memory agent's owner check. The claim is one statement (insert unless claimed,
        then the row that is there), run in autocommit mode, so a new and a known thread
        both cost one round trip.

        Raises:
            ThreadOwnerError: another principal (user, workspace or agent) started the thread.
            ValidationError: ``thread_id`` is not a non-blank string of at most 512 bytes.
        """
        return await self._read(
            TH.claim_thread_op(owner, thread_id, claim=True, now=self._clock(), space=space)
        )

    async def _thread_claimed(self, thread_id: str, space: str = TH.DATABASE_SPACE) -> bool:
        """Whether anyone has claimed ``thread_id`` in ``space`` (a run without an owner)."""
        return await self._read(TH.thread_claimed_op(thread_id, space=space))

    async def list_threads(self, owner: Owner) -> list[str]:
        """The thread ids started by ``owner``'s visible identities, oldest first.

        The user level and, when ``owner`` has them, its workspace and agent (the identities
        every read sees); threads of another workspace or agent of the same user are not
        listed.
        """
        check_owner(owner)
        return await self._read(TH.list_threads_op(owner))

    # --- tool evidence ---------------------------------------------------------------------

    async def record_evidence(
        self,
        owner: Owner,
        thread_id: str,
        entries: Sequence[EvidenceEntry],
        *,
        max_per_thread: int = 200,
    ) -> list[EvidenceEntry]:
        """Index tool results of ``thread_id`` (claimed for ``owner``); no result text is kept.

        Entries past ``max_per_thread`` for the thread, and entries for a message already
        indexed, are left out. Returns the entries stored now.

        Raises:
            ThreadOwnerError: another principal started the thread.
        """
        check_owner(owner)
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
        check_owner(owner)
        return await self._read(EV.get_evidence_op(owner, thread_id, ref))

    async def list_evidence(self, owner: Owner, thread_id: str) -> list[EvidenceEntry]:
        """The evidence entries of ``thread_id`` for ``owner``, oldest first."""
        check_owner(owner)
        return await self._read(EV.list_evidence_op(owner, thread_id))
