"""Guard evaluation: precision, recall, F1 and false-positive rate on a labelled JSONL set.

Each line of the cases file is ``{"id", "text", "lang", "sensitive", "category", ...}``.
A case counts as predicted-sensitive when :func:`memory_graph.guard.check` blocks it. For a
negative case, ``category`` names the family it looks like; per-category figures group
both positives and hard negatives by that label. The report also gives the guard's
throughput (checks per second over the whole file) and, when a chat model is given, the
figures of the deterministic guard followed by the model's second opinion.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, ValidationError
from ..guard import GuardVerdict, check

__all__ = ["format_guard_report", "main", "run_guard_eval", "score"]


def score(pairs: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """Score ``(expected_sensitive, predicted_sensitive)`` pairs.

    Args:
        pairs: one pair per case.

    Returns:
        ``{"n", "tp", "fp", "fn", "tn", "precision", "recall", "f1", "fpr"}``. A ratio
        with an empty denominator is ``None``.

    >>> score([(True, True), (False, False), (False, True)])["fpr"]
    0.5
    """
    tp = fp = fn = tn = 0
    for expected, predicted in pairs:
        if expected and predicted:
            tp += 1
        elif predicted:
            fp += 1
        elif expected:
            fn += 1
        else:
            tn += 1

    def ratio(num: int, den: int) -> float | None:
        return round(num / den, 4) if den else None

    precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
    f1: float | None = None
    if precision is not None and recall is not None and precision + recall > 0:
        f1 = round(2 * precision * recall / (precision + recall), 4)
    return {
        "n": tp + fp + fn + tn,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "fpr": ratio(fp, fp + tn),
    }


def _load(cases_path: str | Path) -> list[dict[str, Any]]:
    path = Path(cases_path)
    if not path.is_file():
        raise ValidationError(f"cases file {str(path)!r} does not exist: pass --cases FILE")
    cases: list[dict[str, Any]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{path}:{number} is not JSON: fix or remove the line") from exc
        if not isinstance(case, dict) or not isinstance(case.get("text"), str):
            raise ValidationError(f"{path}:{number} needs a string 'text' and a bool 'sensitive'")
        if not isinstance(case.get("sensitive"), bool):
            raise ValidationError(f"{path}:{number} needs a bool 'sensitive'")
        cases.append(case)
    return cases


def _group_pairs(rows: list[tuple[dict[str, Any], bool, str | None]]) -> dict[str, dict[str, Any]]:
    """Scores per ``category`` and ``lang`` together (keys joined with a NUL)."""
    keyed: dict[str, list[tuple[bool, bool]]] = {}
    for case, predicted, _ in rows:
        key = f"{case.get('category', '?')}\x00{case.get('lang', '?')}"
        keyed.setdefault(key, []).append((case["sensitive"], predicted))
    return {key: score(pairs) for key, pairs in sorted(keyed.items())}


def _evaluate(
    cases: list[dict[str, Any]], guard: Callable[[str], GuardVerdict]
) -> tuple[dict[str, Any], tuple[float, float]]:
    rows: list[tuple[dict[str, Any], bool, str | None]] = []
    started, cpu_started = time.perf_counter(), time.process_time()
    for case in cases:
        verdict = guard(case["text"])
        rows.append((case, not verdict.allowed, verdict.category))
    elapsed = (time.perf_counter() - started, time.process_time() - cpu_started)

    def group(key: str) -> dict[str, dict[str, Any]]:
        names = sorted({str(c.get(key, "?")) for c, _, _ in rows})
        return {
            name: score((c["sensitive"], p) for c, p, _ in rows if str(c.get(key, "?")) == name)
            for name in names
        }

    caught = [(c, cat) for c, p, cat in rows if p and c["sensitive"]]
    right = sum(1 for c, cat in caught if cat == c.get("category"))
    errors = [
        {
            "id": c.get("id"),
            "expected": c.get("category") if c["sensitive"] else None,
            "predicted": cat,
        }
        for c, p, cat in rows
        if p != c["sensitive"]
    ]
    report = {
        "overall": score((c["sensitive"], p) for c, p, _ in rows),
        "by_lang": group("lang"),
        "by_category": group("category"),
        "by_category_lang": {
            f"{cat}/{lang}": scores
            for cat, lang, scores in (
                (name.split("\x00")[0], name.split("\x00")[1], scores)
                for name, scores in _group_pairs(rows).items()
            )
        },
        "category_accuracy": round(right / len(caught), 4) if caught else None,
        "errors": errors,
    }
    return report, elapsed


def run_guard_eval(
    cases_path: str | Path,
    *,
    reviewed: Callable[[str], GuardVerdict] | None = None,
) -> dict[str, Any]:
    """Run the guard over a labelled cases file.

    Args:
        cases_path: a JSONL file of guard cases.
        reviewed: optionally, the guard followed by a model's second opinion (see
            :func:`memory_graph.guard.with_model_opinion`); its figures are reported
            under ``"combined"``.

    Returns:
        ``{"overall": scores, "by_lang": {lang: scores}, "by_category": {category: scores},
        "category_accuracy": float | None, "errors": [{"id", "expected", "predicted"}],
        "throughput": {"checks", "seconds", "checks_per_second", "ms_per_check",
        "cpu_ms_per_check"}}`` (wall-clock figures, plus the process's CPU time per check,
        which is what the guard costs when the machine is shared), plus
        ``"combined"`` (the same figures, without throughput) when ``reviewed`` is given.
        ``category_accuracy`` is the share of caught positives given the labelled category.
        Errors carry ids and labels only, never the text.

    Raises:
        ValidationError: the file is missing or malformed.
    """
    cases = _load(cases_path)
    # load the lazy parts (opencc, cn2an, homoglyph table, phone metadata) before timing
    check("我月薪两万三，電話 139 1234 5678，dіabetes, call my mom at (206) 555-0100")
    report, (elapsed, cpu) = _evaluate(cases, check)
    report["throughput"] = {
        "checks": len(cases),
        "seconds": round(elapsed, 4),
        "checks_per_second": round(len(cases) / elapsed, 1) if elapsed > 0 else None,
        "ms_per_check": round(1000 * elapsed / len(cases), 4) if cases else None,
        "cpu_ms_per_check": round(1000 * cpu / len(cases), 4) if cases else None,
    }
    if reviewed is not None:
        report["combined"], _ = _evaluate(cases, reviewed)
    return report


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def format_guard_report(report: dict[str, Any]) -> None:
    """Print a report from :func:`run_guard_eval` as rich tables on stdout.

    Args:
        report: the dict returned by :func:`run_guard_eval`.
    """
    from rich.console import Console
    from rich.table import Table

    console = Console()
    columns = ("n", "tp", "fp", "fn", "tn", "precision", "recall", "f1", "fpr")
    sections: list[tuple[str, dict[str, dict[str, Any]]]] = [
        ("Guard: overall", {"all": report["overall"]}),
        ("Guard: by language", report["by_lang"]),
        ("Guard: by category (positives and their hard negatives)", report["by_category"]),
        ("Guard: by category and language", report["by_category_lang"]),
    ]
    combined = report.get("combined")
    if combined:
        sections += [
            ("Guard + model: overall", {"all": combined["overall"]}),
            ("Guard + model: by language", combined["by_lang"]),
            ("Guard + model: by category", combined["by_category"]),
        ]
    shown: Sequence[tuple[str, dict[str, dict[str, Any]]]] = sections
    for title, groups in shown:
        table = Table(title=title)
        table.add_column("group")
        for column in columns:
            table.add_column(column, justify="right")
        for name, scores in groups.items():
            table.add_row(name, *(_cell(scores[c]) for c in columns))
        console.print(table)
    console.print(f"category accuracy on caught positives: {_cell(report['category_accuracy'])}")
    speed = report.get("throughput")
    if speed:
        console.print(
            f"throughput: {_cell(speed['checks_per_second'])} checks/s, "
            f"{_cell(speed['ms_per_check'])} ms per check, "
            f"{_cell(speed['cpu_ms_per_check'])} ms CPU per check ({speed['checks']} checks)"
        )
    if report["errors"]:
        console.print("misclassified ids: " + ", ".join(str(e["id"]) for e in report["errors"]))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memory_graph.eval guard",
        description="Score the sensitive-data guard on a labelled JSONL cases file.",
    )
    parser.add_argument("path", nargs="?", help="path to a guard cases JSONL file")
    parser.add_argument("--cases", help="the same path, as an option")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--model",
        help="also report the guard followed by this chat model's second opinion "
        "(an OpenAI-compatible model name; OPENAI_API_KEY / OPENAI_BASE_URL from the environment)",
    )
    parser.add_argument(
        "--method",
        default="function_calling",
        help="structured-output method for --model (function_calling, json_schema, json_mode)",
    )
    return parser


def _reviewer(name: str, method: str) -> Callable[[str], GuardVerdict]:
    from langchain_openai import ChatOpenAI

    from ..guard import with_model_opinion

    return with_model_opinion(ChatOpenAI(model=name, temperature=0), method=method)


def main(argv: list[str]) -> int:
    """Run the ``guard`` evaluation command.

    Args:
        argv: the arguments after ``guard``.

    Returns:
        The process exit code: 0 on success, 2 for a bad cases file.
    """
    args = _parser().parse_args(argv)
    cases = args.path or args.cases
    if not cases or (args.path and args.cases and args.path != args.cases):
        print("error: pass one cases file: guard PATH (or --cases PATH)")
        return 2
    try:
        reviewed = _reviewer(args.model, args.method) if args.model else None
        report = run_guard_eval(cases, reviewed=reviewed)
    except (ValidationError, ConfigurationError) as exc:
        print(f"error: {exc}")
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        format_guard_report(report)
    return 0
