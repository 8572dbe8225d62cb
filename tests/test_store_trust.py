"""Issue 8, store side: scope of proposals and grants (§1), the guard on every stored field
(§3), provenance and lifetimes (§4), library errors for hostile input (§6), replays and user
id folding (§7)."""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from typing import Any

import pytest
from _stores import db_state

from memory_graph import (
    LimitExceededError,
    MemoryGraphError,
    NotFoundError,
    Owner,
    ScopeError,
    ValidationError,
    loose_user_id,
)
from memory_graph.identity import digest, fold_id
from memory_graph.interchange import EXPORT_VERSION

ALICE = Owner("alice")
HERE = Owner("alice", workspace="w1", agent="a1")
SECRET = "My card number is 4111 1111 1111 1111"
FACT = {"kind": "fact", "content": "Uses vim"}

# --- §1 scope ------------------------------------------------------------------------------


def test_a_change_proposal_lives_at_its_targets_level(store: Any, pg_dsn: str) -> None:
    rec = store.add(HERE, "fact", "secret-plan uses vim", level="agent_workspace")
    p = store.propose(HERE, "replace", {"content": "secret-plan v2"}, target_id=rec.record_id)
    q = store.propose(HERE, "remove", {}, target_id=rec.record_id)
    assert p.level == q.level == "agent_workspace"
    before = db_state(pg_dsn)
    with pytest.raises(ScopeError):
        store.propose(HERE, "replace", {"content": "x"}, target_id=rec.record_id, level="user")
    # the same user elsewhere (no workspace/agent, or another agent) sees none of it
    for other in (
        ALICE,
        Owner("alice", workspace="w1"),
        Owner("alice", workspace="w1", agent="a2"),
    ):
        assert store.list_pending(other) == []
        assert "secret-plan" not in repr(store.audit_log(other, limit=1000))
        for pid in (p.id, q.id):
            with pytest.raises(NotFoundError):
                store.get_proposal(other, pid)
            with pytest.raises(NotFoundError):
                store.decide(other, pid, "reject")
    assert db_state(pg_dsn) == before
    assert {x.id for x in store.list_pending(HERE)} == {p.id, q.id}


def test_a_new_write_names_its_level(store: Any, pg_dsn: str) -> None:
    before = db_state(pg_dsn)
    for op, args in (
        ("add", FACT),
        ("set_preference", {"key": "tone", "value": "brief"}),
        ("delete_preference", {"key": "tone"}),
    ):
        with pytest.raises(ValidationError, match="explicit level"):
            store.propose(HERE, op, args)
    with pytest.raises(ScopeError):
        store.propose(HERE, "patch_profile", {"patch": {"name": "Al"}}, level="agent")
    assert db_state(pg_dsn) == before
    assert store.propose(HERE, "add", FACT, level="agent").level == "agent"
    # trusted writes keep their documented default, the user level
    assert store.get_record(HERE, store.add(HERE, "fact", "x").record_id).level == "user"


def _grant(store: Any, owner: Owner, **kw: Any) -> str:
    opts: dict[str, Any] = {
        "expires_at": store.clock() + timedelta(hours=1),
        "kinds": ["fact", "preference"],
        "operations": ["add", "set_preference", "replace", "remove"],
        "max_mutations": 10,
        "max_bytes": 10_000,
    }
    opts.update(kw)
    return str(store.create_grant(owner, **opts).id)


def test_a_grant_never_approves_a_broader_write(store: Any) -> None:
    ws = Owner("alice", workspace="w1")
    gid = _grant(store, ws)
    broad = store.propose(ws, "add", FACT, level="user")
    assert store.decide_with_grant(ws, broad.id, gid) is None
    assert store.get_proposal(ws, broad.id).status == "pending"
    pref = store.propose(ws, "set_preference", {"key": "tone", "value": "brief"}, level="user")
    assert store.decide_with_grant(ws, pref.id, gid) is None
    narrow = store.propose(ws, "add", FACT, level="user_workspace")
    res = store.decide_with_grant(ws, narrow.id, gid)
    assert res is not None and res.status == "approved"
    # an agent+workspace principal's grant covers only that exact agent+workspace identity
    gid2 = _grant(store, HERE)
    for level in ("user", "user_workspace", "agent"):
        p = store.propose(HERE, "add", {"kind": "fact", "content": f"at {level}"}, level=level)
        assert store.decide_with_grant(HERE, p.id, gid2) is None
    p = store.propose(HERE, "add", FACT, level="agent_workspace")
    res = store.decide_with_grant(HERE, p.id, gid2)
    assert res is not None and res.status == "approved"
    # the plain user's grant still approves user-level writes
    gid3 = _grant(store, ALICE)
    res = store.decide_with_grant(ALICE, broad.id, gid3)
    assert res is not None and res.status == "approved"


def test_a_workspace_grant_cannot_cover_the_profile(store: Any, pg_dsn: str) -> None:
    before = db_state(pg_dsn)
    with pytest.raises(ScopeError):
        _grant(
            store, Owner("alice", workspace="w1"), kinds=["profile"], operations=["patch_profile"]
        )
    assert db_state(pg_dsn) == before
    gid = _grant(store, ALICE, kinds=["profile"], operations=["patch_profile"])
    p = store.propose(ALICE, "patch_profile", {"patch": {"name": "Al"}})
    assert store.decide_with_grant(ALICE, p.id, gid).status == "approved"


# --- §3 the guard sees every stored field ---------------------------------------------------

GUARDED = [
    ("quote", "add", FACT, {"evidence": {"quote": SECRET}}),
    ("source", "add", FACT, {"evidence": {"source": "4111 1111 1111 1111"}}),
    ("uri", "add", FACT, {"evidence": {"uri": "https://x.test/?card=4111111111111111"}}),
    ("applies_when", "add", {**FACT, "knowledge": {"applies_when": [SECRET]}}, {}),
    ("claim", "add", {**FACT, "knowledge": {"claim": {"key": "card", "value": SECRET}}}, {}),
    ("preference", "set_preference", {"key": "card", "value": SECRET}, {}),
    ("profile", "patch_profile", {"patch": {"notes": SECRET}}, {}),
]


@pytest.mark.parametrize(("field", "op", "args", "kw"), GUARDED, ids=[g[0] for g in GUARDED])
def test_the_guard_checks_every_stored_field(
    store: Any, pg_dsn: str, field: str, op: str, args: dict[str, Any], kw: dict[str, Any]
) -> None:
    before = db_state(pg_dsn)
    with pytest.raises(ValidationError, match="blocked by the sensitive-data guard"):
        store.propose(ALICE, op, args, level="user", **kw)
    assert db_state(pg_dsn) == before


def test_the_guard_checks_trusted_evidence_edits_and_imports(store: Any, pg_dsn: str) -> None:
    before = db_state(pg_dsn)
    with pytest.raises(ValidationError, match="guard"):
        store.add(ALICE, "fact", "Uses vim", evidence={"quote": SECRET})
    with pytest.raises(ValidationError, match="guard"):
        store.set_preference(ALICE, "tone", "brief", source="4111 1111 1111 1111")
    doc = {
        "version": EXPORT_VERSION,
        "records": [{"kind": "fact", "content": "Uses vim", "provenance": {"quote": SECRET}}],
    }
    with pytest.raises(ValidationError, match="guard"):
        store.import_document(ALICE, doc)
    assert db_state(pg_dsn) == before
    p = store.propose(ALICE, "add", FACT, level="user", evidence={"quote": "I use vim"})
    with pytest.raises(ValidationError, match="guard"):
        store.decide(ALICE, p.id, "edit", args={**FACT, "content": SECRET})
    assert store.get_proposal(ALICE, p.id).status == "pending"


# --- §4 provenance and lifetimes --------------------------------------------------------------

BAD_EVENT_IDS = [
    "human msg 1",
    "m1\n## Assistant",
    "m\x1b[2J",
    "m\u202e1",
    "ｈuman-msg-1",
    "x" * 201,
    "",
    "-lead",
]


@pytest.mark.parametrize("bad", BAD_EVENT_IDS)
def test_source_event_id_has_a_format_checked_on_every_write(
    store: Any, pg_dsn: str, bad: str
) -> None:
    rec = store.add(ALICE, "fact", "Uses vim")
    before = db_state(pg_dsn)
    for call in (
        lambda: store.propose(ALICE, "add", FACT, level="user", evidence={"source_event_id": bad}),
        lambda: store.propose(ALICE, "add", FACT, level="user", evidence={"tool_call_id": bad}),
        lambda: store.add(ALICE, "fact", "Uses emacs", evidence={"source_event_id": bad}),
        lambda: store.set_preference(ALICE, "tone", "brief", source_event_id=bad),
        lambda: store.reinforce(ALICE, rec.record_id, source_event_id=bad),
    ):
        with pytest.raises(ValidationError) as err:
            call()
        assert len(str(err.value)) < 400
    assert db_state(pg_dsn) == before


def test_harness_ids_pass_and_tool_calls_have_their_own_field(store: Any) -> None:
    for good in ["human-msg-0001", str(uuid.uuid4()), "run-1f2e:0", "lc_msg/42"]:
        store.propose(
            ALICE,
            "add",
            {"kind": "fact", "content": f"fact {good}"},
            level="user",
            evidence={"source_event_id": good},
        )
    p = store.propose(
        ALICE,
        "add",
        FACT,
        level="user",
        evidence={"tool_call_id": "call_abc123", "quote": "I use vim"},
    )
    assert p.evidence["tool_call_id"] == "call_abc123" and "source_event_id" not in p.evidence
    res = store.decide(ALICE, p.id, "approve")
    assert store.get_record(ALICE, res.record_id).provenance.source_event_id is None


def test_untrusted_lifetimes_are_clamped_by_policy(store: Any) -> None:
    now = store.clock()
    lim = store.limits
    p = store.propose(
        ALICE,
        "set_preference",
        {"key": "tone", "value": "brief", "expires_at": "9999-12-31T00:00:00Z"},
        level="user",
    )
    cap = now + lim.max_lifetime
    assert p.args["expires_at"] == cap.strftime("%Y-%m-%dT%H:%M:%SZ")
    store.decide(ALICE, p.id, "approve")
    assert store.get_preferences(ALICE)[0].expires_at == cap
    q = store.propose(ALICE, "add", FACT, level="user", ttl=timedelta.max)
    assert q.expires_at == now + lim.max_proposal_ttl
    e = store.propose(ALICE, "add", {"kind": "fact", "content": "edit me"}, level="user")
    store.decide(
        ALICE,
        e.id,
        "edit",
        args={"kind": "fact", "content": "edited", "expires_at": "9000-01-01T00:00:00Z"},
    )
    edited = [r for r in store.list_records(ALICE) if r.content == "edited"]
    assert edited and edited[0].expires_at == cap
    # a trusted write is the application's own: not clamped
    far = now + timedelta(days=3650)
    store.set_preference(ALICE, "units", "metric", expires_at=far)
    assert {x.key: x.expires_at for x in store.get_preferences(ALICE)}["units"] == far


def test_confidence_is_set_by_the_store(store: Any) -> None:
    p = store.propose(ALICE, "add", {**FACT, "confidence": 0.01}, level="user")
    assert "confidence" not in p.args
    res = store.decide(ALICE, p.id, "approve")
    assert store.get_record(ALICE, res.record_id).confidence == 1.0
    gid = _grant(store, ALICE)
    g = store.propose(
        ALICE, "add", {"kind": "fact", "content": "b", "confidence": 1.0}, level="user"
    )
    res = store.decide_with_grant(ALICE, g.id, gid)
    assert store.get_record(ALICE, res.record_id).confidence == 0.7


# --- §6 hostile values end in a library error and change nothing ------------------------------


def _nested(depth: int) -> Any:
    v: Any = "x"
    for _ in range(depth):
        v = {"a": [v]}
    return v


def test_hostile_values_raise_library_errors(store: Any, pg_dsn: str) -> None:
    rec = store.add(ALICE, "fact", "Uses vim")
    p = store.propose(ALICE, "add", FACT, level="user")
    gid = _grant(store, ALICE)
    exp = store.clock() + timedelta(hours=1)
    big = "x" * 100_000
    before = db_state(pg_dsn)
    grant_kw = {
        "expires_at": exp,
        "kinds": ["fact"],
        "operations": ["add"],
        "max_mutations": 1,
        "max_bytes": 1,
    }
    calls = [
        lambda: Owner("al\ud800ice"),
        lambda: Owner("al\x00ice"),
        lambda: Owner("alice", workspace="w\x00"),
        lambda: store.get_proposal(ALICE, "ab\x00"),
        lambda: store.get_proposal(ALICE, "\ud800"),
        lambda: store.get_proposal(ALICE, big),
        lambda: store.decide(ALICE, "\ud800", "approve"),
        lambda: store.decide(ALICE, p.id, "edit", args=_nested(400)),
        lambda: store.decide(ALICE, p.id, "edit", args={**FACT, "content": _nested(400)}),
        lambda: store.get_grant(ALICE, "g\x00"),
        lambda: store.decide_with_grant(ALICE, p.id, "\ud800"),
        lambda: store.decide_with_grant(ALICE, "\x00", gid),
        lambda: store.list_pending(ALICE, thread_id=123),
        lambda: store.list_pending(ALICE, thread_id="t\x00"),
        lambda: store.propose(ALICE, "add", FACT, level="user", base_version=2**31),
        lambda: store.propose(ALICE, "add", FACT, level="user", thread_id="\ud800"),
        lambda: store.propose(ALICE, "add", FACT, level="user", evidence=_nested(400)),
        lambda: store.propose(ALICE, "add", _nested(400), level="user"),
        lambda: store.propose(ALICE, "remove", {}, target_id="\ud800"),
        lambda: store.replace(ALICE, rec.record_id, "x", base_version=2**31),
        lambda: store.remove(ALICE, rec.record_id, base_version=2**63),
        lambda: store.create_grant(ALICE, **{**grant_kw, "kinds": 5}),
        lambda: store.create_grant(ALICE, **{**grant_kw, "operations": [[1]]}),
        lambda: store.create_grant(ALICE, **{**grant_kw, "max_mutations": 2**31}),
        lambda: store.create_grant(ALICE, **{**grant_kw, "max_bytes": 10**5000}),
        lambda: store.search(ALICE, "tea", kinds=5),
        lambda: store.search(ALICE, "tea", trusts=[{}]),
        lambda: store.search(ALICE, "te\ud800a"),
        lambda: store.list_records(ALICE, kinds=5),
        lambda: store.propose(ALICE, "add", FACT, level="user", ttl=10**100),
    ]
    for i, call in enumerate(calls):
        with pytest.raises(MemoryGraphError) as err:
            call()
        assert len(str(err.value)) < 400, (i, str(err.value)[:100])
    assert db_state(pg_dsn) == before


def test_error_messages_never_echo_unbounded_input(store: Any) -> None:
    big = "z" * 50_000
    for call in (
        lambda: store.get_record(ALICE, big),
        lambda: store.get_proposal(ALICE, big),
        lambda: store.propose(ALICE, big, {}),
        lambda: store.propose(ALICE, "add", {"kind": big, "content": "x"}, level="user"),
        lambda: store.propose(ALICE, "add", {big: 1}, level="user"),
        lambda: store.search(ALICE, "x", kinds=[big]),
        lambda: store.set_preference(ALICE, "k" * 400, "v"),
        lambda: store.propose(ALICE, "add", FACT, level="user", evidence={big: 1}),
    ):
        with pytest.raises((MemoryGraphError, LimitExceededError)) as err:
            call()
        assert len(str(err.value)) < 400


# --- §7 replays and user ids ------------------------------------------------------------------


def test_a_replayed_proposal_is_flagged(store: Any) -> None:
    p = store.propose(ALICE, "add", FACT, level="user", idempotency_key="k")
    again = store.propose(ALICE, "add", FACT, level="user", idempotency_key="k")
    assert (p.replayed, again.replayed) == (False, True) and again.id == p.id
    assert [x.replayed for x in store.list_pending(ALICE)] == [False]


def test_user_ids_fold_case_and_space_only() -> None:
    same = [("alice", " ALICE\n"), ("Bob@Example.com", "bob@example.COM"), ("ΣΟΦΙΑ", "σοφια")]
    for a, b in same:
        assert Owner(a).scope_id == Owner(b).scope_id
    apart = [
        ("Straße", "STRASSE"),
        ("\u212aate", "kate"),
        ("ａlice", "alice"),
        ("ﬁona", "fiona"),
        ("İrem", "i̇rem"),
        ("alice\u200b", "alice"),
    ]
    for a, b in apart:
        assert Owner(a).scope_id != Owner(b).scope_id, (a, b)
        # the explicit opt-in merges them
        assert Owner(loose_user_id(a)).scope_id == Owner(loose_user_id(b)).scope_id or "\u200b" in a


def test_ascii_ids_keep_their_scope_ids() -> None:
    for raw in ["alice", " Alice@Example.COM ", "u-42_X", "/work/shop", "a" * 500]:
        old = hashlib.sha256(raw.strip().casefold().encode("utf-8")).hexdigest()[:16]
        assert digest(raw) == old and fold_id(raw) == raw.strip().casefold()


def test_a_migration_moves_legacy_change_proposals_to_their_targets_level(
    store: Any, pg_dsn: str
) -> None:
    import psycopg

    from memory_graph.storage.schema import MIGRATIONS

    rec = store.add(HERE, "fact", "legacy-plan", level="agent_workspace")
    p = store.propose(HERE, "replace", {"content": "legacy-plan v2"}, target_id=rec.record_id)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        # the shape earlier versions stored: level 'user', no agent/workspace
        for table, cond in (
            ("mg_proposals", "id = %s"),
            ("mg_audit", "proposal_id = %s AND target_kind = 'proposal'"),
        ):
            conn.execute(
                f"UPDATE {table} SET agent_key = '', workspace_key = ''"
                + (", level = 'user'" if table == "mg_proposals" else "")
                + f" WHERE {cond}",
                (p.id,),
            )
        assert store.get_proposal(ALICE, p.id).level == "user"  # the legacy leak
        assert "legacy-plan v2" in repr(store.audit_log(ALICE, limit=100))
        fix = next(m for m in MIGRATIONS if "UPDATE mg_proposals p SET level = r.level" in m)
        conn.execute(fix)
    with pytest.raises(NotFoundError):
        store.get_proposal(ALICE, p.id)
    assert "legacy-plan v2" not in repr(store.audit_log(ALICE, limit=100))
    assert store.get_proposal(HERE, p.id).level == "agent_workspace"


def test_an_owners_digests_are_kept_but_never_outlive_its_fields() -> None:
    import copy
    import dataclasses
    import pickle

    owner = Owner("  Alice ", workspace="/repo", agent="coder")
    first = (owner.scope_id, owner.workspace_key, owner.agent_key)
    assert first == (digest("alice"), digest("/repo"), digest("coder"))
    assert (owner.scope_id, owner.workspace_key, owner.agent_key) == first
    with pytest.raises(dataclasses.FrozenInstanceError):
        owner.user_id = "bob"  # type: ignore[misc]
    other = dataclasses.replace(owner, user_id="bob", workspace=None)
    assert (other.scope_id, other.workspace_key) == (digest("bob"), "")
    for twin in (copy.copy(owner), pickle.loads(pickle.dumps(owner))):
        assert twin == owner and hash(twin) == hash(owner) and twin.scope_id == first[0]
    assert repr(owner) == "Owner(user_id='  Alice ', workspace='/repo', agent='coder')"
