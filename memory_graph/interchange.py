"""JSON export and import of an owner's memory (DESIGN §8). Pure: no I/O.

The export is versioned (:data:`EXPORT_VERSION`) and carries only what a person would move
between installations: no ids, content hashes, statuses, versions, token indexes or audit
data. Shape::

    {
      "version": "memory-graph/1",
      "exported_at": "2026-01-02T03:04:05Z",
      "profile": {"name": "Ada", ...},
      "preferences": [{"level", "key", "value", "expires_at", "updated_at", "source"}, ...],
      "records": [{"kind", "content", "key", "level", "trust", "sensitivity", "confidence",
                   "knowledge", "provenance", "expires_at", "created_at", "updated_at"}, ...]
    }

:func:`parse_import` validates the whole document before returning anything, and turns it
into one :class:`ImportItem` per profile patch, preference and record. The store makes one
proposal per item, so nothing is written until each proposal is approved.

Field validation reuses :mod:`memory_graph.validate`, the same checks the store applies to a
proposal, and the final args are its canonical ones; errors are re-raised with the JSON path
of the offending value.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from . import validate as v
from .errors import LimitExceededError, ValidationError
from .identity import IdentityLevel
from .time import ensure_aware, format_utc
from .types import Limits, Operation, Preference, Profile, Record

__all__ = ["EXPORT_VERSION", "ImportItem", "build_export", "parse_import"]

EXPORT_VERSION = "memory-graph/1"
"""The version tag of the export format; :func:`parse_import` accepts only this one."""

_TOP_FIELDS = ("exported_at", "preferences", "profile", "records", "version")
_PREF_FIELDS = ("expires_at", "key", "level", "source", "updated_at", "value")
_RECORD_FIELDS = (
    "confidence",
    "content",
    "created_at",
    "expires_at",
    "key",
    "kind",
    "knowledge",
    "level",
    "provenance",
    "sensitivity",
    "trust",
    "updated_at",
)
_PROVENANCE_FIELDS = ("observed_at", "quote", "source", "source_event_id", "thread_id", "uri")


@dataclass(frozen=True)
class ImportItem:
    """One proposal to create from an imported document.

    ``operation`` and ``args`` are exactly what :meth:`MemoryStore.propose` takes (canonical
    args, as :func:`memory_graph.validate.operation_args` returns them); ``level`` is the
    identity to write to; ``evidence`` is the record's provenance (or the preference's source
    and time) in the ``evidence`` shape of ``propose``.
    """

    operation: Operation
    args: dict[str, Any]
    level: IdentityLevel = "user"
    evidence: dict[str, Any] = field(default_factory=dict)


def _ts(value: datetime | None) -> str | None:
    return None if value is None else format_utc(value)


def _active(expires_at: datetime | None, as_of: datetime) -> bool:
    return expires_at is None or as_of < expires_at


def _record_json(r: Record) -> dict[str, Any]:
    p = r.provenance
    return {
        "kind": r.kind,
        "content": r.content,
        "key": r.key,
        "level": r.identity.level,
        "trust": r.trust,
        "sensitivity": r.sensitivity,
        "confidence": r.confidence,
        "knowledge": v.knowledge_to_json(r.knowledge),
        "provenance": {
            "source": p.source,
            "source_event_id": p.source_event_id,
            "observed_at": _ts(p.observed_at),
            "quote": p.quote,
            "thread_id": p.thread_id,
            "uri": p.uri,
        },
        "expires_at": _ts(r.expires_at),
        "created_at": format_utc(r.created_at),
        "updated_at": format_utc(r.updated_at),
    }


def build_export(
    profile: Profile,
    preferences: Sequence[Preference],
    records: Sequence[Record],
    *,
    exported_at: datetime,
) -> dict[str, Any]:
    """Build the versioned JSON export of an owner's memory.

    Only data active at ``exported_at`` is exported. Keyed preference rows among
    ``records`` are skipped: they are exported once, under ``preferences``. Shadowed
    (overridden) preferences are kept, since each is a stored value of its own identity.
    Output is deterministic: preferences sorted by identity precedence then key, records by
    creation time, identity and content.

    Args:
        profile: the user's profile.
        preferences: the owner's preferences, as the store returns them.
        records: the owner's visible records.
        exported_at: the export time (tz-aware); also decides what is active.

    Returns:
        A plain-JSON ``dict`` (``json.dumps`` works on it as is).

    >>> from datetime import timezone
    >>> doc = build_export(Profile({"name": "Ada"}, 1, None), [], [],
    ...                    exported_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    >>> doc["version"], doc["exported_at"], doc["profile"]
    ('memory-graph/1', '2026-01-01T00:00:00Z', {'name': 'Ada'})
    """
    exported_at = ensure_aware(exported_at, "exported_at")
    prefs = sorted(
        (p for p in preferences if _active(p.expires_at, exported_at)),
        key=lambda p: (p.identity.precedence, p.key),
    )
    recs = sorted(
        (
            r
            for r in records
            if r.is_active(exported_at) and not (r.kind == "preference" and r.key is not None)
        ),
        key=lambda r: (r.created_at, r.identity.precedence, r.kind, r.content),
    )
    return {
        "version": EXPORT_VERSION,
        "exported_at": format_utc(exported_at),
        "profile": {
            name: value
            for name, value in sorted(profile.fields.items())
            if isinstance(value, str) and value.strip()
        },
        "preferences": [
            {
                "level": p.identity.level,
                "key": p.key,
                "value": p.value,
                "expires_at": _ts(p.expires_at),
                "updated_at": format_utc(p.updated_at),
                "source": p.source,
            }
            for p in prefs
        ],
        "records": [_record_json(r) for r in recs],
    }


# --- import -------------------------------------------------------------------------------


@contextmanager
def _at(path: str) -> Iterator[None]:
    """Re-raise a validation error with the JSON path of the value being checked."""
    try:
        yield
    except ValidationError as exc:
        msg = str(exc)
        if msg.startswith(path):
            raise
        last = path.rsplit(".", 1)[-1].split("[", 1)[0]
        if msg.startswith((last + ".", last + "[")):
            # the validator named a sub-field: splice it onto the path
            text = path.rsplit(last, 1)[0] + msg
        else:
            text = f"{path}: {msg}"
        raise type(exc)(text) from exc


def _object(path: str, value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(f"{path}: must be a JSON object, got {type(value).__name__}")
    unknown = sorted(str(k) for k in value if not isinstance(k, str))
    if unknown:
        raise ValidationError(f"{path}: keys must be strings, got {v.short(unknown[0])}")
    return value


def _only(path: str, obj: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for name in obj:
        if name not in allowed:
            where = f"{path}.{name}" if path else name
            raise ValidationError(
                f"{where}: unknown field; allowed fields are: {', '.join(allowed)}"
            )


def _list(path: str, value: object) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError(f"{path}: must be a JSON array, got {type(value).__name__}")
    return value


def _time(path: str, value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(
            f"{path}: must be an ISO-8601 string with an offset, e.g. 2026-01-02T03:04:05Z"
        )
    with _at(path):
        return v.aware(value, path)


def _later(path: str, expires_at: datetime | None, updated_at: datetime | None) -> None:
    if expires_at is not None and updated_at is not None and expires_at <= updated_at:
        raise ValidationError(
            f"{path}: expires_at ({format_utc(expires_at)}) must be later than updated_at "
            f"({format_utc(updated_at)}): pass a later expiry or none"
        )


def _profile_item(profile: object, limits: Limits) -> ImportItem | None:
    obj = _object("profile", profile)
    for name, value in obj.items():
        if not isinstance(value, str):
            raise ValidationError(
                f"profile.{name}: must be a string, got {type(value).__name__}; "
                "omit a field to leave it unchanged"
            )
    if not obj:
        return None
    with _at("profile"):
        patch = v.profile_patch(obj, limits)
    with _at("profile"):
        args = v.operation_args("patch_profile", {"patch": patch}, limits)
    return ImportItem("patch_profile", args, "user")


def _preference_item(
    path: str, raw: object, limits: Limits, seen: dict[tuple[str, str], str]
) -> ImportItem:
    obj = _object(path, raw)
    _only(path, obj, _PREF_FIELDS)
    with _at(f"{path}.level"):
        level = v.identity_level(obj.get("level", "user"))
    with _at(f"{path}.key"):
        key = v.normalize_preference_key(obj.get("key"))
    if (level, key) in seen:
        raise ValidationError(
            f"{path}.key: {key!r} at level {level!r} repeats {seen[(level, key)]}: "
            "keep one value per key and level"
        )
    seen[(level, key)] = path
    with _at(f"{path}.value"):
        value = v.preference_value(obj.get("value"), limits)
    updated_at = _time(f"{path}.updated_at", obj.get("updated_at"))
    expires_at = _time(f"{path}.expires_at", obj.get("expires_at"))
    _later(f"{path}.expires_at", expires_at, updated_at)
    args: dict[str, Any] = {"key": key, "value": value}
    if expires_at is not None:
        args["expires_at"] = format_utc(expires_at)
    with _at(path):
        args = v.operation_args("set_preference", args, limits)
    evidence: dict[str, Any] = {}
    if obj.get("source") is not None:
        evidence["source"] = obj["source"]
    if updated_at is not None:
        evidence["observed_at"] = updated_at
    with _at(f"{path}.source"):
        evidence = v.evidence(evidence)
    return ImportItem("set_preference", args, level, evidence)


def _record_item(path: str, raw: object, limits: Limits) -> ImportItem:
    obj = _object(path, raw)
    _only(path, obj, _RECORD_FIELDS)
    with _at(f"{path}.level"):
        level = v.identity_level(obj.get("level", "user"))
    with _at(f"{path}.kind"):
        kind = v.kind(obj.get("kind"))
    knowledge_raw = obj.get("knowledge")
    if knowledge_raw is not None:
        _object(f"{path}.knowledge", knowledge_raw)
    with _at(f"{path}.knowledge"):
        knowledge = v.knowledge(knowledge_raw)
    with _at(f"{path}.content"):
        v.content(obj.get("content"), knowledge, limits)
    args: dict[str, Any] = {"kind": kind, "content": obj.get("content")}
    if knowledge is not None:
        args["knowledge"] = v.knowledge_to_json(knowledge)
    if obj.get("key") is not None:
        with _at(f"{path}.key"):
            args["key"] = v.text(f"{path}.key", obj["key"], max_bytes=128)
    for name, check in (("trust", v.trust), ("sensitivity", v.sensitivity)):
        if obj.get(name) is not None:
            with _at(f"{path}.{name}"):
                args[name] = check(obj[name])
    if obj.get("confidence") is not None:
        with _at(f"{path}.confidence"):
            args["confidence"] = v.confidence(obj["confidence"])
    _time(f"{path}.created_at", obj.get("created_at"))
    updated_at = _time(f"{path}.updated_at", obj.get("updated_at"))
    expires_at = _time(f"{path}.expires_at", obj.get("expires_at"))
    _later(f"{path}.expires_at", expires_at, updated_at)
    if expires_at is not None:
        args["expires_at"] = format_utc(expires_at)
    with _at(path):
        args = v.operation_args("add", args, limits)
    evidence: dict[str, Any] = {}
    prov_raw = obj.get("provenance")
    if prov_raw is not None:
        prov = _object(f"{path}.provenance", prov_raw)
        _only(f"{path}.provenance", prov, _PROVENANCE_FIELDS)
        observed = _time(f"{path}.provenance.observed_at", prov.get("observed_at"))
        with _at(f"{path}.provenance"):
            evidence = v.evidence({**prov, "observed_at": observed})
    return ImportItem("add", args, level, evidence)


def parse_import(document: object, *, limits: Limits) -> list[ImportItem]:
    """Validate a whole export document, then return one :class:`ImportItem` per entry.

    Items come in document order: the profile patch (when the profile has fields), then
    one ``set_preference`` per preference, then one ``add`` per record.

    Args:
        document: the parsed JSON document (``json.load`` output).
        limits: the store's limits (content size, profile fields, import size).

    Returns:
        The items; nothing is written by this function.

    Raises:
        ValidationError: the first problem, named by its JSON path (``records[3].kind``)
            with the fix. ``UnknownFieldError`` for a profile field outside the schema.
        LimitExceededError: more than ``limits.max_import_records`` preferences and records
            together, or a value over its size limit.

    >>> items = parse_import(
    ...     {"version": "memory-graph/1", "preferences": [{"key": "Editor", "value": "vim"}]},
    ...     limits=Limits(),
    ... )
    >>> items[0].operation, items[0].args, items[0].level
    ('set_preference', {'key': 'editor', 'value': 'vim'}, 'user')
    >>> parse_import({"version": "memory-graph/1", "records": [{"kind": "memo"}]},
    ...              limits=Limits())
    Traceback (most recent call last):
    ...
    memory_graph.errors.ValidationError: records[0].kind: kind 'memo' is invalid: allowed are preference, fact, instruction, experience
    """  # noqa: E501
    doc = _object("document", document)
    _only("", doc, _TOP_FIELDS)
    if doc.get("version") != EXPORT_VERSION:
        raise ValidationError(
            f"version: expected {EXPORT_VERSION!r}, got {v.short(doc.get('version'))}; "
            "import a document produced by memory-graph export"
        )
    _time("exported_at", doc.get("exported_at"))
    preferences = _list("preferences", doc.get("preferences"))
    records = _list("records", doc.get("records"))
    count = len(preferences) + len(records)
    if count > limits.max_import_records:
        raise LimitExceededError(
            f"records: the document holds {count} preferences and records, more than the "
            f"limit of {limits.max_import_records} per import: split it into smaller documents"
        )
    items: list[ImportItem] = []
    if doc.get("profile") is not None:
        item = _profile_item(doc["profile"], limits)
        if item is not None:
            items.append(item)
    seen: dict[tuple[str, str], str] = {}
    for i, raw in enumerate(preferences):
        items.append(_preference_item(f"preferences[{i}]", raw, limits, seen))
    for i, raw in enumerate(records):
        items.append(_record_item(f"records[{i}]", raw, limits))
    return items
