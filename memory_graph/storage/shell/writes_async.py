"""The async store's trusted writes and persona writes.

Mixed into :class:`~memory_graph.AsyncMemoryStore`. A trusted write is a proposal approved by
actor ``api`` in the same transaction (``storage/ops/writes.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...identity import IdentityLevel, Owner
from ...types import (
    CommitResult,
    Kind,
    Persona,
    PreferenceResult,
    ProfileResult,
    Record,
    Sensitivity,
    Trust,
)
from ...validate import owner as check_owner
from ..ops import writes as W
from ..ops.bulk import add_many_op
from ..ops.persona import complete_onboarding_op, ensure_bootstrap_op, set_persona_op
from ..ops.records import reinforce_op
from .base_async import AsyncStoreShell

__all__ = ["AsyncWriteMethods"]


class AsyncWriteMethods(AsyncStoreShell):
    """Writes the application trusts (no review), and the assistant persona."""

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
        check_owner(owner)
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
            ),
            autocommit=True,  # optimistic: read, then one gated statement (see the op)
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
        check_owner(owner)
        return await self._run(
            W.delete_preference(owner, key, level=level, updated_at=updated_at, store=self)
        )

    async def patch_profile(
        self, owner: Owner, patch: Mapping[str, str | None], *, updated_at: datetime | None = None
    ) -> ProfileResult:
        """Patch named profile fields (``None`` deletes). Raises UnknownFieldError."""
        check_owner(owner)
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
        check_owner(owner)
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
        check_owner(owner)
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
        check_owner(owner)
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
        check_owner(owner)
        return await self._run(W.remove(owner, record_id, base_version=base_version, store=self))

    async def reinforce(
        self, owner: Owner, record_id: str, *, source_event_id: str | None = None
    ) -> Record:
        """A repeat mention: raise an active record's confidence without a new row.

        With ``source_event_id`` the same mention raises it once, however often it is retried.
        """
        check_owner(owner)
        return await self._run(
            reinforce_op(
                owner,
                record_id,
                source_event_id=source_event_id,
                clock=self._clock,
                limits=self._limits,
            )
        )

    async def set_persona(
        self,
        owner: Owner,
        *,
        assistant_values: str | None = None,
        assistant_identity: str | None = None,
    ) -> Persona:
        """Set the assistant's values and/or identity (``None`` leaves a field unchanged)."""
        check_owner(owner)
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
        check_owner(owner)
        return await self._run(ensure_bootstrap_op(owner, text, now=self._clock()))

    async def complete_onboarding(self, owner: Owner) -> Persona:
        """Mark onboarding complete and remove the bootstrap (needs profile and persona)."""
        check_owner(owner)
        return await self._run(complete_onboarding_op(owner, now=self._clock()))
