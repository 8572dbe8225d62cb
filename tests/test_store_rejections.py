"""Approval that can wait: the proposal lifetime, recently expired proposals, and "no".

A proposal waits days by default (out-of-band approval); the inbox keeps showing what
expired undecided; a rejected write is remembered per owner and not proposed again until
the memory of it expires.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import psycopg
from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, cfg, harness_on, turn
from test_cli import ok, run

from memory_graph import Limits, MemoryStore, Owner
from nodes import decide_all

BOB = Owner("bob")
FACT = {"kind": "fact", "content": "Alice keeps bees on her roof"}


def _add(store: Any, owner: Owner, args: dict[str, Any], event: str, **kw: Any) -> Any:
    kw.setdefault("level", "user")
    return store.propose(owner, "add", args, evidence={"source_event_id": event}, **kw)


def test_default_lifetime_fits_out_of_band_approval(store: Any, clock: Any) -> None:
    assert Limits().proposal_ttl >= timedelta(days=1)
    p = _add(store, ALICE, FACT, "e1")
    assert p.expires_at - clock.now == Limits().proposal_ttl
    clock.advance(hours=20)  # the next working day
    assert [q.id for q in store.list_pending(ALICE)] == [p.id]
    assert store.decide(ALICE, p.id, "approve").status == "approved"


def test_lifetime_is_a_setting(make_store: Any, clock: Any) -> None:
    store = make_store(Limits(proposal_ttl=timedelta(minutes=5)))
    p = _add(store, ALICE, FACT, "e1")
    assert p.expires_at == clock.now + timedelta(minutes=5)


def test_recently_expired_are_listed_as_expired(store: Any, clock: Any) -> None:
    lapsed = _add(store, ALICE, FACT, "e1", ttl=timedelta(hours=1))
    decided = _add(
        store, ALICE, {"kind": "fact", "content": "Alice runs"}, "e2", ttl=timedelta(hours=1)
    )
    approved = _add(store, ALICE, {"kind": "fact", "content": "Alice swims"}, "e3")
    _add(store, BOB, {"kind": "fact", "content": "Bob sails"}, "e4", ttl=timedelta(hours=1))
    assert store.list_expired(ALICE) == []
    store.decide(ALICE, approved.id, "approve")
    clock.advance(hours=2)
    assert [p.id for p in store.list_pending(ALICE)] == []
    assert store.decide(ALICE, decided.id, "approve").status == "expired"
    listed = store.list_expired(ALICE)
    assert sorted(p.id for p in listed) == sorted([lapsed.id, decided.id])
    assert {p.status for p in listed} == {"expired"}
    assert store.get_proposal(ALICE, lapsed.id).status == "pending"  # reads never write
    assert [p.operation for p in store.list_expired(BOB)] == ["add"]
    clock.advance(days=8)  # past Limits.expired_window
    assert store.list_expired(ALICE) == []


def test_a_rejection_is_remembered_per_owner_and_level(store: Any, clock: Any) -> None:
    first = _add(store, ALICE, FACT, "e1")
    assert store.decide(ALICE, first.id, "reject").status == "rejected"
    again = _add(store, ALICE, FACT, "e2")  # said again, in a new message
    assert (again.id, again.status) == (first.id, "rejected")
    folded = _add(store, ALICE, {"kind": "fact", "content": " alice KEEPS  bees on her roof"}, "e3")
    assert folded.id == first.id
    assert store.list_pending(ALICE) == []
    other = _add(store, ALICE, {"kind": "fact", "content": "Alice keeps wasps"}, "e4")
    assert other.status == "pending"
    assert _add(store, BOB, FACT, "e5").status == "pending"  # another owner said no, not Bob
    ws = Owner("alice", workspace="/repo")
    assert _add(store, ws, FACT, "e6", level="user_workspace").status == "pending"


def test_preference_rejection_blocks_that_value_only(store: Any) -> None:
    def pref(value: str, event: str) -> Any:
        return store.propose(
            ALICE,
            "set_preference",
            {"key": "tone", "value": value},
            level="user",
            evidence={"source_event_id": event},
        )

    no = pref("sarcastic", "e1")
    store.decide(ALICE, no.id, "reject")
    assert pref("Sarcastic", "e2").status == "rejected"
    assert pref("formal", "e3").status == "pending"


def test_rejection_memory_expires(make_store: Any, clock: Any) -> None:
    store = make_store(Limits(rejection_ttl=timedelta(days=2)))
    first = _add(store, ALICE, FACT, "e1")
    store.decide(ALICE, first.id, "reject")
    clock.advance(days=1)
    assert _add(store, ALICE, FACT, "e2").status == "rejected"
    clock.advance(days=1)  # at the expiry instant the memory no longer holds
    later = _add(store, ALICE, FACT, "e3")
    assert later.status == "pending" and later.id != first.id


def test_policy_rejections_are_not_remembered(store: Any) -> None:
    first = _add(store, ALICE, FACT, "e1")
    store.decide(ALICE, first.id, "reject", actor="policy")
    assert _add(store, ALICE, FACT, "e2").status == "pending"


def test_approval_and_expiry_are_not_rejections(store: Any, clock: Any) -> None:
    yes = _add(store, ALICE, FACT, "e1", ttl=timedelta(minutes=1))
    clock.advance(minutes=2)
    assert store.decide(ALICE, yes.id, "reject").status == "expired"
    assert _add(store, ALICE, FACT, "e2").status == "pending"


def test_a_replay_returns_its_own_proposal(store: Any) -> None:
    a = _add(store, ALICE, FACT, "e1")
    b = _add(store, ALICE, FACT, "e2")  # the same content from another message, pending
    store.decide(ALICE, a.id, "reject")
    replay = _add(store, ALICE, FACT, "e2")
    assert (replay.id, replay.status) == (b.id, "pending")


def test_rejections_table_is_keyed_by_scope_first(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
    with psycopg.connect(pg_dsn) as conn:
        cols = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
            "AND a.attnum = i.indkey[0] WHERE i.indrelid = 'mg_rejections'::regclass "
            "AND i.indisprimary"
        ).fetchall()
    assert cols == [("scope_id",)]


@FLAVOURS
def test_extraction_does_not_propose_what_was_rejected(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("t1"), context=CTX)
        _, request = h.pending_review("t1")
        assert request["action_requests"]
        out = h.resume_review(owner=ALICE, thread_id="t1", decisions=decide_all(request, "reject"))
        assert {r["status"] for r in out["commit_results"]} == {"rejected"}
        again = h.invoke(turn(TURN_1), cfg("t2"), context=CTX)  # the user says it again
        assert not again.get("__interrupt__")
        assert again["pending_proposals"] == []
        assert h.store.list_pending(ALICE) == []


def test_cli_inbox_shows_recently_expired(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        _add(store, ALICE, FACT, "e1", ttl=timedelta(milliseconds=1))
    time.sleep(0.01)
    text = ok(run(pg_dsn, "inbox", "--user", "alice"))
    assert "No pending proposals." in text
    assert "Expired undecided: 1" in text and "Alice keeps bees" in text
