"""Generate ``memory_graph/storage/_sync.py`` from ``_async.py`` (the async twin is the source).

The sync and async stores are thin shells over the same generator ops; only their call shape
differs. ``_async.py`` is written once and this script derives ``_sync.py`` by token rules
(``async def`` -> ``def``, ``await`` dropped, ``Async*`` names -> sync names, ...). A line that
needs a different sync form is preceded by a directive comment line, which replaces it::

    # sync: resolved = resolve_dsn(dsn)
    resolved = await asyncio.to_thread(resolve_dsn, dsn)

and a line preceded by ``# sync: -`` is left out of the sync file. ``tests/test_unasync.py``
fails when ``_sync.py`` is not the generated file, so CI keeps them in step.

Usage::

    python tools/unasync.py          # rewrite _sync.py
    python tools/unasync.py --check  # exit 1 when _sync.py is out of date
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "memory_graph" / "storage" / "_async.py"
TARGET = ROOT / "memory_graph" / "storage" / "_sync.py"

RULES: list[tuple[str, str]] = [
    (r"\basync def ", "def "),
    (r"\basync with ", "with "),
    (r"\basync for ", "for "),
    (r"\bawait ", ""),
    (r"\bAsyncMemoryStore\b", "MemoryStore"),
    (r"\bAsyncConnectionPool\b", "ConnectionPool"),
    (r"\bAsyncConnection\b", "Connection"),
    (r"\bAsyncIterator\b", "Iterator"),
    (r"\basynccontextmanager\b", "contextmanager"),
    (r"\brun_async\b", "run_sync"),
    (r"\bopen_async_pool\b", "open_pool"),
    (r"\bAsyncPrivacyMethods\b", "PrivacyMethods"),
    (r"\baembed_documents\b", "embed_documents"),
    (r"\baembed_query\b", "embed_query"),
    (r"\b__aenter__\b", "__enter__"),
    (r"\b__aexit__\b", "__exit__"),
]
DIRECTIVE = re.compile(r"^\s*# sync: (?P<sync>.*)$")
HEADER = '# Generated from _async.py by tools/unasync.py: edit _async.py, then run the script.\n'


def generate(source: str) -> str:
    """The sync module for the async module's text."""
    out: list[str] = []
    directive: str | None = None
    dropped = False
    for line in source.splitlines():
        match = DIRECTIVE.match(line)
        if match:
            directive = match["sync"].rstrip()
            continue
        if directive is not None:
            dropped = directive == "-"
            if not dropped:
                indent = line[: len(line) - len(line.lstrip())]
                out.append(indent + directive)
            directive = None
            continue
        if dropped and not line.strip() and out and not out[-1].strip():
            dropped = False
            continue  # a dropped line leaves no double blank line behind
        dropped = False
        for pattern, repl in RULES:
            line = re.sub(pattern, repl, line)
        out.append(line)
    return HEADER + "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    expected = generate(SOURCE.read_text(encoding="utf-8"))
    if "--check" in argv:
        if TARGET.read_text(encoding="utf-8") != expected:
            print("memory_graph/storage/_sync.py is out of date: run tools/unasync.py")
            return 1
        return 0
    TARGET.write_text(expected, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
