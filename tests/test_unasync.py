"""The sync store shell is generated from the async one (``tools/unasync.py``) and is current."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("unasync", ROOT / "tools" / "unasync.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sync_store_is_the_generated_file() -> None:
    tool = _tool()
    expected = tool.generate(tool.SOURCE.read_text(encoding="utf-8"))
    assert tool.TARGET.read_text(encoding="utf-8") == expected, (
        "memory_graph/storage/_sync.py is out of date: run `python tools/unasync.py`"
    )


def test_generation_rules_and_directives() -> None:
    tool = _tool()
    source = (
        "# sync: -\n"
        "import asyncio\n"
        "    # sync: x = f(1)\n"
        "    x = await asyncio.to_thread(f, 1)\n"
        "async def g(s: AsyncMemoryStore) -> AsyncIterator[int]:\n"
        "    async with s.pool.connection() as c:\n"
        "        return await run_async(c, op)\n"
    )
    out = tool.generate(source).splitlines()[1:]
    assert out == [
        "    x = f(1)",
        "def g(s: MemoryStore) -> Iterator[int]:",
        "    with s.pool.connection() as c:",
        "        return run_sync(c, op)",
    ]
