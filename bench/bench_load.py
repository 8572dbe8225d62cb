"""Load benchmark: K threads x N seconds of memory-agent turns with approvals.

Each worker thread acts for its own user and loops over turns of the prebuilt agent (sync
store, pooled ``PostgresSaver``, durability ``sync``). Every ``--propose-every``-th turn
says something worth remembering, so extraction proposes and the turn stops at the review
interrupt; the approval is then either *inline* (the same worker resumes at once) or
*out of band* (queued for a reviewer thread that resumes the thread later, the way an inbox
UI in another process would). Every ``--race-every``-th proposing turn is resumed by both,
concurrently: exactly one may commit, the other must be refused.

Reported: turns/s, turn p50/p95 (each ``invoke``, first turn or resume), errors (any
exception other than a refused lost race), lost proposals (approved but not committed, or
still pending at the end) and duplicate commits (a proposal applied twice, read from the
audit log). Then the same K threads x N seconds on a bare one-node graph (``START -> agent
-> END``, same model and checkpointer) give the baseline: target turn p50 <= 2x the bare
graph's, 0 errors, 0 lost proposals, 0 duplicate commits.

Usage::

    python bench/bench_load.py [--dsn DSN] [--threads 8] [--seconds 10] [--no-save] [--out DIR]

Writes ``bench/results/bench_load.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import queue
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from _common import (  # noqa: E402
    add_result_options,
    detail,
    figure,
    p,
    recording,
    scratch_database,
)
from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402
from langgraph.errors import GraphInterrupt  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402

from memory_graph import MemoryStore, NoPendingReviewError, Owner  # noqa: E402
from nodes import (  # noqa: E402
    OfflineChatModel,
    create_memory_agent,
    decide_all,
    open_checkpointer,
    pending_review,
    resume_review,
)

try:  # strict resume refuses an interrupt id that is no longer pending
    from langgraph.errors import UnknownInterruptError  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - older LangGraph
    UnknownInterruptError = NoPendingReviewError  # type: ignore[misc,assignment]

REFUSED = (NoPendingReviewError, UnknownInterruptError, GraphInterrupt)
PLAIN = "What should I cook tonight with tomatoes and rice?"


class Tally:
    """Thread-safe counters and samples of one load run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.errors: Counter[str] = Counter()
        self.first_errors: list[str] = []
        self.approved: set[str] = set()  # proposal ids some resume approved
        self.queued: set[str] = set()  # proposal ids the bench asked to approve
        self.refused = 0

    def timed(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        with self.lock:
            self.latencies.append((time.perf_counter() - t0) * 1000.0)
        return out

    def error(self, exc: BaseException) -> None:
        with self.lock:
            self.errors[type(exc).__name__] += 1
            if len(self.first_errors) < 3:
                self.first_errors.append(f"{type(exc).__name__}: {exc}"[:300])


def _review_ids(result: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    for intr in result.get("__interrupt__") or ():
        value = getattr(intr, "value", None) or {}
        ids += [r["proposal_id"] for r in value.get("action_requests", [])]
    return ids


def _resume(agent: Any, owner: Owner, thread_id: str, tally: Tally) -> None:
    """Resume a thread's pending review approving everything; a lost race is refused."""
    try:
        _iid, request = pending_review(agent, thread_id, owner=owner)
        decisions = decide_all(request)
        tally.timed(resume_review, agent, owner=owner, thread_id=thread_id, decisions=decisions)
    except REFUSED:
        with tally.lock:
            tally.refused += 1
        return
    except Exception as exc:
        tally.error(exc)
        return
    with tally.lock:
        tally.approved.update(d["proposal_id"] for d in decisions)


def _memory_load(
    agent: Any,
    threads: int,
    seconds: float,
    propose_every: int,
    race_every: int,
    users: str = "load-user-",
) -> Tally:
    tally = Tally()
    stop_at = time.perf_counter() + seconds
    inbox: queue.Queue[tuple[Owner, str] | None] = queue.Queue()

    def reviewer() -> None:
        while (item := inbox.get()) is not None:
            _resume(agent, item[0], item[1], tally)

    def worker(k: int) -> None:
        owner = Owner(f"{users}{k}")
        ctx = {"user_id": owner.user_id}
        n = 0
        # Every worker reaches at least one proposing turn, however slow the machine, so a run
        # always has proposals to approve (the smoke test's check does not depend on speed).
        while n < propose_every or time.perf_counter() < stop_at:
            n += 1
            thread_id = f"load-{k}-{uuid.uuid4().hex[:8]}"
            proposing = n % propose_every == 0
            text = f"Call me Ada{k}x{n}. I prefer short replies." if proposing else PLAIN
            cfg = {"configurable": {"thread_id": thread_id}}
            try:
                result = tally.timed(
                    agent.invoke, {"messages": [HumanMessage(text)]}, cfg, context=ctx
                )
            except Exception as exc:
                tally.error(exc)
                continue
            ids = _review_ids(result)
            if not ids:
                continue
            with tally.lock:
                tally.queued.update(ids)
            turn = n // propose_every
            if turn % race_every == 0:  # both resume at once: one commits, one is refused
                inbox.put((owner, thread_id))
                _resume(agent, owner, thread_id, tally)
            elif turn % 2:
                _resume(agent, owner, thread_id, tally)  # inline
            else:
                inbox.put((owner, thread_id))  # out of band

    reviewers = [threading.Thread(target=reviewer) for _ in range(2)]
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in reviewers + workers:
        t.start()
    for t in workers:
        t.join()
    for _ in reviewers:
        inbox.put(None)
    for t in reviewers:
        t.join()
    return tally


def _bare_load(graph: Any, threads: int, seconds: float) -> Tally:
    tally = Tally()
    stop_at = time.perf_counter() + seconds

    def worker(k: int) -> None:
        while time.perf_counter() < stop_at:
            cfg = {"configurable": {"thread_id": f"bare-{k}-{uuid.uuid4().hex[:8]}"}}
            try:
                tally.timed(
                    graph.invoke, {"messages": [HumanMessage(PLAIN)]}, cfg, durability="sync"
                )
            except Exception as exc:
                tally.error(exc)

    workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return tally


def _bare_graph(model: OfflineChatModel, saver: Any) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke([SystemMessage("You are helpful.")] + state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_edge(START, "agent")
    g.add_edge("agent", END)
    return g.compile(checkpointer=saver)


def _audit(dsn: str, tally: Tally) -> tuple[int, int, int]:
    """(lost, duplicate commits, conflicted) from the database."""
    with psycopg.connect(dsn) as conn:
        status = dict(
            conn.execute(
                "SELECT id, status FROM mg_proposals WHERE id = ANY(%s)", (sorted(tally.queued),)
            ).fetchall()
        )
        dupes = conn.execute(
            "SELECT count(*) FROM (SELECT proposal_id FROM mg_audit WHERE proposal_id IS NOT "
            "NULL AND target_kind <> 'proposal' GROUP BY proposal_id HAVING count(*) > 1) d"
        ).fetchone()
    # A proposal is lost when its approval left no decision: still pending, or gone. A
    # conflict (its target changed since it was proposed) is a decision, reported apart.
    lost = sum(1 for pid in tally.queued if status.get(pid) not in ("approved", "conflicted"))
    conflicted = sum(1 for s in status.values() if s == "conflicted")
    return lost, int(dupes[0]) if dupes else 0, conflicted


def _line(name: str, tally: Tally, seconds: float) -> str:
    lat = tally.latencies or [float("nan")]
    return (
        f"{name:<14} turns/s {len(tally.latencies) / seconds:7.1f} | p50 "
        f"{statistics.median(lat):7.2f} ms  p95 {p(lat, 0.95):7.2f} ms | "
        f"errors {sum(tally.errors.values())}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dsn", default=None, help="server DSN (default: $MEMORY_GRAPH_DSN)")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--propose-every", type=int, default=3, help="every n-th turn proposes")
    ap.add_argument("--race-every", type=int, default=4, help="every n-th review is raced")
    add_result_options(ap)
    args = ap.parse_args(argv)
    with recording("bench_load", args) as results:
        return _run(args, results.server)


def _run(args: argparse.Namespace, server: str) -> int:
    with scratch_database(server) as dsn:
        with MemoryStore.from_dsn(dsn, max_size=args.threads + 2) as store:
            store.setup()
            model = OfflineChatModel()
            with open_checkpointer(store) as saver:
                agent = create_memory_agent(model, store, checkpointer=saver)
                bare = _bare_graph(model, saver)
                _bare_load(bare, 2, 1.0)  # warm-up both graphs
                # Other users than the measured run's: the warm-up's approvals must not make
                # the measured run's texts old news (a reinforce proposes nothing).
                _memory_load(agent, 2, 1.0, args.propose_every, args.race_every, "warm-user-")
                mem = _memory_load(
                    agent, args.threads, args.seconds, args.propose_every, args.race_every
                )
                base = _bare_load(bare, args.threads, args.seconds)
        lost, dupes, conflicted = _audit(dsn, mem)
    print(f"{args.threads} threads x {args.seconds:.0f} s, PostgresSaver (pooled), durability=sync")
    figure(
        "turns per second, memory agent vs bare graph",
        len(mem.latencies) / args.seconds,
        len(base.latencies) / args.seconds,
        unit="/s",
        text=_line("memory agent", mem, args.seconds)
        + "\n"
        + _line("bare graph", base, args.seconds),
    )
    figure(
        "turn latency, memory agent vs bare graph",
        mem.latencies,
        base.latencies,
        unit="ms",
        target="<= 2x",
        text="turn p50 ratio {ratio:.2f}x {target}",
    )
    errors = sum(mem.errors.values()) + sum(base.errors.values())
    figure("errors, memory agent + bare graph", errors, unit="count", target="== 0", text="")
    figure(
        "proposals approved",
        len(mem.approved),
        unit="count",
        text="proposals queued {queued}, approved {ours}, conflicted {conflicted}, "
        "lost races refused {refused}",
        queued=len(mem.queued),
        conflicted=conflicted,
        refused=mem.refused,
    )
    figure("lost proposals", lost, unit="count", target="== 0", text="")
    figure(
        "duplicate commits",
        dupes,
        unit="count",
        target="== 0",
        text="lost proposals {lost} | duplicate commits {ours} (targets: 0, 0)",
        lost=lost,
    )
    detail("errors by type", dict(mem.errors + base.errors))
    detail("first errors", mem.first_errors + base.first_errors)
    for err in mem.first_errors + base.first_errors:
        print("error:", err)
    return 0 if not (lost or dupes or mem.errors or base.errors) else 1


if __name__ == "__main__":
    raise SystemExit(main())
