"""The bulk trusted load (``add_many``): same records, index and audit as ``add``, one write."""

from __future__ import annotations

from datetime import timedelta

import psycopg
import pytest
from _stores import T0, db_state

from memory_graph import LimitExceededError, Limits, Owner, ValidationError
from memory_graph.recall.tokenize import index_tokens
from memory_graph.storage.schema import RECALL_STATS_REFRESH

ALICE = Owner("alice")
BOB = Owner("bob")
REFUSED = "my credit card 4111 1111 1111 1111"


def _stats(dsn):
    with psycopg.connect(dsn) as c:
        return c.execute("SELECT * FROM mg_pool_stats WHERE n <> 0 ORDER BY 1, 2, 3, 4").fetchall()


def test_bulk_matches_add(store, pg_dsn):
    k = {"applies_when": ["咖啡店"], "claim": {"key": "drink", "value": "latte"}}
    res = store.add_many(
        ALICE,
        [
            {"kind": "fact", "content": "Caroline paints sunsets"},
            {
                "kind": "fact",
                "content": "DeepSeek插件，咖啡",
                "knowledge": k,
                "evidence": {"observed_at": "2025-05-08T13:56:00Z", "source_event_id": "D1:3"},
            },
            {
                "kind": "instruction",
                "content": "answer in French",
                "trust": "agent-observed",
                "confidence": 0.6,
            },
        ],
    )
    assert [(r.status, r.write_status, r.version) for r in res] == [("approved", "CREATED", 1)] * 3
    recs = {r.record_id: store.get_record(ALICE, r.record_id) for r in res}
    second = recs[res[1].record_id]
    assert second.knowledge.claim.value == "latte"
    assert second.provenance.source_event_id == "D1:3"
    assert second.updated_at.isoformat().startswith("2025-05-08T13:56")
    third = recs[res[2].record_id]
    assert (third.kind, third.trust, third.confidence) == ("instruction", "agent-observed", 0.6)
    with psycopg.connect(pg_dsn) as c:
        for r in res:
            rec = recs[r.record_id]
            [(stored,)] = c.execute("SELECT tokens FROM mg_records WHERE id = %s", (r.record_id,))
            assert stored == sorted(set(index_tokens(rec.content, rec.knowledge)))
    # The pool statistics kept by the triggers equal a recomputation from scratch.
    before = _stats(pg_dsn)
    with psycopg.connect(pg_dsn) as c:
        c.execute(RECALL_STATS_REFRESH)
    assert _stats(pg_dsn) == before and before[0][-1] == 3
    hits = store.search(ALICE, "who paints sunsets?")
    assert [h.record.id for h in hits][:1] == [res[0].record_id]
    audit = [a for a in store.audit_log(ALICE) if a["target_kind"] == "record"]
    assert sorted(a["target_id"] for a in audit) == sorted(r.record_id for r in res)
    assert {a["action"] for a in audit} == {"create"} and {a["actor"] for a in audit} == {"api"}


def test_bulk_duplicates_are_unchanged(store):
    first = store.add(ALICE, "fact", "likes tea")
    res = store.add_many(
        ALICE,
        [
            {"kind": "fact", "content": "likes tea"},
            {"kind": "fact", "content": "likes coffee"},
            {"kind": "fact", "content": "ｌｉｋｅｓ coffee"},  # NFKC-equal: a duplicate
        ],
    )
    assert [r.write_status for r in res] == ["UNCHANGED", "CREATED", "UNCHANGED"]
    assert res[0].record_id == first.record_id and res[2].record_id == res[1].record_id
    assert store.get_record(ALICE, first.record_id).confidence == 1.0
    assert len(store.list_records(ALICE)) == 2


def test_bulk_guard_refusal(store, pg_dsn):
    before = db_state(pg_dsn)
    items = [{"kind": "fact", "content": "likes tea"}, {"kind": "fact", "content": REFUSED}]
    with pytest.raises(ValidationError, match="item 1: blocked by the sensitive-data guard"):
        store.add_many(ALICE, items)
    assert db_state(pg_dsn) == before
    res = store.add_many(ALICE, items, skip_refused=True)
    assert [r.status for r in res] == ["approved", "rejected"]
    assert "guard" in res[1].message and res[1].record_id is None
    assert [r.content for r in store.list_records(ALICE)] == ["likes tea"]


@pytest.mark.parametrize(
    ("items", "error"),
    [
        ("likes tea", ValidationError),
        ({"kind": "fact", "content": "x"}, ValidationError),
        ([["fact", "likes tea"]], ValidationError),
        ([{"kind": "fact", "content": "x", "owner": "bob"}], ValidationError),
        ([{"kind": "fact", "content": "bad\x00nul"}], ValidationError),
        ([{"kind": "secret", "content": "x"}], ValidationError),
        ([{"kind": "preference", "content": "x", "key": "editor"}], ValidationError),
        ([{"kind": "fact", "content": "x", "confidence": float("nan")}], ValidationError),
        ([{"kind": "fact", "content": "x" * 5000}], ValidationError),
        (
            [{"kind": "fact", "content": "x", "evidence": {"observed_at": "yesterday"}}],
            ValidationError,
        ),
        ([{"kind": "fact", "content": "x", "expires_at": T0 - timedelta(days=1)}], ValidationError),
        ([{"kind": "fact", "content": f"fact {i}"} for i in range(4)], LimitExceededError),
    ],
)
def test_bulk_hostile_items_write_nothing(make_store, pg_dsn, items, error):
    store = make_store(Limits(max_records_per_identity=3))
    good = {"kind": "fact", "content": "likes tea"}
    before = db_state(pg_dsn)
    with pytest.raises(error):
        store.add_many(
            ALICE, [good, *items] if isinstance(items, list) and len(items) < 4 else items
        )
    assert db_state(pg_dsn) == before


def test_bulk_capacity_counts_existing_rows(make_store, pg_dsn):
    store = make_store(Limits(max_records_per_identity=3))
    store.add(ALICE, "fact", "one")
    store.add(ALICE, "fact", "two")
    before = db_state(pg_dsn)
    with pytest.raises(LimitExceededError):
        store.add_many(
            ALICE, [{"kind": "fact", "content": "three"}, {"kind": "fact", "content": "four"}]
        )
    assert db_state(pg_dsn) == before
    res = store.add_many(
        ALICE, [{"kind": "fact", "content": "one"}, {"kind": "fact", "content": "three"}]
    )
    assert [r.write_status for r in res] == ["UNCHANGED", "CREATED"]


def test_bulk_is_per_owner(store):
    res = store.add_many(BOB, [{"kind": "fact", "content": "bob's secret garden"}])
    assert store.search(ALICE, "secret garden") == []
    assert [h.record.id for h in store.search(BOB, "secret garden")] == [res[0].record_id]
    with pytest.raises(ValidationError):
        store.add_many(ALICE, [{"kind": "fact", "content": "x"}], level="root")
    with pytest.raises(ValidationError):
        store.add_many(ALICE, [{"kind": "fact", "content": "x"}], skip_refused="yes")
