"""The approval path on a real StateGraph + Postgres checkpointer: interrupt, resume, commit.

Every test runs on the sync stack (``MemoryStore`` + ``PostgresSaver``, ``invoke``) and the
async stack (``AsyncMemoryStore`` + ``AsyncPostgresSaver``, ``ainvoke``/``astream``).
"""

from __future__ import annotations

from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, cfg, harness_on, turn
from langgraph.errors import EmptyInputError
from langgraph.types import Command

from memory_graph import IdentityMissingError, Owner, ResumeError, ThreadOwnerError
from nodes import NoPendingReviewError, UnknownThreadError, decide_all


@FLAVOURS
def test_whole_path_then_next_session_knows_the_user(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        out = h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        assert "__interrupt__" in out
        assert out["extraction"]["proposed"] == 2
        interrupt_id, request = h.pending_review("s1")
        assert set(request) == {"kind", "action_requests", "review_configs"}
        ops = [r["operation"] for r in request["action_requests"]]
        assert ops == ["patch_profile", "set_preference"]
        for r in request["action_requests"]:
            assert {"proposal_id", "args", "diff", "evidence", "expires_at"} <= set(r)
            assert r["evidence"]["quote"]
        # Nothing is written before approval.
        assert "Ada" not in h.store.context_block(ALICE)
        inbox = h.list_inbox(ALICE)
        assert list(inbox) == ["s1"] and len(inbox["s1"]) == 2

        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]
        assert state["pending_proposals"] == []
        assert h.list_inbox(ALICE) == {}
        records = h.store.list_records(ALICE)
        assert all(r.trust == "user-confirmed" for r in records)

        out = h.invoke(turn("Hello again"), cfg("s2"), context=CTX)
        assert "- call_them: Ada" in out["user_context"]
        assert "reply.length: short" in out["user_context"]
        assert out["messages"][-1].content == "Hello, Ada!"  # short, by name
        assert "__interrupt__" not in out


@FLAVOURS
def test_streamed_turn_interrupts_and_resumes(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        chunks = h.stream(turn(TURN_1), cfg("s1"), context=CTX, stream_mode="updates")
        assert "__interrupt__" in chunks[-1]
        interrupt_id, request = h.pending_review("s1")
        assert chunks[-1]["__interrupt__"][0].id == interrupt_id
        resumed = h.stream(
            Command(resume={interrupt_id: {"decisions": decide_all(request)}}),
            cfg("s1"),
            context=CTX,
            stream_mode="updates",
        )
        review = [c["review_memories"] for c in resumed if "review_memories" in c]
        assert [r["status"] for r in review[0]["commit_results"]] == ["approved", "approved"]
        assert h.store.get_profile(ALICE).fields == {"call_them": "Ada"}


@FLAVOURS
def test_edit_and_reject(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = h.pending_review("s1")
        profile_id, pref_id = (r["proposal_id"] for r in request["action_requests"])
        state = h.resume_review(
            owner=ALICE,
            thread_id="s1",
            decisions=[
                {"type": "edit", "proposal_id": profile_id, "args": {"patch": {"call_them": "A."}}},
                {"type": "reject", "proposal_id": pref_id, "message": "not now"},
            ],
        )
        assert [r["status"] for r in state["commit_results"]] == ["approved", "rejected"]
        assert h.store.get_profile(ALICE).fields == {"call_them": "A."}
        assert h.store.get_preferences(ALICE) == []


@FLAVOURS
def test_refused_edit_is_refused_before_commit_and_the_review_stays_pending(
    pg_dsn: str, flavour: str
) -> None:
    # issue 8 §6: an edit the store would refuse is refused while validating the resume,
    # before interrupt() returns, so nothing of the batch commits and it can be resumed again.
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        interrupt_id, request = h.pending_review("s1")
        profile_id, pref_id = (r["proposal_id"] for r in request["action_requests"])
        bad = [
            {"type": "edit", "proposal_id": profile_id, "args": {"patch": {"nope": "x"}}},
            {"type": "approve", "proposal_id": pref_id},
        ]
        with pytest.raises(ResumeError, match="refused edit"):
            h.resume_review(owner=ALICE, thread_id="s1", decisions=bad)
        with pytest.raises(ResumeError, match="refused edit"):
            h.invoke(Command(resume={interrupt_id: {"decisions": bad}}), cfg("s1"), context=CTX)
        assert h.store.get_preferences(ALICE) == []
        assert h.pending_review("s1") == (interrupt_id, request)
        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]


@FLAVOURS
def test_stale_foreign_and_malformed_resumes_commit_nothing(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        old_id, old_request = h.pending_review("s1")
        h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(old_request))
        h.invoke(turn("Please call me Bea."), cfg("s1"), context=CTX)
        new_id, request = h.pending_review("s1")
        assert new_id != old_id
        audit_before = len(h.store.audit_log(ALICE))

        # Stale: the decisions of the previous review.
        with pytest.raises(ResumeError, match="stale or foreign"):
            h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(old_request))
        # Stale, sent straight to the graph under the new interrupt id: refused by the
        # response schema inside interrupt(), and the interrupt stays pending.
        with pytest.raises(ResumeError, match="stale or foreign"):
            h.invoke(
                Command(resume={new_id: {"decisions": decide_all(old_request)}}),
                cfg("s1"),
                context=CTX,
            )
        # Malformed.
        with pytest.raises(ResumeError, match="malformed"):
            h.resume_review(owner=ALICE, thread_id="s1", decisions=[{"type": "maybe"}])
        with pytest.raises(ResumeError):
            h.invoke(Command(resume={new_id: {"nope": 1}}), cfg("s1"), context=CTX)
        # Foreign: another user resumes alice's thread.
        with pytest.raises(ThreadOwnerError):
            h.resume_review(owner=Owner("mallory"), thread_id="s1", decisions=decide_all(request))
        with pytest.raises(ThreadOwnerError):
            h.invoke(
                Command(resume={new_id: {"decisions": decide_all(request)}}),
                cfg("s1"),
                context={"user_id": "mallory"},
            )
        assert len(h.store.audit_log(ALICE)) == audit_before
        assert h.pending_review("s1") == (new_id, request)

        # The right resume still works afterwards.
        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved"]
        assert h.store.get_profile(ALICE).fields["call_them"] == "Bea"


@FLAVOURS
def test_context_missing_on_resume_fails_closed(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        interrupt_id, request = h.pending_review("s1")
        with pytest.raises(IdentityMissingError, match="user_id"):
            h.invoke(Command(resume={interrupt_id: {"decisions": decide_all(request)}}), cfg("s1"))
        assert h.store.get_profile(ALICE).fields == {}
        assert h.pending_review("s1") == (interrupt_id, request)
        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]


@FLAVOURS
def test_unknown_and_finished_threads_are_refused(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        with pytest.raises(UnknownThreadError):
            h.resume_review(owner=ALICE, thread_id="nope", decisions=[])
        assert h.get_state(cfg("nope")).values == {}  # nothing was started
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = h.pending_review("s1")
        h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        with pytest.raises(NoPendingReviewError, match="finished"):
            h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))


@FLAVOURS
def test_missing_identity_fails_closed_before_any_read_or_write(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour) as h:
        with pytest.raises(IdentityMissingError):
            h.invoke(turn(TURN_1), cfg("s1"))
        with pytest.raises(IdentityMissingError):
            h.invoke(turn(TURN_1), cfg("s2"), context={"user_id": "  "})
        assert h.store.list_pending(ALICE) == []
        # configurable is a trusted source too.
        out = h.invoke(turn(TURN_1), {"configurable": {"thread_id": "s3", "user_id": "alice"}})
        assert "__interrupt__" in out


@FLAVOURS
def test_strict_resume_is_bound_into_the_agent(
    pg_dsn: str, flavour: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph.pregel import Pregel

    seen: list[Any] = []
    stream, astream = Pregel.stream, Pregel.astream

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("durability"))
        return stream(self, *args, **kwargs)

    async def aspy(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("durability"))
        async for chunk in astream(self, *args, **kwargs):
            yield chunk

    monkeypatch.setattr(Pregel, "stream", spy)
    monkeypatch.setattr(Pregel, "astream", aspy)
    with harness_on(pg_dsn, flavour) as h:
        # Sync durability through LangGraph's public argument; no private durability key.
        assert "__pregel_durability" not in h.agent.config["configurable"]
        h.invoke(turn(TURN_1), cfg("d"), context=CTX)
        assert seen and set(seen) == {"sync"}, seen
        with pytest.raises((EmptyInputError, Exception)):
            h.invoke(Command(resume={"0" * 32: {"decisions": []}}), cfg("x"), context=CTX)
        assert h.get_state(cfg("x")).values == {}
