"""Proposals and commit (DESIGN §4): ids, replay, decide, expiry, conflicts, audit, grants."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from _stores import T0, db_state

from memory_graph import (
    ApprovalPolicy,
    IdempotencyConflictError,
    Limits,
    NotFoundError,
    Owner,
    ValidationError,
)
from memory_graph.proposals import proposal_id

ALICE = Owner("alice")
ADD = {"kind": "fact", "content": "Works at ACME"}


def audit_actions(store, owner, pid):
    return [
        r["action"]
        for r in reversed(store.audit_log(owner))
        if r["proposal_id"] == pid or (r["target_kind"] == "proposal" and r["target_id"] == pid)
    ]


def test_propose_is_deterministic_and_writes_no_memory(store, pg_dsn):
    p = store.propose(
        ALICE, "add", ADD, evidence={"source_event_id": "m1", "quote": "ACME"}, level="user"
    )
    assert p.status == "pending" and p.operation == "add" and p.diff == '+ fact: "Works at ACME"'
    assert p.id == proposal_id(ALICE.scope_id, p.idempotency_key) and len(p.id) == 32
    assert p.expires_at == T0 + Limits().proposal_ttl and p.guard["allowed"] is True
    again = store.propose(
        ALICE, "add", dict(ADD), evidence={"source_event_id": "m1", "quote": "ACME"}, level="user"
    )
    # a replay is flagged (issue 8 §7), and is otherwise the stored proposal
    assert not p.replayed and again.replayed and again == dataclasses.replace(p, replayed=True)
    assert store.get_proposal(ALICE, p.id) == p
    # a new event is a new proposal
    other = store.propose(ALICE, "add", ADD, evidence={"source_event_id": "m2"}, level="user")
    assert other.id != p.id
    assert store.list_records(ALICE) == []
    assert [x.id for x in store.list_pending(ALICE)] == [p.id, other.id]


def test_idempotency_conflict(store, pg_dsn):
    p = store.propose(ALICE, "add", ADD, idempotency_key="k1", level="user")
    assert store.propose(ALICE, "add", ADD, idempotency_key="k1", level="user").id == p.id
    before = db_state(pg_dsn)
    with pytest.raises(IdempotencyConflictError, match="new idempotency key"):
        store.propose(
            ALICE, "add", {"kind": "fact", "content": "Other"}, idempotency_key="k1", level="user"
        )
    with pytest.raises(IdempotencyConflictError):
        store.propose(Owner("alice", agent="a"), "add", ADD, level="agent", idempotency_key="k1")
    assert db_state(pg_dsn) == before
    # another user has its own key space
    assert store.propose(Owner("bob"), "add", ADD, idempotency_key="k1", level="user").id != p.id


def test_approve_and_replay(store):
    p = store.propose(
        ALICE, "add", ADD, evidence={"source_event_id": "m1", "thread_id": "t"}, level="user"
    )
    r = store.decide(ALICE, p.id, "approve")
    assert (r.status, r.write_status, r.operation) == ("approved", "CREATED", "add")
    rec = store.get_record(ALICE, r.record_id)
    assert rec.trust == "user-confirmed" and rec.provenance.source == "conversation"
    assert rec.provenance.source_event_id == "m1"
    for decision in ["approve", "reject", "edit"]:
        again = store.decide(ALICE, p.id, decision, args=ADD)
        assert again == r
    assert len(store.list_records(ALICE)) == 1
    assert audit_actions(store, ALICE, p.id) == ["proposed", "create", "approved"]
    got = store.get_proposal(ALICE, p.id)
    assert got.status == "approved" and got.actor == "human" and got.decided_at == T0
    assert store.list_pending(ALICE) == []
    # re-proposing the same thing replays the decided proposal
    assert (
        store.propose(
            ALICE, "add", ADD, evidence={"source_event_id": "m1", "thread_id": "t"}, level="user"
        ).status
        == "approved"
    )


def test_reject(store):
    p = store.propose(ALICE, "set_preference", {"key": "tone", "value": "brief"}, level="user")
    r = store.decide(ALICE, p.id, "reject", message="not now")
    assert (r.status, r.message, r.write_status) == ("rejected", "not now", None)
    assert store.get_preferences(ALICE) == []
    assert audit_actions(store, ALICE, p.id) == ["proposed", "rejected"]


def test_edit_revalidates(store, pg_dsn):
    p = store.propose(ALICE, "add", ADD, level="user")
    before = db_state(pg_dsn)
    for bad in [
        {"kind": "fact", "content": ""},
        {"kind": "nope", "content": "x"},
        {"kind": "fact", "content": "My card number is 4111 1111 1111 1111"},
    ]:
        with pytest.raises(ValidationError):
            store.decide(ALICE, p.id, "edit", args=bad)
    with pytest.raises(ValidationError):
        store.decide(ALICE, p.id, "edit")
    assert db_state(pg_dsn) == before
    r = store.decide(ALICE, p.id, "edit", args={"kind": "fact", "content": "Works at Initech"})
    assert r.status == "approved"
    assert store.get_record(ALICE, r.record_id).content == "Works at Initech"
    assert store.get_proposal(ALICE, p.id).args["content"] == "Works at Initech"


def test_edit_cannot_change_preference_key(store):
    p = store.propose(ALICE, "set_preference", {"key": "tone", "value": "brief"}, level="user")
    with pytest.raises(ValidationError, match="key"):
        store.decide(ALICE, p.id, "edit", args={"key": "other", "value": "x"})
    r = store.decide(ALICE, p.id, "edit", args={"key": "TONE", "value": "chatty"})
    assert r.status == "approved" and store.get_preferences(ALICE)[0].value == "chatty"


def test_expiry_instant(store, clock):
    p = store.propose(ALICE, "add", ADD, ttl=timedelta(minutes=5), level="user")
    clock.now = p.expires_at - timedelta(microseconds=1)
    assert [x.id for x in store.list_pending(ALICE)] == [p.id]
    clock.now = p.expires_at
    assert store.list_pending(ALICE) == []
    r = store.decide(ALICE, p.id, "approve")
    assert r.status == "expired" and "expired" in r.message
    assert store.list_records(ALICE, include_inactive=True) == []
    assert store.decide(ALICE, p.id, "approve") == r
    assert audit_actions(store, ALICE, p.id) == ["proposed", "expired"]


def test_just_before_expiry_commits(store, clock):
    p = store.propose(ALICE, "add", ADD, level="user")
    clock.now = p.expires_at - timedelta(microseconds=1)
    assert store.decide(ALICE, p.id, "approve").status == "approved"


def test_conflicted_keeps_newer_value(store, clock):
    p = store.propose(ALICE, "set_preference", {"key": "tone", "value": "brief"}, level="user")
    assert p.base_version == 0 and p.target_id == "tone"
    clock.advance(seconds=1)
    store.set_preference(ALICE, "tone", "chatty")
    clock.advance(seconds=1)
    r = store.decide(ALICE, p.id, "approve")
    assert r.status == "conflicted" and "newer value stays" in r.message
    assert store.get_preferences(ALICE)[0].value == "chatty"
    assert store.get_proposal(ALICE, p.id).status == "conflicted"
    assert audit_actions(store, ALICE, p.id) == ["proposed", "conflicted"]


def test_record_conflict_via_proposals(store):
    r = store.add(ALICE, "fact", "v1")
    p1 = store.propose(ALICE, "replace", {"content": "v2"}, target_id=r.record_id)
    p2 = store.propose(ALICE, "remove", {}, target_id=r.record_id, base_version=1)
    assert p1.base_version == 1 and p1.diff == '- "v1"\n+ "v2"'
    assert store.decide(ALICE, p1.id, "approve").status == "approved"
    assert store.decide(ALICE, p2.id, "approve").status == "conflicted"
    assert store.get_record(ALICE, r.record_id).content == "v2"


def test_profile_patch_proposal(store):
    store.patch_profile(ALICE, {"name": "Alice"})
    p = store.propose(ALICE, "patch_profile", {"patch": {"name": "Al", "pronouns": None}})
    assert p.base_version == 1 and 'profile name: "Alice" -> "Al"' in p.diff
    r = store.decide(ALICE, p.id, "approve")
    assert r.status == "approved" and r.details["changed"] == ["name"]
    assert store.get_profile(ALICE).fields == {"name": "Al"}


def test_guard_blocks_without_leaking_content(store, pg_dsn):
    before = db_state(pg_dsn)
    secret = "My card number is 4111 1111 1111 1111"
    with pytest.raises(ValidationError, match="finance") as exc:
        store.propose(ALICE, "add", {"kind": "fact", "content": secret}, level="user")
    assert "4111" not in str(exc.value)
    with pytest.raises(ValidationError, match="finance"):
        store.add(ALICE, "fact", secret)
    with pytest.raises(ValidationError, match="health"):
        store.set_preference(ALICE, "health", "I was diagnosed with diabetes")
    assert db_state(pg_dsn) == before


def test_bad_proposals_leave_no_trace(store, pg_dsn):
    r = store.add(ALICE, "fact", "x")
    before = db_state(pg_dsn)
    bad = [
        ("frobnicate", {}, {}),
        ("add", {"kind": "fact"}, {}),
        ("add", {"kind": "fact", "content": "x", "extra": 1}, {}),
        ("replace", {"content": "y"}, {}),
        ("replace", {"content": "y"}, {"target_id": "not-a-uuid"}),
        ("remove", {"x": 1}, {"target_id": r.record_id}),
        ("set_preference", {"key": "a b", "value": "x"}, {}),
        ("set_preference", {"key": "a", "value": "x"}, {"target_id": "b"}),
        ("patch_profile", {"patch": {}}, {}),
        ("patch_profile", {"patch": {"shoe": "42"}}, {}),
        ("add", ADD, {"evidence": {"unknown": 1}}),
        ("add", ADD, {"evidence": {"observed_at": "yesterday"}}),
        ("add", ADD, {"level": "everyone"}),
        ("add", ADD, {"ttl": timedelta(0)}),
        ("add", ADD, {"base_version": -1}),
    ]
    for op, args, kw in bad:
        with pytest.raises((ValidationError, NotFoundError)):
            store.propose(ALICE, op, args, **{"level": "user", **kw})
    assert db_state(pg_dsn) == before


def test_inbox_thread_filter_and_not_found(store):
    a = store.propose(ALICE, "add", ADD, thread_id="t1", level="user")
    store.propose(ALICE, "add", {"kind": "fact", "content": "other"}, thread_id="t2", level="user")
    assert [p.id for p in store.list_pending(ALICE, thread_id="t1")] == [a.id]
    assert a.thread_id == "t1" and store.get_proposal(ALICE, a.id).thread_id == "t1"
    b = store.propose(
        ALICE,
        "add",
        {"kind": "fact", "content": "third"},
        evidence={"thread_id": "t3"},
        level="user",
    )
    assert b.thread_id == "t3"
    for pid in ["0" * 32, "nope"]:
        with pytest.raises(NotFoundError):
            store.get_proposal(ALICE, pid)
        with pytest.raises(NotFoundError):
            store.decide(ALICE, pid, "approve")
    with pytest.raises(ValidationError):
        store.decide(ALICE, a.id, "maybe")


def test_grant_bounded_auto_approval(store, clock):
    g = store.create_grant(
        ALICE,
        expires_at=T0 + timedelta(hours=1),
        kinds=["fact"],
        operations=["add"],
        max_mutations=2,
        max_bytes=100,
    )
    assert (g.used_mutations, g.used_bytes) == (0, 0)
    p1 = store.propose(ALICE, "add", {"kind": "fact", "content": "Uses vim"}, level="user")
    r = store.decide_with_grant(ALICE, p1.id, g.id)
    assert r.status == "approved"
    rec = store.get_record(ALICE, r.record_id)
    assert rec.trust == "agent-observed"
    assert store.get_proposal(ALICE, p1.id).actor == f"grant:{g.id}"
    g = store.get_grant(ALICE, g.id)
    assert (g.used_mutations, g.used_bytes) == (1, len(b"Uses vim"))
    # replay returns the stored result and uses nothing
    assert store.decide_with_grant(ALICE, p1.id, g.id) == r
    # a kind or operation it does not allow: None, stays pending
    p_instr = store.propose(
        ALICE, "add", {"kind": "instruction", "content": "Be brief"}, level="user"
    )
    assert store.decide_with_grant(ALICE, p_instr.id, g.id) is None
    p_pref = store.propose(ALICE, "set_preference", {"key": "a", "value": "b"}, level="user")
    assert store.decide_with_grant(ALICE, p_pref.id, g.id) is None
    assert {p.id for p in store.list_pending(ALICE)} == {p_instr.id, p_pref.id}
    # the byte cap
    big = store.propose(ALICE, "add", {"kind": "fact", "content": "x" * 95}, level="user")
    assert store.decide_with_grant(ALICE, big.id, g.id) is None
    # the mutation cap
    p2 = store.propose(ALICE, "add", {"kind": "fact", "content": "Uses tmux"}, level="user")
    assert store.decide_with_grant(ALICE, p2.id, g.id).status == "approved"
    p3 = store.propose(ALICE, "add", {"kind": "fact", "content": "Uses zsh"}, level="user")
    assert store.decide_with_grant(ALICE, p3.id, g.id) is None
    assert store.get_grant(ALICE, g.id).used_mutations == 2
    # a human can still decide it
    assert store.decide(ALICE, p3.id, "approve").status == "approved"


def test_grant_expiry_and_exact_owner(store, clock):
    g = store.create_grant(
        ALICE,
        expires_at=T0 + timedelta(hours=1),
        kinds=["fact"],
        operations=["add"],
        max_mutations=5,
        max_bytes=1000,
    )
    p = store.propose(ALICE, "add", ADD, level="user")
    clock.now = T0 + timedelta(hours=1)
    assert store.decide_with_grant(ALICE, p.id, g.id) is None
    assert store.get_proposal(ALICE, p.id).status == "pending"
    for other in [Owner("bob"), Owner("alice", agent="a"), Owner("alice", workspace="/w")]:
        with pytest.raises(NotFoundError):
            store.get_grant(other, g.id)
    with pytest.raises(ValidationError):
        store.create_grant(
            ALICE, expires_at=T0, kinds=["fact"], operations=["add"], max_mutations=1, max_bytes=1
        )
    with pytest.raises(ValidationError):
        store.create_grant(
            ALICE,
            expires_at=T0 + timedelta(hours=9),
            kinds=["fact"],
            operations=["add"],
            max_mutations=0,
            max_bytes=1,
        )


def test_inbox_is_in_creation_order_under_a_frozen_clock(store):
    contents = ["zeta", "alpha", "mid", "beta"]
    ids = [
        store.propose(ALICE, "add", {"kind": "fact", "content": c}, level="user").id
        for c in contents
    ]
    assert [p.id for p in store.list_pending(ALICE)] == ids


def test_grant_can_cover_profile_patches(store, clock):
    g = store.create_grant(
        ALICE,
        expires_at=T0 + timedelta(hours=1),
        kinds=["profile"],
        operations=["patch_profile"],
        max_mutations=1,
        max_bytes=100,
    )
    p = store.propose(ALICE, "patch_profile", {"patch": {"name": "Ann"}})
    assert store.decide_with_grant(ALICE, p.id, g.id).status == "approved"
    assert store.get_profile(ALICE).fields == {"name": "Ann"}
    with pytest.raises(ValidationError, match="grant kind"):
        store.create_grant(
            ALICE,
            expires_at=T0 + timedelta(hours=1),
            kinds=["persona"],
            operations=["add"],
            max_mutations=1,
            max_bytes=100,
        )


def test_approval_policy():
    assert ApprovalPolicy() == ApprovalPolicy(None, frozenset())
    assert not ApprovalPolicy().rejects("add")
    with pytest.raises(ValidationError):
        ApprovalPolicy(auto_reject_operations=frozenset({"nuke"}))
