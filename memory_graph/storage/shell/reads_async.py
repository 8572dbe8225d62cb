"""The async store's plain reads: profile, preferences, records, audit log and projections.

Mixed into :class:`~memory_graph.AsyncMemoryStore`; each method runs one read op.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ...identity import Owner
from ...types import Kind, Persona, Preference, Profile, Record
from ...validate import owner as check_owner
from ..ops import reads as R
from ..ops import views as V
from ..ops.persona import get_persona_op
from .base_async import AsyncStoreShell

__all__ = ["AsyncReadMethods"]


class AsyncReadMethods(AsyncStoreShell):
    """Reads of the owner's stored memory and its renderings."""

    async def get_profile(self, owner: Owner) -> Profile:
        """The user's profile (empty, revision 0, when none)."""
        check_owner(owner)
        return await self._read(R.get_profile_op(owner))

    async def get_preferences(
        self, owner: Owner, *, as_of: datetime | None = None
    ) -> list[Preference]:
        """Active, unexpired preferences; shadowed ones are ``overridden``."""
        check_owner(owner)
        return await self._read(R.get_preferences_op(owner, as_of=as_of, clock=self._clock))

    async def get_record(self, owner: Owner, record_id: str) -> Record:
        """One visible record (``record_id`` a string or a UUID). Raises NotFoundError when
        not visible to ``owner``, ValidationError when ``record_id`` is neither."""
        check_owner(owner)
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
        check_owner(owner)
        return await self._read(
            R.list_records_op(
                owner,
                kinds=kinds,
                include_inactive=include_inactive,
                as_of=as_of,
                key=key,
                clock=self._clock,
                cache=self._recall,
            )
        )

    async def audit_log(self, owner: Owner, *, limit: int = 100) -> list[dict[str, Any]]:
        """The newest audit rows visible to ``owner``, newest first."""
        check_owner(owner)
        return await self._read(R.audit_log_op(owner, limit=limit))

    async def context_block(self, owner: Owner, *, as_of: datetime | None = None) -> str:
        """Assistant values and identity, profile and explicit preferences (plus bootstrap)."""
        check_owner(owner)
        return await self._read(V.context_block_op(owner, as_of=as_of, clock=self._clock))

    async def memory_md(self, owner: Owner, *, as_of: datetime | None = None) -> str:
        """``MEMORY.md`` (profile, preferences, records), rebuilt from the database."""
        check_owner(owner)
        return await self._read(V.memory_md_op(owner, as_of=as_of, clock=self._clock))

    async def export(self, owner: Owner) -> dict[str, Any]:
        """The versioned JSON export of the owner's visible, active memory."""
        check_owner(owner)
        return await self._read(V.export_op(owner, clock=self._clock))

    async def get_persona(self, owner: Owner) -> Persona | None:
        """The assistant persona of ``owner`` (per agent), or ``None``."""
        check_owner(owner)
        return await self._read(get_persona_op(owner))
