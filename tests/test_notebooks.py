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


MACHINE = re.compile(r"(?<![\w.])/(?:tmp|root|home|var|work|srv|opt|Users)/[^\s'\"]*")
"""An absolute path of the machine that ran the notebook (differs on every run and machine)."""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_show_no_machine_path_or_private_key(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps([o for c in nb["cells"] for o in c.get("outputs", [])])
    assert not MACHINE.search(text), MACHINE.search(text)
    assert "__pregel" not in text, "a private LangGraph key in the outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_title_carries_the_file_number(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    title = "".join(nb["cells"][0]["source"]).splitlines()[0]
    assert title.startswith(f"# {path.name[:2]} "), title
