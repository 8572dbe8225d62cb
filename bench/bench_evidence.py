"""Cost of tool evidence per turn: indexing a tool result, and the manifest per model step.

Three variants of the prebuilt agent run on ``PostgresSaver`` (durability ``sync``) in one
process and database, each turn calling one file-read tool (a 20 KB file) and answering:

* ``plain``:    no evidence policy (the ``ToolNode`` as usual);
* ``indexed``:  an ``EvidencePolicy`` for the tool (digests + file identity + one store write
  inside the tools step);
* ``manifest``: as ``indexed`` on a thread that already holds 20 trimmed results, so every
  model step also renders a ``<tool_evidence>`` manifest; compared with ``plain`` on a thread
  with the same history (a longer thread costs more to checkpoint either way).

Usage::

    python bench/bench_evidence.py postgresql://postgres@127.0.0.1:5432/postgres [--turns 40]
        [--no-save] [--out DIR]

A scratch database is created and dropped. Prints medians and the ratios to ``plain``. Writes
``bench/results/bench_evidence.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from _common import add_result_options, figure, recording
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import MemoryStore, Owner
from memory_graph.testing import FakeToolCallingChatModel, tool_call_message
from nodes import EvidencePolicy, create_memory_agent, open_checkpointer

FILE = Path(tempfile.mkdtemp()) / "bench.txt"


@tool
def read_file(path: str) -> str:
    """Read a text file."""
    return Path(path).read_text(encoding="utf-8")


def _script() -> Any:
    while True:
        yield tool_call_message("read_file", {"path": str(FILE)})
        yield "done"


def _time(agent: Any, turns: int, thread: str | None) -> list[float]:
    out = []
    for i in range(turns + 2):
        cfg = {"configurable": {"thread_id": thread or f"bench-{uuid.uuid4().hex}"}}
        start = time.perf_counter()
        agent.invoke({"messages": [HumanMessage("read it")]}, cfg, context={"user_id": "bench"})
        if i >= 2:
            out.append(time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dsn", help="PostgreSQL server DSN (a scratch database is created)")
    parser.add_argument("--turns", type=int, default=40)
    add_result_options(parser)
    args = parser.parse_args(argv)
    with recording("bench_evidence", args):
        _run(args)
    return 0


def _run(args: argparse.Namespace) -> None:
    FILE.write_text("\n".join(f"line {i}: some build output" for i in range(800)))
    name = f"mg_bench_ev_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(args.dsn)
    params["dbname"] = name
    dsn = make_conninfo(**params)  # type: ignore[arg-type]
    policy = EvidencePolicy(file_tools={"read_file": "path"})
    try:
        with MemoryStore.from_dsn(dsn) as store:
            store.setup()
            with open_checkpointer(store) as saver:

                def agent(evidence: EvidencePolicy | None) -> Any:
                    model = FakeToolCallingChatModel(messages=_script(), received=[])
                    return create_memory_agent(
                        model,
                        store,
                        checkpointer=saver,
                        tools=[read_file],
                        evidence=evidence,
                        message_window=lambda msgs: msgs[-4:],
                    )

                plain, indexed = agent(None), agent(policy)
                busy, busy_plain = (f"bench-busy-{uuid.uuid4().hex}" for _ in range(2))
                _time(indexed, 20, busy)  # 20 results, trimmed by the 4-message window
                _time(plain, 20, busy_plain)  # the same history, without evidence
                assert len(store.list_evidence(Owner("bench"), busy)) >= 20
                p: list[float] = []
                x: list[float] = []
                pb: list[float] = []
                m: list[float] = []
                for _ in range(4):
                    p += _time(plain, args.turns // 4, None)
                    x += _time(indexed, args.turns // 4, None)
                    pb += _time(plain, args.turns // 4, busy_plain)
                    m += _time(indexed, args.turns // 4, busy)
        print(f"turns per variant: {len(p)} (tool call + answer, PostgresSaver, durability=sync)")
        figure(
            "new thread, indexed vs plain",
            [v * 1000 for v in x],
            [v * 1000 for v in p],
            unit="ms",
            text="new thread, plain:            median {baseline:7.2f} ms\n"
            "new thread, indexed:          median {ours:7.2f} ms  ({ratio:.2f}x plain)",
        )
        figure(
            "long thread, indexed+manifest vs plain",
            [v * 1000 for v in m],
            [v * 1000 for v in pb],
            unit="ms",
            text="long thread, plain:           median {baseline:7.2f} ms\n"
            "long thread, indexed+manifest: median {ours:7.2f} ms  ({ratio:.2f}x plain)",
        )
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
