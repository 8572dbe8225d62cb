"""The retention sweep (issue 12 §3): expire, delete, trim, drop idle threads; in bounded
batches that skip rows locked by live transactions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from _graph_helpers import cfg, harness_on, turn
from _scan import stats_consistent

from memory_graph import Owner, SweepReport, ValidationError

ALICE, BOB = Owner("alice"), Owner("bob")
DAY = timedelta(days=1)


def _real_now() -> datetime:
    return datetime.now(timezone.utc)


def _propose(store: Any, owner: Owner, key: str) -> Any:
    return store.propose(owner, "set_preference", {"key": key, "value": "x"}, level="user")


def test_sweep_expires_deletes_and_trims(make_store: Any, clock: Any, pg_dsn: str) -> None:
    store = make_store()
    old = [_propose(store, ALICE, f"old.k{i}") for i in range(5)]
    keep_rid = store.add(ALICE, "fact", "active fact about tea").record_id
    gone_rid = store.add(ALICE, "fact", "removed fact about coffee").record_id
    store.remove(ALICE, gone_rid, base_version=1)
    exp_rid = store.add(BOB, "fact", "expiring fact", expires_at=clock.now + DAY).record_id
    # Far in the future: everything above is past its expiry and older than the retentions
    # (removal time is the server's clock, so the sweep's clock must be past it too).
    clock.now = _real_now() + 400 * DAY
    fresh = _propose(store, BOB, "fresh.k")
    with psycopg.connect(pg_dsn) as conn:  # trusted writes leave decided proposals (at T0)
        (decided_before,) = conn.execute(
            "SELECT count(*) FROM mg_proposals WHERE status <> 'pending'"
        ).fetchone() or (0,)

    report = store.sweep(batch_size=2)

    assert isinstance(report, SweepReport)
    assert report.expired_proposals == 5
    assert report.deleted_records == 2
    # The old decided ones go; the five expired now are decided just now and stay.
    assert report.deleted_proposals == decided_before > 0
    assert report.trimmed_audit >= 3
    assert report.deleted_threads == 0
    assert report.batches >= 3 + 2  # 5 expiries in batches of 2, then one batch per step
    for p in old:
        got = store.get_proposal(ALICE, p.id)
        assert got.status == "expired"
        # A late decision replays the stored result (the sweep's JSON reads back).
        assert store.decide(ALICE, p.id, "approve").status == "expired"
    assert store.get_proposal(BOB, fresh.id).status == "pending"
    assert [r.id for r in store.list_records(ALICE, include_inactive=True)] == [keep_rid]
    assert store.list_records(BOB, include_inactive=True) == []
    assert exp_rid
    stats_consistent(pg_dsn)
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute(
            "SELECT count(*) FROM mg_records WHERE id = ANY(%s)",
            ([gone_rid, exp_rid],),
        ).fetchone() == (0,)
        # Old audit rows keep who/what/when but lose their content.
        old_rows = conn.execute(
            "SELECT before, after FROM mg_audit WHERE at < %s", (clock.now - 365 * DAY,)
        ).fetchall()
        assert old_rows and all(b is None and a is None for b, a in old_rows)
        assert conn.execute(
            "SELECT count(*) FROM mg_audit WHERE action = 'expired' AND actor = 'sweep'"
        ).fetchone() == (5,)

    # A second run later deletes the decided proposals; a third finds nothing.
    clock.now += 31 * DAY
    again = store.sweep()
    assert again.deleted_proposals == 5 and again.expired_proposals == 1  # the fresh one
    third = store.sweep()
    assert (third.expired_proposals, third.deleted_proposals, third.deleted_records) == (0, 0, 0)


def test_sweep_skips_rows_locked_by_live_transactions(
    make_store: Any, clock: Any, pg_dsn: str
) -> None:
    store = make_store()
    a = _propose(store, ALICE, "a.k")
    b = _propose(store, BOB, "b.k")
    clock.now += 60 * DAY  # past the default proposal lifetime
    with psycopg.connect(pg_dsn) as conn:
        conn.execute("SELECT 1 FROM mg_proposals WHERE id = %s FOR UPDATE", (a.id,))
        report = store.sweep()  # does not wait for the lock holder
        assert report.expired_proposals == 1
        assert store.get_proposal(ALICE, a.id).status == "pending"
        assert store.get_proposal(BOB, b.id).status == "expired"
    assert store.sweep().expired_proposals == 1
    assert store.get_proposal(ALICE, a.id).status == "expired"


def test_sweep_deletes_idle_threads_and_their_owner_rows(pg_dsn: str) -> None:
    from _stores import FakeClock

    clock = FakeClock(_real_now())
    with harness_on(pg_dsn, "sync", clock=clock) as h:
        for tid, owner in (("t-alice", ALICE), ("t-bob", BOB)):
            h.store.claim_thread(owner, tid)
            h.invoke(turn("Hello there"), cfg(tid), context={"user_id": owner.user_id})
        h.store.claim_thread(ALICE, "t-empty")  # claimed, never ran
        with psycopg.connect(pg_dsn) as conn:  # a tool-evidence index row of t-alice
            conn.execute(
                "INSERT INTO mg_evidence (scope_id, ref, agent_key, workspace_key, thread_id, "
                "message_id, position, tool_name, call_id, args_digest, result_digest, size, "
                "arg_summary, created_at) VALUES (%s, 'e1', '', '', 't-alice', 'm1', 0, 'grep', "
                "'c1', 'a', 'r', 1, 'grep tea', now())",
                (ALICE.scope_id,),
            )
        assert h.store.sweep(thread_idle=DAY).deleted_threads == 0
        clock.now += 2 * DAY
        h.store.claim_thread(BOB, "t-new")  # claimed now: not idle
        report = h.store.sweep(thread_idle=DAY, batch_size=1)
        assert report.deleted_threads == 2
        # A claim without checkpoints here is not provably idle (its checkpoints may be in
        # another saver, in use): it stays, so nobody else can take the thread (issue 25).
        assert h.store.list_threads(ALICE) == ["t-empty"]
        assert h.store.list_threads(BOB) == ["t-new"]
        assert h.get_state(cfg("t-alice")).values == {}
        with psycopg.connect(pg_dsn) as conn:
            for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "mg_evidence"):
                assert conn.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"proposal_retention": timedelta(days=-1)},
        {"record_retention": 30},
        {"audit_retention": "365d"},
        {"thread_idle": 1.5},
        {"batch_size": 0},
        {"batch_size": True},
        {"batch_size": 10**6},
        {"batch_size": "10"},
    ],
)
def test_sweep_rejects_bad_settings(make_store: Any, kwargs: dict[str, Any]) -> None:
    store = make_store()
    p = _propose(store, ALICE, "a.k")
    with pytest.raises(ValidationError):
        store.sweep(**kwargs)
    assert store.get_proposal(ALICE, p.id).status == "pending"
