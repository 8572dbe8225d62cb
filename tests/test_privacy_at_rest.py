"""With a key, nothing personal is left in plaintext (issue 26 §3).

A whole-database scan (every table; text, jsonb and bytea as raw bytes: ``tests/_scan.py``)
after a run with tool evidence and the identity passed through ``configurable`` finds no
message text, tool argument or identity anywhere, and the approved memory only in the memory
tables (which hold it by design), never in the checkpoint tables. Checkpoints written before
the key are encrypted by ``reencrypt_checkpoints`` / ``memory-graph reencrypt``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from _graph_helpers import turn
from _scan import scan
from langchain_core.tools import tool
from test_cli import run

from memory_graph import ConfigurationError, MemoryStore, Owner
from memory_graph.testing import FakeToolCallingChatModel
from nodes import (
    EvidencePolicy,
    OfflineChatModel,
    create_memory_agent,
    decide_all,
    open_checkpointer,
    pending_review,
    reencrypt_checkpoints,
    resume_review,
)
from nodes._encryption import CHECKPOINT_KEY_ENV

KEY = base64.b64encode(bytes(range(32))).decode()
ME = {"user_id": "zqalice", "workspace": "zqwsp", "agent": "zqagent"}
OWNER = Owner("zqalice", workspace="zqwsp", agent="zqagent")
SAID = "Call me Zorbulon. Remember that my cat is named Vexmirth. Kazoolia weather is grim."
ARG = "Quillbrook clinic"
MEMORY_TABLES = tuple(f"public.mg_{t}." for t in ("records", "proposals", "audit", "profiles"))


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return "Open from nine to five."


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, **ME}}


def _run_with_key(dsn: str) -> None:
    model = FakeToolCallingChatModel.from_tool_calls([("lookup", {"q": ARG}), "ok", "fine"])
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        with open_checkpointer(store, encryption_key=KEY) as saver:
            agent = create_memory_agent(
                model,
                store,
                checkpointer=saver,
                tools=[lookup],
                evidence=EvidencePolicy(tools=frozenset({"lookup"})),
            )
            agent.invoke(turn(SAID), _cfg("t-rest"))
            _, request = pending_review(agent, "t-rest", owner=OWNER)
            resume_review(agent, owner=OWNER, thread_id="t-rest", decisions=decide_all(request))
            out = agent.invoke(turn("How is my cat?"), _cfg("t-rest"))
            assert "Zorbulon" in out["user_context"]  # the memory is in a str channel
            evidence = store.list_evidence(OWNER, "t-rest")
            assert [e.arg_summary for e in evidence] == ["q"]  # names, never values
            assert ARG in out["tool_evidence"][0]["arg_summary"]  # the state keeps the value


def test_with_a_key_the_whole_database_holds_nothing_personal(
    pg_dsn: str, monkeypatch: Any
) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _run_with_key(pg_dsn)
    words = ["Kazoolia", "Quillbrook", "zqalice", "zqwsp", "zqagent", "Zorbulon", "Vexmirth"]
    hits = scan(pg_dsn, words)
    for memory in ("Zorbulon", "Vexmirth"):  # approved: in the memory tables, by design
        assert hits[memory], memory
        assert [h for h in hits.pop(memory) if not h.startswith(MEMORY_TABLES)] == []
    assert hits == {w: [] for w in hits}, hits


def _plain_thread(dsn: str, thread: str) -> None:
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            agent.invoke(turn("Kazoolia is far away"), _cfg(thread))


def _checkpoint_hits(dsn: str, words: list[str]) -> dict[str, list[str]]:
    return {w: [h for h in hs if ".checkpoint" in h] for w, hs in scan(dsn, words).items()}


def test_older_checkpoints_stay_plain_until_reencrypted(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _plain_thread(pg_dsn, "old")
    _plain_thread(pg_dsn, "other")
    words = ["Kazoolia", "zqalice"]
    with MemoryStore.from_dsn(pg_dsn) as store:
        with open_checkpointer(store, encryption_key=KEY) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            agent.invoke(turn("and cold"), _cfg("old"))  # the thread writes again...
            assert all(_checkpoint_hits(pg_dsn, words).values())  # ...its past stays plain
            first = reencrypt_checkpoints(saver, thread_id="old")
            assert first.threads == 1 and first.blobs + first.writes > 0 and first.metadata > 0
            again = reencrypt_checkpoints(saver, thread_id="old")
            assert (again.blobs, again.writes, again.inline, again.metadata) == (0, 0, 0, 0)
            assert _checkpoint_hits(pg_dsn, words)["Kazoolia"]  # the other thread: still plain
            everything = reencrypt_checkpoints(saver)
            assert everything.threads == 2
            assert _checkpoint_hits(pg_dsn, words) == {w: [] for w in words}
            # the threads read back as before, and go on
            messages = agent.get_state({"configurable": {"thread_id": "old"}}).values["messages"]
            assert [m.content for m in messages if m.type == "human"] == [
                "Kazoolia is far away",
                "and cold",
            ]
            agent.invoke(turn("still there?"), _cfg("other"))
            assert _checkpoint_hits(pg_dsn, words) == {w: [] for w in words}


def test_reencrypt_needs_a_key(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        with open_checkpointer(store) as saver, pytest.raises(ConfigurationError):
            reencrypt_checkpoints(saver)
    refused = run(pg_dsn, "reencrypt")
    assert refused.returncode != 0 and "MEMORY_GRAPH_CHECKPOINT_KEY" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_reencrypt_command(pg_dsn: str, monkeypatch: Any) -> None:
    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _plain_thread(pg_dsn, "old")
    monkeypatch.setenv(CHECKPOINT_KEY_ENV, KEY)
    done = run(pg_dsn, "reencrypt", "--thread", "old", "--json")
    assert done.returncode == 0, done.stderr
    assert '"threads": 1' in done.stdout
    assert _checkpoint_hits(pg_dsn, ["Kazoolia", "zqalice"]) == {"Kazoolia": [], "zqalice": []}


def test_a_text_channel_written_before_the_key_survives_an_unchanged_step(
    pg_dsn: str, monkeypatch: Any
) -> None:
    """A sealed checkpoint takes every str channel out of the inline JSON: its blob must then
    exist even when the channel did not change in that step (before the key it was inline)."""
    from langgraph.checkpoint.base import empty_checkpoint

    monkeypatch.delenv(CHECKPOINT_KEY_ENV, raising=False)
    _plain_thread(pg_dsn, "old")
    config = {"configurable": {"thread_id": "old", "checkpoint_ns": ""}}
    with (
        MemoryStore.from_dsn(pg_dsn) as store,
        open_checkpointer(store, encryption_key=KEY) as saver,
    ):
        before = saver.get_tuple(config)
        assert before is not None
        context = before.checkpoint["channel_values"]["user_context"]
        assert isinstance(context, str) and context
        step = {**before.checkpoint, "id": empty_checkpoint()["id"]}  # a step that wrote nothing
        after = saver.put(before.config, step, before.metadata, {})
        loaded = saver.get_tuple(after)
        assert loaded is not None
        assert loaded.checkpoint["channel_values"]["user_context"] == context
        assert "zqalice" not in str(loaded.metadata)
