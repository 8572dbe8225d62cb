"""Which extractor the prebuilt agent uses, and that its output never streams.

A chat model that supports structured output extracts with itself by default; the offline
pattern extractor is an explicit choice (``create_pattern_extractor()``) or the offline
model's. Extraction runs in the model node's entry, so a self-extracting model's script
holds the extraction reply first, then the answer.
"""

from __future__ import annotations

from typing import Any, ClassVar

from _graph_helpers import ALICE, CTX, FLAVOURS, cfg, harness_on, turn
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

from memory_graph.extraction import create_extractor, create_pattern_extractor
from memory_graph.testing import FakeToolCallingChatModel, extraction_reply
from nodes import OfflineChatModel
from nodes._agent import resolve_extractor

ADA = {"kind": "fact", "key": "profile.call_them", "value": "Ada", "quote": "Call me Ada."}
ASTHMA = {"kind": "fact", "content": "Has asthma", "quote": "I have asthma."}


class ScriptedModel(FakeToolCallingChatModel):
    """A scripted model that stands for a real one: it extracts with itself."""

    extracts_with_patterns: ClassVar[bool] = False


def _tags(extractor: Any) -> list[str]:
    return list((getattr(extractor, "config", None) or {}).get("tags") or [])


def test_resolve_extractor_picks_the_model_unless_told_or_offline() -> None:
    real = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test")  # type: ignore[arg-type]
    chosen = resolve_extractor(real)
    assert chosen is not None and "nostream" in _tags(chosen)
    assert resolve_extractor(ScriptedModel(messages=iter([]))) is not None
    # The offline model and the scripted test double pair with the offline patterns.
    assert resolve_extractor(OfflineChatModel()) is None
    assert resolve_extractor(FakeToolCallingChatModel(messages=iter([]))) is None
    # A model without tool calling cannot give structured output.
    assert resolve_extractor(GenericFakeChatModel(messages=iter([]))) is None
    # Explicit choices win over the model.
    assert resolve_extractor(real, create_pattern_extractor()) is None
    own = RunnableLambda(lambda messages: [])
    assert "nostream" in _tags(resolve_extractor(OfflineChatModel(), own))
    assert "nostream" in _tags(create_extractor(real))


@FLAVOURS
def test_a_structured_output_model_extracts_with_itself(pg_dsn: str, flavour: str) -> None:
    chat = ScriptedModel(
        messages=iter(
            [
                extraction_reply(
                    [
                        {**ADA, "message_index": 0},
                        {**ASTHMA, "message_index": 0},
                        # the patterns would find this; the model did not say it: not proposed
                    ]
                ),
                "Hello Ada.",
            ]
        ),
        received=[],
    )
    with harness_on(pg_dsn, flavour, chat) as h:
        out = h.invoke(
            turn("Call me Ada. I have asthma. I prefer short replies."), cfg("t1"), context=CTX
        )
        assert "You extract long-term memories" in str(chat.received[0][0].content)
        assert out["extraction"]["blocked_categories"] == {"health": 1}
        assert [p["args"] for p in out["pending_proposals"]] == [{"patch": {"call_them": "Ada"}}]
        assert out["messages"][-1].content == "Hello Ada."


@FLAVOURS
def test_the_offline_extractor_is_an_explicit_choice(pg_dsn: str, flavour: str) -> None:
    chat = ScriptedModel(messages=iter(["Hello."]), received=[])
    with harness_on(pg_dsn, flavour, chat, extractor=create_pattern_extractor()) as h:
        out = h.invoke(turn("Call me Ada. I prefer short replies."), cfg("t1"), context=CTX)
        assert len(chat.received) == 1  # only the answer: the patterns extracted
        assert out["extraction"]["proposed"] == 2
        assert sorted(p["operation"] for p in out["pending_proposals"]) == [
            "patch_profile",
            "set_preference",
        ]
        assert list(h.list_inbox(ALICE)) == ["t1"]


@FLAVOURS
def test_the_extractors_tool_call_never_streams(pg_dsn: str, flavour: str) -> None:
    chat = ScriptedModel(
        messages=iter(
            [
                extraction_reply([{**ADA, "message_index": 0}, {**ASTHMA, "message_index": 0}]),
                "Hello Ada.",
            ]
        ),
        received=[],
    )
    with harness_on(pg_dsn, flavour, chat) as h:
        chunks = h.stream(
            turn("Call me Ada. I have asthma."), cfg("t1"), context=CTX, stream_mode="messages"
        )
        streamed = [message for message, _meta in chunks]
        assert not any(getattr(m, "tool_call_chunks", None) for m in streamed)
        assert not any(getattr(m, "tool_calls", None) for m in streamed)
        assert "asthma" not in str([m.model_dump() for m in streamed]).casefold()
        text = "".join(str(m.content) for m in streamed if m.type == "AIMessageChunk")
        assert text == "Hello Ada."
        assert len(chat.received) == 2  # the extraction did run, unseen
