"""Garbage resume payloads against a pending review: a clear error or a correct result.

Each example opens a fresh pending review (its own user and thread) and throws one payload
at it three ways: through ``resume_review``, as ``Command(resume={interrupt_id: value})``
and as a plain ``Command(resume=value)``. A refused payload must raise ``ResumeError`` (a
``ValidationError``) with a message, leave the interrupt pending and commit nothing; an
accepted one must be a valid answer to the review, with one result per proposal.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from _graph_helpers import TURN_1, Harness, cfg, harness_on, turn
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from langgraph.errors import EmptyInputError, UnknownInterruptError
from langgraph.types import Command

from memory_graph import Owner, ResumeError
from nodes import owner_context, validate_decisions

_users = itertools.count()

# Hostile text: NUL, ESC and other controls, bidi overrides, lone surrogates, big strings.
HOSTILE_TEXT = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        ["a\x00b", "\x1b[2J", "ok\x07", "\ud800", "x\u202ey", "\r\n", "x" * 5000, "界" * 2000]
    ),
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.floats(allow_nan=True, allow_infinity=True)
    | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE_TEXT, inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    value: Any = "Bea"
    for _ in range(depth):
        value = {"x": value}
    return value


@st.composite
def decision(draw: st.DrawFn, ids: list[str]) -> Any:
    """A decision that is often almost right: real ids, real types, plausible args."""
    if draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    out: dict[str, Any] = {}
    if draw(st.integers(0, 9)) > 0:
        out["type"] = draw(st.sampled_from(["approve", "edit", "reject", "maybe", "", 1, None]))
    if draw(st.integers(0, 9)) > 0:
        out["proposal_id"] = draw(st.sampled_from([*ids, "nope", "", 7]))
    if draw(st.integers(0, 3)) == 0:
        out["args"] = draw(
            st.sampled_from(
                [
                    {"patch": {"call_them": "Bea"}},
                    {"patch": {"nope": "x"}},
                    {"patch": "x"},
                    {"key": "reply.length", "value": "long"},
                    {"key": "", "value": ""},
                    {"patch": {"call_them": "B\x00ea"}},
                    {"patch": {"call_them": _nested(300)}},
                    {"patch": {"call_them": "Bea", "x": _nested(20)}},
                    {"key": "reply.length", "value": "x" * 5000},
                    {"key": "reply.length", "value": 2**70},
                    {},
                    None,
                    [],
                ]
            )
        )
    if draw(st.integers(0, 3)) == 0:
        out["message"] = draw(st.one_of(HOSTILE_TEXT, st.integers(), st.none()))
    if draw(st.integers(0, 9)) == 0:
        out[draw(st.text(max_size=6))] = draw(JSON)
    return out


@st.composite
def payload(draw: st.DrawFn, ids: list[str]) -> Any:
    """A resume value: mostly ``{"decisions": [...]}``-shaped, sometimes anything."""
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(JSON)
    decisions: Any
    if shape in (3, 4, 5):
        # The right ids in order, with a drawn type (and args): often a valid answer.
        decisions = []
        for pid in ids:
            d = draw(decision([pid]))
            if isinstance(d, dict):
                d["proposal_id"] = pid
            decisions.append(d)
    elif draw(st.integers(0, 4)) == 0:
        decisions = [draw(decision(ids)) for _ in ids]  # right length, maybe right order
    else:
        decisions = draw(st.lists(decision(ids), max_size=4))
    if shape == 1:
        return decisions  # a bare list
    out: dict[str, Any] = {"decisions": decisions}
    if shape == 2:
        out[draw(st.text(max_size=6))] = draw(JSON)
    return out


def _fresh_review(h: Harness) -> tuple[Owner, str, str, Any]:
    n = next(_users)
    owner, thread = Owner(f"fuzz-{n}"), f"fuzz-{n}"
    out = h.invoke(turn(TURN_1), cfg(thread), context=owner_context(owner))
    assert "__interrupt__" in out
    interrupt_id, request = h.pending_review(thread, owner)
    return owner, thread, interrupt_id, request


@pytest.fixture(params=["sync", "async"])
def harness(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[Harness]:
    with harness_on(pg_dsn, request.param) as h:
        yield h


def _attempt(h: Harness, how: str, value: Any, owner: Owner, thread: str, iid: str) -> Any:
    ctx = owner_context(owner)
    if how == "resume_review":
        decisions = value.get("decisions") if isinstance(value, dict) else value
        return h.resume_review(owner=owner, thread_id=thread, decisions=decisions)
    if how == "by_id":
        return h.invoke(Command(resume={iid: value}), cfg(thread), context=ctx)
    return h.invoke(Command(resume=value), cfg(thread), context=ctx)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), how=st.sampled_from(["resume_review", "by_id", "plain"]))
def test_garbage_resumes_are_refused_cleanly(harness: Harness, data: Any, how: str) -> None:
    h = harness
    owner, thread, iid, request = _fresh_review(h)
    ids = [r["proposal_id"] for r in request["action_requests"]]
    value = data.draw(payload(ids), label="payload")
    audit = len(h.store.audit_log(owner))
    try:
        state = _attempt(h, how, value, owner, thread, iid)
    except (EmptyInputError, UnboundLocalError, UnknownInterruptError):
        # LangGraph itself refuses ``Command(resume=None)`` (1.2.24 raises UnboundLocalError
        # from the loop) and, in the strict-resume mode the agent binds, an empty resume map
        # (``{}`` names no interrupt) before any node runs: not ours to map, still harmless.
        assert how == "plain" and value in (None, {})
        event("refused by LangGraph")
        assert h.pending_review(thread, owner) == (iid, request)
        assert len(h.store.audit_log(owner)) == audit
        return
    except ResumeError as exc:
        assert str(exc)
        event("refused")
        assert h.pending_review(thread, owner) == (iid, request)  # still pending
        assert len(h.store.audit_log(owner)) == audit  # nothing committed
        assert len(h.store.list_pending(owner)) == len(ids)
        return
    # Accepted: it must have been a valid answer to exactly this review.
    event("accepted")
    decisions = value.get("decisions") if isinstance(value, dict) else value
    checked = validate_decisions({"decisions": decisions}, request)
    results = state["commit_results"]
    assert [r["proposal_id"] for r in results] == ids
    # Everything the commit could refuse was refused before interrupt() returned (issue 8
    # §6), so an accepted resume decides every proposal as asked.
    for d, r in zip(checked, results, strict=True):
        assert r["status"] == {"reject": "rejected"}.get(d["type"], "approved")
    assert h.store.list_pending(owner) == []
