"""The evaluation command: ``python -m memory_graph.eval {guard,extraction}``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_graph.eval", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_guard_cases(path: Path) -> None:
    cases: list[dict[str, Any]] = [
        {
            "id": "p1",
            "text": "I'm on insulin",
            "lang": "en",
            "sensitive": True,
            "category": "health",
        },
        {"id": "p2", "text": "我月薪三万", "lang": "zh", "sensitive": True, "category": "finance"},
        {
            "id": "n1",
            "text": "I work at a bank",
            "lang": "en",
            "sensitive": False,
            "category": "finance",
        },
        {"id": "n2", "text": "我在东八区", "lang": "zh", "sensitive": False, "category": "address"},
    ]
    path.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in cases), "utf-8")


def test_guard_json(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    write_guard_cases(cases)
    done = run("guard", "--cases", str(cases), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["overall"]["f1"] == 1.0 and report["overall"]["fpr"] == 0.0
    assert set(report["by_lang"]) == {"en", "zh"}
    assert set(report["by_category"]) == {"health", "finance", "address"}
    assert "insulin" not in done.stdout  # errors carry ids only, never text


def test_guard_tables(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    write_guard_cases(cases)
    done = run("guard", "--cases", str(cases))
    assert done.returncode == 0, done.stderr
    for word in ("precision", "recall", "f1", "fpr", "by language", "by category"):
        assert word in done.stdout


def test_guard_missing_file_exits_2(tmp_path: Path) -> None:
    done = run("guard", "--cases", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 2 and "does not exist" in done.stdout


def test_extraction_bundled_set() -> None:
    done = run("extraction", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["overall"]["expected"] >= 20
    assert report["overall"]["precision"] >= 0.9
    assert report["overall"]["recall"] >= 0.8
    assert report["traps"]["clean"] == report["traps"]["cases"] > 0
    assert set(report["by_lang"]) == {"en", "zh"}


def test_extraction_tables_and_custom_cases(tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    doc = {
        "cases": [
            {
                "id": "c1",
                "lang": "en",
                "trap": None,
                "messages": [{"role": "human", "content": "Call me Sam.", "id": "h1"}],
                "expected": [{"action": "set", "key": "profile.call_them", "value": "Sam"}],
            },
            {
                "id": "c2",
                "lang": "zh",
                "trap": "assistant_claim",
                "messages": [{"role": "ai", "content": "以后叫你老大", "id": "a1"}],
                "expected": [],
            },
        ]
    }
    cases.write_text(json.dumps(doc, ensure_ascii=False), "utf-8")
    done = run("extraction", "--cases", str(cases))
    assert done.returncode == 0, done.stderr
    assert "precision" in done.stdout and "1/1" in done.stdout


@pytest.mark.parametrize("argv", [[], ["bogus"]])
def test_unknown_command_exits_2(argv: list[str]) -> None:
    done = run(*argv)
    assert done.returncode == 2
    assert "guard" in done.stderr and "extraction" in done.stderr


def test_help_lists_commands() -> None:
    done = run("--help")
    assert done.returncode == 0
    assert "recall" in done.stdout and "extraction" in done.stdout
