"""Row <-> dataclass mapping, the identity filter, and JSON helpers for audit rows. No I/O."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

import orjson
from psycopg.types.json import Jsonb

from ...identity import Identity, IdentityLevel, Owner
from ...time import format_utc
from ...types import (
    Claim,
    CommitResult,
    Grant,
    Knowledge,
    Preference,
    Profile,
    Proposal,
    Provenance,
    Record,
)

__all__ = [
    "RECORD_COLS",
    "commit_result_from_json",
    "commit_result_to_json",
    "dump_json",
    "grant_from_row",
    "identity_from_row",
    "jsonable",
    "jsonb",
    "knowledge_from_json",
    "load_json",
    "preference_from_row",
    "profile_from_row",
    "proposal_from_row",
    "record_from_row",
    "visible",
]

RECORD_COLS = (
    "scope_id, id::text AS id, level, agent_key, workspace_key, kind, key, content, trust, "
    "sensitivity, confidence, source, source_event_id, observed_at, quote, thread_id, uri, "
    "knowledge, claim_key, claim_value, expires_at, supersedes::text AS supersedes, status, "
    "version, content_hash, tokens, created_at, updated_at, recorded_at"
)
"""The columns every record read selects (ids as text)."""


def visible(owner: Owner, alias: str = "") -> tuple[str, list[Any]]:
    """SQL condition restricting rows to the owner's visible identities, and its params.

    Every read and write by id goes through this, so another user's, workspace's or agent's
    row is never returned, counted or touched.
    """
    p = f"{alias}." if alias else ""
    pairs = [(i.agent_key, i.workspace_key) for i in owner.identities()]
    placeholders = ", ".join("(%s, %s)" for _ in pairs)
    params: list[Any] = [owner.scope_id]
    for a, w in pairs:
        params += [a, w]
    return f"{p}scope_id = %s AND ({p}agent_key, {p}workspace_key) IN ({placeholders})", params


def identity_from_row(row: Mapping[str, Any]) -> Identity:
    """The identity a row belongs to."""
    return Identity(
        scope_id=row["scope_id"],
        level=cast(IdentityLevel, row["level"]),
        agent_key=row["agent_key"],
        workspace_key=row["workspace_key"],
    )


def knowledge_from_json(raw: Any) -> Knowledge | None:
    """Knowledge from its stored JSON (``None`` when absent)."""
    if not raw:
        return None
    cl = raw.get("claim")
    return Knowledge(
        applies_when=tuple(raw.get("applies_when") or ()),
        counterexamples=tuple(raw.get("counterexamples") or ()),
        claim=Claim(cl["key"], cl["value"]) if cl else None,
    )


def record_from_row(row: Mapping[str, Any]) -> Record:
    """A :class:`Record` from a row selected with :data:`RECORD_COLS`."""
    return Record(
        id=str(row["id"]),
        identity=identity_from_row(row),
        kind=row["kind"],
        content=row["content"],
        key=row["key"],
        trust=row["trust"],
        sensitivity=row["sensitivity"],
        confidence=float(row["confidence"]),
        provenance=Provenance(
            source=row["source"],
            source_event_id=row["source_event_id"],
            observed_at=row["observed_at"],
            quote=row["quote"],
            thread_id=row["thread_id"],
            uri=row["uri"],
        ),
        knowledge=knowledge_from_json(row["knowledge"]),
        expires_at=row["expires_at"],
        supersedes=row["supersedes"],
        status=row["status"],
        version=int(row["version"]),
        content_hash=row["content_hash"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        recorded_at=row["recorded_at"],
    )


def preference_from_row(row: Mapping[str, Any], *, overridden: bool = False) -> Preference:
    """A :class:`Preference` from a keyed preference record row."""
    return Preference(
        identity=identity_from_row(row),
        key=row["key"],
        value=row["content"],
        source=row["source"],
        source_event_id=row["source_event_id"],
        expires_at=row["expires_at"],
        updated_at=row["updated_at"],
        revision=int(row["version"]),
        overridden=overridden,
    )


def profile_from_row(row: Mapping[str, Any] | None) -> Profile:
    """The profile (empty, revision 0, when there is no row)."""
    if row is None:
        return Profile(fields={}, revision=0, updated_at=None)
    return Profile(
        fields=dict(sorted(row["fields"].items())),
        revision=int(row["revision"]),
        updated_at=row["updated_at"],
    )


def commit_result_to_json(r: CommitResult) -> dict[str, Any]:
    """Plain-JSON form of a commit result (what the proposal row stores)."""
    return {
        "proposal_id": r.proposal_id,
        "status": r.status,
        "operation": r.operation,
        "write_status": r.write_status,
        "record_id": r.record_id,
        "version": r.version,
        "message": r.message,
        "details": r.details,
    }


def commit_result_from_json(raw: Mapping[str, Any]) -> CommitResult:
    """The stored commit result of a decided proposal."""
    return CommitResult(
        proposal_id=raw["proposal_id"],
        status=raw["status"],
        operation=raw["operation"],
        write_status=raw.get("write_status"),
        record_id=raw.get("record_id"),
        version=raw.get("version"),
        message=raw.get("message") or "",
        details=dict(raw.get("details") or {}),
    )


def proposal_from_row(row: Mapping[str, Any]) -> Proposal:
    """A :class:`Proposal` from an ``mg_proposals`` row."""
    return Proposal(
        id=row["id"],
        scope_id=row["scope_id"],
        level=row["level"],
        operation=row["operation"],
        target_id=row["target_id"],
        base_version=row["base_version"],
        args=row["args"],
        diff=row["diff"],
        evidence=row["evidence"],
        guard=row["guard"],
        status=row["status"],
        idempotency_key=row["idempotency_key"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        decided_at=row["decided_at"],
        result=row["result"],
        actor=row["actor"],
        thread_id=row.get("thread_id"),
    )


def grant_from_row(row: Mapping[str, Any]) -> Grant:
    """A :class:`Grant` from an ``mg_grants`` row."""
    return Grant(
        id=row["id"],
        scope_id=row["scope_id"],
        agent_key=row["agent_key"],
        workspace_key=row["workspace_key"],
        expires_at=row["expires_at"],
        kinds=tuple(row["kinds"]),
        operations=tuple(row["operations"]),
        max_mutations=int(row["max_mutations"]),
        max_bytes=int(row["max_bytes"]),
        used_mutations=int(row["used_mutations"]),
        used_bytes=int(row["used_bytes"]),
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
    )


_PLAIN = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """Convert a row (or any value from one) to plain JSON for the audit log."""
    kind = type(value)
    if kind in _PLAIN:  # the common case first: an ABC check per value costs on every commit
        return value
    if kind is dict:
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return format_utc(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_utc(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dump_json(obj: Any) -> bytes:
    """The JSON text of a ``jsonb`` parameter (the store's connections use it for every
    ``Jsonb``; :func:`jsonb` names it, so a value is written the same on a pool of the
    application's).

    ``orjson`` writes it (a commit sends several, 10x faster than ``json.dumps``), and
    converts on the way what :func:`jsonable` converts, so the store's writes pass rows and
    audit values as they are: a datetime as :func:`format_utc` writes it (UTC, ``Z``), a
    UUID as its string, a mapping as an object. What ``orjson`` refuses (keys that are not
    strings, integers beyond 64 bits, lone surrogates) goes through ``json.dumps`` with the
    same conversions and meets the same outcome as before. The store validates every float
    it stores as finite."""
    try:
        return orjson.dumps(obj, default=_json_default, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(obj, default=_json_default).encode()


_LONG_NUMBER = re.compile(rb"[0-9]{19}")


def load_json(data: bytes | bytearray | memoryview) -> Any:
    """The value of a ``json``/``jsonb`` column: ``orjson`` (a proposal row carries five
    documents, 4x faster to read than with ``json.loads``), or ``json.loads`` where the two
    could differ: a number of 19 digits or more (``orjson`` turns an integer beyond 64 bits
    into a float) and what ``orjson`` refuses (a lone surrogate escape, a float beyond
    range), so every value reads back exactly as before."""
    if _LONG_NUMBER.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(bytes(data))


def jsonb(obj: Any) -> Jsonb:
    """``Jsonb(obj)`` dumped by :func:`dump_json` on any connection: ``obj`` may hold
    datetimes, UUIDs and mappings, written as :func:`jsonable` writes them."""
    return Jsonb(obj, dump_json)
