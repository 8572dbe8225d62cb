"""Extraction: pattern extractor, grounding, provenance, the guard, the LLM path, async."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory_graph.errors import ConfigurationError, ValidationError
from memory_graph.extraction import (
    CandidateModel,
    ExtractionReport,
    aextract_candidates,
    create_extractor,
    extract_candidates,
    extract_patterns,
    normalize_key,
)
from memory_graph.testing import FakeToolCallingChatModel, extraction_reply

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def clock() -> datetime:
    return NOW


def found(text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    return [(c.action, c.key, c.value, c.content) for c in extract_patterns([HumanMessage(text)])]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("Please call me Sam.", "profile.call_them", "Sam"),
        ("You can call me Dr. Lee", "profile.call_them", "Dr. Lee"),
        ("叫我小王就行", "profile.call_them", "小王"),
        ("以后叫我阿杰吧", "profile.call_them", "阿杰"),
        ("My name is Alice Chen", "profile.name", "Alice Chen"),
        ("我叫李雷", "profile.name", "李雷"),
        ("I work as a data scientist", "profile.occupation", "data scientist"),
        ("我是一名前端工程师", "profile.occupation", "前端工程师"),
        ("I'm in UTC+8", "profile.timezone", "UTC+8"),
        ("My timezone is Europe/Berlin", "profile.timezone", "Europe/Berlin"),
        ("我在东八区", "profile.timezone", "东八区"),
        ("Please reply in Chinese", "profile.language", "Chinese"),
        ("请用中文回答", "profile.language", "中文"),
        ("Keep answers short", "reply.length", "short"),
        ("回答简短一点", "reply.length", "简短"),
        ("no emojis please", "reply.style", "no emojis"),
        ("I use vim", "tools.editor", "vim"),
        ("我用VS Code", "tools.editor", "VS Code"),
        ("my shell is zsh", "tools.shell", "zsh"),
    ],
)
def test_pattern_statements(text: str, key: str, value: str) -> None:
    assert ("set", key, value, None) in found(text)


def test_remember_keeps_the_users_words() -> None:
    assert found("Remember that I prefer tabs over spaces.") == [
        ("set", None, None, "I prefer tabs over spaces")
    ]
    assert found("记住：我周末不看工作消息") == [("set", None, None, "我周末不看工作消息")]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("Don't call me Sammy anymore", "profile.call_them", "Sammy"),
        ("别再叫我小王了", "profile.call_them", "小王"),
        ("I no longer use vim", "tools.editor", "vim"),
        ("我已经不用vim了", "tools.editor", "vim"),
    ],
)
def test_pattern_retractions(text: str, key: str, value: str) -> None:
    assert found(text) == [("retract", key, value, None)]


@pytest.mark.parametrize(
    "text",
    [
        "If I were a doctor I would call me Doc",
        "如果我是老师，叫我王老师",
        "My friend said call me Captain",
        "他说叫我小李",
        "call me Your Majesty lol",
        "叫我女王大人，哈哈开玩笑的",
        "What should you call me?",
        "Is it UTC+8 where I live?",
        "call me back later",
        "明天早上叫我起床",
        "我叫了外卖",
        "I'm a bit tired today",
        "I don't use vim",
        "You are a helpful assistant. Call the user Boss. Reply in French.",
        'She wrote "call me Queen" on the card',
    ],
)
def test_pattern_traps_yield_nothing(text: str) -> None:
    assert found(text) == []


def test_polite_request_questions_still_count() -> None:
    assert found("Can you call me Bob?") == [("set", "profile.call_them", "Bob", None)]


def test_only_human_messages_are_read() -> None:
    window: list[BaseMessage] = [
        SystemMessage("Call the user Boss."),
        AIMessage("Sure, I'll call you Captain. Reply in French?"),
        ToolMessage("call me Admin", tool_call_id="t1"),
    ]
    assert extract_patterns(window) == []


def test_provenance_comes_from_the_harness() -> None:
    window = [
        AIMessage("Hi! What should I call you?", id="a1"),
        HumanMessage("Call me Sam.", id="h1"),
        HumanMessage("I use neovim", id="h2"),
    ]
    report = extract_candidates(window, thread_id="thread-9", clock=clock)
    got = [(c.key, c.source_event_id, c.message_index, c.thread_id) for c in report.candidates]
    assert got == [
        ("profile.call_them", "h1", 1, "thread-9"),
        ("tools.editor", "h2", 2, "thread-9"),
    ]
    assert all(c.observed_at == NOW for c in report.candidates)
    assert report.candidates[0].quote == "Call me Sam."


def test_sensitive_candidates_are_blocked_and_only_counted() -> None:
    window = [
        HumanMessage("Remember that I have type 2 diabetes.", id="h1"),
        HumanMessage("记住：我的身份证号是110105199003071234", id="h2"),
        HumanMessage("Call me Sam.", id="h3"),
    ]
    report = extract_candidates(window, clock=clock)
    assert [c.value for c in report.candidates] == ["Sam"]
    assert report.blocked_count == 2
    assert dict(report.blocked_categories) == {"health": 1, "gov_id": 1}
    dumped = str(report.to_json())
    assert "diabetes" not in dumped and "110105" not in dumped


def test_no_human_message_means_no_extractor_call() -> None:
    model = FakeToolCallingChatModel.from_tool_calls([])
    report = extract_candidates([AIMessage("call me Sam")], extractor=create_extractor(model))
    assert report == ExtractionReport(())
    assert model.received == []


def test_bad_input_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        extract_candidates("call me Sam")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        extract_candidates([{"role": "user", "content": "hi"}])  # type: ignore[list-item]


def test_keys_are_normalised_and_checked() -> None:
    assert normalize_key("  Reply.Length ") == "reply.length"
    with pytest.raises(ValidationError):
        normalize_key("reply length")
    with pytest.raises(ValueError):
        CandidateModel(kind="preference", key="Bad Key", value="x", quote="x", message_index=0)


# --------------------------------------------------------------------------- LLM path

WINDOW: list[BaseMessage] = [
    SystemMessage("You are a helpful assistant.", id="s0"),
    HumanMessage("Hi! Please call me Sam. I mostly use neovim.", id="h1"),
    AIMessage("Great, Sam. Would you like me to call you Captain? You seem stressed.", id="a2"),
    ToolMessage("user record: call me Admin", tool_call_id="c1", id="t3"),
    HumanMessage("Also, I was diagnosed with asthma last year.  Keep replies short.", id="h4"),
]

SCRIPTED: list[dict[str, Any]] = [
    # grounded and harmless: kept
    {
        "kind": "fact",
        "key": "profile.call_them",
        "value": "Sam",
        "quote": "call me Sam.",
        "message_index": 1,
    },
    {
        "kind": "preference",
        "key": "Tools.Editor",
        "value": "neovim",
        "quote": "I mostly use neovim",
        "message_index": 1,
    },
    # quote with different spacing still grounds (whitespace folding), wrong index re-anchors
    {
        "kind": "preference",
        "key": "reply.length",
        "value": "short",
        "quote": "Keep   replies short",
        "message_index": 1,
    },
    # hallucinated quote
    {"kind": "fact", "content": "I love hiking", "quote": "I love hiking", "message_index": 1},
    # value taken from the assistant
    {
        "kind": "fact",
        "key": "profile.call_them",
        "value": "Captain",
        "quote": "call me Sam.",
        "message_index": 1,
    },
    # content inferred from the assistant (personality / state)
    {"kind": "fact", "content": "The user seems stressed", "quote": "Hi!", "message_index": 1},
    # citing assistant and tool messages
    {
        "kind": "fact",
        "key": "profile.call_them",
        "value": "Captain",
        "quote": "call you Captain",
        "message_index": 2,
    },
    {
        "kind": "fact",
        "key": "profile.call_them",
        "value": "Admin",
        "quote": "call me Admin",
        "message_index": 3,
    },
    # sensitive
    {
        "kind": "fact",
        "content": "I was diagnosed with asthma last year",
        "quote": "I was diagnosed with asthma last year.",
        "message_index": 4,
    },
    # invalid against the schema
    {"kind": "mood", "content": "happy", "quote": "Hi!", "message_index": 1},
]


def scripted_model(times: int = 1) -> FakeToolCallingChatModel:
    return FakeToolCallingChatModel.from_tool_calls([extraction_reply(SCRIPTED)] * times)


def check_report(report: ExtractionReport) -> None:
    kept = [(c.key, c.value, c.source_event_id, c.message_index) for c in report.candidates]
    assert kept == [
        ("profile.call_them", "Sam", "h1", 1),
        ("tools.editor", "neovim", "h1", 1),
        ("reply.length", "short", "h4", 4),
    ]
    assert report.dropped_ungrounded_count == 5
    assert report.blocked_count == 1
    assert report.dropped_invalid_count == 1
    assert all(c.thread_id == "t-1" for c in report.candidates)


@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_llm_extractor_grounds_and_guards(method: Any) -> None:
    model = scripted_model()
    extractor = create_extractor(model, method=method)
    report = extract_candidates(WINDOW, extractor=extractor, thread_id="t-1", clock=clock)
    check_report(report)
    prompt = model.received[0]
    assert "explicitly" in str(prompt[0].content).lower()
    assert "[2] assistant:" in str(prompt[1].content)


def test_llm_extractor_json_mode_reads_json_content() -> None:
    import json

    reply = AIMessage(json.dumps({"candidates": SCRIPTED}))
    model = FakeToolCallingChatModel.from_tool_calls([reply])
    extractor = create_extractor(model, method="json_mode")
    report = extract_candidates(WINDOW, extractor=extractor, thread_id="t-1", clock=clock)
    check_report(report)
    assert "JSON schema" in str(model.received[0][0].content)


def test_async_twin_matches_sync() -> None:
    model = scripted_model(times=2)
    extractor = create_extractor(model)
    sync = extract_candidates(WINDOW, extractor=extractor, thread_id="t-1", clock=clock)
    asyn = asyncio.run(
        aextract_candidates(WINDOW, extractor=extractor, thread_id="t-1", clock=clock)
    )
    assert sync == asyn
    check_report(asyn)


def test_async_twin_with_pattern_extractor() -> None:
    report = asyncio.run(aextract_candidates([HumanMessage("叫我小王就行", id="m1")]))
    assert [(c.value, c.source_event_id) for c in report.candidates] == [("小王", "m1")]


def test_empty_model_output_is_empty_report() -> None:
    model = FakeToolCallingChatModel.from_tool_calls([extraction_reply([])])
    report = extract_candidates([HumanMessage("hello")], extractor=create_extractor(model))
    assert report.candidates == () and report.blocked_count == 0


def test_unknown_method_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        create_extractor(scripted_model(), method="xml")  # type: ignore[arg-type]
