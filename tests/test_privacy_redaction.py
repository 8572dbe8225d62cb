"""Redaction (issue 12 §2): what the guard blocks is masked in the human message kept in the
thread's state (opt-in); before the input is first saved: ``test_redact_input.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from _graph_helpers import cfg, harness_on, turn
from _scan import scan
from langchain_core.messages import HumanMessage

from memory_graph import Owner
from nodes._redact import redact_messages, redact_text

ALICE = Owner("alice")
SAID = (
    "Call me Zorbulon. I was diagnosed with diabetes last year. "
    "Remember that my cat is named Vexmirth."
)


def test_redact_text_masks_the_blocked_sentence_only() -> None:
    out, n = redact_text(SAID)
    assert n == 1
    # The guard's span is the sentence without its terminator, so the full stop stays.
    assert out == ("Call me Zorbulon. [redacted: health]. Remember that my cat is named Vexmirth.")
    assert redact_text("") == ("", 0)
    assert redact_text("nothing sensitive here") == ("nothing sensitive here", 0)
    # Line breaks and CJK terminators split sentences; the rest is kept byte for byte.
    out, n = redact_text("hi\nI was diagnosed with diabetes\n\tbye。我很好！")
    assert (out, n) == ("hi\n[redacted: health]\n\tbye。我很好！", 1)


@dataclass
class _Verdict:
    allowed: bool
    category: str | None = None
    spans: tuple[tuple[int, int], ...] | None = None


def test_spans_from_the_guard_are_masked_exactly() -> None:
    def guard(text: str) -> _Verdict:
        at = text.find("4111")
        if at < 0:
            return _Verdict(True)
        return _Verdict(False, "finance", ((at, at + 4), (at + 2, at + 8), (999, 1000)))

    out, n = redact_text("ok. my card 41111111 is here. fine", guard)
    assert out == "ok. my card [redacted: finance] is here. fine" and n == 1


def test_redact_messages_keeps_ids_and_blocks() -> None:
    plain = HumanMessage("hello", id="m1")
    sick = HumanMessage(
        [
            {"type": "text", "text": "I was diagnosed with diabetes."},
            {"type": "image_url", "image_url": "x"},
        ],
        id="m2",
    )
    (out,) = redact_messages([plain, sick])
    assert out.id == "m2" and out.content[1] == sick.content[1]
    assert out.content[0]["text"] == "[redacted: health]."


def _run(pg_dsn: str, redact: bool) -> tuple[Any, Any]:
    with harness_on(pg_dsn, "sync", redact_blocked=redact) as h:
        h.store.claim_thread(ALICE, "r1")
        out = h.invoke(turn(SAID), cfg("r1"), context={"user_id": "alice"})
        human = [m for m in h.get_state(cfg("r1")).values["messages"] if m.type == "human"]
        return out, human


def test_graph_redacts_in_state_when_enabled(pg_dsn: str) -> None:
    out, human = _run(pg_dsn, True)
    assert len(human) == 1
    assert "diabetes" not in human[0].content and "[redacted: health]" in human[0].content
    assert "Zorbulon" in human[0].content
    assert out["extraction"]["proposed"] == 2  # the unblocked sentences still propose
    assert out["extraction"]["blocked_categories"] == {"health": 1}  # counted from the mask
    # The input was masked before it was first saved: no prune is needed.
    assert scan(pg_dsn, ["diabetes"]) == {"diabetes": []}


def test_graph_keeps_the_message_by_default(pg_dsn: str) -> None:
    _, human = _run(pg_dsn, False)
    assert human[0].content == SAID
    assert scan(pg_dsn, ["diabetes"])["diabetes"]


def test_span_objects_and_a_single_pair_are_accepted() -> None:
    @dataclass
    class Span:
        start: int
        end: int

    def objects(text: str) -> _Verdict:
        return _Verdict(False, "gov_id", (Span(3, 5),)) if "id" in text else _Verdict(True)

    def pair(text: str) -> Any:
        return _Verdict(False, "gov_id", (3, 5)) if "id" in text else _Verdict(True)  # type: ignore[arg-type]

    assert redact_text("my id 123 here", objects) == ("my [redacted: gov_id] 123 here", 1)
    assert redact_text("my id 123 here", pair) == ("my [redacted: gov_id] 123 here", 1)
