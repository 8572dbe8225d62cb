"""Per-turn overhead of the memory nodes over the same graph without them.

Both graphs run on ``PostgresSaver`` (durability ``sync``) in the same process and database:

* baseline: ``START -> agent -> END`` with the offline chat model;
* memory:   the prebuilt agent (the owner check before the run; the model node runs the
  turn's entry -- context, recall, extraction, one entry read -- then the model; review only
  when something is pending), with a turn that proposes nothing (no interrupt). Every turn
  really loads the context, recalls against 50 stored records and runs extraction over the
  new human message, on a new thread (so the thread claim is paid every turn).

Usage::

    python bench/bench_graph.py [DSN] [--turns 50] [--round-trips] [--no-save] [--out DIR]

Without a DSN: ``$MEMORY_GRAPH_DSN``, else the embedded server. A scratch database is created
on the server and dropped afterwards. Prints medians and the ratio (target: at most 2x).
``--round-trips`` instead counts the round trips of a turn of each graph, by statement,
through a counting proxy (``bench/_wire.py``). Writes ``bench/results/bench_graph.json``
(``bench_graph_round_trips.json`` with ``--round-trips``) and regenerates ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from _common import add_result_options, detail, figure, recording, scratch_database
from _wire import proxied
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, MessagesState, StateGraph

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


@contextmanager
def _graphs(dsn: str) -> Iterator[tuple[Any, Any, dict[str, str]]]:
    """The baseline and memory graphs on one saver, over a seeded store."""
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        owner = Owner("bench-user")
        store.patch_profile(owner, {"name": "Ada"})
        store.set_preference(owner, "reply.length", "short")
        for n in range(50):
            store.add(owner, "fact", f"Ada likes recipe number {n} with tomatoes")
        model = OfflineChatModel()
        with open_checkpointer(store) as saver:
            memory = create_memory_agent(model, store, checkpointer=saver)
            yield _baseline(model, saver), memory, {"user_id": owner.user_id}


def _round_trips(dsn: str, turns: int) -> None:
    per_turn: dict[str, float] = {}
    with proxied(dsn) as (via, trips), _graphs(via) as (base, memory, ctx):
        for name, graph, context in (("baseline", base, None), ("memory", memory, ctx)):
            _time(graph, 2, context=context)  # warm pools, prepared statements, recall pool
            time.sleep(0.2)  # let the proxy see the last replies
            trips.take()
            _time(graph, turns, context=context)
            time.sleep(0.2)
            counts = trips.take()
            ran = turns + 3  # _time's warm-up turns went through the proxy too
            per_turn[name] = sum(counts.values()) / ran
            figure(
                f"round trips per turn, {name} graph"
                + (" vs baseline graph" if name == "memory" else ""),
                per_turn[name],
                per_turn.get("baseline") if name == "memory" else None,
                unit="round trips",
                text=name + ": {ours:.1f} round trips per turn",
            )
            by_statement: dict[str, float] = {}
            for label, n in counts.most_common():
                print(f"  {n / ran:5.1f}  {label[:160]}")
                by_statement[label] = round(n / ran, 2)
            detail(f"round trips per turn by statement, {name} graph", by_statement)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("dsn", nargs="?", help="server DSN (default: $MEMORY_GRAPH_DSN, embedded)")
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument(
        "--round-trips", action="store_true", help="count round trips per turn, by statement"
    )
    add_result_options(parser)
    args = parser.parse_args(argv)
    name = "bench_graph_round_trips" if args.round_trips else "bench_graph"
    with recording(name, args, script="bench/bench_graph.py") as results:
        with scratch_database(results.server) as dsn:
            if args.round_trips:
                _round_trips(dsn, args.turns)
                return 0
            with _graphs(dsn) as (base, memory, ctx):
                # Interleave rounds so drift in disk flush time hits both sides alike.
                b: list[float] = []
                m: list[float] = []
                for _ in range(5):
                    b += _time(base, args.turns // 5)
                    m += _time(memory, args.turns // 5, context=ctx)
        print(f"turns per graph: {len(b)} (PostgresSaver, durability=sync)")
        figure(
            "memory graph turn vs baseline graph (agent only)",
            [x * 1000 for x in m],
            [x * 1000 for x in b],
            unit="ms",
            target="<= 2x",
            text="baseline graph (agent only):                 median {baseline:7.2f} ms\n"
            "memory graph (entry in the model node, review): median {ours:7.2f} ms\n"
            "overhead ratio: {ratio:.2f}x {target}",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
