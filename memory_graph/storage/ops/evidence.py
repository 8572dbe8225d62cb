"""Tool evidence entries (issue 13): index, read back, list. No result text is stored.

Entries are bound to the principal (user scope, workspace, agent) and the thread: recording
claims the thread for the principal (or checks that it already owns it), and a read names the
reference *and* the thread, so a reference from another owner or thread reads as not found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...errors import NotFoundError, ValidationError
from ...evidence import EvidenceEntry, FileIdentity, valid_entry, valid_reference
from ...identity import Owner
from ...validate import bounded_int
from ..driver import Op, Query
from .threads import claim_thread_op, owns_thread_op, thread_id

__all__ = ["get_evidence_op", "list_evidence_op", "record_evidence_op"]

_COLS = (
    "ref, thread_id, message_id, position, step, tool_name, call_id, args_digest, "
    "result_digest, size, arg_summary, file_path, file_size, file_mtime_ns, file_digest"
)


def _entry(row: Mapping[str, Any]) -> EvidenceEntry:
    file = None
    if row["file_path"] is not None:
        file = FileIdentity(
            row["file_path"], row["file_size"], row["file_mtime_ns"], row["file_digest"]
        )
    return EvidenceEntry(
        ref=row["ref"],
        thread_id=row["thread_id"],
        message_id=row["message_id"],
        position=row["position"],
        step=row["step"],
        tool_name=row["tool_name"],
        call_id=row["call_id"],
        args_digest=row["args_digest"],
        result_digest=row["result_digest"],
        size=row["size"],
        arg_summary=row["arg_summary"],
        file=file,
    )


def _mine(owner: Owner) -> tuple[str, str, str]:
    return (owner.scope_id, owner.agent_key, owner.workspace_key)


def record_evidence_op(
    owner: Owner,
    thread: str,
    entries: Sequence[EvidenceEntry],
    *,
    max_per_thread: int,
    now: datetime,
) -> Op[list[EvidenceEntry]]:
    """Store entries of ``thread`` (claimed for ``owner``), at most ``max_per_thread`` in all.

    An entry for a message already indexed is skipped (a re-run step indexes nothing twice).

    Returns:
        The entries stored now (entries past the cap are left out).
    """
    tid = thread_id(thread)
    bounded_int("max_per_thread", max_per_thread)
    if not isinstance(entries, (list, tuple)):
        raise ValidationError("entries must be a list of EvidenceEntry")
    for e in entries:
        valid_entry(e)  # every field, and the guard over its stored texts, before any query
    if not (yield from owns_thread_op(owner, tid)):  # the run claimed it in its saver's space
        yield from claim_thread_op(owner, tid, claim=True, now=now)
    if not entries:
        return []
    scope, agent, ws = _mine(owner)
    yield Query(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", (f"{scope}/{tid}",), "none"
    )
    row = yield Query(
        "SELECT count(*) AS n FROM mg_evidence WHERE scope_id = %s AND thread_id = %s",
        (scope, tid),
        "one",
    )
    room = max(0, max_per_thread - int(row["n"]))
    keep = list(entries)[:room]
    if not keep:
        return []
    values = []
    params: list[Any] = []
    for e in keep:
        f = e.file
        values.append("(" + ", ".join(["%s"] * 19) + ")")
        params.extend(
            [
                scope,
                e.ref,
                agent,
                ws,
                tid,
                e.message_id,
                e.position,
                e.step,
                e.tool_name,
                e.call_id,
                e.args_digest,
                e.result_digest,
                e.size,
                e.arg_summary,
                f.path if f else None,
                f.size if f else None,
                f.mtime_ns if f else None,
                f.digest if f else None,
                now,
            ]
        )
    rows = yield Query(
        "INSERT INTO mg_evidence (scope_id, ref, agent_key, workspace_key, thread_id, "
        "message_id, position, step, tool_name, call_id, args_digest, result_digest, size, "
        "arg_summary, file_path, file_size, file_mtime_ns, file_digest, created_at) VALUES "
        + ", ".join(values)
        + " "
        "ON CONFLICT DO NOTHING RETURNING " + _COLS,
        params,
    )
    return [_entry(r) for r in rows]


def get_evidence_op(owner: Owner, thread: str, ref: Any) -> Op[EvidenceEntry]:
    """The entry ``ref`` of ``thread`` for ``owner``.

    Raises:
        ValidationError: a malformed reference or thread id.
        NotFoundError: no such entry for this principal and thread (a forged reference, or one
            of another owner or thread: the message does not say which).
    """
    tid = thread_id(thread)
    valid_reference(ref)
    scope, agent, ws = _mine(owner)
    row = yield Query(
        f"SELECT {_COLS} FROM mg_evidence WHERE scope_id = %s AND ref = %s AND thread_id = %s "
        "AND agent_key = %s AND workspace_key = %s",
        (scope, ref, tid, agent, ws),
        "one",
    )
    if row is None:
        raise NotFoundError(f"no evidence {ref} in this thread")
    return _entry(row)


def list_evidence_op(owner: Owner, thread: str) -> Op[list[EvidenceEntry]]:
    """The entries of ``thread`` for ``owner``, oldest first."""
    tid = thread_id(thread)
    scope, agent, ws = _mine(owner)
    rows = yield Query(
        f"SELECT {_COLS} FROM mg_evidence WHERE scope_id = %s AND thread_id = %s "
        "AND agent_key = %s AND workspace_key = %s ORDER BY position, ref",
        (scope, tid, agent, ws),
    )
    return [_entry(r) for r in rows]
