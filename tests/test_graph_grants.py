"""The approval policy in a real graph: bounded grants and auto-reject, sync and async.

DESIGN §4: with no policy every write waits for a human; a grant auto-approves only within
its kinds, operations and caps, records what it approved as ``agent-observed``, and stops
when expired or exhausted (the rest goes to the human interrupt); its usage is stored, so a
re-run of the review node never counts twice; ``auto_reject_operations`` rejects without
asking.
"""

from __future__ import annotations

import inspect
from datetime import timedelta
from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, FLAVOURS, cfg, harness_on, turn
from _stores import FakeClock
from langgraph.runtime import Runtime

from memory_graph import ApprovalPolicy
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message
from nodes import create_review_memories, decide_all

PREFS = [("reply.language", "en"), ("reply.length", "short"), ("units", "metric")]


def _model(*, prefs: int = 3, add: bool = False) -> FakeToolCallingChatModel:
    """A model that proposes ``prefs`` preferences (and optionally one fact) via tools."""
    calls: list[Any] = [
        tool_call_message("save_user_preference", {"key": k, "value": v}) for k, v in PREFS[:prefs]
    ]
    if add:
        calls.append(
            tool_call_message(
                "memory_manage", {"action": "add", "kind": "fact", "content": "Alice keeps bees"}
            )
        )
    return FakeToolCallingChatModel.from_tool_calls([*calls, "ok"])


def _grant(h: Any, clock: FakeClock, **kwargs: Any) -> str:
    options: dict[str, Any] = {
        "expires_at": clock.now + timedelta(hours=1),
        "kinds": ["preference", "fact"],
        "operations": ["set_preference", "add"],
        "max_mutations": 10,
        "max_bytes": 10_000,
    }
    options.update(kwargs)
    return str(h.store.create_grant(ALICE, **options).id)


def _trust(h: Any) -> dict[str, str]:
    return {r.content: r.trust for r in h.store.list_records(ALICE)}


@FLAVOURS
def test_without_a_policy_every_write_waits_for_a_human(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour, _model(add=True)) as h:
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" in out
        _, request = h.pending_review("g1")
        assert len(request["action_requests"]) == 4
        assert h.store.list_records(ALICE) == []
        h.resume_review(owner=ALICE, thread_id="g1", decisions=decide_all(request))
        assert set(_trust(h).values()) == {"user-confirmed"}


@FLAVOURS
def test_grant_approves_within_its_bounds_without_an_interrupt(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock)
        h = base.rebuild(_model(add=True), policy=ApprovalPolicy(grant_id=grant_id))
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" not in out
        results = out["commit_results"]
        assert [r["decision"] for r in results] == ["grant"] * 4
        assert {r["status"] for r in results} == {"approved"}
        assert set(_trust(h).values()) == {"agent-observed"}
        assert len(_trust(h)) == 4
        grant = h.store.get_grant(ALICE, grant_id)
        assert grant.used_mutations == 4 and grant.used_bytes > 0
        assert h.list_inbox(ALICE) == {}


@FLAVOURS
def test_operations_outside_the_grant_go_to_the_human(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock, operations=["set_preference"])
        h = base.rebuild(_model(add=True), policy=ApprovalPolicy(grant_id=grant_id))
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" in out
        _, request = h.pending_review("g1")
        assert [r["operation"] for r in request["action_requests"]] == ["add"]
        assert len(h.store.get_preferences(ALICE)) == 3  # granted before the interrupt
        state = h.resume_review(owner=ALICE, thread_id="g1", decisions=decide_all(request))
        decisions = {r["operation"]: r["decision"] for r in state["commit_results"]}
        assert decisions == {"set_preference": "grant", "add": "approve"}
        assert len(state["commit_results"]) == 4
        trust = _trust(h)
        assert trust["Alice keeps bees"] == "user-confirmed"
        assert list(trust.values()).count("agent-observed") == 3
        assert h.store.get_grant(ALICE, grant_id).used_mutations == 3


@FLAVOURS
def test_exhausted_grant_stops_and_usage_survives_the_resume(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock, max_mutations=2)
        h = base.rebuild(_model(prefs=3), policy=ApprovalPolicy(grant_id=grant_id))
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" in out
        _, request = h.pending_review("g1")
        assert len(request["action_requests"]) == 1
        assert h.store.get_grant(ALICE, grant_id).used_mutations == 2
        # The resume re-runs the review node from its first line: the two granted
        # proposals are reported from their stored results, not approved (or counted) again.
        state = h.resume_review(owner=ALICE, thread_id="g1", decisions=decide_all(request))
        assert sorted(r["decision"] for r in state["commit_results"]) == [
            "approve",
            "grant",
            "grant",
        ]
        assert h.store.get_grant(ALICE, grant_id).used_mutations == 2
        # A later turn: the grant is exhausted, everything waits for the human.
        h2 = base.rebuild(_model(prefs=1), policy=ApprovalPolicy(grant_id=grant_id))
        h2.store.delete_preference(ALICE, PREFS[0][0])
        out = h2.invoke(turn("hello"), cfg("g2"), context=CTX)
        assert "__interrupt__" in out
        assert h.store.get_grant(ALICE, grant_id).used_mutations == 2


@FLAVOURS
def test_byte_cap_sends_the_rest_to_the_human(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock, max_bytes=1)
        h = base.rebuild(_model(prefs=2), policy=ApprovalPolicy(grant_id=grant_id))
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" in out
        _, request = h.pending_review("g1")
        assert len(request["action_requests"]) == 2
        grant = h.store.get_grant(ALICE, grant_id)
        assert (grant.used_mutations, grant.used_bytes) == (0, 0)


@FLAVOURS
def test_expired_grant_approves_nothing(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock)
        clock.advance(hours=2)
        h = base.rebuild(_model(prefs=2), policy=ApprovalPolicy(grant_id=grant_id))
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" in out
        _, request = h.pending_review("g1")
        assert len(request["action_requests"]) == 2
        assert h.store.get_preferences(ALICE) == []
        assert h.store.get_grant(ALICE, grant_id).used_mutations == 0


@FLAVOURS
def test_auto_reject_rejects_without_an_interrupt(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as base:
        policy = ApprovalPolicy(auto_reject_operations=frozenset({"set_preference"}))
        h = base.rebuild(_model(prefs=2), policy=policy)
        out = h.invoke(turn("hello"), cfg("g1"), context=CTX)
        assert "__interrupt__" not in out
        assert [(r["status"], r["decision"]) for r in out["commit_results"]] == [
            ("rejected", "policy"),
            ("rejected", "policy"),
        ]
        assert h.store.get_preferences(ALICE) == []
        # Mixed: the rejected operation never reaches the human, the rest does.
        h = base.rebuild(_model(prefs=1, add=True), policy=policy)
        h.invoke(turn("hello"), cfg("g2"), context=CTX)
        _, request = h.pending_review("g2")
        assert [r["operation"] for r in request["action_requests"]] == ["add"]
        state = h.resume_review(owner=ALICE, thread_id="g2", decisions=decide_all(request))
        decisions = {r["operation"]: r["decision"] for r in state["commit_results"]}
        assert decisions == {"set_preference": "policy", "add": "approve"}


class _CrashAfterGrant:
    """A store proxy whose first ``decide_with_grant`` commits, then "crashes" the node."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.crashed = False

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name != "decide_with_grant":
            return attr

        def crash() -> None:
            if not self.crashed:
                self.crashed = True
                raise RuntimeError("simulated crash after the grant committed")

        if inspect.iscoroutinefunction(attr):

            async def adecide(*args: Any, **kwargs: Any) -> Any:
                result = await attr(*args, **kwargs)
                crash()
                return result

            return adecide

        def decide(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            crash()
            return result

        return decide


@FLAVOURS
def test_review_rerun_after_a_crash_does_not_count_twice(pg_dsn: str, flavour: str) -> None:
    clock = FakeClock()
    with harness_on(pg_dsn, flavour, clock=clock) as base:
        grant_id = _grant(base, clock)
        # Create the proposals (no policy: they wait), then review them with a crashing store.
        base.rebuild(_model(prefs=3)).invoke(turn("hello"), cfg("g1"), context=CTX)
        pending = base.get_state(cfg("g1")).values["pending_proposals"]
        assert len(pending) == 3
        proxy = _CrashAfterGrant(base.real_store())
        node = create_review_memories(proxy, policy=ApprovalPolicy(grant_id=grant_id))  # type: ignore[arg-type]
        state = {"pending_proposals": pending}
        args = (state, Runtime(context=CTX), cfg("g1"))

        def run() -> Any:
            return base.run(node(*args)) if base.is_async else node(*args)

        with pytest.raises(RuntimeError, match="simulated crash"):
            run()
        assert base.store.get_grant(ALICE, grant_id).used_mutations == 1
        first = run()  # the retry re-runs the node from its first line
        second = run()  # and once more, as a replay
        # The per-turn metrics carry each run's own latency; the counts are the same.
        assert first.pop("metrics")["auto_approved"] == second.pop("metrics")["auto_approved"]
        assert first == second
        assert [r["decision"] for r in first["commit_results"]] == ["grant"] * 3
        grant = base.store.get_grant(ALICE, grant_id)
        assert grant.used_mutations == 3
        assert len(base.store.get_preferences(ALICE)) == 3
