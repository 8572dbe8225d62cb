"""JSON export / import (DESIGN §8). Pure, no database."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memory_graph.errors import LimitExceededError, UnknownFieldError, ValidationError
from memory_graph.identity import Owner
from memory_graph.interchange import EXPORT_VERSION, ImportItem, build_export, parse_import
from memory_graph.types import (
    Claim,
    Knowledge,
    Limits,
    Preference,
    Profile,
    Provenance,
    Record,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
T0 = NOW - timedelta(days=3)
OWNER = Owner("alice", workspace="/repo", agent="coder")
LIMITS = Limits()


def record(
    content: str,
    *,
    kind: str = "fact",
    level: str = "user",
    key: str | None = None,
    knowledge: Knowledge | None = None,
    expires_at: datetime | None = None,
    status: str = "active",
    created_at: datetime = T0,
) -> Record:
    return Record(
        id="00000000-0000-0000-0000-000000000001",
        identity=OWNER.identity(level),  # type: ignore[arg-type]
        kind=kind,  # type: ignore[arg-type]
        content=content,
        key=key,
        trust="user-confirmed",
        sensitivity="private",
        confidence=0.8,
        provenance=Provenance(
            source="conversation",
            source_event_id="msg-1",
            observed_at=T0,
            quote=content,
            thread_id="t-1",
            uri=None,
        ),
        knowledge=knowledge,
        expires_at=expires_at,
        supersedes=None,
        status=status,  # type: ignore[arg-type]
        version=3,
        content_hash="deadbeef" * 8,
        created_at=created_at,
        updated_at=created_at,
        recorded_at=created_at,
    )


def pref(
    key: str, value: str, *, level: str = "user", expires_at: datetime | None = None
) -> Preference:
    return Preference(
        identity=OWNER.identity(level),  # type: ignore[arg-type]
        key=key,
        value=value,
        source="api",
        source_event_id="ev-9",
        expires_at=expires_at,
        updated_at=T0,
        revision=4,
    )


KNOW = Knowledge(
    applies_when=("at work",),
    counterexamples=("on holiday",),
    claim=Claim("drink.morning", "tea"),
)
PROFILE = Profile(fields={"name": "Alice", "timezone": "Europe/Paris"}, revision=5, updated_at=T0)


def sample() -> dict[str, Any]:
    return build_export(
        PROFILE,
        [
            pref("reply.language", "fr"),
            pref("editor", "vim", level="agent", expires_at=NOW + timedelta(days=1)),
            pref("gone", "x", expires_at=NOW),
        ],
        [
            record("Alice drinks tea in the morning", knowledge=KNOW, level="user_workspace"),
            record("Use tabs", kind="instruction", key="indent", created_at=T0 + timedelta(1)),
            record("removed one", status="removed"),
            record("expired one", expires_at=NOW),
            record("pref row", kind="preference", key="reply.language"),
        ],
        exported_at=NOW,
    )


def test_export_shape() -> None:
    doc = sample()
    assert doc["version"] == EXPORT_VERSION == "memory-graph/1"
    assert doc["exported_at"] == "2026-03-01T12:00:00Z"
    assert doc["profile"] == {"name": "Alice", "timezone": "Europe/Paris"}
    assert [p["key"] for p in doc["preferences"]] == ["reply.language", "editor"]
    assert doc["preferences"][1] == {
        "level": "agent",
        "key": "editor",
        "value": "vim",
        "expires_at": "2026-03-02T12:00:00Z",
        "updated_at": "2026-02-26T12:00:00Z",
        "source": "api",
    }
    assert [r["content"] for r in doc["records"]] == [
        "Alice drinks tea in the morning",
        "Use tabs",
    ]
    first = doc["records"][0]
    assert first["level"] == "user_workspace"
    assert first["knowledge"] == {
        "applies_when": ["at work"],
        "counterexamples": ["on holiday"],
        "claim": {"key": "drink.morning", "value": "tea"},
    }
    assert first["provenance"] == {
        "source": "conversation",
        "source_event_id": "msg-1",
        "observed_at": "2026-02-26T12:00:00Z",
        "quote": "Alice drinks tea in the morning",
        "thread_id": "t-1",
        "uri": None,
    }
    assert json.loads(json.dumps(doc)) == doc


def _keys(value: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            out |= _keys(v)
    elif isinstance(value, list):
        for v in value:
            out |= _keys(v)
    return out


def test_export_has_no_hashes_status_tokens_or_audit() -> None:
    doc = sample()
    keys = _keys(doc)
    for forbidden in (
        "content_hash",
        "hash",
        "status",
        "tokens",
        "audit",
        "revision",
        "id",
        "recorded_at",
        "supersedes",
    ):
        assert forbidden not in keys
    assert "version" not in _keys(doc["records"]) | _keys(doc["preferences"])
    text = json.dumps(doc)
    assert "deadbeef" not in text and "removed one" not in text and "expired one" not in text


def test_round_trip_reproduces_items() -> None:
    doc = json.loads(json.dumps(sample()))
    items = parse_import(doc, limits=LIMITS)
    assert items == [
        ImportItem(
            "patch_profile", {"patch": {"name": "Alice", "timezone": "Europe/Paris"}}, "user"
        ),
        ImportItem(
            "set_preference",
            {"key": "reply.language", "value": "fr"},
            "user",
            {"source": "api", "observed_at": "2026-02-26T12:00:00Z"},
        ),
        ImportItem(
            "set_preference",
            {"key": "editor", "value": "vim", "expires_at": "2026-03-02T12:00:00Z"},
            "agent",
            {"source": "api", "observed_at": "2026-02-26T12:00:00Z"},
        ),
        ImportItem(
            "add",
            {
                "kind": "fact",
                "content": "Alice drinks tea in the morning",
                "knowledge": {
                    "applies_when": ["at work"],
                    "counterexamples": ["on holiday"],
                    "claim": {"key": "drink.morning", "value": "tea"},
                },
                "trust": "user-confirmed",
                "sensitivity": "private",
                "confidence": 0.8,
            },
            "user_workspace",
            {
                "observed_at": "2026-02-26T12:00:00Z",
                "quote": "Alice drinks tea in the morning",
                "source": "conversation",
                "source_event_id": "msg-1",
                "thread_id": "t-1",
            },
        ),
        ImportItem(
            "add",
            {
                "kind": "instruction",
                "content": "Use tabs",
                "key": "indent",
                "trust": "user-confirmed",
                "sensitivity": "private",
                "confidence": 0.8,
            },
            "user",
            {
                "observed_at": "2026-02-26T12:00:00Z",
                "quote": "Use tabs",
                "source": "conversation",
                "source_event_id": "msg-1",
                "thread_id": "t-1",
            },
        ),
    ]
    # parsing is a pure function of the document: a second pass gives the same items
    assert parse_import(copy.deepcopy(doc), limits=LIMITS) == items


def test_minimal_document_and_key_normalisation() -> None:
    items = parse_import(
        {"version": EXPORT_VERSION, "preferences": [{"key": " Reply.Language ", "value": "fr"}]},
        limits=LIMITS,
    )
    assert items == [ImportItem("set_preference", {"key": "reply.language", "value": "fr"})]
    assert parse_import({"version": EXPORT_VERSION}, limits=LIMITS) == []
    assert parse_import({"version": EXPORT_VERSION, "profile": {}}, limits=LIMITS) == []


def _doc(**parts: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": EXPORT_VERSION}
    doc.update(parts)
    return doc


GOOD_RECORD: dict[str, Any] = {"kind": "fact", "content": "ok"}
GOOD_PREF: dict[str, Any] = {"key": "k", "value": "v"}


def _rec(**over: Any) -> dict[str, Any]:
    return {"records": [GOOD_RECORD, GOOD_RECORD, GOOD_RECORD, {**GOOD_RECORD, **over}]}


def _pref(**over: Any) -> dict[str, Any]:
    return {"preferences": [{**GOOD_PREF, "key": "a"}, {**GOOD_PREF, **over}]}


BAD_CASES: list[tuple[object, str]] = [
    ([], r"^document: must be a JSON object"),
    (_doc(extra=1), r"^extra: unknown field; allowed fields are: exported_at, preferences"),
    ({"version": "memory-graph/0"}, r"^version: expected 'memory-graph/1'"),
    ({}, r"^version: expected"),
    (_doc(exported_at="2026-01-01T00:00:00"), r"^exported_at is a naive datetime"),
    (_doc(records={}), r"^records: must be a JSON array"),
    (_doc(preferences="x"), r"^preferences: must be a JSON array"),
    (_doc(records=[1]), r"^records\[0\]: must be a JSON object"),
    (_doc(**_rec(kind="memo")), r"^records\[3\]\.kind: kind 'memo' is invalid: allowed are"),
    (_doc(**_rec(kind=None)), r"^records\[3\]\.kind: "),
    (_doc(**_rec(content="  ")), r"^records\[3\]\.content: .*must not be empty"),
    (_doc(**_rec(content=5)), r"^records\[3\]\.content: .*must be a string"),
    (_doc(**_rec(status="active")), r"^records\[3\]\.status: unknown field"),
    (_doc(**_rec(content_hash="x")), r"^records\[3\]\.content_hash: unknown field"),
    (_doc(**_rec(level="team")), r"^records\[3\]\.level: .*allowed are user_workspace"),
    (_doc(**_rec(trust="gospel")), r"^records\[3\]\.trust: .*allowed are"),
    (_doc(**_rec(sensitivity="public")), r"^records\[3\]\.sensitivity: "),
    (_doc(**_rec(confidence=1.5)), r"^records\[3\]\.confidence: .*0\.\.1"),
    (_doc(**_rec(confidence=True)), r"^records\[3\]\.confidence: "),
    (_doc(**_rec(key="")), r"^records\[3\]\.key must not be empty"),
    (_doc(**_rec(kind="preference", key="k")), r"^records\[3\]: .*set_preference"),
    (_doc(**_rec(knowledge=[])), r"^records\[3\]\.knowledge: must be a JSON object"),
    (
        _doc(**_rec(knowledge={"applies_when": ["a"] * 5})),
        r"^records\[3\]\.knowledge\.applies_when has 5 entries: at most 4",
    ),
    (
        _doc(**_rec(knowledge={"counterexamples": ["x" * 257]})),
        r"^records\[3\]\.knowledge\.counterexamples\[0\] is 257 bytes",
    ),
    (
        _doc(**_rec(knowledge={"applies_when": [""]})),
        r"^records\[3\]\.knowledge\.applies_when\[0\] must not be empty",
    ),
    (
        _doc(**_rec(knowledge={"claim": {"key": "Bad Key", "value": "v"}})),
        r"^records\[3\]\.knowledge: claim\.key 'Bad Key' is invalid",
    ),
    (
        _doc(**_rec(knowledge={"claim": {"key": "k" * 129, "value": "v"}})),
        r"^records\[3\]\.knowledge: claim\.key is 129 bytes",
    ),
    (
        _doc(**_rec(knowledge={"claim": {"key": "k", "value": "v" * 257}})),
        r"^records\[3\]\.knowledge: claim\.value is 257 bytes",
    ),
    (_doc(**_rec(knowledge={"notes": []})), r"^records\[3\]\.knowledge: .*unknown fields"),
    (
        _doc(**_rec(content="x" * 4000, knowledge={"applies_when": ["y" * 200]})),
        r"^records\[3\]\.content: content plus knowledge is 4200 bytes",
    ),
    (_doc(**_rec(expires_at="2026-01-01")), r"^records\[3\]\.expires_at is a naive datetime"),
    (_doc(**_rec(created_at="yesterday")), r"^records\[3\]\.created_at is not ISO-8601"),
    (_doc(**_rec(updated_at=5)), r"^records\[3\]\.updated_at: must be an ISO-8601 string"),
    (
        _doc(**_rec(updated_at="2026-01-02T00:00:00Z", expires_at="2026-01-01T00:00:00+00:00")),
        r"^records\[3\]\.expires_at: expires_at .* must be later than updated_at",
    ),
    (_doc(**_rec(provenance="chat")), r"^records\[3\]\.provenance: must be a JSON object"),
    (
        _doc(**_rec(provenance={"source": "x", "hash": "y"})),
        r"^records\[3\]\.provenance\.hash: unknown field",
    ),
    (
        _doc(**_rec(provenance={"observed_at": "2026-01-01T00:00"})),
        r"^records\[3\]\.provenance\.observed_at is a naive",
    ),
    (_doc(**_pref(key="bad key")), r"^preferences\[1\]\.key: preference key 'bad key'"),
    (_doc(**_pref(key="a..b")), r"^preferences\[1\]\.key: "),
    (_doc(**_pref(key=" A ")), r"^preferences\[1\]\.key: 'a' at level 'user' repeats"),
    (_doc(**_pref(value="")), r"^preferences\[1\]\.value: .*must not be empty"),
    (_doc(**_pref(value=None)), r"^preferences\[1\]\.value: .*must be a string"),
    (_doc(**_pref(level="root")), r"^preferences\[1\]\.level: "),
    (_doc(**_pref(revision=3)), r"^preferences\[1\]\.revision: unknown field"),
    (_doc(**_pref(expires_at="2026-01-01T00:00:00")), r"^preferences\[1\]\.expires_at is a naive"),
    (
        _doc(**_pref(updated_at="2026-01-02T00:00:00Z", expires_at="2026-01-02T00:00:00Z")),
        r"^preferences\[1\]\.expires_at: expires_at .* must be later",
    ),
    (_doc(profile=[]), r"^profile: must be a JSON object"),
    (_doc(profile={"name": None}), r"^profile\.name: must be a string"),
    (_doc(profile={"name": " "}), r"^profile\.name must not be empty"),
]


@pytest.mark.parametrize(("document", "pattern"), BAD_CASES)
def test_validation_errors_name_the_path(document: object, pattern: str) -> None:
    with pytest.raises(ValidationError, match=pattern):
        parse_import(document, limits=LIMITS)


def test_unknown_profile_field_lists_allowed() -> None:
    with pytest.raises(UnknownFieldError, match=r"^profile: .*'age'.*allowed fields are: "):
        parse_import(_doc(profile={"name": "A", "age": "3"}), limits=LIMITS)
    custom = Limits(profile_fields=("name", "age"))
    items = parse_import(_doc(profile={"age": "3"}), limits=custom)
    assert items == [ImportItem("patch_profile", {"patch": {"age": "3"}})]


def test_profile_value_limit() -> None:
    with pytest.raises(LimitExceededError, match=r"^profile\.name is 5000 bytes"):
        parse_import(_doc(profile={"name": "x" * 5000}), limits=LIMITS)


def test_first_problem_wins_and_nothing_is_returned() -> None:
    doc = _doc(
        preferences=[GOOD_PREF],
        records=[GOOD_RECORD, {"kind": "bad"}, {"kind": "worse"}],
    )
    with pytest.raises(ValidationError, match=r"^records\[1\]\.kind"):
        parse_import(doc, limits=LIMITS)


def test_import_size_limit() -> None:
    limits = Limits(max_import_records=3)
    ok = _doc(preferences=[GOOD_PREF], records=[GOOD_RECORD, GOOD_RECORD])
    assert len(parse_import(ok, limits=limits)) == 3
    too_many = _doc(preferences=[GOOD_PREF], records=[GOOD_RECORD] * 3)
    with pytest.raises(LimitExceededError, match=r"^records: .*4 .*limit of 3"):
        parse_import(too_many, limits=limits)
    # the count is checked before the entries, so a huge document fails fast
    with pytest.raises(LimitExceededError):
        parse_import(_doc(records=[{"kind": "bad"}] * 101), limits=LIMITS)


def test_default_limit_is_100() -> None:
    assert len(parse_import(_doc(records=[GOOD_RECORD] * 100), limits=LIMITS)) == 100
    with pytest.raises(LimitExceededError):
        parse_import(_doc(records=[GOOD_RECORD] * 101), limits=LIMITS)


def test_timestamps_normalised_to_utc_z() -> None:
    items = parse_import(
        _doc(
            records=[
                {
                    **GOOD_RECORD,
                    "updated_at": "2026-01-01T01:00:00+01:00",
                    "expires_at": "2027-01-01T01:00:00+01:00",
                }
            ]
        ),
        limits=LIMITS,
    )
    assert items[0].args["expires_at"] == "2027-01-01T00:00:00Z"


def test_export_rejects_naive_time() -> None:
    with pytest.raises(ValidationError, match="naive"):
        build_export(PROFILE, [], [], exported_at=datetime(2026, 1, 1))
