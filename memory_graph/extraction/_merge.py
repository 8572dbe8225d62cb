"""Merge candidates with stored state into planned writes (pure; no database).

The store passes what is effective for the target identity; :func:`plan_writes` decides
what each candidate means against it:

- a ``profile.<field>`` candidate becomes a ``patch_profile`` naming only its fields
  (one patch per source message); a retraction sets the field to ``None``;
- a keyed candidate is a preference: same value -> ``unchanged``; new or different value
  -> ``set_preference`` with the old value in the diff; a retraction -> ``delete_preference``;
- a fact, instruction or experience whose content is already stored is ``reinforced``
  (the record id is the target, so the store can raise its confidence); otherwise ``add``;
  a retraction of stored content -> ``remove``.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..proposals import canonical_json, render_diff
from ..types import DEFAULT_PROFILE_FIELDS, Operation
from ._schema import Candidate

__all__ = ["PlanStatus", "PlannedWrite", "WritePlan", "content_hash", "plan_writes"]

PlanStatus = Literal["planned", "unchanged", "reinforced"]
RecordRow = tuple[str, int, str, str]
"""``(id, version, content, content_hash)`` of an active stored record."""


def content_hash(content: str) -> str:
    """SHA-256 (hex) of the NFKC-normalised content, as the store computes it."""
    return hashlib.sha256(unicodedata.normalize("NFKC", content).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PlannedWrite:
    """One write the store should propose (``status="planned"``), or a reported no-op.

    ``unchanged`` entries need no write at all; ``reinforced`` entries name the stored
    record (``target_id``) whose confidence a repeat mention should raise.
    """

    operation: Operation
    args: dict[str, Any]
    """Plain-JSON payload in the store's canonical shape for ``operation``."""
    target_id: str | None
    """Record id, preference key, or ``None`` for ``add`` and ``patch_profile``."""
    base_version: int | None
    diff: str
    """Human-readable old -> new."""
    evidence: dict[str, Any]
    """``{"quote", "source_event_id", "thread_id"}`` from the harness."""
    idempotency_key: str
    status: PlanStatus = "planned"

    def to_json(self) -> dict[str, Any]:
        """Return the planned write as a plain JSON dict."""
        return {
            "operation": self.operation,
            "args": self.args,
            "target_id": self.target_id,
            "base_version": self.base_version,
            "diff": self.diff,
            "evidence": self.evidence,
            "idempotency_key": self.idempotency_key,
            "status": self.status,
        }


class WritePlan(list[PlannedWrite]):
    """Every planned entry in candidate order, with views by status.

    It is a plain ``list[PlannedWrite]``; :attr:`writes` keeps only what must be proposed.
    """

    @property
    def writes(self) -> list[PlannedWrite]:
        """Entries that need a proposal (``status == "planned"``)."""
        return [w for w in self if w.status == "planned"]

    @property
    def unchanged(self) -> list[PlannedWrite]:
        """No-ops: the candidate equals what is stored."""
        return [w for w in self if w.status == "unchanged"]

    @property
    def reinforced(self) -> list[PlannedWrite]:
        """Repeat mentions of stored records (``target_id`` is the record id)."""
        return [w for w in self if w.status == "reinforced"]


def _idempotency_key(
    operation: str, target: str | None, args: Mapping[str, Any], event: str | None
) -> str:
    body = canonical_json(
        {"operation": operation, "target": target, "args": dict(args), "source_event_id": event}
    )
    return f"extract:{operation}:{hashlib.sha256(body.encode('utf-8')).hexdigest()[:32]}"


def _evidence(candidates: Sequence[Candidate]) -> dict[str, Any]:
    quotes: list[str] = []
    for c in candidates:
        if c.quote not in quotes:
            quotes.append(c.quote)
    return {
        "quote": "\n".join(quotes),
        "source_event_id": candidates[0].source_event_id,
        "thread_id": candidates[0].thread_id,
    }


def _same(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return (
        " ".join(unicodedata.normalize("NFKC", a).split()).casefold()
        == " ".join(unicodedata.normalize("NFKC", b).split()).casefold()
    )


def _entry(
    operation: Operation,
    args: dict[str, Any],
    target: str | None,
    base_version: int | None,
    diff: str,
    sources: Sequence[Candidate],
    status: PlanStatus = "planned",
) -> PlannedWrite:
    evidence = _evidence(sources)
    key = _idempotency_key(operation, target, args, evidence["source_event_id"])
    return PlannedWrite(operation, args, target, base_version, diff, evidence, key, status)


# --------------------------------------------------------------------------- state adapters


def _preferences(raw: Mapping[str, str] | Iterable[Any]) -> dict[str, str]:
    if isinstance(raw, Mapping):
        return {str(k).strip().casefold(): str(v) for k, v in raw.items()}
    out: dict[str, str] = {}
    for item in raw:  # Preference objects, highest precedence first
        key, value = getattr(item, "key", None), getattr(item, "value", None)
        if isinstance(key, str) and isinstance(value, str) and not getattr(item, "overridden", 0):
            out.setdefault(key, value)
    return out


def _profile(raw: Mapping[str, str] | Any) -> dict[str, str]:
    fields = raw if isinstance(raw, Mapping) else getattr(raw, "fields", None) or {}
    return {str(k): str(v) for k, v in fields.items() if v is not None}


def _records(raw: Iterable[Any]) -> list[RecordRow]:
    rows: list[RecordRow] = []
    for item in raw:
        if isinstance(item, tuple):
            rid, version, content, digest = item
        else:
            if getattr(item, "status", "active") != "active" or getattr(item, "key", None):
                continue
            rid, version = item.id, item.version
            content, digest = item.content, item.content_hash
        rows.append((str(rid), int(version), str(content), str(digest)))
    return rows


# --------------------------------------------------------------------------- planning


@dataclass
class _State:
    preferences: dict[str, str]
    profile: dict[str, str]
    records: list[RecordRow]
    added: set[str] = field(default_factory=set)


def _plan_profile(
    group: Sequence[Candidate], state: _State, fields: Sequence[str], plan: WritePlan
) -> None:
    patch: dict[str, str | None] = {}
    sources: list[Candidate] = []
    before: dict[str, str] = {}
    for c in group:
        name = c.profile_field
        if name is None or name not in fields:
            continue
        current = state.profile.get(name)
        if c.action == "retract":
            matches = current is not None and (c.value is None or _same(current, c.value))
            new: str | None = None if matches else current
        else:
            new = (c.value or "").strip()
        if _same(new, current):
            args = {"patch": {name: current}}
            diff = f"profile {name}: unchanged"
            plan.append(_entry("patch_profile", args, None, None, diff, [c], "unchanged"))
            continue
        if current is not None:
            before[name] = current
        patch[name] = new
        sources.append(c)
        if new is None:
            state.profile.pop(name, None)
        else:
            state.profile[name] = new
    if patch:
        args = {"patch": dict(sorted(patch.items()))}
        diff = render_diff("patch_profile", args, {"fields": before})
        plan.append(_entry("patch_profile", args, None, None, diff, sources))


def _plan_preference(c: Candidate, state: _State, plan: WritePlan) -> None:
    key = c.key or ""
    current = state.preferences.get(key)
    if c.action == "retract":
        if current is None or (c.value is not None and not _same(current, c.value)):
            diff = f"preference {key}: nothing to delete"
            plan.append(
                _entry("delete_preference", {"key": key}, key, None, diff, [c], "unchanged")
            )
            return
        args: dict[str, Any] = {"key": key}
        diff = render_diff("delete_preference", args, {"value": current})
        plan.append(_entry("delete_preference", args, key, None, diff, [c]))
        del state.preferences[key]
        return
    value = (c.value or "").strip()
    args = {"key": key, "value": value}
    if c.expires_at is not None:
        args["expires_at"] = c.expires_at.isoformat().replace("+00:00", "Z")
    if current is not None and current == value and c.expires_at is None:
        diff = f"preference {key}: {value!r} unchanged"
        plan.append(_entry("set_preference", args, key, None, diff, [c], "unchanged"))
        return
    diff = render_diff("set_preference", args, {"value": current} if current is not None else None)
    plan.append(_entry("set_preference", args, key, None, diff, [c]))
    state.preferences[key] = value


def _find_record(content: str, records: Sequence[RecordRow]) -> RecordRow | None:
    digest = content_hash(content)
    for row in records:
        if row[3] == digest or _same(row[2], content):
            return row
    return None


def _plan_memory(c: Candidate, state: _State, plan: WritePlan) -> None:
    content = (c.content or "").strip()
    row = _find_record(content, state.records) if content else None
    if c.action == "retract":
        if row is None:
            args: dict[str, Any] = {"content": content}
            plan.append(_entry("remove", args, None, None, "nothing to remove", [c], "unchanged"))
            return
        diff = render_diff("remove", {}, {"content": row[2]})
        plan.append(_entry("remove", {}, row[0], row[1], diff, [c]))
        state.records.remove(row)
        return
    if row is not None:
        diff = f"= {c.kind}: {row[2]} (said again; raises confidence)"
        plan.append(
            _entry(
                "add", {"kind": c.kind, "content": content}, row[0], row[1], diff, [c], "reinforced"
            )
        )
        return
    digest = content_hash(content)
    args = {"kind": c.kind, "content": content}
    if c.confidence is not None:
        args["confidence"] = c.confidence
    if c.expires_at is not None:
        args["expires_at"] = c.expires_at.isoformat().replace("+00:00", "Z")
    if digest in state.added:
        plan.append(
            _entry(
                "add",
                args,
                None,
                None,
                f"+ {c.kind}: {content} (repeat in batch)",
                [c],
                "unchanged",
            )
        )
        return
    state.added.add(digest)
    plan.append(_entry("add", args, None, None, render_diff("add", args, None), [c]))


def plan_writes(
    candidates: Sequence[Candidate],
    *,
    preferences: Mapping[str, str] | Iterable[Any] = (),
    profile: Mapping[str, str] | Any = None,
    records: Iterable[Any] = (),
    profile_fields: Sequence[str] = DEFAULT_PROFILE_FIELDS,
) -> WritePlan:
    """Plan the writes that candidates imply against the stored state.

    Args:
        candidates: grounded, guarded candidates (from :func:`extract_candidates`).
        preferences: current effective ``key -> value`` at the target identity (or the
            store's ``Preference`` objects).
        profile: current profile ``field -> value`` (or a ``Profile``).
        records: active records as ``(id, version, content, content_hash)`` tuples (or the
            store's ``Record`` objects).
        profile_fields: the configured profile schema; other ``profile.*`` fields are
            ignored.

    Returns:
        A :class:`WritePlan` (a ``list[PlannedWrite]`` in candidate order). Entries with
        ``status="planned"`` need a proposal; ``unchanged`` and ``reinforced`` do not.

    >>> from memory_graph.extraction import Candidate
    >>> c = Candidate("preference", "set", "reply.length", "short", None, "keep it short", 0)
    >>> [(w.operation, w.status) for w in plan_writes([c], preferences={"reply.length": "long"})]
    [('set_preference', 'planned')]
    >>> [w.status for w in plan_writes([c], preferences={"reply.length": "short"})]
    ['unchanged']
    """
    state = _State(
        preferences=_preferences(preferences),
        profile=_profile(profile if profile is not None else {}),
        records=_records(records),
    )
    plan = WritePlan()
    profile_groups: dict[str | None, list[Candidate]] = {}
    order: list[tuple[str, Any]] = []
    for c in candidates:
        if c.profile_field is not None:
            if c.source_event_id not in profile_groups:
                profile_groups[c.source_event_id] = []
                order.append(("profile", c.source_event_id))
            profile_groups[c.source_event_id].append(c)
        else:
            order.append(("one", c))
    for what, item in order:
        if what == "profile":
            _plan_profile(profile_groups[item], state, profile_fields, plan)
        elif item.key is not None:
            _plan_preference(item, state, plan)
        else:
            _plan_memory(item, state, plan)
    return plan
