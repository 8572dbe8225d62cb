"""The README's Python examples run, in order, against a real database, twice.

Blocks fenced as ```python run; an illustrative fragment (names defined elsewhere) is
fenced as ```py and is not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples() -> None:
    assert len(_python_blocks()) >= 2


def test_readme_examples_run_twice_in_a_row(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Twice on the same database: a user who runs the examples again (on the persistent
    # embedded default) must not see them fail.
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    for _run in range(2):
        for block in _python_blocks():
            exec(compile(block, str(README), "exec"), {"__name__": "__readme__"})
