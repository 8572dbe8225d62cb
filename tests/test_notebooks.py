"""The committed notebooks carry their outputs (they read well on GitHub), cleanly.

CI executes them (``pytest --nbmake notebooks``); ``.ci/refresh-notebooks.py`` rewrites the
committed outputs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
ANSI = re.compile(r"\x1b\[")


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 6


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_with_clean_outputs(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in code]
    assert counts == list(range(1, len(code) + 1)), "execute the whole notebook, in order"
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert outputs, "no outputs: run .ci/refresh-notebooks.py"
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = json.dumps(outputs)
    assert not ANSI.search(text) and "\\u001b[" not in text, "raw ANSI codes in outputs"
    assert "Traceback" not in text
