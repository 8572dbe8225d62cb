"""Ops that read stored memory into projections (context block, MEMORY.md, export) and import.

The rendering is pure and lives in :mod:`memory_graph.projections` and
:mod:`memory_graph.interchange`; these ops only gather the owner's data in one snapshot
(one transaction) and hand it over. Import validates the whole document first, then creates
one proposal per entry; nothing is written until each proposal is approved.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .._identity import Owner
from .._time import Clock
from .._types import Limits, Proposal
from ..errors import ValidationError
from ..interchange import build_export, parse_import
from ..projections import render_context_block, render_memory_md
from ..validate import aware, text
from ._driver import Op
from ._ops_persona import get_persona_op
from ._ops_proposals import propose_op
from ._ops_reads import get_preferences_op, get_profile_op, list_records_op

__all__ = ["context_block_op", "export_op", "import_document_op", "memory_md_op"]


def _at(as_of: datetime | None, clock: Clock) -> datetime:
    return clock() if as_of is None else aware(as_of, "as_of")


def context_block_op(owner: Owner, *, as_of: datetime | None, clock: Clock) -> Op[str]:
    """Persona, profile and effective preferences rendered as the user context block."""
    at = _at(as_of, clock)
    persona = yield from get_persona_op(owner)
    profile = yield from get_profile_op(owner)
    prefs = yield from get_preferences_op(owner, as_of=at, clock=clock)
    return render_context_block(persona, profile, prefs, as_of=at)


def memory_md_op(owner: Owner, *, as_of: datetime | None, clock: Clock) -> Op[str]:
    """``MEMORY.md``: a projection of active preferences, rebuilt from the database."""
    now = clock()
    at = now if as_of is None else aware(as_of, "as_of")
    prefs = yield from get_preferences_op(owner, as_of=at, clock=clock)
    return render_memory_md(prefs, generated_at=now, as_of=at)


def export_op(owner: Owner, *, clock: Clock) -> Op[dict[str, Any]]:
    """The versioned JSON export of what the owner can see (active data only)."""
    now = clock()
    profile = yield from get_profile_op(owner)
    prefs = yield from get_preferences_op(owner, as_of=now, clock=clock)
    records = yield from list_records_op(owner, as_of=now, clock=clock)
    return build_export(profile, prefs, records, exported_at=now)


def import_document_op(
    owner: Owner, document: Any, *, thread_id: str | None, clock: Clock, limits: Limits
) -> Op[list[Proposal]]:
    """Validate ``document`` whole, then propose one write per entry (all or nothing)."""
    if thread_id is not None:
        thread_id = text("thread_id", thread_id, max_bytes=512)
    items = parse_import(document, limits=limits)
    out: list[Proposal] = []
    for i, item in enumerate(items):
        try:
            p = yield from propose_op(
                owner,
                item.operation,
                item.args,
                level=item.level,
                evidence=item.evidence,
                thread_id=thread_id,
                clock=clock,
                limits=limits,
            )
        except ValidationError as exc:
            # The transaction rolls back: no proposal of this import survives.
            raise type(exc)(f"import entry {i} ({item.operation}): {exc}") from exc
        out.append(p)
    return out
