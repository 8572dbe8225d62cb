"""Per-turn overhead of the memory nodes over the same graph without them.

Both graphs run on ``PostgresSaver`` (durability ``sync``) in the same process and database:

* baseline: ``START -> agent -> END`` with the offline chat model;
* memory:   the prebuilt agent (load_user_context + recall + extract_memories in one
  superstep -> agent -> review_memories only when something is pending), with a turn that
  proposes nothing (no interrupt). Every turn really loads the context, recalls against 50
  stored records and runs extraction over the new human message.

Usage::

    python bench/bench_graph.py postgresql://postgres@127.0.0.1:5432/postgres [--turns 50]

A scratch database is created on the server and dropped afterwards. Prints medians and the
ratio (target: at most 2x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from typing import Any

import psycopg
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import MemoryStore, Owner
from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

TEXT = "What should I cook tonight with tomatoes and rice?"


def _baseline(model: OfflineChatModel, saver: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke([SystemMessage("You are helpful.")] + state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=saver)


def _time(graph: Any, turns: int, *, context: Any = None) -> list[float]:
    out = []
    for i in range(turns + 3):
        cfg = {"configurable": {"thread_id": f"bench-{uuid.uuid4().hex}"}}
        start = time.perf_counter()
        result = graph.invoke(
            {"messages": [HumanMessage(TEXT)]}, cfg, context=context, durability="sync"
        )
        elapsed = time.perf_counter() - start
        assert "__interrupt__" not in result
        if i >= 3:  # warm-up
            out.append(elapsed)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dsn", help="PostgreSQL server DSN (a scratch database is created)")
    parser.add_argument("--turns", type=int, default=50)
    args = parser.parse_args(argv)

    name = f"mg_bench_graph_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(args.dsn)
    params["dbname"] = name
    dsn = make_conninfo(**params)  # type: ignore[arg-type]
    try:
        with MemoryStore.from_dsn(dsn) as store:
            store.setup()
            owner = Owner("bench-user")
            store.patch_profile(owner, {"name": "Ada"})
            store.set_preference(owner, "reply.length", "short")
            for n in range(50):
                store.add(owner, "fact", f"Ada likes recipe number {n} with tomatoes")
            model = OfflineChatModel()
            with open_checkpointer(store) as saver:
                base = _baseline(model, saver)
                memory = create_memory_agent(model, store, checkpointer=saver)
                ctx = {"user_id": owner.user_id}
                # Interleave rounds so drift in disk flush time hits both sides alike.
                b: list[float] = []
                m: list[float] = []
                for _ in range(5):
                    b += _time(base, args.turns // 5)
                    m += _time(memory, args.turns // 5, context=ctx)
        mb, mm = statistics.median(b) * 1000, statistics.median(m) * 1000
        print(f"turns per graph: {len(b)} (PostgresSaver, durability=sync)")
        print(f"baseline graph (agent only):        median {mb:7.2f} ms")
        print(f"memory graph (load/recall/extract/review): median {mm:7.2f} ms")
        print(f"overhead ratio: {mm / mb:.2f}x (target <= 2x)")
    finally:
        with psycopg.connect(args.dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
