"""Core store benchmark against LangGraph's ``PostgresStore`` on the same server, same run.

Measures:
- entry-context load (persona + profile + active preferences, rendered) vs one
  ``PostgresStore.get`` (target <= 1.5x);
- a keyed preference write vs one ``PostgresStore.put``;
- commit throughput (approving pre-created proposals) with 8 concurrent workers vs
  ``PostgresStore.put`` per second with 8 workers (target >= 0.5x);
- one trusted ``add`` into an identity that already holds 10k records vs one into an empty
  identity (target <= 2x: the capacity check must not count the identity's rows).

Usage::

    python bench/bench_core.py [--dsn DSN] [--n 300] [--workers 8] [--seconds 3] [--proposals 1500]
        [--no-save] [--out DIR]

Writes ``bench/results/bench_core.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    add_result_options,
    figure,
    paired,
    recording,
    row,
    scratch_database,
)
from langgraph.store.postgres import PostgresStore  # noqa: E402
from psycopg_pool import ConnectionPool  # noqa: E402

from memory_graph import Limits, MemoryStore, Owner  # noqa: E402


def _fill(dsn: str, owner: Owner, n: int) -> None:
    """Bench setup only: ``n`` active records straight into the owner's user identity."""
    import psycopg

    ident = owner.identity("user")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO mg_records (scope_id, id, level, agent_key, workspace_key, kind, "
            "content, trust, sensitivity, confidence, source, content_hash, created_at, "
            "updated_at) SELECT %s, gen_random_uuid(), %s, %s, %s, 'fact', 'filler ' || g, "
            "'user-confirmed', 'private', 1.0, 'api', md5(g::text), now(), now() "
            "FROM generate_series(1, %s) g",
            (ident.scope_id, ident.level, ident.agent_key, ident.workspace_key, n),
        )
        # A table that grew by n rows has been analysed by autovacuum; without fresh
        # statistics the planner takes a 10k-row identity for an empty one.
        conn.execute("ANALYZE mg_records")


def _analyze(dsn: str, enabled: bool) -> None:
    """Refresh the planner's statistics after a setup phase (both stores' tables).

    A production database has statistics (autovacuum analyzes a table once 10% of it
    changed); this scratch database was created seconds ago, and without statistics the
    planner may pick an index on ``scope_id`` alone for a primary-key lookup and scan the
    whole user's rows on every write (the pkey and that index tie in its estimate).
    """
    if not enabled:
        return
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")


def _window(worker: object, workers: int, seconds: float, done: list[int]) -> float:
    """Run ``worker(i, n)`` on ``workers`` threads for ``seconds``; ``done[i]`` counts on
    across windows (each call gets the worker's next ``n``). Returns the elapsed time."""
    stop = time.perf_counter() + seconds

    def run(i: int) -> None:
        while time.perf_counter() < stop:
            worker(i, done[i])  # type: ignore[operator]
            done[i] += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in range(workers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def _throughputs(
    ours: object, base: object, workers: int, seconds: float, rounds: int = 6
) -> tuple[float, float]:
    """Operations per second of ``ours`` and ``base``, each run ``seconds`` in total.

    The two alternate in ``rounds`` short windows, so load from other processes on the
    machine hits both alike (two back-to-back phases drifted with it).
    """
    done = {"ours": [0] * workers, "base": [0] * workers}
    spent = {"ours": 0.0, "base": 0.0}
    for _ in range(rounds):
        for name, worker in (("ours", ours), ("base", base)):
            spent[name] += _window(worker, workers, seconds / rounds, done[name])
    return sum(done["ours"]) / spent["ours"], sum(done["base"]) / spent["base"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dsn", default=None, help="server DSN (default: $MEMORY_GRAPH_DSN)")
    ap.add_argument("--n", type=int, default=300, help="samples per latency measure")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each throughput run")
    ap.add_argument("--proposals", type=int, default=1500, help="pre-created proposals per worker")
    ap.add_argument("--pool-records", type=int, default=10_000, help="records of the big identity")
    ap.add_argument(
        "--no-analyze",
        action="store_true",
        help="measure without planner statistics (ANALYZE is run after each setup phase)",
    )
    add_result_options(ap)
    args = ap.parse_args(argv)

    with recording("bench_core", args) as results, scratch_database(results.server) as dsn:
        pool = ConnectionPool(
            dsn,
            min_size=args.workers,
            max_size=args.workers,
            open=True,
            kwargs={"autocommit": True, "prepare_threshold": 0},
        )
        lg = PostgresStore(pool)  # type: ignore[arg-type]
        lg.setup()
        limits = Limits(max_records_per_identity=100_000)
        with MemoryStore.from_dsn(dsn, max_size=args.workers, limits=limits) as store:
            store.setup()
            owner = Owner("bench-user", agent="bench-agent")
            t0, step = datetime(2026, 1, 1, tzinfo=timezone.utc), timedelta(seconds=1)
            store.patch_profile(owner, {"name": "Ada", "timezone": "UTC", "language": "en"})
            store.set_persona(owner, assistant_values="Be concise.", assistant_identity="Helper")
            for i in range(10):
                store.set_preference(owner, f"pref.{i}", f"value {i}")
            lg.put(("bench", "user"), "context", {"profile": {"name": "Ada"}, "prefs": {}})
            _analyze(dsn, not args.no_analyze)

            print(f"server: {dsn.split('?')[0]}  samples: {args.n}")
            ours, base = paired(
                lambda: store.context_block(owner),
                lambda: lg.get(("bench", "user"), "context"),
                args.n,
            )
            print(row("entry context load vs PostgresStore.get", ours, base, "(target <= 1.5x)"))

            counter = itertools.count()

            def write() -> None:
                i = next(counter)
                store.set_preference(owner, "bench.key", f"v{i}", updated_at=t0 + i * step)

            ours, base = paired(
                write, lambda: lg.put(("bench", "user"), "k", {"v": next(counter)}), args.n
            )
            print(row("keyed preference write vs PostgresStore.put", ours, base, "(target <= 2x)"))

            big = Owner("bench-big")
            _fill(dsn, big, args.pool_records)
            _analyze(dsn, not args.no_analyze)
            fresh = itertools.count()
            ours, base = paired(
                lambda: store.add(big, "fact", f"big fact {next(counter)}"),
                lambda: store.add(Owner(f"bench-empty-{next(fresh)}"), "fact", "first fact"),
                args.n,
            )
            print(
                row(
                    f"add into {args.pool_records} records vs into none",
                    ours,
                    base,
                    "(target <= 2x)",
                )
            )

            # Approvals commit proposals that extraction created earlier: create them first
            # (untimed), then time the concurrent decisions, one transaction each.
            per_worker = args.proposals
            queues: list[list[tuple[Owner, str]]] = []
            for i in range(args.workers):
                q = []
                for n in range(per_worker):
                    # a fresh owner every 500 records keeps clear of the per-identity cap
                    o = Owner(f"bench-worker-{i}-{n // 500}")
                    prop = store.propose(
                        o, "add", {"kind": "fact", "content": f"fact {i}-{n}"}, level="user"
                    )
                    q.append((o, prop.id))
                queues.append(q)
            _analyze(dsn, not args.no_analyze)

            def commit(i: int, n: int) -> None:
                o, pid = queues[i][n % per_worker]
                if n >= per_worker:
                    raise RuntimeError("ran out of proposals: raise --proposals")
                store.decide(o, pid, "approve")

            def put(i: int, n: int) -> None:
                lg.put(("bench", f"w{i}"), f"k{n}", {"content": f"fact {i}-{n}"})

            ours_tp, base_tp = _throughputs(commit, put, args.workers, args.seconds)
            figure(
                f"commit throughput, {args.workers} workers vs PostgresStore.put",
                ours_tp,
                base_tp,
                unit="/s",
                target=">= 0.5x",
                text=f"{'commit throughput, ' + str(args.workers) + ' workers':<44} "
                "ours {ours:8.1f}/s | baseline PostgresStore.put {baseline:8.1f}/s | "
                "ratio {ratio:5.2f}x {target}",
            )
        pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
