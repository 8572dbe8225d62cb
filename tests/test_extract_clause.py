"""A quote supports its content only with its whole clause (issue 26 §1).

A lying model quotes a substring (``eat meat`` of "I don't eat meat") or cuts mid-word
(``like cats`` of "I dislike cats"), swaps roles, moves a number or a preposition, drops a
modal or a tense, or turns a question into a fact. Grounding widens every quote to the
whole sentence of the human message it sits in, stores and shows that widened quote, and
keeps the content only when it restates that sentence faithfully. Faithful restatements
with a negation elsewhere in the sentence ("No, I prefer tea") are kept.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from _support_probes import PROBES
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from memory_graph.extraction import extract_candidates, plan_writes
from memory_graph.extraction._clause import faithful, faithful_value, widen

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def _candidate(quote: str, target: str | tuple[str, str], **extra: Any) -> dict[str, Any]:
    if isinstance(target, tuple):
        key, value = target
        return {"kind": "preference", "key": key, "value": value, "quote": quote, **extra}
    return {"kind": "fact", "content": target, "quote": quote, **extra}


def _run(messages: list[BaseMessage], *candidates: dict[str, Any]) -> Any:
    raw = [{"message_index": 0, **c} for c in candidates]
    extractor = RunnableLambda(lambda _window: [dict(c) for c in raw])
    return extract_candidates(messages, extractor=extractor, clock=lambda: NOW)


@pytest.mark.parametrize(
    ("message", "quote", "target", "keep"), [pytest.param(*p[1:], id=p[0]) for p in PROBES]
)
def test_probe_table(message: str, quote: str, target: str | tuple[str, str], keep: bool) -> None:
    report = _run([HumanMessage(message, id="h1")], _candidate(quote, target))
    if keep:
        assert len(report.candidates) == 1, "a faithful restatement was dropped"
        assert report.dropped_unsupported_count == 0
    else:
        assert report.candidates == (), "a flipped restatement was kept"
        assert report.dropped_unsupported_count + report.dropped_ungrounded_count == 1


@pytest.mark.parametrize(
    ("message", "quote", "content"),
    [
        ("I don't eat meat", "eat meat", "User eats meat"),
        ("I dislike cats", "like cats", "User likes cats"),
        ("I dislike cats", "ike cats", "User likes cats"),
        ("我不喜欢吃辣", "喜欢吃辣", "用户喜欢吃辣"),
        ("我从来不喝酒", "喝酒", "用户喝酒"),
        ("我不用Docker部署", "用Docker部署", "用户用Docker部署"),
        (
            "Honestly I never use Windows at home",
            "use Windows at home",
            "User uses Windows at home",
        ),
        ("We're not moving to 上海", "moving to 上海", "User is moving to 上海"),
    ],
)
def test_substring_and_mid_word_quotes_cannot_cut_off_a_negation(
    message: str, quote: str, content: str
) -> None:
    report = _run([HumanMessage(message, id="h1")], _candidate(quote, content))
    assert report.candidates == ()
    assert report.dropped_unsupported_count == 1


def test_never_answer_in_english_sets_no_language() -> None:
    report = _run(
        [HumanMessage("Never answer in English.", id="h1")],
        {
            "kind": "fact",
            "key": "profile.language",
            "value": "English",
            "quote": "answer in English",
        },
    )
    assert report.candidates == () and report.dropped_unsupported_count == 1


@pytest.mark.parametrize(
    ("message", "quote", "content", "widened"),
    [
        (
            "Hi there. Honestly, I don't eat meat. What's for dinner?",
            "t eat me",
            "User does not eat meat",
            "Honestly, I don't eat meat.",
        ),
        ("No, I prefer tea. Thanks!", "prefer tea", "User prefers tea", "No, I prefer tea."),
        ("好的。没问题，我喜欢喝茶。你呢？", "喜欢喝", "用户喜欢喝茶", "没问题，我喜欢喝茶。"),
        ("Line one\nI use vim, not emacs", "use vim", "User uses vim", "I use vim, not emacs"),
    ],
)
def test_the_kept_quote_is_the_whole_sentence(
    message: str, quote: str, content: str, widened: str
) -> None:
    report = _run([HumanMessage(message, id="h1")], _candidate(quote, content))
    (kept,) = report.candidates
    assert kept.quote == widened
    # The proposal's evidence carries the widened quote (what the review shows and the
    # store keeps as provenance).
    plan = plan_writes(report.candidates, profile=None, preferences={})
    assert [w.evidence["quote"] for w in plan.writes] == [widened]


def test_the_guard_reads_the_widened_quote() -> None:
    # The model quotes only the harmless clause; the sentence it sits in holds an SSN,
    # which would otherwise be stored as evidence.
    report = _run(
        [HumanMessage("I like tea, my SSN is 512-43-7789.", id="h1")],
        _candidate("I like tea", "User likes tea"),
    )
    assert report.candidates == ()
    assert report.blocked_count == 1


def test_a_quote_found_twice_keeps_the_sentence_that_supports_it() -> None:
    message = "My brother does not use vim. I use vim every day."
    report = _run([HumanMessage(message, id="h1")], _candidate("use vim", "User uses vim"))
    (kept,) = report.candidates
    assert kept.quote == "I use vim every day."


def test_widen_and_faithful_are_total() -> None:
    assert widen("anything", "   ") == []
    assert widen("abc", "xyz") == []
    assert faithful("", "User likes tea") is False
    assert faithful("I like tea", "") is False
    long = "I like tea, " * 2000 + "not coffee"
    assert faithful(long, "User likes tea") is True
    assert faithful(long, "User likes coffee") is False


TEXT = st.text(
    alphabet=st.sampled_from(
        list("I don't like tea, 不喜欢喝茶。?？!吗 not never 2 3 my boss hired me \n\u200b\x00ｆ")
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, other=TEXT)
def test_the_clause_reader_is_total(text: str, other: str) -> None:
    for widened in widen(text, other):
        assert widened.strip() == widened and widened
    assert faithful(text, other) in (True, False)
    assert faithful(text, other, statement=False) in (True, False)
    assert faithful_value(text, other) in (True, False)
    # What the user said, restated in their own words, is never a flip of itself, unless
    # it asks, names someone else or has nothing to restate.
    if faithful(text, text):
        assert faithful(text, text, statement=False)
