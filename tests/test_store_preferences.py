"""Keyed preferences: seed semantics, stale writes, deletes, expiry, precedence (DESIGN §3)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from _stores import T0, db_state

from memory_graph import (
    LimitExceededError,
    Limits,
    Owner,
    ScopeError,
    StaleWriteError,
    ValidationError,
)

ALICE = Owner("alice")
FULL = Owner("alice", workspace="/repo", agent="coder")


def test_key_normalisation(store):
    r = store.set_preference(ALICE, " Reply.Language ", "en")
    assert r.key == "reply.language" and r.status == "CREATED"
    for raw in ["REPLY.LANGUAGE", "reply.language", "\treply.LANGUAGE\n"]:
        assert store.set_preference(ALICE, raw, "en").status == "UNCHANGED"
    assert [p.key for p in store.get_preferences(ALICE)] == ["reply.language"]


BAD_KEYS = ["", " ", "reply language", "a..b", "-a", "a-", "a/b", "ключ", "a" * 129, 5, None]


def test_invalid_keys(store, pg_dsn):
    before = db_state(pg_dsn)
    for key in BAD_KEYS:
        with pytest.raises(ValidationError):
            store.set_preference(ALICE, key, "x")
        with pytest.raises(ValidationError):
            store.delete_preference(ALICE, key)
    assert db_state(pg_dsn) == before


def test_seed_lifecycle(store, clock):
    t1 = T0
    r = store.set_preference(ALICE, "tone", "brief", updated_at=t1)
    assert (r.status, r.revision, r.value) == ("CREATED", 1, "brief")
    # updated_at alone does not count: unchanged, no revision bump
    r = store.set_preference(ALICE, "tone", "brief", updated_at=t1 + timedelta(hours=1))
    assert (r.status, r.revision) == ("UNCHANGED", 1)
    r = store.set_preference(ALICE, "tone", "chatty", updated_at=t1 + timedelta(hours=2))
    assert (r.status, r.revision, r.previous_value) == ("UPDATED", 2, "brief")
    # same value, new event id -> a difference
    r = store.set_preference(
        ALICE, "tone", "chatty", source_event_id="m1", updated_at=t1 + timedelta(hours=3)
    )
    assert (r.status, r.revision) == ("UPDATED", 3)
    # same value, new expiry -> a difference
    r = store.set_preference(
        ALICE,
        "tone",
        "chatty",
        source_event_id="m1",
        expires_at=t1 + timedelta(days=9),
        updated_at=t1 + timedelta(hours=4),
    )
    assert (r.status, r.revision) == ("UPDATED", 4)
    # same value, other source -> a difference
    r = store.set_preference(
        ALICE,
        "tone",
        "chatty",
        source="conversation",
        source_event_id="m1",
        expires_at=t1 + timedelta(days=9),
        updated_at=t1 + timedelta(hours=5),
    )
    assert (r.status, r.revision) == ("UPDATED", 5)
    [p] = store.get_preferences(ALICE)
    assert (p.value, p.source, p.source_event_id, p.revision) == ("chatty", "conversation", "m1", 5)
    assert p.updated_at == t1 + timedelta(hours=5)


def test_stale_write_rejected(store, pg_dsn):
    store.set_preference(ALICE, "tone", "brief", updated_at=T0)
    before = db_state(pg_dsn)
    for delta in [timedelta(0), -timedelta(seconds=1)]:  # equal timestamps are stale too
        with pytest.raises(StaleWriteError, match="later updated_at"):
            store.set_preference(ALICE, "tone", "chatty", updated_at=T0 + delta)
    assert db_state(pg_dsn) == before
    # the no-op check comes first: an identical replay is UNCHANGED, not stale
    assert store.set_preference(ALICE, "tone", "brief", updated_at=T0).status == "UNCHANGED"


def test_strictly_later_is_accepted(store):
    store.set_preference(ALICE, "tone", "brief", updated_at=T0)
    r = store.set_preference(ALICE, "tone", "chatty", updated_at=T0 + timedelta(microseconds=1))
    assert r.status == "UPDATED"


def test_delete(store, clock):
    r = store.delete_preference(ALICE, "tone")
    assert (r.status, r.revision, r.previous_value) == ("UNCHANGED", 0, None)
    store.set_preference(ALICE, "tone", "brief")
    clock.advance(seconds=1)
    r = store.delete_preference(ALICE, " TONE ")
    assert (r.status, r.previous_value, r.revision) == ("DELETED", "brief", 2)
    assert store.get_preferences(ALICE) == []
    r = store.delete_preference(ALICE, "tone")
    assert (r.status, r.revision) == ("UNCHANGED", 0)
    clock.advance(seconds=1)
    r = store.set_preference(ALICE, "tone", "chatty")
    assert (r.status, r.revision) == ("CREATED", 3)
    assert [p.value for p in store.get_preferences(ALICE)] == ["chatty"]


def test_replayed_write_cannot_resurrect_deleted_value(store, clock):
    store.set_preference(ALICE, "tone", "brief", updated_at=T0)
    store.delete_preference(ALICE, "tone", updated_at=T0 + timedelta(minutes=1))
    with pytest.raises(StaleWriteError):
        store.set_preference(ALICE, "tone", "brief", updated_at=T0)
    assert store.get_preferences(ALICE) == []


def test_expiry_instant(store):
    exp = T0 + timedelta(hours=1)
    store.set_preference(ALICE, "tone", "brief", expires_at=exp)
    assert len(store.get_preferences(ALICE, as_of=exp - timedelta(microseconds=1))) == 1
    assert store.get_preferences(ALICE, as_of=exp) == []
    assert store.get_preferences(ALICE, as_of=exp + timedelta(days=1)) == []
    # expired values stay stored and audited
    recs = store.list_records(ALICE, include_inactive=True, kinds=["preference"])
    assert [r.content for r in recs] == ["brief"]


def test_expiry_must_follow_updated_at(store, pg_dsn):
    before = db_state(pg_dsn)
    for exp in [T0, T0 - timedelta(seconds=1)]:
        with pytest.raises(ValidationError, match="expires_at"):
            store.set_preference(ALICE, "tone", "brief", expires_at=exp, updated_at=T0)
    assert db_state(pg_dsn) == before
    r = store.set_preference(
        ALICE, "tone", "brief", expires_at=T0 + timedelta(microseconds=1), updated_at=T0
    )
    assert r.status == "CREATED"


def test_naive_datetimes_rejected(store, pg_dsn):
    before = db_state(pg_dsn)
    with pytest.raises(ValidationError, match="naive"):
        store.set_preference(ALICE, "tone", "brief", expires_at=datetime(2027, 1, 1))
    with pytest.raises(ValidationError, match="naive"):
        store.set_preference(ALICE, "tone", "brief", updated_at=datetime(2027, 1, 1))
    with pytest.raises(ValidationError, match="naive"):
        store.get_preferences(ALICE, as_of=datetime(2027, 1, 1))
    assert db_state(pg_dsn) == before


def test_precedence_and_overridden(store):
    for level, value in [
        ("agent", "a"),
        ("agent_workspace", "aw"),
        ("user", "u"),
        ("user_workspace", "uw"),
    ]:
        store.set_preference(FULL, "tone", value, level=level)
    prefs = store.get_preferences(FULL)
    assert [(p.identity.level, p.value, p.overridden) for p in prefs] == [
        ("user_workspace", "uw", False),
        ("user", "u", True),
        ("agent_workspace", "aw", True),
        ("agent", "a", True),
    ]
    # an owner without the workspace/agent sees only what applies to it
    assert [(p.value, p.overridden) for p in store.get_preferences(ALICE)] == [("u", False)]
    no_ws = Owner("alice", agent="coder")
    assert [(p.value, p.overridden) for p in store.get_preferences(no_ws)] == [
        ("u", False),
        ("a", True),
    ]
    other_ws = Owner("alice", workspace="/other", agent="coder")
    assert [p.value for p in store.get_preferences(other_ws)] == ["u", "a"]


def test_level_needs_identity(store):
    with pytest.raises(ScopeError, match="workspace"):
        store.set_preference(ALICE, "tone", "x", level="user_workspace")
    with pytest.raises(ValidationError):
        store.set_preference(ALICE, "tone", "x", level="global")


def test_value_limits(store):
    assert store.set_preference(ALICE, "a", "x" * 4096).status == "CREATED"
    with pytest.raises(LimitExceededError):
        store.set_preference(ALICE, "b", "x" * 4097)
    for bad in ["", "   ", None, 3, "a\x00b"]:
        with pytest.raises(ValidationError):
            store.set_preference(ALICE, "c", bad)


def test_preferences_count_toward_capacity(make_store):
    s = make_store(Limits(max_records_per_identity=2))
    s.set_preference(ALICE, "a", "1")
    s.set_preference(ALICE, "b", "2")
    with pytest.raises(LimitExceededError, match="max_records_per_identity"):
        s.set_preference(ALICE, "c", "3")


def test_writes_are_audited_and_go_through_proposals(store):
    store.set_preference(ALICE, "tone", "brief")
    log = store.audit_log(ALICE)
    actions = [(r["target_kind"], r["action"]) for r in log]
    assert ("preference", "set") in actions
    assert ("proposal", "proposed") in actions and ("proposal", "approved") in actions
    assert all(r["actor"] in ("api", "system") for r in log)
    assert store.list_pending(ALICE) == []
