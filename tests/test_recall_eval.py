"""The recall evaluation harness on a tiny synthetic suite (never the shared eval data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_graph.eval._recall import load_suite, main


def _suite(tmp_path: Path) -> Path:
    docs = [
        {"corpus": "u1", "id": "d1", "text": "I play the violin", "time": None},
        {"corpus": "u1", "id": "d2", "text": "I like green tea", "time": None},
        {"corpus": "u2", "id": "d1", "text": "我喜欢喝咖啡", "time": None},
        {"corpus": "u2", "id": "d2", "text": "我住在上海", "time": None},
    ]
    queries = [
        {"corpus": "u1", "query": "What instrument? violin", "relevant": ["d1"], "type": "a"},
        {"corpus": "u2", "query": "我喜欢喝什么咖啡？", "relevant": ["d1"], "type": "b"},
    ]
    (tmp_path / "docs.jsonl").write_text("\n".join(json.dumps(d) for d in docs), "utf-8")
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries), "utf-8")
    return tmp_path


def test_pure_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = _suite(tmp_path)
    assert len(load_suite(suite)[0]) == 4
    assert main(["--suite", str(suite), "--pure", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["all"]["recall@10"] == 1.0
    assert summary["all"]["mrr"] == 1.0
    assert set(summary) == {"all", "a", "b"}


def test_bad_arguments(tmp_path: Path) -> None:
    assert main(["--suite", str(tmp_path), "--pure"]) == 2
    assert main(["--suite", str(_suite(tmp_path)), "--pure", "--k", "0"]) == 2


def test_store_path(tmp_path: Path, pg_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--suite", str(_suite(tmp_path)), "--dsn", pg_dsn, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["all"]["hit@10"] == 1.0
