"""Dates recall reads, in questions and in documents' times: numeric forms (``24.06.2023``,
``2023.06.24``, ``24/06/2023``, ``6/24``), ordinal English ("3rd of May 2023") and Chinese
ones. Invented text; pure (no database)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memory_graph.eval._recall import parse_time
from memory_graph.recall.dates import date_of, question_window
from memory_graph.recall.documents import corpus_stats
from memory_graph.recall.model import Document
from memory_graph.recall.rank import rank
from memory_graph.recall.tokenize import tokenize


def _days(text: str) -> list[str]:
    window = question_window(text)
    assert window is not None, text
    return sorted(
        datetime.fromtimestamp(a, timezone.utc).date().isoformat() for a, _ in window.spans
    )


@pytest.mark.parametrize(
    ("question", "days"),
    [
        ("What did Ana tell Ben on 17.03.2023?", ["2023-03-17"]),
        ("What happened on 5.4.2022 at the lake?", ["2022-04-05"]),
        ("Anything from 09-10-2023?", ["2023-10-09"]),
        ("And on 2023.06.24?", ["2023-06-24"]),
        ("What did I buy on 2023/6/24", ["2023-06-24"]),
        ("Who called on 26/02/2023?", ["2023-02-26"]),  # 26 is no month: day first
        ("Who called on 02/26/2023?", ["2023-02-26"]),  # 26 is no month: month first
        ("Who called on 03/04/2023?", ["2023-03-04", "2023-04-03"]),  # both readings
        ("What did we discuss on the 3rd of May 2023?", ["2023-05-03"]),
        ("What did we discuss on 2nd of May, 2023?", ["2023-05-02"]),
        ("我2023年5月3号去了哪里？", ["2023-05-03"]),
        ("二〇二二年十月一日发生了什么？", ["2022-10-01"]),
        ("我2023.5.3买了什么？", ["2023-05-03"]),
    ],
)
def test_a_question_names_the_day_in_every_common_form(question: str, days: list[str]) -> None:
    assert _days(question) == days


def test_a_numeric_date_without_a_year_needs_a_word_that_introduces_it() -> None:
    window = question_window("What did Sam cook on 6/24?")
    assert window is not None and (window.month, window.day) == (6, 24)
    # Fractions, scores, versions, clock times and impossible dates are not dates.
    for text in (
        "Add 3/4 cup of flour?",
        "They won 2/1 in the final?",
        "Is version 1.2.2023.4 out?",
        "The train leaves at 12.05, right?",
        "What happened on 31.02.2023?",
        "What happened on 00.05.2023?",
    ):
        assert question_window(text) is None, text


def test_a_numeric_date_is_not_read_again_as_a_year() -> None:
    # Old code read "2023" of "17.03.2023" as the whole year: the window spanned 2023.
    assert _days("What did Ana say on 17.03.2023?") == ["2023-03-17"]


def test_before_and_after_shape_a_numeric_date() -> None:
    window = question_window("What did Kim plant before 01.06.2023?")
    assert window is not None
    start, end = window.spans[0]
    assert datetime.fromtimestamp(start, timezone.utc).date().isoformat() == "2023-05-11"
    assert datetime.fromtimestamp(end, timezone.utc).date().isoformat() == "2023-06-02"


def test_hostile_date_texts_stay_bounded_and_typed() -> None:
    many = " ".join(f"{d % 28 + 1:02d}.{d % 12 + 1:02d}.2023" for d in range(5000))
    window = question_window(many)
    assert window is not None and len(window.spans) <= 16
    assert question_window("on\u200b17.03.2023\x00?") is not None  # a control char around it
    assert question_window("on １７．０３．２０２３?") is None  # full width: not a date form
    assert date_of(123) is None  # type: ignore[arg-type]
    assert date_of("x" * 10_000) is None


@pytest.mark.parametrize(
    ("raw", "iso"),
    [
        ("24.06.2023", "2023-06-24T00:00:00+00:00"),
        ("24.06.2023 14:30", "2023-06-24T14:30:00+00:00"),
        ("2023.06.24", "2023-06-24T00:00:00+00:00"),
        ("24/06/2023", "2023-06-24T00:00:00+00:00"),
        ("2:05 pm on 3rd of May, 2023", "2023-05-03T14:05:00+00:00"),
        ("2023年6月24日", "2023-06-24T00:00:00+00:00"),
    ],
)
def test_a_documents_time_is_read_in_every_form(raw: str, iso: str) -> None:
    parsed = parse_time(raw)
    assert parsed is not None and parsed.isoformat() == iso


def test_a_question_with_a_numeric_date_ranks_that_days_turns_first() -> None:
    def at(day: str) -> float:
        moment = date_of(day)
        assert moment is not None
        return moment.timestamp()

    texts = [
        ("Ana: Running my first race was hard.", "17.03.2023"),
        ("Ana: Running again today, a long slow one.", "02.05.2023"),
        ("Ana: Running with the dog is fun.", "21.06.2023"),
        ("Ben: My bowl came out of the kiln.", "17.03.2023"),
    ]
    docs = [
        Document(str(i), tokenize(t), t, thread=day, time=at(day))
        for i, (t, day) in enumerate(texts)
    ]
    query = "What did Ana say about running on 17.03.2023?"
    ranked = rank(query, docs, limit=4, stats=corpus_stats(docs), window=question_window(query))
    assert ranked[0].doc.id == "0"
