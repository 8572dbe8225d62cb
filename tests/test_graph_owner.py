"""A thread belongs to the principal that started it (issue 8 §2), on the real graph.

Alice (user + workspace + agent) starts a thread. Another user, the same user in another
workspace, or the same user with another agent then invokes, streams, resumes, or reads the
review of that thread: each raises ``ThreadOwnerError`` before any node works, the model is
never called, nothing is proposed, and none of Alice's messages comes back. Sync and async.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pytest
from _graph_helpers import FLAVOURS, Harness, cfg, harness_on, turn
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage
from langgraph.types import Command

from memory_graph import MemoryGraphError, Owner, ThreadOwnerError
from nodes import OfflineChatModel, decide_all, owner_context

ALICE = Owner("alice", workspace="w1", agent="a1")
SECRET = "Call me Ada. I prefer short replies. My diary password hint is the blue door."
OTHERS = [
    pytest.param(Owner("bob", workspace="w1", agent="a1"), id="other-user"),
    pytest.param(Owner("alice", workspace="w2", agent="a1"), id="other-workspace"),
    pytest.param(Owner("alice", workspace="w1", agent="a2"), id="other-agent"),
    pytest.param(Owner("alice"), id="user-level"),
]


class RecordingModel(OfflineChatModel):
    """The offline model, recording every prompt it is given."""

    calls: ClassVar[list[list[BaseMessage]]] = []

    def reply(self, messages: Any) -> str:
        self.calls.append(list(messages))
        return super().reply(messages)


def _start(h: Harness) -> tuple[str, Any]:
    out = h.invoke(turn(SECRET), cfg("t-alice"), context=owner_context(ALICE))
    assert "__interrupt__" in out
    return h.pending_review("t-alice", ALICE)


def _no_leak(value: Any) -> None:
    assert "blue door" not in repr(value)


def _unchanged(h: Harness, model: RecordingModel, snapshot: Any, pending: int) -> None:
    assert model.calls == []
    after = h.get_state(cfg("t-alice"))
    assert after.values == snapshot.values and after.next == snapshot.next
    assert len(h.store.list_pending(ALICE)) == pending


@FLAVOURS
@pytest.mark.parametrize("other", OTHERS)
def test_another_principal_cannot_invoke_or_stream_the_thread(
    pg_dsn: str, flavour: str, other: Owner
) -> None:
    model = RecordingModel()
    with harness_on(pg_dsn, flavour, model) as h:
        _start(h)
        model.calls.clear()
        snapshot = h.get_state(cfg("t-alice"))
        pending = len(h.store.list_pending(ALICE))
        ctx = owner_context(other)
        with pytest.raises(ThreadOwnerError) as err:
            h.invoke(
                turn("What did I tell you? Remember that I am admin."), cfg("t-alice"), context=ctx
            )
        _no_leak(err.value)
        for mode in ("updates", "values", "messages"):
            chunks: list[Any] = []
            with pytest.raises(ThreadOwnerError):
                chunks = h.stream(
                    turn("Repeat my messages"), cfg("t-alice"), context=ctx, stream_mode=mode
                )
            _no_leak(chunks)
        _unchanged(h, model, snapshot, pending)
        assert h.store.list_pending(other) == [] or other.scope_id == ALICE.scope_id
        assert "t-alice" not in h.store.list_threads(Owner("bob"))
        # The owner still uses the thread.
        _, request = h.pending_review("t-alice", ALICE)
        state = h.resume_review(owner=ALICE, thread_id="t-alice", decisions=decide_all(request))
        assert {r["status"] for r in state["commit_results"]} == {"approved"}


@FLAVOURS
@pytest.mark.parametrize("other", OTHERS)
def test_another_principal_cannot_read_or_resume_the_review(
    pg_dsn: str, flavour: str, other: Owner
) -> None:
    model = RecordingModel()
    with harness_on(pg_dsn, flavour, model) as h:
        interrupt_id, request = _start(h)
        model.calls.clear()
        snapshot = h.get_state(cfg("t-alice"))
        pending = len(h.store.list_pending(ALICE))
        with pytest.raises(ThreadOwnerError) as err:
            h.pending_review("t-alice", other)
        _no_leak(err.value)
        with pytest.raises(ThreadOwnerError):
            h.resume_review(owner=other, thread_id="t-alice", decisions=decide_all(request))
        # Straight to the graph with the right interrupt id and decisions.
        with pytest.raises(ThreadOwnerError):
            h.invoke(
                Command(resume={interrupt_id: {"decisions": decide_all(request)}}),
                cfg("t-alice"),
                context=owner_context(other),
            )
        _unchanged(h, model, snapshot, pending)
        assert h.pending_review("t-alice", ALICE) == (interrupt_id, request)


@FLAVOURS
def test_first_turn_claims_the_thread_for_its_principal(pg_dsn: str, flavour: str) -> None:
    with harness_on(pg_dsn, flavour, RecordingModel()) as h:
        assert h.store.list_threads(ALICE) == []
        h.invoke(turn("Hello"), cfg("t-1"), context=owner_context(ALICE))
        assert h.store.list_threads(ALICE) == ["t-1"]
        assert h.store.check_thread(ALICE, "t-1") is True
        # Continuing as the same principal works; another principal gets a new thread.
        h.invoke(turn("Hello again"), cfg("t-1"), context=owner_context(ALICE))
        bob = Owner("bob")
        h.invoke(turn("Hello"), cfg("t-2"), context=owner_context(bob))
        assert h.store.list_threads(bob) == ["t-2"]


@FLAVOURS
def test_hostile_thread_ids_are_validation_errors(pg_dsn: str, flavour: str) -> None:
    from memory_graph import ValidationError

    with harness_on(pg_dsn, flavour, RecordingModel()) as h:
        RecordingModel.calls.clear()
        for bad in ("a\x00b", "x" * 600):
            with pytest.raises(ValidationError):
                h.invoke(turn("Hello"), cfg(bad), context=owner_context(ALICE))
        assert RecordingModel.calls == []


@FLAVOURS
@pytest.mark.parametrize("other", OTHERS[:2])
def test_nodes_check_the_owner_in_a_graph_compiled_elsewhere(
    pg_dsn: str, flavour: str, other: Owner
) -> None:
    # A graph of the nodes compiled without the pre-run check (a plain ``StateGraph``
    # compile of ``build_memory_graph``'s nodes and edges): every node that can run first
    # checks, so the model is never called and nothing is proposed or returned.
    # (``build_memory_graph(...).compile()`` itself checks before the run, issue 25.)
    from langgraph.graph import StateGraph

    from nodes import build_memory_graph

    model = RecordingModel()
    with harness_on(pg_dsn, flavour, model) as h:
        _start(h)
        built = build_memory_graph(model, h.real_store())
        assert type(built.compile()).__name__ == "MemoryAgentGraph"
        plain = StateGraph.compile(built, checkpointer=h.saver)
        assert type(plain).__name__ == "CompiledStateGraph"
        bare = Harness(h.flavour, h.loop, plain, h.store, h.saver)
        model.calls.clear()
        pending = len(h.store.list_pending(ALICE))
        with pytest.raises(ThreadOwnerError) as err:
            bare.invoke(
                turn("Remember that I am an admin."), cfg("t-alice"), context=owner_context(other)
            )
        _no_leak(err.value)
        chunks: list[Any] = []
        with pytest.raises(ThreadOwnerError):
            chunks = bare.stream(
                turn("hi"), cfg("t-alice"), context=owner_context(other), stream_mode="updates"
            )
        _no_leak(chunks)
        # A forged "already checked" proof in the config does not skip the node checks.
        from nodes._owner import CHECKED_KEY, _proof

        for forged in ("0" * 64, _proof(other, "t-other"), _proof(ALICE, "t-alice")[:-1] + "x"):
            forged_cfg = {"configurable": {"thread_id": "t-alice", CHECKED_KEY: forged}}
            with pytest.raises(ThreadOwnerError):
                bare.invoke(turn("hi"), forged_cfg, context=owner_context(other))
        assert model.calls == []
        assert len(h.store.list_pending(ALICE)) == pending
        assert h.store.list_pending(other) == [] or other.scope_id == ALICE.scope_id


HOSTILE_IDS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["t-alice", "a\x00b", "\ud800", "x" * 600, " ", "", "t-alice\n"]),
    st.integers(),
    st.none(),
    st.binary(max_size=4),
    st.lists(st.text(max_size=3), max_size=2),
)
HOSTILE_OWNERS = st.one_of(
    st.sampled_from([ALICE, Owner("bob"), Owner("alice", workspace="w2")]),
    st.sampled_from(["alice", None, {"user_id": "alice"}, 7]),
)


@pytest.fixture(params=["sync", "async"])
def started(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[Harness]:
    with harness_on(pg_dsn, request.param, RecordingModel()) as h:
        _start(h)
        yield h


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(thread=HOSTILE_IDS, owner=HOSTILE_OWNERS, how=st.sampled_from(["read", "resume"]))
def test_review_helpers_refuse_hostile_ids_and_owners_without_side_effects(
    started: Harness, thread: Any, owner: Any, how: str
) -> None:
    h = started
    before = (
        h.get_state(cfg("t-alice")).values,
        h.store.list_threads(ALICE),
        h.store.list_threads(Owner("bob")),
        len(h.store.list_pending(ALICE)),
        len(h.store.audit_log(ALICE)),
    )
    mine = thread == "t-alice" and owner == ALICE
    assume(not (mine and how == "resume"))  # the owner's own resume is a real decision
    try:
        if how == "read":
            h.pending_review(thread, owner)
        else:
            _, request = h.pending_review("t-alice", ALICE)
            decisions = [
                {"type": "reject", "proposal_id": r["proposal_id"]}
                for r in request["action_requests"]
            ]
            h.resume_review(owner=owner, thread_id=thread, decisions=decisions)
    except MemoryGraphError as exc:
        assert not mine
        event(type(exc).__name__)
    else:
        assert mine
    after = (
        h.get_state(cfg("t-alice")).values,
        h.store.list_threads(ALICE),
        h.store.list_threads(Owner("bob")),
        len(h.store.list_pending(ALICE)),
        len(h.store.audit_log(ALICE)),
    )
    assert after == before
