"""Packaging and layering: what a fresh user and a deployment rely on."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import memory_graph
from memory_graph import AsyncMemoryStore, MemoryStore, Owner

ROOT = Path(__file__).resolve().parents[1]
APP_LAYER = ("cli", "eval")
"""Subpackages of ``memory_graph`` above the core: they may import ``nodes``."""


def test_version_and_license() -> None:
    assert isinstance(memory_graph.__version__, str) and memory_graph.__version__[0].isdigit()
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(*packages: str) -> dict[str, Path]:
    return {_module_name(p): p for pkg in packages for p in sorted((ROOT / pkg).rglob("*.py"))}


_ALL = _modules("memory_graph", "nodes")


def _core_modules() -> list[Path]:
    return [
        path
        for name, path in _modules("memory_graph").items()
        if name.split(".")[1:2] == [] or name.split(".")[1] not in APP_LAYER
    ]


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module ``name`` imports, at any depth of its code, with the line: ``import``,
    ``from ... import`` (relative ones resolved) and lazy ``importlib.import_module("x")`` /
    ``__import__("x")`` calls with a literal name."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + [node.module or ""][:1])
                base = base.rstrip(".")
            else:
                base = node.module or ""
            # ``from pkg import sub`` imports the module ``pkg.sub``; ``from pkg import name``
            # imports ``pkg``.
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in _ALL]
            out += [(t, node.lineno) for t in subs or [base]]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                out.append((node.args[0].value, node.lineno))
    return out


def test_core_has_no_import_of_nodes_even_a_lazy_one() -> None:
    offenders = []
    for path in _core_modules():
        for target, line in _imports(_module_name(path), path):
            if target == "nodes" or target.startswith("nodes."):
                offenders.append(f"{path.relative_to(ROOT)}:{line}")
    assert offenders == []
    assert len(_core_modules()) > 20  # the walk really sees the core


def test_the_lazy_import_check_sees_importlib(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    import importlib\n    return importlib.import_module('nodes')")
    assert ("nodes", 3) in _imports("probe", probe)


def test_no_import_cycle_between_modules() -> None:
    mods = _modules("memory_graph", "nodes")
    graph = {
        name: sorted({t for t, _ in _imports(name, path) if t in mods and t != name})
        for name, path in mods.items()
    }
    # Tarjan's strongly connected components: a component of two or more modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []
    assert "memory_graph.storage.ops.search" in graph["memory_graph.storage.shell.recall_async"]


def test_only_the_app_layer_imports_nodes() -> None:
    importers = {
        (_module_name(path).split(".") + [""])[1]
        for name, path in _modules("memory_graph").items()
        for target, _ in _imports(name, path)
        if target.split(".")[0] == "nodes"
    }
    assert importers <= set(APP_LAYER)


def test_importing_the_whole_core_never_loads_nodes() -> None:
    mods = [_module_name(p) for p in _core_modules()]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}:\n"
        "    importlib.import_module(m)\n"
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


def test_sdist_carries_the_whole_repository(tmp_path: Path) -> None:
    """Every tracked file is in the sdist, so its test suite runs from the unpacked archive."""
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
        files = {Path(*Path(n).parts[1:]).as_posix() for n in tar.getnames()}
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked, "git ls-files listed nothing"
    missing = sorted(path for path in tracked if path not in files and path != ".gitignore")
    assert missing == [], missing[:20]
    assert {"tests/conftest.py", "tests/_stores.py", "bench/_common.py", ".ci/test"} <= files


def test_the_codemap_names_every_package_and_stays_short() -> None:
    arch = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    packages = sorted(
        str(p.parent.relative_to(ROOT)) for p in ROOT.glob("memory_graph/**/__init__.py")
    )
    assert "memory_graph/storage/ops" in packages  # the glob really sees the tree
    for package in packages:
        leaf = package.rsplit("/", 1)[-1]
        assert f"{leaf}/" in arch, f"ARCHITECTURE.md's codemap does not name {package}/"
        assert f"{leaf}/" in readme, f"README's layout does not name {package}/"
    assert len(arch.encode("utf-8")) <= 25_000
    assert not re.search(r"\b\d+(\.\d+)?x\b|\bms\b", arch), "figures belong in bench/RESULTS.md"
