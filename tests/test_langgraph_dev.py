"""``langgraph dev`` serves the memory agent as shipped, driven through ``langgraph-sdk``.

The real CLI (in-memory runtime) starts from the repository root on a free loopback port,
without ``--allow-blocking`` (``_lgdev``); ``langgraph.json`` names the graph factory, the
governed store, the checkpointer and the auth module (clients hold development tokens).
One thread proposes, the review interrupt is resumed with decisions, and a new thread
recalls the approved memory. After the server is stopped (Ctrl-C, i.e.
SIGINT to its process group) nothing it started is left running, the embedded server
included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _lgdev import ROOT, headers, langgraph_dev, token_of


@pytest.fixture(params=["dsn", "embedded"])
def server(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[dict[str, Any]]:
    """A running ``langgraph dev`` (its url), stopped like a terminal's Ctrl-C afterwards."""
    with langgraph_dev(pg_dsn if request.param == "dsn" else "") as running:
        yield {**running, "mode": request.param}


def test_langgraph_json_names_module_paths() -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    assert spec["graphs"]["memory_agent"] == "nodes._server:make_graph"
    assert spec["store"]["path"] == "nodes._server.governed_store"
    assert spec["checkpointer"]["path"] == "nodes._server.checkpointer"
    assert spec["auth"]["path"] == "nodes.auth:auth"


def test_thread_interrupt_resume_and_recall_over_the_sdk(server: dict[str, Any]) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=server["url"], headers=headers(token_of("alice")))
    ctx = {"user_id": "alice"}  # optional with auth; when given it must be the signed-in user
    thread = client.threads.create()
    tid = thread["thread_id"]
    client.runs.wait(
        tid,
        "memory_agent",
        input={"messages": [{"role": "user", "content": "Call me Ada. I prefer short replies."}]},
        context=ctx,
    )
    state = client.threads.get_state(tid)
    interrupts = [i for task in state["tasks"] for i in task.get("interrupts") or []]
    assert len(interrupts) == 1, state
    request = interrupts[0]["value"]
    assert request["action_requests"], request
    decisions = [
        {"type": "approve", "proposal_id": a["proposal_id"]} for a in request["action_requests"]
    ]
    out = client.runs.wait(
        tid,
        "memory_agent",
        command={"resume": {interrupts[0]["id"]: {"decisions": decisions}}},
        context=ctx,
    )
    assert {r["status"] for r in out["commit_results"]} == {"approved"}, out
    fresh = client.threads.create()
    second = client.runs.wait(
        fresh["thread_id"],
        "memory_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context=ctx,
    )
    assert "Ada" in second["user_context"]
    assert "Ada" in second["messages"][-1]["content"]
    # Another user's thread sees nothing of Alice's.
    other = get_sync_client(url=server["url"], headers=headers(token_of("bob")))
    bob = other.runs.wait(
        other.threads.create()["thread_id"],
        "memory_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context={"user_id": "bob"},
    )
    assert "Ada" not in json.dumps(bob)
