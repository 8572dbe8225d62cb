"""Guard blocks as content-free audit rows, and the audit summary (``memory-graph stats``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import psycopg
import pytest

from memory_graph import Owner, ValidationError

ALICE, BOB = Owner("alice"), Owner("bob")


@pytest.mark.parametrize(
    "bad",
    [
        {"Health": 1},
        {"health\n": 1},
        {"he alth": 1},
        {"x" * 65: 1},
        {"": 1},
        {1: 1},
        {"health": -1},
        {"health": True},
        {"health": 1.5},
        {"health": 10**7},
        {f"c{i}": 1 for i in range(65)},
        [("health", 1)],
        "health",
    ],
)
def test_note_blocked_rejects_bad_counts(make_store: Any, pg_dsn: str, bad: Any) -> None:
    store = make_store()
    with pytest.raises(ValidationError):
        store.note_blocked(ALICE, bad)
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM mg_audit").fetchone() == (0,)


def test_summary_counts_per_period_and_owner(make_store: Any, clock: Any, pg_dsn: str) -> None:
    store = make_store()
    assert store.note_blocked(ALICE, {"health": 2, "gov_id": 0}, thread_id="t1") is True
    assert store.note_blocked(ALICE, {"health": 0}) is False  # nothing to record
    store.note_blocked(BOB, {"finance": 5})
    store.add(ALICE, "fact", "likes tea")
    clock.advance(days=8)
    store.note_blocked(ALICE, {"health": 1})
    rows = store.audit_summary(ALICE, since=clock.now - timedelta(days=30))
    blocks = [(str(r["period"]), r["action"], r["n"]) for r in rows if r["target_kind"] == "guard"]
    assert blocks == [("2026-01-01", "block:health", 2), ("2026-01-09", "block:health", 1)]
    assert any(r["target_kind"] == "record" for r in rows)
    weekly = store.audit_summary(ALICE, since=clock.now - timedelta(days=30), by="month")
    assert [(r["action"], r["n"]) for r in weekly if r["target_kind"] == "guard"] == [
        ("block:health", 3)
    ]
    assert store.audit_summary(ALICE, since=clock.now - timedelta(days=1)) == [
        {"period": clock.now.date(), "target_kind": "guard", "action": "block:health", "n": 1}
    ]
    with psycopg.connect(pg_dsn) as conn:  # categories and counts only
        (after,) = conn.execute(
            "SELECT after FROM mg_audit WHERE target_kind = 'guard' AND target_id = 't1'"
        ).fetchone() or (None,)
        assert after == {"categories": {"health": 2}}
    for kwargs in ({"by": "year"}, {"by": None}):
        with pytest.raises(ValidationError):
            store.audit_summary(ALICE, since=clock.now, **kwargs)
    with pytest.raises(ValidationError):
        store.audit_summary(ALICE, since=datetime(2026, 1, 1))  # naive datetime
