"""Ops that read stored memory into projections (context block, MEMORY.md, export) and import.

The rendering is pure and lives in :mod:`memory_graph.projections` and
:mod:`memory_graph.interchange`; these ops only gather the owner's data in one snapshot
(one transaction) and hand it over. Import validates the whole document first, then creates
one proposal per entry; nothing is written until each proposal is approved.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...errors import ValidationError
from ...identity import Owner
from ...interchange import build_export, parse_import
from ...projections import render_context_block, render_memory_md
from ...time import Clock
from ...types import Limits, Proposal
from ...validate import aware, text
from ..driver import Op, Query
from .persona import persona_from_row, persona_sql
from .proposals import propose_op
from .reads import (
    get_preferences_op,
    get_profile_op,
    list_records_op,
    preferences_from_rows,
    preferences_sql,
)
from .rows import profile_from_row

__all__ = ["context_block_op", "export_op", "import_document_op", "memory_md_op"]


def _at(as_of: datetime | None, clock: Clock) -> datetime:
    return clock() if as_of is None else aware(as_of, "as_of")


# context_block reads persona, profile and preferences in one statement: one typed row set,
# tagged by ``part``, with the columns each part needs (NULL elsewhere).
_PERSONA_PART = (
    "SELECT 'persona' AS part, assistant_values, assistant_identity, bootstrap, onboarded_at, "
    "revision, updated_at, NULL::jsonb AS fields, NULL::text AS scope_id, NULL::text AS level, "
    "NULL::text AS agent_key, NULL::text AS workspace_key, NULL::text AS key, "
    "NULL::text AS content, NULL::text AS source, NULL::text AS source_event_id, "
    "NULL::timestamptz AS expires_at, NULL::integer AS version FROM ({persona}) persona"
)
_PROFILE_PART = (
    "SELECT 'profile', NULL, NULL, NULL, NULL, revision, updated_at, fields, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM mg_profiles WHERE scope_id = %s"
)
_PREF_COLS = (
    "'pref', NULL, NULL, NULL, NULL, NULL, updated_at, NULL, scope_id, level, agent_key, "
    "workspace_key, key, content, source, source_event_id, expires_at, version"
)


def context_block_op(owner: Owner, *, as_of: datetime | None, clock: Clock) -> Op[str]:
    """Persona, profile and effective preferences rendered as the user context block."""
    at = _at(as_of, clock)
    persona_q, persona_params = persona_sql(owner)
    prefs_q, prefs_params = preferences_sql(owner, at, _PREF_COLS)
    rows = yield Query(
        f"{_PERSONA_PART.format(persona=persona_q)} UNION ALL {_PROFILE_PART} UNION ALL {prefs_q}",
        [*persona_params, owner.scope_id, *prefs_params],
    )
    persona = next((persona_from_row(r) for r in rows if r["part"] == "persona"), None)
    profile = profile_from_row(next((r for r in rows if r["part"] == "profile"), None))
    prefs = preferences_from_rows(r for r in rows if r["part"] == "pref")
    return render_context_block(persona, profile, prefs, as_of=at)


def memory_md_op(owner: Owner, *, as_of: datetime | None, clock: Clock) -> Op[str]:
    """``MEMORY.md``: profile, active preferences and records, rebuilt from the database."""
    now = clock()
    at = now if as_of is None else aware(as_of, "as_of")
    profile = yield from get_profile_op(owner)
    prefs = yield from get_preferences_op(owner, as_of=at, clock=clock)
    records = yield from list_records_op(
        owner, kinds=("fact", "instruction", "experience"), as_of=at, clock=clock
    )
    return render_memory_md(prefs, generated_at=now, as_of=at, profile=profile, records=records)


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
