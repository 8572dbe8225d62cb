"""Records: content hash, duplicates, limits, capacity, compare-and-set, expiry, index tokens."""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg
import pytest
from _stores import T0, db_state

from memory_graph import (
    LimitExceededError,
    Limits,
    NotFoundError,
    Owner,
    ValidationError,
)
from memory_graph.recall.tokenize import index_tokens

ALICE = Owner("alice")


def stored_tokens(dsn, record_id):
    """The record's index tokens as stored in ``mg_records.tokens``."""
    with psycopg.connect(dsn) as c:
        [(tokens,)] = c.execute("SELECT tokens FROM mg_records WHERE id = %s", (record_id,))
    return tokens


def test_add_and_get(store, pg_dsn):
    k = {
        "applies_when": ["咖啡店"],
        "counterexamples": ["at home"],
        "claim": {"key": "drink.morning", "value": "latte"},
    }
    r = store.add(
        ALICE,
        "fact",
        "DeepSeek插件，咖啡",
        knowledge=k,
        evidence={
            "quote": "I like coffee",
            "source_event_id": "m1",
            "thread_id": "t1",
            "observed_at": "2026-01-01T11:00:00Z",
        },
    )
    assert (r.status, r.write_status, r.version) == ("approved", "CREATED", 1)
    rec = store.get_record(ALICE, r.record_id)
    assert rec.content == "DeepSeek插件，咖啡" and rec.kind == "fact" and rec.version == 1
    assert rec.trust == "user-confirmed" and rec.sensitivity == "private" and rec.status == "active"
    assert rec.provenance.source_event_id == "m1" and rec.provenance.thread_id == "t1"
    assert rec.provenance.quote == "I like coffee"
    assert rec.knowledge.claim.key == "drink.morning"
    assert rec.knowledge.applies_when == ("咖啡店",)
    assert rec.created_at == rec.updated_at == datetime.fromisoformat("2026-01-01T11:00:00+00:00")
    tokens = stored_tokens(pg_dsn, r.record_id)
    assert tokens == sorted(set(index_tokens(rec.content, rec.knowledge)))
    assert "插件" in tokens and "件咖" not in tokens


def test_content_hash_is_nfkc(store):
    a = store.add(ALICE, "fact", "ＡＢＣ plan")
    b = store.add(ALICE, "fact", "ABC plan")
    assert b.write_status == "UNCHANGED" and b.record_id == a.record_id
    assert len(store.list_records(ALICE)) == 1


def test_duplicate_raises_confidence(store, pg_dsn):
    a = store.add(ALICE, "fact", "Likes tea", confidence=0.6)
    b = store.add(ALICE, "fact", "Likes tea")
    assert (b.status, b.write_status, b.record_id) == ("approved", "UNCHANGED", a.record_id)
    rec = store.get_record(ALICE, a.record_id)
    assert rec.confidence == pytest.approx(0.7) and rec.version == 1
    store.add(ALICE, "fact", "Likes tea")
    assert store.get_record(ALICE, a.record_id).confidence == pytest.approx(0.775)
    r = store.reinforce(ALICE, a.record_id)
    assert r.confidence == pytest.approx(0.775 + 0.225 * 0.25)
    assert len(store.list_records(ALICE, include_inactive=True)) == 1
    actions = [x["action"] for x in store.audit_log(ALICE) if x["target_kind"] == "record"]
    assert actions.count("reinforce") == 3 and actions.count("create") == 1


def test_not_duplicates(store, clock):
    a = store.add(ALICE, "fact", "Likes tea")
    # different knowledge -> new row
    b = store.add(ALICE, "fact", "Likes tea", knowledge={"applies_when": ["mornings"]})
    # different identity -> new row
    c = store.add(Owner("alice", agent="x"), "fact", "Likes tea", level="agent")
    assert len({a.record_id, b.record_id, c.record_id}) == 3
    # an expired record is not a duplicate
    d = store.add(ALICE, "fact", "Short lived", expires_at=T0 + timedelta(hours=1))
    clock.advance(hours=1)
    e = store.add(ALICE, "fact", "Short lived")
    assert e.write_status == "CREATED" and e.record_id != d.record_id
    # a removed record is not a duplicate
    store.remove(ALICE, a.record_id, base_version=1)
    f = store.add(ALICE, "fact", "Likes tea")
    assert f.write_status == "CREATED" and f.record_id != a.record_id


def test_content_limit_boundary(store, pg_dsn):
    assert store.add(ALICE, "fact", "x" * 4096).write_status == "CREATED"
    k = {"applies_when": ["y" * 96]}
    assert store.add(ALICE, "fact", "z" * 4000, knowledge=k).write_status == "CREATED"
    before = db_state(pg_dsn)
    with pytest.raises(LimitExceededError, match="4096"):
        store.add(ALICE, "fact", "x" * 4097)
    with pytest.raises(LimitExceededError, match="content plus knowledge"):
        store.add(ALICE, "fact", "z" * 4001, knowledge=k)
    with pytest.raises(LimitExceededError):
        store.add(ALICE, "fact", "é" * 2049)
    assert db_state(pg_dsn) == before


def test_knowledge_limits(store, pg_dsn):
    ok = {
        "applies_when": ["a" * 256] * 4,
        "counterexamples": ["b" * 256] * 4,
        "claim": {"key": "k" * 128, "value": "v" * 256},
    }
    assert store.add(ALICE, "fact", "fine", knowledge=ok).write_status == "CREATED"
    before = db_state(pg_dsn)
    bad = [
        {"applies_when": ["a"] * 5},
        {"counterexamples": ["a"] * 5},
        {"applies_when": ["a" * 257]},
        {"counterexamples": [""]},
        {"applies_when": "not a list"},
        {"claim": {"key": "Bad Key", "value": "v"}},
        {"claim": {"key": "-x", "value": "v"}},
        {"claim": {"key": "k" * 129, "value": "v"}},
        {"claim": {"key": "k", "value": "v" * 257}},
        {"claim": {"key": "k", "value": ""}},
        {"claim": {"key": "k"}},
        {"other": 1},
        "text",
    ]
    for k in bad:
        with pytest.raises(ValidationError):
            store.add(ALICE, "fact", "content", knowledge=k)
    assert db_state(pg_dsn) == before


def test_field_validation(store, pg_dsn):
    before = db_state(pg_dsn)
    cases = [
        dict(kind="memo", content="x"),
        dict(kind="fact", content=""),
        dict(kind="fact", content="x", trust="trusted"),
        dict(kind="fact", content="x", sensitivity="secret"),
        dict(kind="fact", content="x", confidence=1.5),
        dict(kind="fact", content="x", confidence=-0.1),
        dict(kind="fact", content="x", confidence=float("nan")),
        dict(kind="fact", content="x", expires_at=datetime(2027, 1, 1)),
        dict(kind="fact", content="x", expires_at=T0),
        dict(kind="preference", content="x", key="tone"),
    ]
    for kw in cases:
        with pytest.raises(ValidationError):
            store.add(ALICE, **kw)
    assert db_state(pg_dsn) == before


def test_capacity(make_store, clock):
    s = make_store(Limits(max_records_per_identity=3))
    ids = [s.add(ALICE, "fact", f"fact {i}").record_id for i in range(3)]
    with pytest.raises(LimitExceededError, match="max_records_per_identity"):
        s.add(ALICE, "fact", "one too many")
    # a duplicate at capacity is still fine: it adds no row
    assert s.add(ALICE, "fact", "fact 0").write_status == "UNCHANGED"
    # other identities have their own capacity
    s.add(Owner("alice", agent="a"), "fact", "agent fact", level="agent")
    s.remove(ALICE, ids[0], base_version=1)
    s.add(ALICE, "fact", "fits again", expires_at=T0 + timedelta(minutes=1))
    with pytest.raises(LimitExceededError):
        s.add(ALICE, "fact", "full again")
    clock.advance(minutes=1)  # expired records do not count
    assert s.add(ALICE, "fact", "after expiry").write_status == "CREATED"


def test_replace_compare_and_set(store, pg_dsn):
    r = store.add(ALICE, "fact", "Lives in Paris")
    ok = store.replace(
        ALICE,
        r.record_id,
        "Lives in Berlin",
        base_version=1,
        knowledge={"claim": {"key": "home.city", "value": "berlin"}},
    )
    assert (ok.status, ok.write_status, ok.version) == ("approved", "UPDATED", 2)
    rec = store.get_record(ALICE, r.record_id)
    assert rec.content == "Lives in Berlin" and rec.version == 2 and rec.id == r.record_id
    tokens = stored_tokens(pg_dsn, r.record_id)
    assert "berlin" in tokens and "paris" not in tokens
    assert [h.record.id for h in store.search(ALICE, "Berlin")] == [r.record_id]
    assert store.search(ALICE, "Paris") == []
    stale = store.replace(ALICE, r.record_id, "Lives in Rome", base_version=1)
    assert stale.status == "conflicted" and stale.write_status is None
    assert store.get_record(ALICE, r.record_id).content == "Lives in Berlin"


def test_remove_is_status_change(store, pg_dsn):
    r = store.add(ALICE, "instruction", "Answer in French")
    assert store.remove(ALICE, r.record_id, base_version=2).status == "conflicted"
    res = store.remove(ALICE, r.record_id, base_version=1)
    assert (res.status, res.write_status, res.version) == ("approved", "DELETED", 2)
    rec = store.get_record(ALICE, r.record_id)
    assert rec.status == "removed" and rec.content == "Answer in French"
    assert store.list_records(ALICE) == []
    assert [x.id for x in store.list_records(ALICE, include_inactive=True)] == [r.record_id]
    assert store.remove(ALICE, r.record_id, base_version=2).status == "conflicted"
    assert store.replace(ALICE, r.record_id, "x", base_version=2).status == "conflicted"
    assert store.search(ALICE, "French") == []


def test_keyed_preferences_are_not_replaced_by_id(store):
    store.set_preference(ALICE, "tone", "brief")
    [rec] = store.list_records(ALICE, kinds=["preference"])
    with pytest.raises(ValidationError, match="set_preference"):
        store.replace(ALICE, rec.id, "chatty", base_version=1)


def test_expiry_instant(store):
    exp = T0 + timedelta(hours=2)
    r = store.add(ALICE, "fact", "Temporary badge", expires_at=exp)
    assert [x.id for x in store.list_records(ALICE, as_of=exp - timedelta(microseconds=1))] == [
        r.record_id
    ]
    assert store.list_records(ALICE, as_of=exp) == []
    assert store.search(ALICE, "badge", as_of=exp) == []
    assert len(store.search(ALICE, "badge", as_of=exp - timedelta(seconds=1))) == 1
    rec = store.get_record(ALICE, r.record_id)  # expired records stay stored
    assert rec.expires_at == exp and not rec.is_active(exp) and rec.is_active(T0)


def test_not_found(store):
    for rid in ["nope", "00000000-0000-0000-0000-000000000000", ""]:
        with pytest.raises(NotFoundError):
            store.get_record(ALICE, rid)
        with pytest.raises(NotFoundError):
            store.remove(ALICE, rid, base_version=1)
        with pytest.raises(NotFoundError):
            store.reinforce(ALICE, rid)


def test_search_basics(store):
    store.add(ALICE, "fact", "喜欢喝咖啡")
    store.add(ALICE, "fact", "Card ends 42", sensitivity="sensitive")
    store.add(ALICE, "fact", "Observed: likes coffee", trust="agent-observed")
    assert [h.record.content for h in store.search(ALICE, "咖啡")] == ["喜欢喝咖啡"]
    assert store.search(ALICE, "card") == []
    assert len(store.search(ALICE, "card", sensitivities=["sensitive"])) == 1
    assert [h.record.content for h in store.search(ALICE, "coffee")] == ["Observed: likes coffee"]
    assert store.search_confirmed(ALICE, "coffee") == []
    assert len(store.search(ALICE, "")) == 2
    assert len(store.search(ALICE, "", limit=1)) == 1
    for bad in [0, 101, True]:
        with pytest.raises(ValidationError):
            store.search(ALICE, "x", limit=bad)
    with pytest.raises(ValidationError):
        store.search(ALICE, "x" * 2049)


def test_audit_rows(store):
    r = store.add(ALICE, "fact", "Likes tea")
    store.replace(ALICE, r.record_id, "Likes green tea", base_version=1)
    store.remove(ALICE, r.record_id, base_version=2)
    rows = [x for x in store.audit_log(ALICE) if x["target_kind"] == "record"]
    assert [x["action"] for x in rows] == ["remove", "replace", "create"]
    assert [x["version"] for x in rows] == [3, 2, 1]
    assert rows[1]["before"]["content"] == "Likes tea"
    assert rows[1]["after"]["content"] == "Likes green tea"
    assert all(x["proposal_id"] for x in rows)


def test_reinforce_is_idempotent_per_source_event(store):
    rid = store.add(ALICE, "fact", "Uses tmux", confidence=0.5).record_id
    first = store.reinforce(ALICE, rid, source_event_id="m1").confidence
    assert first > 0.5
    assert store.reinforce(ALICE, rid, source_event_id="m1").confidence == first
    assert store.reinforce(ALICE, rid, source_event_id="m2").confidence > first
    with pytest.raises(ValidationError):
        store.reinforce(ALICE, rid, source_event_id="")
