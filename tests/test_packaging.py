"""Packaging and layering: what a fresh user and a deployment rely on."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import memory_graph
from memory_graph import AsyncMemoryStore, MemoryStore, Owner

ROOT = Path(__file__).resolve().parents[1]
APP_LAYER = ("cli.py", "eval")


def test_version_and_license() -> None:
    assert isinstance(memory_graph.__version__, str) and memory_graph.__version__[0].isdigit()
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()


def _core_modules() -> list[Path]:
    out = []
    for path in sorted((ROOT / "memory_graph").rglob("*.py")):
        rel = path.relative_to(ROOT / "memory_graph")
        if rel.parts[0] in APP_LAYER or rel.name.startswith("_cli_"):
            continue
        out.append(path)
    return out


def test_core_has_no_import_of_nodes() -> None:
    offenders = []
    for path in _core_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "nodes" or n.startswith("nodes.") for n in names):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
    assert len(_core_modules()) > 20  # the walk really sees the core


def test_importing_the_whole_core_never_loads_nodes() -> None:
    mods = [
        "memory_graph."
        + ".".join(p.relative_to(ROOT / "memory_graph").with_suffix("").parts).removesuffix(
            ".__init__"
        )
        for p in _core_modules()
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m.removesuffix('.'))\n"
        "from memory_graph import *\n"
        "assert 'nodes' not in sys.modules, sorted(m for m in sys.modules if 'nodes' in m)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_open_is_a_context_manager_on_both_twins(pg_dsn: str) -> None:
    import asyncio

    with MemoryStore.open(pg_dsn) as store:
        store.setup()
        assert store.get_profile(Owner("x")).revision == 0
    assert store._pool.closed

    async def main() -> AsyncMemoryStore:
        async with await AsyncMemoryStore.open(pg_dsn) as astore:
            assert (await astore.get_profile(Owner("x"))).revision == 0
        return astore

    assert asyncio.run(main())._pool.closed


def test_sdist_carries_langgraph_json_and_license(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "__pycache__", "build"),
    )
    code = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "dist")],
        cwd=src,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    name = done.stdout.strip().splitlines()[-1]
    with tarfile.open(tmp_path / "dist" / name) as tar:
        files = {Path(n).name for n in tar.getnames()}
    assert {"langgraph.json", "LICENSE", "pyproject.toml"} <= files
