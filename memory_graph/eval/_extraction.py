"""Extraction evaluation: precision and recall of an extractor on scripted conversations.

The bundled set (``extraction_cases.json``, next to this module) is memory-graph's own
data: conversations in Chinese and English with the candidates that should survive
grounding and the guard, plus traps that must yield nothing (assistant claims,
hypotheticals, quotes of other people, jokes, questions, sensitive facts, echoed system
prompts, tool output). A predicted candidate matches an expected one when action and key
are equal and the value (or, for unkeyed facts, the content) is equal after NFKC,
whitespace folding and case folding.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from ..errors import ValidationError
from ..extraction import Candidate, extract_candidates, fold

__all__ = ["DEFAULT_CASES", "format_extraction_report", "main", "run_extraction_eval"]

DEFAULT_CASES = "extraction_cases.json"
"""The bundled case file, a resource of :mod:`memory_graph.eval`."""


def _message(raw: dict[str, Any], where: str) -> BaseMessage:
    role, content, mid = raw.get("role"), raw.get("content"), raw.get("id")
    if not isinstance(content, str):
        raise ValidationError(f"{where}: content must be a string")
    if role == "human":
        return HumanMessage(content, id=mid)
    if role == "ai":
        return AIMessage(content, id=mid)
    if role == "system":
        return SystemMessage(content, id=mid)
    if role == "tool":
        return ToolMessage(content, tool_call_id=mid or "tool", id=mid)
    raise ValidationError(f"{where}: role must be human, ai, system or tool, got {role!r}")


def load_cases(path: str | Path | None = None) -> list[dict[str, Any]]:
    """Load extraction cases from ``path`` or the bundled file.

    Args:
        path: a JSON file ``{"cases": [...]}``; ``None`` for the bundled set.

    Returns:
        The list of cases.

    Raises:
        ValidationError: the file is missing or malformed.
    """
    if path is None:
        text = resources.files("memory_graph.eval").joinpath(DEFAULT_CASES).read_text("utf-8")
        where = DEFAULT_CASES
    else:
        file = Path(path)
        if not file.is_file():
            raise ValidationError(f"cases file {str(file)!r} does not exist: pass --cases FILE")
        text, where = file.read_text(encoding="utf-8"), str(file)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{where} is not valid JSON") from exc
    cases = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(cases, list):
        raise ValidationError(f"{where} needs an object with a 'cases' list")
    return cases


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return fold(str(a)).casefold() == fold(str(b)).casefold()


def _matches(expected: dict[str, Any], got: Candidate) -> bool:
    if expected.get("action", "set") != got.action or expected.get("key") != got.key:
        return False
    if got.key is None:
        return _same(expected.get("content"), got.content)
    return _same(expected.get("value"), got.value)


def _score(tp: int, predicted: int, expected: int) -> dict[str, float | None]:
    precision = round(tp / predicted, 4) if predicted else None
    recall = round(tp / expected, 4) if expected else None
    f1 = None
    if precision is not None and recall is not None and precision + recall > 0:
        f1 = round(2 * precision * recall / (precision + recall), 4)
    return {"precision": precision, "recall": recall, "f1": f1}


def run_extraction_eval(
    cases_path: str | Path | None = None, *, extractor: Any = None
) -> dict[str, Any]:
    """Run an extractor (the offline pattern extractor by default) over the cases.

    Args:
        cases_path: a cases file, or ``None`` for the bundled set.
        extractor: a runnable from ``create_extractor``; ``None`` for the pattern extractor.

    Returns:
        ``{"overall": {...}, "by_lang": {...}, "traps": {...}, "cases": [...]}`` where each
        score block holds ``tp``, ``predicted``, ``expected``, ``precision``, ``recall`` and
        ``f1``; ``traps`` counts trap cases that yielded nothing; ``cases`` lists per-case
        misses and extras.

    Raises:
        ValidationError: the cases file is malformed.
    """
    totals: dict[str, dict[str, int]] = {}
    traps = {"cases": 0, "clean": 0}
    rows: list[dict[str, Any]] = []
    for number, case in enumerate(load_cases(cases_path)):
        where = f"case {case.get('id', number)}"
        raw_messages = case.get("messages")
        if not isinstance(raw_messages, list) or not isinstance(case.get("expected"), list):
            raise ValidationError(f"{where}: needs 'messages' and 'expected' lists")
        window = [_message(m, where) for m in raw_messages]
        report = extract_candidates(window, extractor=extractor, thread_id=str(case.get("id")))
        expected: list[dict[str, Any]] = list(case["expected"])
        got = list(report.candidates)
        unmatched = list(got)
        tp = 0
        missed: list[dict[str, Any]] = []
        for exp in expected:
            hit = next((g for g in unmatched if _matches(exp, g)), None)
            if hit is None:
                missed.append(exp)
            else:
                unmatched.remove(hit)
                tp += 1
        for group in ("all", str(case.get("lang", "?"))):
            bucket = totals.setdefault(group, {"tp": 0, "predicted": 0, "expected": 0})
            bucket["tp"] += tp
            bucket["predicted"] += len(got)
            bucket["expected"] += len(expected)
        if case.get("trap"):
            traps["cases"] += 1
            traps["clean"] += int(not got)
        rows.append(
            {
                "id": case.get("id"),
                "trap": case.get("trap"),
                "missed": missed,
                "extra": [
                    {"action": g.action, "key": g.key, "value": g.value, "content": g.content}
                    for g in unmatched
                ],
                "blocked": report.blocked_count,
            }
        )

    def block(name: str) -> dict[str, Any]:
        t = totals.get(name, {"tp": 0, "predicted": 0, "expected": 0})
        return {**t, **_score(t["tp"], t["predicted"], t["expected"])}

    return {
        "overall": block("all"),
        "by_lang": {name: block(name) for name in sorted(totals) if name != "all"},
        "traps": traps,
        "cases": rows,
    }


def format_extraction_report(report: dict[str, Any]) -> None:
    """Print a report from :func:`run_extraction_eval` as rich tables.

    Args:
        report: the dict returned by :func:`run_extraction_eval`.
    """
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title="Extraction (offline pattern extractor)")
    columns: Sequence[str] = ("tp", "predicted", "expected", "precision", "recall", "f1")
    table.add_column("group")
    for column in columns:
        table.add_column(column, justify="right")
    groups = {"all": report["overall"], **report["by_lang"]}
    for name, scores in groups.items():
        cells = [
            "-"
            if scores[c] is None
            else (f"{scores[c]:.3f}" if isinstance(scores[c], float) else str(scores[c]))
            for c in columns
        ]
        table.add_row(name, *cells)
    console.print(table)
    traps = report["traps"]
    console.print(f"trap conversations with no candidate: {traps['clean']}/{traps['cases']}")
    for row in report["cases"]:
        if row["missed"] or row["extra"]:
            console.print(f"{row['id']}: missed {row['missed']} extra {row['extra']}")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memory_graph.eval extraction",
        description="Score the offline extractor on scripted conversations.",
    )
    parser.add_argument("--cases", help="a cases JSON file (default: the bundled set)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def main(argv: list[str]) -> int:
    """Run the ``extraction`` evaluation command.

    Args:
        argv: the arguments after ``extraction``.

    Returns:
        The exit code: 0 on success, 2 for a bad cases file.
    """
    args = _parser().parse_args(argv)
    try:
        report = run_extraction_eval(args.cases)
    except ValidationError as exc:
        print(f"error: {exc}")
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        format_extraction_report(report)
    return 0
