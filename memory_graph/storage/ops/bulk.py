"""The bulk trusted load: many records of one identity committed in one statement.

``add_many`` is the bulk twin of ``add`` for loaders (imports, evaluation suites, seeding):
every item is validated and guarded exactly as ``add`` would, then, in one transaction, the
identity's ``records`` lock is taken, the duplicates and the capacity are read in one
statement, and every new record (with its index tokens in ``mg_records.tokens``) and its
``create`` audit row are written in one statement.

Differences from calling ``add`` in a loop, all documented on the store method: no proposal
rows are written (the audit rows carry actor ``api`` and no proposal id), and a duplicate
(same content hash and knowledge, already active or earlier in the batch) is ``UNCHANGED``
without raising confidence. A guard refusal either aborts the whole call (nothing written)
or, with ``skip_refused``, is reported as a ``rejected`` result in its position.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from psycopg.types.json import Jsonb

from ... import validate as v
from ...errors import LimitExceededError, ValidationError
from ...identity import IdentityLevel, Owner
from ...time import Clock, format_utc
from ...types import CommitResult, Limits
from ..driver import Op, Query
from .commit import CommitContext, active_count_sql, audit_row, exact_count_sql, lock
from .propose import guard_args
from .records import content_hash, record_tokens
from .rows import jsonable

__all__ = ["BULK_ITEM_FIELDS", "add_many_op"]

BULK_ITEM_FIELDS = frozenset(
    {"kind", "content", "knowledge", "key", "trust", "sensitivity", "confidence", "evidence"}
    | {"expires_at"}
)
"""The keys an ``add_many`` item may carry: ``add``'s parameters."""

_COLS = (
    "scope_id, id, level, agent_key, workspace_key, kind, key, content, trust, sensitivity, "
    "confidence, source, source_event_id, observed_at, quote, thread_id, uri, knowledge, "
    "claim_key, claim_value, expires_at, content_hash, tokens, created_at, updated_at"
)
_TYPES = (
    "text[], uuid[], text[], text[], text[], text[], text[], text[], text[], text[], float8[], "
    "text[], text[], timestamptz[], text[], text[], text[], jsonb[], text[], text[], "
    "timestamptz[], text[], text[], timestamptz[], timestamptz[]"
)


class _Item:
    __slots__ = ("args", "dedup", "evidence", "hash", "knowledge")

    def __init__(self, args: dict[str, Any], evidence: dict[str, Any]) -> None:
        self.args = args
        self.evidence = evidence
        self.knowledge = args.get("knowledge")
        self.hash = content_hash(args["content"])
        self.dedup = (self.hash, repr(jsonable(self.knowledge)))


def _validate_item(raw: Any, limits: Limits) -> _Item:
    if not isinstance(raw, Mapping):
        raise ValidationError("each add_many item must be an object (a mapping)")
    extra = sorted(str(k) for k in set(raw) - BULK_ITEM_FIELDS)
    if extra:
        raise ValidationError(
            f"add_many item has unknown fields {extra}: allowed are "
            f"{', '.join(sorted(BULK_ITEM_FIELDS))}"
        )
    plain = {k: raw[k] for k in raw if k not in ("evidence", "expires_at")}
    plain.setdefault("trust", "user-confirmed")
    plain.setdefault("sensitivity", "private")
    args = v.operation_args("add", plain, limits)
    if raw.get("expires_at") is not None:
        args["expires_at"] = v.aware(raw["expires_at"], "expires_at")
    return _Item(args, v.evidence(raw.get("evidence")))


def add_many_op(
    owner: Owner,
    items: Sequence[Mapping[str, Any]],
    *,
    level: IdentityLevel,
    skip_refused: bool,
    clock: Clock,
    limits: Limits,
) -> Op[list[CommitResult]]:
    """Validate, guard and commit many ``add`` items of one identity (see the module doc).

    Raises:
        ValidationError: an invalid item (nothing is written), or a guard refusal without
            ``skip_refused``.
        LimitExceededError: more items than ``limits.max_records_per_identity``, or the new
            records would exceed the identity's capacity (nothing is written).
    """
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise ValidationError("items must be a list of add arguments (mappings)")
    if len(items) > limits.max_records_per_identity:
        raise LimitExceededError(
            f"add_many got {len(items)} items, more than max_records_per_identity "
            f"({limits.max_records_per_identity}): split the load"
        )
    if not isinstance(skip_refused, bool):
        raise ValidationError("skip_refused must be a bool")
    ident = owner.identity(v.identity_level(level))
    results: list[CommitResult | None] = [None] * len(items)
    accepted: list[tuple[int, _Item]] = []
    for pos, raw in enumerate(items):
        item = _validate_item(raw, limits)
        try:
            guard_args("add", item.args, item.evidence)
        except ValidationError as exc:
            if not skip_refused:
                raise ValidationError(f"item {pos}: {exc}") from None
            results[pos] = CommitResult("", "rejected", "add", message=str(exc))
            continue
        accepted.append((pos, item))
    if not accepted:
        return [r for r in results if r is not None]
    yield from lock("records", ident.scope_id, ident.agent_key, ident.workspace_key)
    now = clock()
    for _pos, item in accepted:
        trust = item.args["trust"]
        ctx = CommitContext(owner, ident, now, "api", None, trust, item.evidence, limits)
        if "expires_at" in item.args:
            item.args["expires_at"] = v.expiry(item.args["expires_at"], max(ctx.updated_at, now))
    count_sql, count_params = active_count_sql(ident, now)
    hashes = sorted({item.hash for _pos, item in accepted})
    rows = yield Query(
        f"SELECT {count_sql} AS active_n, d.id::text AS id, d.version, d.content_hash, "
        "d.knowledge FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT id, version, content_hash, "
        "knowledge FROM mg_records WHERE scope_id = %s AND agent_key = %s "
        "AND workspace_key = %s AND content_hash = ANY(%s) AND status = 'active' "
        "AND (expires_at IS NULL OR expires_at > %s) ORDER BY created_at, id) d ON true",
        (*count_params, ident.scope_id, ident.agent_key, ident.workspace_key, hashes, now),
    )
    active = int(rows[0]["active_n"]) if rows else 0
    existing: dict[tuple[str, str], tuple[str, int]] = {}
    for row in rows:
        if row["id"] is not None:
            key = (row["content_hash"], repr(jsonable(row["knowledge"])))
            existing.setdefault(key, (row["id"], int(row["version"])))
    cols: list[list[Any]] = [[] for _ in range(25)]
    tok_ids: list[str] = []
    tok_vals: list[str] = []
    audits: list[tuple[Any, ...]] = []
    for pos, item in accepted:
        dup = existing.get(item.dedup)
        if dup is not None:
            results[pos] = CommitResult(
                "", "approved", "add", "UNCHANGED", dup[0], dup[1], "duplicate: not added"
            )
            continue
        rid = str(uuid.uuid4())
        existing[item.dedup] = (rid, 1)
        args, ev = item.args, item.evidence
        ctx = CommitContext(owner, ident, now, "api", None, args["trust"], ev, limits)
        conf = args.get("confidence", 1.0 if ctx.trust == "user-confirmed" else 0.7)
        claim = (item.knowledge or {}).get("claim") or {}
        tokens = record_tokens(args["content"], item.knowledge, args.get("key"))
        values = (
            ident.scope_id, rid, ident.level, ident.agent_key, ident.workspace_key,
            args["kind"], args.get("key"), args["content"], ctx.trust, args["sensitivity"],
            conf, ctx.source, ev.get("source_event_id"), ev.get("observed_at"),
            ev.get("quote"), ev.get("thread_id"), ev.get("uri"),
            Jsonb(item.knowledge) if item.knowledge else None,
            claim.get("key"), claim.get("value"), args.get("expires_at"), item.hash,
            tokens, ctx.updated_at, ctx.updated_at,
        )  # fmt: skip
        for col, value in zip(cols, values, strict=True):
            col.append(value)
        tok_ids += [rid] * len(tokens)
        tok_vals += tokens
        stored = {k: val for k, val in args.items() if k != "expires_at"}
        if args.get("expires_at") is not None:
            stored["expires_at"] = format_utc(args["expires_at"])
        after = {**stored, "trust": ctx.trust, "confidence": conf, "status": "active"}
        audits.append(audit_row(ctx, ident, "record", rid, "create", None, after, 1))
        results[pos] = CommitResult("", "approved", "add", "CREATED", rid, 1)
    if audits:
        cap = limits.max_records_per_identity
        if active + len(audits) > cap:  # ``active`` is an upper bound: count exactly
            sql, sparams = exact_count_sql(ident, now)
            row = yield Query(f"SELECT {sql} AS n", sparams, fetch="one")
            if int(row["n"]) + len(audits) > cap:
                raise LimitExceededError(
                    f"identity {ident.level!r} holds {row['n']} active records; "
                    f"{len(audits)} more would exceed the limit of {cap}: remove some records "
                    "first or raise Limits.max_records_per_identity"
                )
        # The token array column is text[][]-incompatible (ragged), so each record's tokens
        # are re-aggregated from the flat (id, token) pairs.
        acols = list(zip(*audits, strict=True))
        yield Query(
            f"WITH src AS (SELECT * FROM unnest({_placeholders(24)}) AS s({_src_cols()})), "
            "tk AS (SELECT * FROM unnest(%s::uuid[], %s::text[]) AS t(rid, token)), "
            f"recs AS (INSERT INTO mg_records ({_COLS}) SELECT s.scope_id, s.id, s.level, "
            "s.agent_key, s.workspace_key, s.kind, s.key, s.content, s.trust, s.sensitivity, "
            "s.confidence, s.source, s.source_event_id, s.observed_at, s.quote, s.thread_id, "
            "s.uri, s.knowledge, s.claim_key, s.claim_value, s.expires_at, s.content_hash, "
            "coalesce((SELECT array_agg(tk.token ORDER BY tk.token) FROM tk "
            "WHERE tk.rid = s.id), '{}'), s.created_at, s.updated_at FROM src s) "
            "INSERT INTO mg_audit (scope_id, agent_key, workspace_key, target_kind, target_id, "
            "action, before, after, version, proposal_id, actor, at) "
            "SELECT a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12 FROM unnest("
            "%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], "
            "%s::jsonb[], %s::jsonb[], %s::int[], %s::text[], %s::text[], %s::timestamptz[]) "
            "WITH ORDINALITY AS a(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, ord) "
            "ORDER BY ord",
            [*(c for i, c in enumerate(cols) if i != 22), tok_ids, tok_vals]
            + [list(c) for c in acols],
            fetch="none",
        )
    return [r for r in results if r is not None]


_SRC_TYPES = [t.strip() for i, t in enumerate(_TYPES.split(",")) if i != 22]
_SRC_NAMES = [c.strip() for i, c in enumerate(_COLS.split(",")) if i != 22]


def _placeholders(n: int) -> str:
    return ", ".join(f"%s::{t}" for t in _SRC_TYPES[:n])


def _src_cols() -> str:
    return ", ".join(_SRC_NAMES)
