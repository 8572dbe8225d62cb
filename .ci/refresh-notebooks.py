"""Execute every notebook in place, so the committed notebooks carry their outputs.

Usage: ``python .ci/refresh-notebooks.py [NOTEBOOK ...]`` (default: ``notebooks/*.ipynb``),
with ``MEMORY_GRAPH_DSN`` set or unset (embedded server) like any run of the notebooks.
Outputs are made plain (ANSI colour codes removed) and no timing metadata is recorded, so a
refresh only changes what the cells print. ``tests/test_notebooks.py`` checks the result.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def _plain(value: object) -> object:
    if isinstance(value, str):
        return ANSI.sub("", value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for out in cell.get("outputs", []):
            for key in ("text", "traceback"):
                if key in out:
                    out[key] = _plain(out[key])
            for mime, data in (out.get("data") or {}).items():
                out["data"][mime] = _plain(data)
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, path)


def main(argv: list[str]) -> None:
    os.environ.setdefault("NO_COLOR", "1")
    paths = [Path(a) for a in argv] or sorted(Path("notebooks").glob("*.ipynb"))
    for path in paths:
        print("executing", path, flush=True)
        refresh(path)


if __name__ == "__main__":
    main(sys.argv[1:])
