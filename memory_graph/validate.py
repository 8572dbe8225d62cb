"""Pure validation of everything that can be written (DESIGN §3). No I/O.

Every function either returns a normalised value or raises
:class:`~memory_graph.errors.ValidationError` (or a subclass) whose message names the field
and the fix. The store validates a whole request before it touches the database, so bad
input never changes state.

>>> normalize_preference_key("  Reply.Language ")
'reply.language'
>>> normalize_preference_key("reply language")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
memory_graph.errors.ValidationError: preference key 'reply language' is invalid: ...
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any, get_args

from .errors import LimitExceededError, NotFoundError, UnknownFieldError, ValidationError
from .identity import IDENTITY_LEVELS, IdentityLevel, Owner
from .time import ensure_aware, format_utc
from .types import (
    Claim,
    DecisionKind,
    Kind,
    Knowledge,
    Limits,
    Operation,
    Sensitivity,
    Trust,
)

__all__ = [
    "DECISIONS",
    "KINDS",
    "OPERATIONS",
    "SENSITIVITIES",
    "TRUSTS",
    "EVENT_ID_PATTERN",
    "MAX_INT",
    "aware",
    "bounded_int",
    "claim",
    "confidence",
    "content",
    "decision",
    "event_id",
    "evidence",
    "evidence_text",
    "expiry",
    "guard_text",
    "guarded",
    "identity_level",
    "kind",
    "knowledge",
    "knowledge_bytes",
    "knowledge_to_json",
    "members",
    "normalize_preference_key",
    "operation",
    "operation_args",
    "owner",
    "preference_value",
    "profile_patch",
    "record_id",
    "sensitivity",
    "short",
    "text",
    "trust",
]

KINDS: tuple[Kind, ...] = get_args(Kind)
TRUSTS: tuple[Trust, ...] = get_args(Trust)
SENSITIVITIES: tuple[Sensitivity, ...] = get_args(Sensitivity)
OPERATIONS: tuple[Operation, ...] = get_args(Operation)
DECISIONS: tuple[DecisionKind, ...] = get_args(DecisionKind)

_PREF_KEY = re.compile(r"^[a-z0-9]+([._-][a-z0-9]+)*$")
_CLAIM_KEY = re.compile(r"^[a-z0-9][a-z0-9._:-]*$")
_MAX_KEY_BYTES = 128
_NOTE_BYTES = 256
_MAX_NOTES = 4
_EVIDENCE_FIELDS = {
    "quote": 4096,
    "source_event_id": 512,
    "tool_call_id": 512,
    "thread_id": 512,
    "source": 64,
    "uri": 2048,
}
_EVENT_ID_FIELDS = ("source_event_id", "tool_call_id")

EVENT_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@#/+=~-]{0,199}$")
"""The format of ``source_event_id`` and ``tool_call_id``: 1..200 printable ASCII characters
(letters, digits and ``._:@#/+=~-``), starting with a letter or digit. No whitespace, no
control or format characters, no look-alikes: a harness message id (``human-msg-0001``, a
message UUID) fits; an id carrying text does not."""

MAX_INT = 2**31 - 1
"""The largest integer a stored count, version or limit may take (PostgreSQL ``integer``)."""

_SHORT = 48


def _names(names: Any) -> str:
    return short(", ".join(sorted(map(str, names))), 120)


def short(value: Any, limit: int = _SHORT) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages.

    Error messages never echo unbounded input: a huge or hostile value is quoted only in
    part, with its type and length.

    >>> short("x" * 1000)  # doctest: +ELLIPSIS
    "'xxxxxxxx...' (str of 1000 chars)"
    >>> short("tone")
    "'tone'"
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return ascii(value) if not value.isprintable() else repr(value)
        return f"{ascii(value[: limit // 6])[:-1]}...' (str of {len(value)} chars)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"<int of {value.bit_length()} bits>"
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)
    return f"<{type(value).__name__}>"


def text(field: str, value: Any, *, max_bytes: int, min_bytes: int = 1) -> str:
    """Validate a text value: a ``str``, valid UTF-8, no NUL, ``min_bytes..max_bytes`` bytes.

    Blank text (only whitespace) counts as empty.

    Raises:
        ValidationError: wrong type, NUL, lone surrogate, or empty.
        LimitExceededError: longer than ``max_bytes``.
    """
    if not isinstance(value, str):
        raise ValidationError(f"{field} must be a string, got {type(value).__name__}")
    if "\x00" in value:
        raise ValidationError(f"{field} contains a NUL character: remove it")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{field} is not valid Unicode text (lone surrogate)") from exc
    if min_bytes > 0 and not value.strip():
        raise ValidationError(f"{field} must not be empty: pass non-blank text")
    if size > max_bytes:
        raise LimitExceededError(
            f"{field} is {size} bytes, more than the limit of {max_bytes} UTF-8 bytes: shorten it"
        )
    return value


def normalize_preference_key(key: Any) -> str:
    """Normalise a preference key (strip + casefold) and check its shape.

    Raises:
        ValidationError: the key is not ``^[a-z0-9]+([._-][a-z0-9]+)*$`` after normalising.
    """
    raw = text("preference key", key, max_bytes=_MAX_KEY_BYTES * 4)
    norm = raw.strip().casefold()
    if len(norm.encode("utf-8")) > _MAX_KEY_BYTES or not _PREF_KEY.match(norm):
        raise ValidationError(
            f"preference key {short(raw)} is invalid: use lower-case letters and digits separated "
            "by single '.', '_' or '-' (e.g. 'reply.language')"
        )
    return norm


def claim(raw: Any) -> Claim:
    """Validate a claim ``{key, value}`` (a :class:`Claim` or a mapping)."""
    key: Any
    value: Any
    if isinstance(raw, Claim):
        key, value = raw.key, raw.value
    elif isinstance(raw, Mapping):
        extra = set(raw) - {"key", "value"}
        if extra:
            raise ValidationError(
                f"claim has unknown fields {_names(extra)}: allowed are key, value"
            )
        key, value = raw.get("key"), raw.get("value")
    else:
        raise ValidationError("claim must be an object {key, value}")
    key = text("claim.key", key, max_bytes=_MAX_KEY_BYTES)
    if not _CLAIM_KEY.match(key):
        raise ValidationError(
            f"claim.key {short(key)} is invalid: it must match ^[a-z0-9][a-z0-9._:-]*$"
        )
    value = text("claim.value", value, max_bytes=_NOTE_BYTES)
    return Claim(key, value)


def _notes(field: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if isinstance(raw, str) or not isinstance(raw, (list, tuple)):
        raise ValidationError(f"knowledge.{field} must be a list of strings")
    if len(raw) > _MAX_NOTES:
        raise LimitExceededError(
            f"knowledge.{field} has {len(raw)} entries: at most {_MAX_NOTES} are allowed"
        )
    return tuple(
        text(f"knowledge.{field}[{i}]", v, max_bytes=_NOTE_BYTES) for i, v in enumerate(raw)
    )


def knowledge(raw: Any) -> Knowledge | None:
    """Validate knowledge (a :class:`Knowledge`, a mapping or ``None``).

    Empty knowledge normalises to ``None`` so that duplicate detection compares like with
    like.
    """
    if raw is None:
        return None
    applies: Any
    counter: Any
    cl: Any
    if isinstance(raw, Knowledge):
        applies, counter, cl = raw.applies_when, raw.counterexamples, raw.claim
    elif isinstance(raw, Mapping):
        extra = set(raw) - {"applies_when", "counterexamples", "claim"}
        if extra:
            raise ValidationError(
                f"knowledge has unknown fields {_names(extra)}: allowed are "
                "applies_when, counterexamples, claim"
            )
        applies, counter, cl = raw.get("applies_when"), raw.get("counterexamples"), raw.get("claim")
    else:
        raise ValidationError("knowledge must be an object {applies_when, counterexamples, claim}")
    k = Knowledge(
        applies_when=_notes("applies_when", applies),
        counterexamples=_notes("counterexamples", counter),
        claim=claim(cl) if cl is not None else None,
    )
    if not k.applies_when and not k.counterexamples and k.claim is None:
        return None
    return k


def knowledge_to_json(k: Knowledge | None) -> dict[str, Any] | None:
    """Plain-JSON form of knowledge (``None`` stays ``None``)."""
    if k is None:
        return None
    return {
        "applies_when": list(k.applies_when),
        "counterexamples": list(k.counterexamples),
        "claim": {"key": k.claim.key, "value": k.claim.value} if k.claim else None,
    }


def knowledge_bytes(k: Knowledge | None) -> int:
    """UTF-8 size of the knowledge text (notes, counterexamples, claim key and value)."""
    if k is None:
        return 0
    parts = [*k.applies_when, *k.counterexamples]
    if k.claim is not None:
        parts += [k.claim.key, k.claim.value]
    return sum(len(p.encode("utf-8")) for p in parts)


def content(value: Any, k: Knowledge | None, limits: Limits) -> str:
    """Validate record content; content plus knowledge must fit ``limits.max_content_bytes``."""
    checked = text("content", value, max_bytes=limits.max_content_bytes)
    total = len(checked.encode("utf-8")) + knowledge_bytes(k)
    if total > limits.max_content_bytes:
        raise LimitExceededError(
            f"content plus knowledge is {total} bytes, more than the limit of "
            f"{limits.max_content_bytes} UTF-8 bytes: shorten the content or the notes"
        )
    return checked


def confidence(value: Any) -> float:
    """A confidence in ``0..1``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValidationError(f"confidence must be a number in 0..1, got {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f) or not 0.0 <= f <= 1.0:
        raise ValidationError(f"confidence must be in 0..1, got {short(value)}")
    return f


def _member(field: str, value: Any, allowed: tuple[str, ...]) -> Any:
    if not isinstance(value, str) or value not in allowed:
        raise ValidationError(
            f"{field} {short(value)} is invalid: allowed are {', '.join(allowed)}"
        )
    return value


def members(field: str, values: Any, allowed: tuple[str, ...] | list[str]) -> list[str]:
    """A filter list: ``None`` (all of ``allowed``), one name, or a list of names, sorted.

    Raises:
        ValidationError: not a name or a list of names, or a name outside ``allowed``.
    """
    if values is None:
        return list(allowed)
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple, set, frozenset)):
        raise ValidationError(f"{field} must be a list of names, got {type(values).__name__}")
    bad = [x for x in values if not isinstance(x, str) or x not in allowed]
    if bad:
        raise ValidationError(f"unknown {field} {short(bad[0])}: allowed are {', '.join(allowed)}")
    return sorted(set(values))


def kind(value: Any) -> Kind:
    """One of ``preference | fact | instruction | experience``."""
    return _member("kind", value, KINDS)  # type: ignore[no-any-return]


GRANT_KINDS: tuple[str, ...] = (*KINDS, "profile")
"""What a grant may cover: the record kinds, plus ``profile`` for ``patch_profile``."""


def grant_kind(value: Any) -> str:
    """A record kind, or ``profile`` (the kind a grant sees for a profile patch)."""
    return str(_member("grant kind", value, GRANT_KINDS))


def trust(value: Any) -> Trust:
    """One of ``user-confirmed | agent-observed | external``."""
    return _member("trust", value, TRUSTS)  # type: ignore[no-any-return]


def sensitivity(value: Any) -> Sensitivity:
    """One of ``private | sensitive``."""
    return _member("sensitivity", value, SENSITIVITIES)  # type: ignore[no-any-return]


def operation(value: Any) -> Operation:
    """One of the six proposal operations."""
    return _member("operation", value, OPERATIONS)  # type: ignore[no-any-return]


def decision(value: Any) -> DecisionKind:
    """``approve | edit | reject``."""
    return _member("decision", value, DECISIONS)  # type: ignore[no-any-return]


def identity_level(value: Any) -> IdentityLevel:
    """One of the four identity levels."""
    return _member("level", value, IDENTITY_LEVELS)  # type: ignore[no-any-return]


def aware(value: Any, field: str) -> datetime:
    """A tz-aware datetime (or ISO-8601 string with offset), converted to UTC.

    Raises:
        ValidationError: naive, unparsable or out of range.
    """
    if isinstance(value, str):
        text(field, value, max_bytes=64)
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValidationError(
                f"{field} is not ISO-8601: {short(value)}; use e.g. 2026-01-02T03:04:05Z"
            ) from exc
        value = parsed
    try:
        return ensure_aware(value, field)
    except (OverflowError, ValueError) as exc:
        if isinstance(exc, ValidationError):
            raise
        raise ValidationError(f"{field} is out of range: pass a realistic date") from exc


def expiry(expires_at: Any, updated_at: datetime) -> datetime | None:
    """Validate ``expires_at`` (optional): aware and strictly later than ``updated_at``."""
    if expires_at is None:
        return None
    exp = aware(expires_at, "expires_at")
    if exp <= updated_at:
        raise ValidationError(
            f"expires_at ({format_utc(exp)}) must be later than updated_at "
            f"({format_utc(updated_at)}): pass a future expiry or none"
        )
    return exp


def preference_value(value: Any, limits: Limits) -> str:
    """A preference value: non-blank text of at most ``limits.max_value_bytes``."""
    return text("preference value", value, max_bytes=limits.max_value_bytes)


def profile_patch(patch: Any, limits: Limits) -> dict[str, str | None]:
    """Validate a profile patch: known fields only; values are text or ``None`` (delete).

    Raises:
        UnknownFieldError: a field outside ``limits.profile_fields`` (the message lists them).
    """
    if not isinstance(patch, Mapping):
        raise ValidationError("profile patch must be an object {field: str | None}")
    allowed = sorted(limits.profile_fields)
    out: dict[str, str | None] = {}
    for name, value in patch.items():
        if not isinstance(name, str) or name not in limits.profile_fields:
            raise UnknownFieldError(
                f"unknown profile field {short(name)}: allowed fields are: {', '.join(allowed)}"
            )
        out[name] = (
            None
            if value is None
            else text(f"profile.{name}", value, max_bytes=limits.max_value_bytes)
        )
    return dict(sorted(out.items()))


def event_id(field: str, value: Any) -> str:
    """A harness event id (``source_event_id``, ``tool_call_id``): see :data:`EVENT_ID_PATTERN`.

    >>> event_id("source_event_id", "human-msg-0001")
    'human-msg-0001'
    >>> event_id("source_event_id", "m1 ignore rules")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memory_graph.errors.ValidationError: source_event_id 'm1 ignore rules' is not an event id...
    """
    checked = text(field, value, max_bytes=512)
    if not EVENT_ID_PATTERN.match(checked):
        raise ValidationError(
            f"{field} {short(checked)} is not an event id: use 1..200 ASCII letters, digits "
            "and ._:@#/+=~- (no spaces or control characters), e.g. a harness message id"
        )
    return checked


def bounded_int(field: str, value: Any, *, lo: int = 0, hi: int = MAX_INT) -> int:
    """An ``int`` (not ``bool``) in ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{field} must be an integer, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValidationError(f"{field} must be in {lo}..{hi}, got {short(value)}")
    return value


def evidence(raw: Any) -> dict[str, Any]:
    """Validate evidence ``{quote?, source_event_id?, tool_call_id?, thread_id?, observed_at?,
    source?, uri?}``.

    ``source_event_id`` is the id the harness gave the human message the memory comes from;
    ``tool_call_id`` is the id of the model's tool call that proposed it. Both must match
    :data:`EVENT_ID_PATTERN`, and they are separate fields, so a tool call can never pass as
    a human message. ``observed_at`` is normalised to an ISO string with ``Z``; ``None``
    values are dropped.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValidationError("evidence must be an object")
    allowed = sorted([*_EVIDENCE_FIELDS, "observed_at"])
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in allowed:
            raise ValidationError(
                f"evidence has unknown field {short(name)}: allowed are {', '.join(allowed)}"
            )
        if value is None:
            continue
        if name == "observed_at":
            out[name] = format_utc(aware(value, "evidence.observed_at"))
        elif name in _EVENT_ID_FIELDS:
            out[name] = event_id(f"evidence.{name}", value)
        else:
            out[name] = text(f"evidence.{name}", value, max_bytes=_EVIDENCE_FIELDS[name])
    return dict(sorted(out.items()))


def _check_fields(operation: str, args: Mapping[str, Any], allowed: set[str]) -> None:
    extra = set(args) - allowed
    if extra:
        raise ValidationError(
            f"{operation} args have unknown fields {_names(extra)}: "
            f"allowed are {', '.join(sorted(allowed))}"
        )


def _opt_expiry(args: Mapping[str, Any]) -> str | None:
    raw = args.get("expires_at")
    return None if raw is None else format_utc(aware(raw, "expires_at"))


def operation_args(op: Any, args: Any, limits: Limits) -> dict[str, Any]:
    """Validate and normalise the plain-JSON args of a proposal operation.

    Returns the canonical args (normalised key, canonical knowledge, ISO ``Z`` timestamps,
    optional fields omitted when absent), which are what is stored and hashed.
    """
    op = operation(op)
    if not isinstance(args, Mapping):
        raise ValidationError(f"{op} args must be an object")
    out: dict[str, Any] = {}
    if op == "add":
        _check_fields(
            op,
            args,
            {
                "kind",
                "content",
                "key",
                "knowledge",
                "expires_at",
                "sensitivity",
                "confidence",
                "trust",
            },
        )
        out["kind"] = kind(args.get("kind"))
        k = knowledge(args.get("knowledge"))
        out["content"] = content(args.get("content"), k, limits)
        if k is not None:
            out["knowledge"] = knowledge_to_json(k)
        if args.get("key") is not None:
            if out["kind"] == "preference":
                raise ValidationError(
                    "a keyed preference is written with set_preference, not add: "
                    "drop the key or use set_preference"
                )
            out["key"] = text("key", args["key"], max_bytes=_MAX_KEY_BYTES)
        for name, check in (
            ("sensitivity", sensitivity),
            ("confidence", confidence),
            ("trust", trust),
        ):
            if args.get(name) is not None:
                out[name] = check(args[name])
    elif op == "replace":
        _check_fields(op, args, {"content", "knowledge", "expires_at"})
        k = knowledge(args.get("knowledge"))
        out["content"] = content(args.get("content"), k, limits)
        if k is not None:
            out["knowledge"] = knowledge_to_json(k)
    elif op == "remove":
        _check_fields(op, args, set())
    elif op == "set_preference":
        _check_fields(op, args, {"key", "value", "expires_at"})
        out["key"] = normalize_preference_key(args.get("key"))
        out["value"] = preference_value(args.get("value"), limits)
    elif op == "delete_preference":
        _check_fields(op, args, {"key"})
        out["key"] = normalize_preference_key(args.get("key"))
    else:  # patch_profile
        _check_fields(op, args, {"patch"})
        patch = profile_patch(args.get("patch"), limits)
        if not patch:
            raise ValidationError("patch_profile needs at least one field in patch")
        out["patch"] = patch
    if op in ("add", "replace", "set_preference"):
        exp = _opt_expiry(args)
        if exp is not None:
            out["expires_at"] = exp
    return out


def evidence_text(ev: Mapping[str, Any]) -> list[str]:
    """The stored free-text evidence fields the guard must see too (quote, source, uri)."""
    return [ev[name] for name in ("quote", "source", "uri") if ev.get(name)]


def guard_text(op: str, args: Mapping[str, Any]) -> str:
    """The text of canonical ``args`` that the guard must see (content, notes, values)."""
    parts: list[str] = []
    if "content" in args:
        parts.append(args["content"])
    if op == "add" and args.get("key"):
        parts.append(args["key"])  # a record key is stored and recallable like content
    k = args.get("knowledge")
    if k:
        parts += list(k.get("applies_when") or ()) + list(k.get("counterexamples") or ())
        if k.get("claim"):
            parts += [k["claim"]["key"], k["claim"]["value"]]
    if op == "set_preference":
        parts += [args["key"], args["value"]]
    if op == "patch_profile":
        parts += [v for v in args["patch"].values() if v is not None]
    return "\n".join(parts)


def guarded(where: str, *texts: str | None) -> dict[str, Any]:
    """The one guarded path: every text the store writes passes here before its first query.

    ``texts`` are checked as one document, one text a line (the guard is sentence-local, so
    joining never changes a verdict); ``None`` and empty texts are skipped.

    Returns:
        The guard's verdict as JSON (stored with a proposal).

    Raises:
        ValidationError: the guard blocked one of the texts; the message names ``where`` and
            the category, never the text.

    >>> guarded("persona", "Be brief and kind.")["allowed"]
    True
    >>> guarded("record key", "ssn 512-43-7789")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memory_graph.errors.ValidationError: record key: blocked by the sensitive-data guard ...
    """
    from .guard import check  # the guard loads its tables on first use, not at import

    verdict = check("\n".join(t for t in texts if t))
    if not verdict.allowed:
        raise ValidationError(
            (f"{where}: " if where else "")
            + f"blocked by the sensitive-data guard (category: {verdict.category}): "
            "this content is not stored; remove the sensitive part"
        )
    return verdict.to_json()


def record_id(value: Any) -> str:
    """A record id as the store keeps it: the canonical lower-case UUID string.

    Any spelling :class:`uuid.UUID` reads (braces, ``urn:uuid:``, no hyphens) is brought
    to the canonical form before it reaches SQL; anything else cannot name a record.

    Raises:
        ValidationError: not a string (or a ``UUID``).
        NotFoundError: a string that is no UUID (it names no record, like another owner's).

    >>> record_id("urn:uuid:12345678-1234-5678-1234-567812345678")
    '12345678-1234-5678-1234-567812345678'
    """
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):  # str() of a value nested 2000 deep would recurse
        raise ValidationError(f"record id must be a string, got {type(value).__name__}")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise NotFoundError(f"record {short(value)} not found for this owner") from None


def owner(value: Any) -> Owner:
    """The caller's principal: an :class:`~memory_graph.Owner`, checked at every store entry.

    Raises:
        ValidationError: anything else (a user id string, ``None``, a look-alike object).
    """
    if not isinstance(value, Owner):
        raise ValidationError(
            f"owner must be a memory_graph.Owner, got {type(value).__name__}: "
            "pass Owner(user_id, workspace=..., agent=...)"
        )
    return value
