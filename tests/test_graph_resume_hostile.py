"""A resume is validated completely before ``interrupt()`` returns (issue 8 §6).

Edit args nested 300 deep, a decision message over the size limit or with NUL or control
characters, and garbage payloads each raise ``ResumeError``, through ``resume_review`` and
straight through ``Command(resume={interrupt_id: ...})``; the whole review stays pending,
nothing commits, and the right resume works afterwards. A resumer that loses the race gets
``NoPendingReviewError``. Sync and async.
"""

from __future__ import annotations

from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, FLAVOURS, TURN_1, Harness, cfg, harness_on, turn
from langgraph.types import Command

from memory_graph import ResumeError
from nodes import NoPendingReviewError, decide_all


def _nested(depth: int) -> Any:
    value: Any = "Bea"
    for _ in range(depth):
        value = {"x": value}
    return value


def _hostile(request: Any) -> list[tuple[str, Any]]:
    profile_id, pref_id = (r["proposal_id"] for r in request["action_requests"])
    ok = {"type": "approve", "proposal_id": pref_id}

    def edit(args: Any) -> dict[str, Any]:
        return {"decisions": [{"type": "edit", "proposal_id": profile_id, "args": args}, ok]}

    def reject(message: Any) -> dict[str, Any]:
        return {
            "decisions": [
                {"type": "approve", "proposal_id": profile_id},
                {"type": "reject", "proposal_id": pref_id, "message": message},
            ]
        }

    return [
        ("args nested 300 deep", edit({"patch": {"call_them": _nested(300)}})),
        ("args list nested 300 deep", edit({"patch": _nested_list(300)})),
        ("message over the limit", reject("x" * 4097)),
        ("message over the limit in CJK", reject("界" * 1366)),
        ("message with NUL", reject("no\x00thanks")),
        ("message with ESC", reject("fine\x1b[2J")),
        ("message lone surrogate", reject("bad\ud800")),
        ("edit value with NUL", edit({"patch": {"call_them": "B\x00ea"}})),
        ("edit value over the limit", edit({"patch": {"call_them": "x" * 5000}})),
        ("edit blocked by the guard", edit({"patch": {"call_them": "my SSN is 123-45-6789"}})),
        ("huge integer", edit({"patch": {"call_them": 10**400}})),
        ("non-string key", {"decisions": [{1: "approve"}, ok]}),
        ("garbage: a string", "approve all"),
        ("garbage: nested lists", [[[[]]]]),
        ("garbage: decisions not a list", {"decisions": "approve"}),
        ("garbage: a float nan", {"decisions": [float("nan")]}),
        ("garbage: an object", {"decisions": [object()]}),
    ]


def _nested_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _state(h: Harness) -> tuple[Any, ...]:
    return (
        h.pending_review("s1"),
        len(h.store.audit_log(ALICE)),
        sorted(p.id for p in h.store.list_pending(ALICE)),
        h.store.get_profile(ALICE).fields,
        h.store.get_preferences(ALICE),
    )


@FLAVOURS
def test_hostile_resumes_are_refused_and_the_review_stays_pending(
    pg_dsn: str, flavour: str
) -> None:
    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        interrupt_id, request = h.pending_review("s1")
        before = _state(h)
        for label, value in _hostile(request):
            decisions = value.get("decisions") if isinstance(value, dict) else value
            with pytest.raises(ResumeError) as err:
                h.resume_review(owner=ALICE, thread_id="s1", decisions=decisions)
            assert len(str(err.value)) < 600, label  # never echoes the unbounded input
            with pytest.raises(ResumeError):
                h.invoke(Command(resume={interrupt_id: value}), cfg("s1"), context=CTX)
            assert _state(h) == before, label
        state = h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert [r["status"] for r in state["commit_results"]] == ["approved", "approved"]
        assert h.store.get_profile(ALICE).fields == {"call_them": "Ada"}


class _StaleGraph:
    """The agent, but ``get_state`` answers with a snapshot taken before another resume."""

    def __init__(self, agent: Any, snapshot: Any) -> None:
        self._agent, self._snapshot = agent, snapshot

    def __getattr__(self, name: str) -> Any:
        return getattr(self._agent, name)

    def get_state(self, config: Any) -> Any:
        return self._snapshot

    async def aget_state(self, config: Any) -> Any:
        return self._snapshot


@FLAVOURS
def test_a_resumer_that_loses_the_race_gets_no_pending_review(pg_dsn: str, flavour: str) -> None:
    from nodes import aresume_review, resume_review

    with harness_on(pg_dsn, flavour) as h:
        h.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = h.pending_review("s1")
        stale = _StaleGraph(h.agent, h.get_state(cfg("s1")))
        h.resume_review(owner=ALICE, thread_id="s1", decisions=decide_all(request))
        audit = len(h.store.audit_log(ALICE))
        with pytest.raises(NoPendingReviewError, match="another resume"):
            if h.is_async:
                h.run(
                    aresume_review(
                        stale, owner=ALICE, thread_id="s1", decisions=decide_all(request)
                    )
                )
            else:
                resume_review(stale, owner=ALICE, thread_id="s1", decisions=decide_all(request))
        assert len(h.store.audit_log(ALICE)) == audit


def _request(pid: str) -> Any:
    from nodes._payloads import build_review_request

    proposal = {
        "id": pid,
        "scope_id": "s",
        "level": "user",
        "operation": "patch_profile",
        "target_id": None,
        "base_version": None,
        "args": {"patch": {"call_them": "Bea"}},
        "diff": "call_them: Bea",
        "evidence": {"quote": "Call me Bea"},
        "guard": {},
        "status": "pending",
        "expires_at": "2030-01-01T00:00:00Z",
    }
    return build_review_request([proposal])  # type: ignore[list-item]


def test_the_bound_response_model_checks_only_the_review_bound_in_its_own_context() -> None:
    import threading

    import pydantic

    from nodes._payloads import BoundReviewResponse, bound_response_schema

    def answer(pid: str) -> dict[str, Any]:
        return {"decisions": [{"type": "approve", "proposal_id": pid}]}

    # Outside a bound block nothing is accepted, not even a well-formed answer.
    with pytest.raises((ResumeError, pydantic.ValidationError), match="no review request"):
        BoundReviewResponse.model_validate(answer("p1"))
    errors: list[str] = []
    barrier = threading.Barrier(2)

    def review(mine: str, other: str) -> None:
        with bound_response_schema(_request(mine)) as schema:
            barrier.wait()  # both reviews are bound at once, in two threads
            try:
                assert schema.model_validate(answer(mine)).decisions[0].proposal_id == mine
                with pytest.raises((ResumeError, pydantic.ValidationError)):
                    schema.model_validate(answer(other))  # the other thread's review
            except BaseException as exc:  # reported to the test thread
                errors.append(repr(exc))

    threads = [
        threading.Thread(target=review, args=("p1", "p2")),
        threading.Thread(target=review, args=("p2", "p1")),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with pytest.raises((ResumeError, pydantic.ValidationError), match="no review request"):
        BoundReviewResponse.model_validate(answer("p1"))  # unbound again after the block
