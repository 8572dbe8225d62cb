"""The extraction model's sensitivity per candidate: it can add a block, never remove one.

A scripted chat model plays the extraction model (``memory_graph.testing``). The guard
runs on every candidate whatever the model says; the model's ``sensitivity`` is combined
with the verdict by :func:`memory_graph.guard.with_declared`.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory_graph.extraction import create_extractor, extract_candidates
from memory_graph.extraction._schema import CandidateModel
from memory_graph.guard import GuardVerdict, check, with_declared
from memory_graph.testing import FakeToolCallingChatModel, extraction_reply

EUPHEMISM = "I see Dr. Patel on Thursdays about my low days"
SSN = "my SSN is 536-22-8147"
HARMLESS = "I prefer short replies"


def clock() -> datetime:
    return datetime(2026, 12, 2, tzinfo=timezone.utc)


def run(candidates: list[dict[str, Any]], texts: list[str]) -> Any:
    window = [HumanMessage(t, id=f"h{i}") for i, t in enumerate(texts)]
    model = FakeToolCallingChatModel.from_tool_calls([extraction_reply(candidates)])
    report = extract_candidates(window, extractor=create_extractor(model), clock=clock)
    return report, model


def fact(quote: str, index: int, **extra: Any) -> dict[str, Any]:
    return {"kind": "fact", "content": quote, "quote": quote, "message_index": index} | extra


def test_the_rules_miss_the_euphemism_on_their_own() -> None:
    assert check(EUPHEMISM).allowed  # what makes the next test meaningful


def test_a_model_category_blocks_what_the_rules_allow() -> None:
    report, model = run([fact(EUPHEMISM, 0, sensitivity="health")], [EUPHEMISM])
    assert report.candidates == ()
    assert report.blocked_count == 1
    assert dict(report.blocked_categories) == {"health": 1}
    assert "sensitivity" in str(model.received[0][0].content)


def test_none_from_the_model_does_not_unblock_an_ssn() -> None:
    report, _ = run([fact(SSN, 0, sensitivity="none")], [SSN])
    assert report.candidates == ()
    assert dict(report.blocked_categories) == {"gov_id": 1}


def test_a_lying_category_keeps_the_guards_own() -> None:
    # the model says "address" for an SSN: the guard's category stands
    report, _ = run([fact(SSN, 0, sensitivity="address")], [SSN])
    assert dict(report.blocked_categories) == {"gov_id": 1}


@pytest.mark.parametrize("value", [None, "none", "None", " NONE "])
def test_no_category_keeps_a_harmless_candidate(value: Any) -> None:
    extra = {} if value is None else {"sensitivity": value}
    report, _ = run([fact(HARMLESS, 0, **extra)], [HARMLESS])
    assert [c.content for c in report.candidates] == [HARMLESS]


@pytest.mark.parametrize("value", ["Health", " finance "])
def test_category_names_are_read_whatever_the_case(value: str) -> None:
    report, _ = run([fact(HARMLESS, 0, sensitivity=value)], [HARMLESS])
    assert report.candidates == ()
    assert report.blocked_count == 1


@pytest.mark.parametrize("value", ["sexuality", "", 3, ["health"], {"c": "health"}, "health\u200b"])
def test_an_unknown_category_drops_the_candidate(value: Any) -> None:
    report, _ = run([fact(HARMLESS, 0, sensitivity=value)], [HARMLESS])
    assert report.candidates == ()
    assert report.dropped_invalid_count == 1


def test_schema_default_and_json_schema_list_the_categories() -> None:
    model = CandidateModel.model_validate(fact(HARMLESS, 0))
    assert model.sensitivity == "none"
    enum = CandidateModel.model_json_schema()["properties"]["sensitivity"]["enum"]
    assert set(enum) == {
        "health",
        "finance",
        "gov_id",
        "address",
        "political_religious",
        "third_party",
        "none",
    }


def test_with_declared_only_adds() -> None:
    allowed, blocked = GuardVerdict(True), GuardVerdict(False, "finance", "rule", ((0, 3),))
    assert with_declared(blocked, "none") is blocked
    assert with_declared(blocked, "health") is blocked
    assert with_declared(allowed, None) is allowed
    assert with_declared(allowed, "nonsense") is allowed
    added = with_declared(allowed, "third_party")
    assert (added.allowed, added.category) == (False, "third_party")
    assert added.reason is not None and EUPHEMISM not in added.reason


def test_json_mode_reply_carries_the_category() -> None:
    import json

    reply = AIMessage(json.dumps({"candidates": [fact(EUPHEMISM, 0, sensitivity="health")]}))
    model = FakeToolCallingChatModel.from_tool_calls([reply])
    window = [HumanMessage(EUPHEMISM, id="h0")]
    extractor = create_extractor(model, method="json_mode")
    report = extract_candidates(window, extractor=extractor, clock=clock)
    assert dict(report.blocked_categories) == {"health": 1}
