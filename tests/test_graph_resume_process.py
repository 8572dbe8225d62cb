"""Resume after approval in other OS processes, and concurrent resumes of one interrupt."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from _graph_helpers import ALICE, CTX, TURN_1, agent_on, cfg, turn

from nodes import pending_review

TESTS = Path(__file__).resolve().parent

# A fresh process builds the same agent on the same database and resumes the thread.
RESUME = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {tests!r})
    from _graph_helpers import ALICE, agent_on
    from langgraph.types import Command
    from nodes import decide_all, owner_context, pending_review, resume_review

    with agent_on({dsn!r}) as (agent, store):
        interrupt_id, request = pending_review(agent, "s1", owner=ALICE)
        if {wait!r}:
            # Both processes hold the same pending interrupt; resume it at the same moment,
            # straight through the graph (a pre-check cannot be atomic with the resume).
            print("ready", flush=True)
            sys.stdin.readline()
            state = agent.invoke(
                Command(resume={{interrupt_id: {{"decisions": decide_all(request)}}}}),
                {{"configurable": {{"thread_id": "s1"}}}},
                context=owner_context(ALICE),
            )
        else:
            state = resume_review(
                agent, owner=ALICE, thread_id="s1", decisions=decide_all(request)
            )
        print(json.dumps([r["status"] for r in state["commit_results"]]))
    """
)


def _script(dsn: str, *, wait: bool) -> list[str]:
    return [sys.executable, "-c", RESUME.format(tests=str(TESTS), dsn=dsn, wait=wait)]


def test_interrupt_here_resume_in_another_process(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        pending_review(agent, "s1", owner=ALICE)
    done = subprocess.run(
        _script(pg_dsn, wait=False), capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == '["approved", "approved"]'
    with agent_on(pg_dsn) as (agent, store):
        assert store.get_profile(ALICE).fields == {"call_them": "Ada"}
        assert agent.get_state(cfg("s1")).next == ()
        out = agent.invoke(turn("hi"), cfg("s2"), context=CTX)
        assert "- call_them: Ada" in out["user_context"]


def test_concurrent_resumes_commit_exactly_once(pg_dsn: str) -> None:
    with agent_on(pg_dsn) as (agent, store):
        agent.invoke(turn(TURN_1), cfg("s1"), context=CTX)
        _, request = pending_review(agent, "s1", owner=ALICE)
    procs = [
        subprocess.Popen(
            _script(pg_dsn, wait=True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for p in procs:  # wait until both hold the pending interrupt
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready"
    for p in procs:  # then release both at once
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    outputs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    # Both resumes succeed (LangGraph has no optimistic concurrency) and both report the
    # outcome; the store row-locks each proposal, so each is committed exactly once.
    assert [out.strip().splitlines()[-1] for out, _err in outputs] == [
        '["approved", "approved"]'
    ] * 2
    with agent_on(pg_dsn) as (agent, store):
        ids = {r["proposal_id"] for r in request["action_requests"]}
        audit = [row for row in store.audit_log(ALICE) if row.get("proposal_id") in ids]
        actions = sorted((row["proposal_id"], row["target_kind"], row["action"]) for row in audit)
        assert len(actions) == len(set(actions)), actions  # no change was applied twice
        assert sorted(a for _p, _k, a in actions).count("approved") == 2, actions
        profile = store.get_profile(ALICE)
        assert profile.fields == {"call_them": "Ada"} and profile.revision == 1
        prefs = store.get_preferences(ALICE)
        assert [(p.key, p.value, p.revision) for p in prefs] == [("reply.length", "short", 1)]
