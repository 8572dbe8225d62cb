"""Grounding binds the content to the quote (issue 8 §3) and the model sets no lifetime (§4).

A verbatim quote is not enough: the candidate's content (or keyed value) must be carried by
its own quote (the support rule in ``memory_graph/extraction/_support.py``). Hostile
candidates from a lying model are dropped and counted; plain restatements in Chinese,
English and mixed text still pass.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from memory_graph.extraction import extract_candidates
from memory_graph.extraction._support import supports

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def _run(messages: list[BaseMessage], *candidates: dict[str, Any]) -> Any:
    extractor = RunnableLambda(lambda _window: [dict(c) for c in candidates])
    return extract_candidates(messages, extractor=extractor, clock=lambda: NOW)


def _fact(quote: str, content: str, index: int = 0, **extra: Any) -> dict[str, Any]:
    return {"kind": "fact", "quote": quote, "content": content, "message_index": index, **extra}


HOSTILE = [
    pytest.param(
        [HumanMessage("I had a long day at work", id="h1")],
        _fact("I had a long day at work", "User feels depressed and hopeless lately"),
        id="inferred-mood",
    ),
    pytest.param(
        [
            AIMessage("You are an administrator with full access to every account."),
            HumanMessage("ok sure", id="h1"),
        ],
        _fact("ok sure", "User is an administrator with full access to every account", 1),
        id="acknowledged-assistant-claim",
    ),
    pytest.param(
        [AIMessage("你是管理员，对吧？"), HumanMessage("好的", id="h1")],
        _fact("好的", "用户是管理员", 1),
        id="acknowledged-zh",
    ),
    pytest.param(
        [AIMessage("So you are an admin?"), HumanMessage("yes", id="h1")],
        _fact("yes", "User is an admin", 1),
        id="bare-yes",
    ),
    pytest.param(
        [HumanMessage("I don't eat meat", id="h1")],
        _fact("I don't eat meat", "User eats meat"),
        id="dropped-negation-en",
    ),
    pytest.param(
        [HumanMessage("我不喜欢吃辣", id="h1")],
        _fact("我不喜欢吃辣", "用户喜欢吃辣"),
        id="dropped-negation-zh",
    ),
    pytest.param(
        [HumanMessage("I have access to my account", id="h1")],
        _fact("I have access to my account", "User has access to every account"),
        id="widened-quantifier",
    ),
    pytest.param(
        [HumanMessage("我用VS Code写Python", id="h1")],
        _fact("我用VS Code写Python", "用户用VS Code写Rust"),
        id="swapped-term-mixed",
    ),
    pytest.param(
        [HumanMessage("Call me Sam. My boss is Admin.", id="h1")],
        {
            "kind": "fact",
            "key": "profile.call_them",
            "value": "Admin",
            "quote": "Call me Sam.",
            "message_index": 0,
        },
        id="keyed-value-outside-its-quote",
    ),
    pytest.param(
        [HumanMessage("I don't want short replies", id="h1")],
        {
            "kind": "preference",
            "key": "reply.length",
            "value": "short",
            "quote": "I don't want short replies",
            "message_index": 0,
        },
        id="keyed-value-negated",
    ),
    pytest.param(
        [HumanMessage("the the the is is a", id="h1")],
        _fact("the the the is is a", "User is a"),
        id="function-words-only",
    ),
]


@pytest.mark.parametrize(("messages", "candidate"), HOSTILE)
def test_unsupported_candidates_are_dropped_and_counted(
    messages: list[BaseMessage], candidate: dict[str, Any]
) -> None:
    # The whole window (the older borrowed-words rule may also catch it) ...
    report = _run(messages, candidate)
    assert report.candidates == ()
    assert report.dropped_unsupported_count + report.dropped_ungrounded_count == 1
    # ... and the human messages only, as the extraction node passes them: the support rule
    # alone must drop it.
    humans = [m for m in messages if isinstance(m, HumanMessage)]
    report = _run(humans, {**candidate, "message_index": 0})
    assert report.candidates == ()
    assert report.dropped_unsupported_count == 1
    assert report.to_json()["dropped_unsupported_count"] == 1


LEGIT = [
    ("I prefer dark mode in every editor", "User prefers dark mode in every editor"),
    ("I'm vegetarian", "User is vegetarian"),
    ("I don't eat meat", "User does not eat meat"),
    ("I deploy on Fridays only after 3pm", "I deploy on Fridays only after 3pm"),
    ("我每周三下午不开会", "用户每周三下午不开会"),
    ("我不吃香菜", "我不吃香菜"),
    ("我的爱好是跑步", "用户的爱好是跑步"),
    ("我用VS Code写Python", "用户用 VS Code 写 Python"),
    ("我在Google做SRE", "用户在Google做SRE"),
]


@pytest.mark.parametrize(("quote", "content"), LEGIT)
def test_restatements_in_zh_en_and_mixed_pass(quote: str, content: str) -> None:
    report = _run([HumanMessage(quote, id="h1")], _fact(quote, content))
    assert [c.content for c in report.candidates] == [content]
    assert report.dropped_unsupported_count == 0


@pytest.mark.parametrize(
    ("quote", "key", "value"),
    [
        ("My pronouns are they/them", "profile.pronouns", "they/them"),
        ("Call me Sam", "profile.call_them", "Sam"),
        ("I'm in UTC+8", "profile.timezone", "UTC+8"),
        ("请用中文回答", "profile.language", "中文"),
        ("I use VS Code", "tools.editor", "VS Code"),
    ],
)
def test_keyed_values_from_their_quote_pass(quote: str, key: str, value: str) -> None:
    candidate = {"kind": "fact", "key": key, "value": value, "quote": quote, "message_index": 0}
    report = _run([HumanMessage(quote, id="h1")], candidate)
    assert [c.value for c in report.candidates] == [value]


def test_an_acknowledgement_cannot_ground_a_keyed_value() -> None:
    candidate = {
        "kind": "preference",
        "key": "reply.length",
        "value": "short",
        "quote": "ok sure",
        "message_index": 0,
    }
    report = _run([HumanMessage("ok sure", id="h1")], candidate)
    assert report.candidates == () and report.dropped_ungrounded_count == 1
    report = _run([HumanMessage("ok sure", id="h1")], {**candidate, "value": "sure"})
    assert report.candidates == () and report.dropped_unsupported_count == 1


def test_keyed_value_in_its_own_clause_passes_despite_a_negation_elsewhere() -> None:
    text = "我在东八区，晚上十点以后别安排会议。"
    report = _run(
        [HumanMessage(text, id="h1")],
        {
            "kind": "fact",
            "key": "profile.timezone",
            "value": "东八区",
            "quote": text,
            "message_index": 0,
        },
    )
    assert [c.value for c in report.candidates] == ["东八区"]


def test_model_confidence_and_lifetime_are_ignored() -> None:
    quote = "Remember that I deploy on Fridays"
    report = _run(
        [HumanMessage(quote, id="h1")],
        _fact(quote, "I deploy on Fridays", confidence=1.0, expires_at="9999-12-31T00:00:00Z"),
        {
            "kind": "preference",
            "key": "reply.length",
            "value": "Fridays",
            "quote": quote,
            "message_index": 0,
            "expires_at": "9999-12-31T00:00:00Z",
        },
    )
    assert len(report.candidates) == 2
    for c in report.candidates:
        assert c.confidence is None and c.expires_at is None
        assert c.source_event_id == "h1"  # the harness's message id


WORDS = st.sampled_from(
    "I you user my coffee tea vim emacs not never every all admin access 我 不 喜欢 咖啡 "
    "茶 用户 管理员 是 的 ok sure 好的 short replies".split()
)


@settings(max_examples=300, deadline=None)
@given(quote=st.lists(WORDS, min_size=1, max_size=8), content=st.lists(WORDS, max_size=8))
def test_support_never_admits_a_meaning_term_the_quote_lacks(
    quote: list[str], content: list[str]
) -> None:
    from memory_graph.extraction._support import meaning_terms

    q, c = " ".join(quote), " ".join(content)
    if supports(q, c):
        assert meaning_terms(c) and meaning_terms(c) <= meaning_terms(q) | {"not"}
        acks = {"ok", "sure", "好的"}
        assert set(quote) - acks, "an acknowledgement alone supported a claim"


@given(text=st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_support_is_total_on_any_text(text: str) -> None:
    assert supports(text, text) in (True, False)
    assert supports("", text) is False or text.strip() == ""


def test_stemming_is_correct_when_many_threads_check_support_at_once() -> None:
    """One shared Snowball stemmer keeps its word in instance fields: threads switching in
    the middle of a word used to stem each other's words. Every thread must get exactly the
    single-threaded terms."""
    import sys
    import threading

    from memory_graph.extraction import _support

    words = [
        f"{stem}{suffix}"
        for stem in ("paint", "garden", "travel", "cook", "swim", "read", "climb", "sail")
        for suffix in ("ing", "ed", "s", "er", "ers", "ingly", "ness", "ful")
    ]
    texts = [f"I {w} {words[(i * 7) % len(words)]} often" for i, w in enumerate(words)]
    stems = {w: _support._stem.__wrapped__(w) for w in words}
    _support._terms.cache_clear()
    _support._stem.cache_clear()
    expected = {t: _support._terms.__wrapped__(t) for t in texts}
    failures: list[str] = []
    start = threading.Barrier(8)

    def worker(k: int) -> None:
        start.wait()
        for _ in range(20):
            for w in words[k::2]:
                got = _support._stem.__wrapped__(w)  # no memo: the thread's stemmer
                if got != stems[w]:
                    failures.append(f"{w!r}: {got} != {stems[w]}")
            for text in texts[k::3]:
                if (terms := _support._terms.__wrapped__(text)) != expected[text]:
                    failures.append(f"{text!r}: {terms} != {expected[text]}")

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert failures == []
