"""The per-step query's latest input drawn from the recent conversation
(:func:`memory_graph.recall.plan.recent_text`). Invented dialogues; pure."""

from __future__ import annotations

import pytest

from memory_graph.recall.plan import RECENT_TURNS, plan_queries, recent_text


def test_the_latest_human_turn_comes_first_then_the_turns_before_it() -> None:
    turns = [
        ("human", "I'm planning a trip to Osaka next month."),
        ("ai", "Exciting!"),
        ("human", "How can I make the most of it?"),
    ]
    assert recent_text(turns) == (
        "How can I make the most of it?\nExciting!\nI'm planning a trip to Osaka next month."
    )


def test_the_window_is_bounded_and_turns_after_the_last_human_one_are_left_out() -> None:
    turns = [("human", f"turn {i} topic{i}") for i in range(20)]
    turns += [("ai", "calling a tool"), ("tool", "tool output"), ("system", "be brief")]
    text = recent_text(turns)
    assert text is not None
    lines = text.split("\n")
    assert len(lines) == RECENT_TURNS
    assert lines[0] == "turn 19 topic19"
    assert "calling a tool" not in text and "tool output" not in text and "be brief" not in text
    assert "topic13" not in text  # beyond the window


def test_older_turns_weigh_less_than_the_latest_one() -> None:
    long = "word " * 2000
    turns = [("human", "A" + long), ("ai", "B" + long), ("human", "C" + long)]
    text = recent_text(turns, max_chars=1000)
    assert text is not None and len(text) <= 1000
    latest, ai, older = text.split("\n")
    assert latest.startswith("C") and ai.startswith("B") and older.startswith("A")
    assert len(latest) > len(older) and len(latest) > len(ai)


def test_hostile_turns() -> None:
    assert recent_text([]) is None
    assert recent_text([("ai", "only the agent spoke")]) is None
    assert recent_text([("human", "   "), ("human", "\u200b\x00")]) is not None  # not blank
    assert recent_text([("human", "  \n\t ")]) is None
    assert recent_text([("human", 42), ("human", "ok")]) == "ok"  # type: ignore[list-item]
    assert recent_text([("human", "x" * 100_000)], max_chars=64) == "x" * 64
    with pytest.raises(ValueError):
        recent_text([("human", "hi")], max_turns=0)
    with pytest.raises(ValueError):
        recent_text([("human", "hi")], max_turns=True)


def test_the_conversation_is_the_plans_second_text() -> None:
    latest = recent_text([("human", "We adopted a kitten."), ("human", "Any tips?")])
    assert plan_queries("find tips", latest, "help with pets") == [
        "find tips",
        "Any tips?\nWe adopted a kitten.",
        "help with pets",
    ]
