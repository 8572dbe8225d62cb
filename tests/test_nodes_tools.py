"""The memory tools: JSON schemas the model sees, proposals only, framed output."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, agent_on, cfg, turn
from langchain_core.utils.function_calling import convert_to_openai_tool

from memory_graph import MemoryStore
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message
from nodes import TOOL_NAMES, create_memory_tools, pending_review

FORBIDDEN = {
    "principal",
    "user_id",
    "owner",
    "scope",
    "scope_id",
    "trust",
    "ttl",
    "source_event_id",
    "runtime",
    "workspace",
    "agent",
    "level",
    "sensitivity",
}


@pytest.fixture
def store(pg_dsn: str) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn) as s:
        s.setup()
        yield s


def _properties(schema: dict[str, Any]) -> set[str]:
    return set(schema["function"]["parameters"].get("properties", {}))


def test_tool_schemas_expose_no_identity_trust_or_provenance(store: MemoryStore) -> None:
    tools = create_memory_tools(store)
    assert tuple(t.name for t in tools) == TOOL_NAMES
    schemas = {t.name: convert_to_openai_tool(t) for t in tools}
    for name, schema in schemas.items():
        props = _properties(schema)
        assert not props & FORBIDDEN, (name, props & FORBIDDEN)
        assert "expires" not in " ".join(props) or name == "save_user_preference"
    assert _properties(schemas["memory_search"]) == {"query", "limit", "kinds"}
    assert _properties(schemas["memory_search_confirmed"]) == {"query", "limit"}
    assert _properties(schemas["memory_manage"]) == {"action", "content", "kind", "record_id"}
    assert _properties(schemas["save_user_preference"]) == {"key", "value", "expires_at"}
    assert _properties(schemas["update_user_profile"]) == set(store.limits.profile_fields)


def test_tools_only_propose_and_frame_their_output(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as s:
        s.setup()
        s.add(ALICE, "fact", "Alice's <b>favourite</b> tea is oolong")
    model = FakeToolCallingChatModel.from_tool_calls(
        [
            tool_call_message("memory_search", {"query": "tea"}),
            tool_call_message(
                "save_user_preference", {"key": "reply.language", "value": "en", "scope": "x"}
            ),
            tool_call_message("save_user_preference", {"key": "reply.language", "value": "en"}),
            tool_call_message("update_user_profile", {"timezone": "Europe/Paris"}),
            "ok",
        ]
    )
    with agent_on(pg_dsn, model=model) as (agent, store):
        out = agent.invoke(turn("What tea do I like?"), cfg("t1"), context=CTX)
        tool_outputs = [m.content for m in out["messages"] if m.type == "tool"]
        assert tool_outputs[0].startswith("<memory_source>")
        assert "&lt;b&gt;favourite&lt;/b&gt;" in tool_outputs[0]
        assert "<b>" not in tool_outputs[0]
        assert "scope" in tool_outputs[1]  # an extra argument is refused
        assert "Nothing is saved until the user approves it" in tool_outputs[2]
        assert store.get_preferences(ALICE) == []  # proposals only
        assert store.get_profile(ALICE).fields == {}
        _, request = pending_review(agent, "t1")
        ops = sorted(r["operation"] for r in request["action_requests"])
        assert ops == ["patch_profile", "set_preference"]
        patch = next(r for r in request["action_requests"] if r["operation"] == "patch_profile")
        assert patch["args"] == {"patch": {"timezone": "Europe/Paris"}}
        pref = next(r for r in request["action_requests"] if r["operation"] == "set_preference")
        assert pref["evidence"]["source_event_id"].startswith("call_")  # the harness's id
