"""Several worker processes on one PostgreSQL: P processes x T threads of agent turns.

The shape of an Agent Server with several workers: each process opens its own store and
checkpointer (pools of ``--max-size`` connections each) and runs ``bench_load``'s memory
load -- T threads of memory-agent turns for their own users, every ``--propose-every``-th
turn proposing, approvals inline, out of band (two reviewer threads per process) and raced
-- then the same P x T load on a bare one-node graph (same model and checkpointer), each
phase for ``--seconds`` and started at the same instant in every process. Meanwhile this
process samples the server's connections to the database (``pg_stat_activity``).

Rows: turns/s and turn p50/p95 of the memory agent vs the bare graph under the same load;
peak connections vs ``max_connections`` and vs the budget the pools allow (P x 2 x
max_size: a store pool and a checkpointer pool per process); errors, lost proposals and
duplicate commits (targets 0).

Usage::

    python bench/bench_procs.py [--dsn DSN] [--procs 4] [--threads 4] [--seconds 8]
        [--max-size 4] [--no-save] [--out DIR]

Writes ``bench/results/bench_procs.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from _common import add_result_options, detail, figure, recording, scratch_database  # noqa: E402

START_DELAY = 8.0  # seconds for every child to import and connect before the first phase


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One worker process: the memory load, then the bare load, at the given instants."""
    from bench_load import Tally, _bare_graph, _bare_load, _memory_load

    from memory_graph import MemoryStore
    from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

    def wait(until: float) -> None:
        time.sleep(max(0.0, until - time.time()))

    with MemoryStore.from_dsn(args.child, max_size=args.max_size) as store:
        model = OfflineChatModel()
        with open_checkpointer(store, setup=False) as saver:
            agent = create_memory_agent(model, store, checkpointer=saver)
            bare = _bare_graph(model, saver)
            users = f"procs-{args.index}-"
            _memory_load(agent, 1, 0.3, args.propose_every, args.race_every, users + "w")
            _bare_load(bare, 1, 0.3)
            wait(args.start)
            mem: Tally = _memory_load(
                agent, args.threads, args.seconds, args.propose_every, args.race_every, users
            )
            wait(args.start + args.seconds + 1.0)
            base: Tally = _bare_load(bare, args.threads, args.seconds)
    return {
        "mem": mem.latencies,
        "base": base.latencies,
        "errors": dict(mem.errors + base.errors),
        "first_errors": mem.first_errors + base.first_errors,
        "queued": sorted(mem.queued),
        "approved": len(mem.approved),
        "refused": mem.refused,
    }


def _sampler(dsn: str, stop: threading.Event, peak: list[int]) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).fetchone()
            peak[0] = max(peak[0], int(row[0]) if row else 0)
            stop.wait(0.05)


def _audit(dsn: str, queued: list[str]) -> tuple[int, int]:
    """(lost, duplicate commits): as in ``bench_load``, over every process's proposals."""
    with psycopg.connect(dsn) as conn:
        status = dict(
            conn.execute("SELECT id, status FROM mg_proposals WHERE id = ANY(%s)", (queued,))
        )
        dupes = conn.execute(
            "SELECT count(*) FROM (SELECT proposal_id FROM mg_audit WHERE proposal_id IS NOT "
            "NULL AND target_kind <> 'proposal' GROUP BY proposal_id HAVING count(*) > 1) d"
        ).fetchone()
    lost = sum(1 for pid in queued if status.get(pid) not in ("approved", "conflicted"))
    return lost, int(dupes[0]) if dupes else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dsn", default=None, help="server DSN (default: $MEMORY_GRAPH_DSN)")
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--max-size", type=int, default=4, help="pool size of each store/saver")
    ap.add_argument("--propose-every", type=int, default=3, help="every n-th turn proposes")
    ap.add_argument("--race-every", type=int, default=4, help="every n-th review is raced")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--index", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=float, default=0.0, help=argparse.SUPPRESS)
    add_result_options(ap)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args)))
        return 0
    with recording("bench_procs", args) as results:
        return _run(args, results.server)


def _run(args: argparse.Namespace, server: str) -> int:
    from memory_graph import MemoryStore
    from nodes import open_checkpointer

    with scratch_database(server) as dsn:
        with MemoryStore.from_dsn(dsn, max_size=1) as store:
            store.setup()
            with open_checkpointer(store):
                pass  # the checkpointer's tables, once
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute("SHOW max_connections").fetchone()
            max_conn = int(row[0]) if row else 0
        start = time.time() + START_DELAY
        common = [
            *("--threads", str(args.threads), "--seconds", str(args.seconds)),
            *("--max-size", str(args.max_size), "--start", repr(start)),
            *("--propose-every", str(args.propose_every), "--race-every", str(args.race_every)),
        ]
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--child", dsn, "--index", str(i), *common],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ},
            )
            for i in range(args.procs)
        ]
        stop, peak = threading.Event(), [0]
        sampler = threading.Thread(target=_sampler, args=(dsn, stop, peak))
        sampler.start()
        outs: list[dict[str, Any]] = []
        failed: list[str] = []
        try:
            for proc in procs:
                out, err = proc.communicate(timeout=START_DELAY + 2 * args.seconds + 300)
                if proc.returncode != 0:
                    failed.append(err[-1500:])
                    continue
                outs.append(json.loads(out.strip().splitlines()[-1]))
        finally:
            stop.set()
            sampler.join()
        queued = sorted({pid for o in outs for pid in o["queued"]})
        lost, dupes = _audit(dsn, queued)
    mem = [x for o in outs for x in o["mem"]]
    base = [x for o in outs for x in o["base"]]
    errors = sum(sum(o["errors"].values()) for o in outs) + len(failed)
    budget = args.procs * 2 * args.max_size
    print(
        f"{args.procs} processes x {args.threads} threads x {args.seconds:g} s, "
        f"pools of {args.max_size} (store) + {args.max_size} (checkpointer) per process"
    )
    figure(
        "turns per second, memory agent vs bare graph (all processes)",
        len(mem) / args.seconds,
        len(base) / args.seconds,
        unit="/s",
        text="turns/s {ours:.1f} (memory agent) vs {baseline:.1f} (bare graph)",
    )
    figure(
        "turn latency under P x T load, memory agent vs bare graph",
        mem or [float("nan")],
        base or [float("nan")],
        unit="ms",
        target="<= 2x",
        text="turn p50 {ours:.1f} ms p95 {ours_p95:.1f} ms vs bare p50 {baseline:.1f} ms "
        "p95 {baseline_p95:.1f} ms: ratio {ratio:.2f}x {target}",
    )
    figure(
        "peak connections vs the pools' budget",
        peak[0],
        budget,
        unit="count",
        target="<= 1x",
        text="peak connections {ours} of budget {baseline} (P x 2 x max_size); "
        f"max_connections {max_conn}",
    )
    figure("peak connections vs max_connections", peak[0], max_conn, unit="count", text="")
    figure("errors, memory agent + bare graph", errors, unit="count", target="== 0", text="")
    figure(
        "proposals approved",
        sum(o["approved"] for o in outs),
        unit="count",
        text="proposals queued {queued}, approved {ours}, lost races refused {refused}",
        queued=len(queued),
        refused=sum(o["refused"] for o in outs),
    )
    figure("lost proposals", lost, unit="count", target="== 0", text="")
    figure(
        "duplicate commits",
        dupes,
        unit="count",
        target="== 0",
        text="errors {errors} | lost proposals {lost} | duplicate commits {ours} (targets: 0)",
        errors=errors,
        lost=lost,
    )
    first = [e for o in outs for e in o["first_errors"]] + failed
    detail("first errors", first[:5])
    for err in first[:5]:
        print("error:", err)
    return 0 if not (errors or lost or dupes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
