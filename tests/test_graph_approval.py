"""The approval path on a real StateGraph + PostgresSaver: interrupt, resume, commit."""

from __future__ import annotations

import pytest
from _graph_helpers import ALICE, CTX, TURN_1, agent_on, cfg, turn
from langgraph.errors import EmptyInputError
from langgraph.types import Command

from memory_graph import IdentityMissingError, Owner, ResumeError
from nodes import (
    NoPendingReviewError,
    UnknownThreadError,
    decide_all,
    list_inbox,
    pending_review,
    resume_review,
)


def test_whole_path_then_next_session_knows_the_user(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        out = agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        assert "__interrupt__" in out
        assert out["extraction"]["proposed"] == 2
        interrupt_id, request = pending_review(agent, "s1")
        assert set(request) == {"kind", "action_requests", "review_configs"}
        ops = [r["operation"] for r in request["action_requests"]]
        assert ops == ["patch_profile", "set_preference"]
        for r in request["action_requests"]:
            assert {"proposal_id", "args", "diff", "evidence", "expires_at"} <= set(r)
            assert r["evidence"]["quote"]
        # Nothing is written before approval.
        assert "Ada" not in store.context_block(ALICE)
        inbox = list_inbox(store, ALICE)
        assert list(inbox) == ["s1"] and len(inbox["s1"]) == 2

        state = resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]
        assert state["pending_proposals"] == []
        assert list_inbox(store, ALICE) == {}

        out = agent.invoke(turn("Hello again"), cfg("s2"), context=CTX)
        assert "- call_them: Ada" in out["user_context"]
        assert "reply.length: short" in out["user_context"]
        assert out["messages"][-1].content == "Hello, Ada!"  # short, by name
        assert "__interrupt__" not in out


def test_edit_and_reject(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = pending_review(agent, "s1")
        profile_id, pref_id = (r["proposal_id"] for r in request["action_requests"])
        state = resume_review(
            agent,
            owner=ALICE,
            thread_id="s1",
            decisions=[
                {"type": "edit", "proposal_id": profile_id, "args": {"patch": {"call_them": "A."}}},
                {"type": "reject", "proposal_id": pref_id, "message": "not now"},
            ],
        )
        assert [r["status"] for r in state["commit_results"]] == ["approved", "rejected"]
        assert store.get_profile(ALICE).fields == {"call_them": "A."}
        assert store.get_preferences(ALICE) == []


def test_stale_foreign_and_malformed_resumes_commit_nothing(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        old_id, old_request = pending_review(agent, "s1")
        resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(old_request))
        agent.invoke(turn("Please call me Bea."), cfg("s1"), context=CTX)
        new_id, request = pending_review(agent, "s1")
        assert new_id != old_id
        audit_before = len(store.audit_log(ALICE))

        # Stale: the decisions of the previous review.
        with pytest.raises(ResumeError, match="stale or foreign"):
            resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(old_request))
        # Stale, sent straight to the graph under the new interrupt id: refused by the
        # response schema inside interrupt(), and the interrupt stays pending.
        with pytest.raises(ResumeError, match="stale or foreign"):
            agent.invoke(
                Command(resume={new_id: {"decisions": decide_all(old_request)}}),
                cfg("s1"),
                context=CTX,
            )
        # Malformed.
        with pytest.raises(ResumeError, match="malformed"):
            resume_review(agent, owner=ALICE, thread_id="s1", decisions=[{"type": "maybe"}])
        with pytest.raises(ResumeError):
            agent.invoke(Command(resume={new_id: {"nope": 1}}), cfg("s1"), context=CTX)
        # Foreign: another user resumes alice's thread.
        with pytest.raises(ResumeError, match="foreign"):
            resume_review(
                agent, owner=Owner("mallory"), thread_id="s1", decisions=decide_all(request)
            )
        with pytest.raises(ResumeError, match="foreign"):
            agent.invoke(
                Command(resume={new_id: {"decisions": decide_all(request)}}),
                cfg("s1"),
                context={"user_id": "mallory"},
            )
        assert len(store.audit_log(ALICE)) == audit_before
        assert pending_review(agent, "s1") == (new_id, request)

        # The right resume still works afterwards.
        state = resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved"]
        assert store.get_profile(ALICE).fields["call_them"] == "Bea"


def test_context_missing_on_resume_fails_closed(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        interrupt_id, request = pending_review(agent, "s1")
        with pytest.raises(IdentityMissingError, match="user_id"):
            agent.invoke(
                Command(resume={interrupt_id: {"decisions": decide_all(request)}}), cfg("s1")
            )
        assert store.get_profile(ALICE).fields == {}
        assert pending_review(agent, "s1") == (interrupt_id, request)
        state = resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]


def test_unknown_and_finished_threads_are_refused(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        with pytest.raises(UnknownThreadError):
            resume_review(agent, owner=ALICE, thread_id="nope", decisions=[])
        assert agent.get_state(cfg("nope")).values == {}  # nothing was started
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = pending_review(agent, "s1")
        resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        with pytest.raises(NoPendingReviewError, match="finished"):
            resume_review(agent, owner=ALICE, thread_id="s1", decisions=decide_all(request))


def test_missing_identity_fails_closed_before_any_read_or_write(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        with pytest.raises(IdentityMissingError):
            agent.invoke(turn(TURN_1), cfg("s1"))
        with pytest.raises(IdentityMissingError):
            agent.invoke(turn(TURN_1), cfg("s2"), context={"user_id": "  "})
        assert store.list_pending(ALICE) == []
        # configurable is a trusted source too.
        out = agent.invoke(turn(TURN_1), {"configurable": {"thread_id": "s3", "user_id": "alice"}})
        assert "__interrupt__" in out


def test_strict_resume_is_bound_into_the_agent(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, _store):
        assert agent.config["configurable"]["__pregel_durability"] == "sync"
        with pytest.raises((EmptyInputError, Exception)):
            agent.invoke(Command(resume={"0" * 32: {"decisions": []}}), cfg("x"), context=CTX)
        assert agent.get_state(cfg("x")).values == {}
