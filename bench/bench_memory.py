"""Memory of one worker process holding many owners' recall pools, and the cold load.

A worker keeps a recall pool per owner it served (``storage/ops/recall_cache.py``), bounded by
estimated bytes (``recall_cache_mb`` / ``$MEMORY_GRAPH_RECALL_CACHE_MB``, default 256). Each
scenario runs in a fresh worker process (a child of this script) that opens one store,
recalls once for every owner of the scenario, in turn, and reports its resident set size
(RSS), how many pools it still holds and their estimated bytes. The baseline is the RSS of
the same kind of worker that recalled for one small owner only (an idle worker).

Rows:
- RSS with ``--small`` owners of ``--small-records`` records (default 2,000 x 50) and with
  ``--big`` owners of ``--big-records`` (default 200 x 5,000), vs an idle worker; the target
  is the cache bound plus the idle worker, in MB;
- bytes per pooled record (``tracemalloc``, a pool of ``--trace-records`` searched and
  snapshotted) and the cache's estimate of it;
- the first recall of an owner with ``--cold`` records (default 10k) in a new store (the pool
  load), vs a warm recall of that owner.

Records are bulk-loaded in SQL (as in ``bench_recall.py``: Zipf-like words) under owners
``mem-s-<i>``, ``mem-b-<i>``, ``mem-cold0`` and ``mem-trace0`` (the statement computes their
scope ids).

Usage::

    python bench/bench_memory.py [--dsn DSN] [--small 2000] [--small-records 50]
        [--big 200] [--big-records 5000] [--cold 10000] [--cache-mb MB] [--no-save] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from _common import add_result_options, detail, figure, recording, scratch_database  # noqa: E402

VOCAB = 20_000
WORDS_PER_DOC = 12

# Synthetic records for users "<prefix><g / per>" (scope ids computed as identity.scope_id).
_LOAD = """
WITH docs AS (
    SELECT substr(encode(sha256(convert_to(%(prefix)s || ((g - 1) / %(per)s)::text, 'UTF8')),
                         'hex'), 1, 16) AS scope,
           gen_random_uuid() AS id, (
        SELECT string_agg('w' || floor(exp(random() * ln(%(vocab)s)))::int, ' ')
        FROM generate_series(1, %(words)s) WHERE g > 0
    ) AS content
    FROM generate_series(1, %(n)s) g
), ins AS (
    INSERT INTO mg_records (scope_id, id, level, kind, content, trust, sensitivity,
        confidence, source, content_hash, tokens, created_at, updated_at)
    SELECT scope, id, 'user', 'fact', content, 'user-confirmed', 'private', 0.9, 'bench',
           md5(content), ARRAY(SELECT DISTINCT unnest(string_to_array(content, ' '))),
           now(), now()
    FROM docs RETURNING scope_id
)
INSERT INTO mg_pool_stats AS s (scope_id, agent_key, workspace_key, sensitivity, n)
SELECT scope_id, '', '', 'private', count(*) FROM ins GROUP BY 1
ON CONFLICT (scope_id, agent_key, workspace_key, sensitivity) DO UPDATE SET n = s.n + EXCLUDED.n
"""


def load(conn: psycopg.Connection[object], prefix: str, owners: int, per: int) -> None:
    """``owners`` users ``<prefix>0..`` with ``per`` records each."""
    conn.execute("SET session_replication_role = replica")  # the statement fills the stats
    conn.execute("SET synchronous_commit = off")
    conn.execute("SET work_mem = '256MB'")
    step = max(1, 200_000 // per)  # owners per statement: about 200k rows at a time
    for first in range(0, owners, step):
        count = min(step, owners - first)
        conn.execute(
            _LOAD.replace("((g - 1) / %(per)s)", f"((g - 1) / %(per)s + {first})"),
            {"prefix": prefix, "per": per, "n": count * per, "vocab": VOCAB, "words": 12},
        )
    conn.execute("SET session_replication_role = DEFAULT")


# --- the worker (a child process) ---------------------------------------------------------


def _rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def child(dsn: str, prefix: str, owners: int, cache_mb: float | None) -> dict[str, object]:
    """Recall once for each owner ``<prefix><i>``; the worker's RSS and cache afterwards."""
    from memory_graph import Limits, MemoryStore, Owner

    opts = {} if cache_mb is None else {"recall_cache_mb": cache_mb}
    limits = Limits(max_records_per_identity=100_000)
    with MemoryStore.from_dsn(dsn, max_size=1, limits=limits, **opts) as store:  # type: ignore[arg-type]
        t0 = time.perf_counter()
        for i in range(owners):
            store.search(Owner(f"{prefix}{i}"), "what did I say about w3 w17 w250?", limit=10)
        seconds = time.perf_counter() - t0
        cache = store._recall
        return {
            "rss_mb": _rss_mb(),
            "pools": len(cache._pools),
            "cache_mb": getattr(cache, "nbytes", 0) / 2**20,
            "bound_mb": getattr(cache, "max_bytes", 0) / 2**20,
            "seconds": seconds,
        }


def trace(dsn: str, user: str) -> dict[str, float]:
    """Bytes per record of one searched and snapshotted pool (``tracemalloc``), and the
    cache's estimate."""
    import gc
    import tracemalloc

    from memory_graph import Limits, MemoryStore, Owner

    limits = Limits(max_records_per_identity=100_000)
    with MemoryStore.from_dsn(dsn, max_size=1, limits=limits) as store:
        warm = Owner("mem-s-0")  # another owner's pool: lazy imports and process caches
        store.search(warm, "w3 w17", limit=10)
        store.snapshot(warm, latest_input="w3 w17")
        owner = Owner(user)
        gc.collect()
        tracemalloc.start()
        for q in ("w3 w17 w250", "what about w5?", "w12 w40"):
            store.search(owner, q, limit=10)
        store.snapshot(owner, latest_input="w3 w17")
        gc.collect()
        traced, _peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        pool = next(p for k, p in store._recall._pools.items() if k[0] == owner.scope_id)
        n = len(pool.entries)
        return {"traced": traced / n, "estimate": getattr(pool, "nbytes", 0) / n}


def _run_child(dsn: str, *args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", dsn, *args],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
        env={**os.environ},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"worker failed: {proc.stderr[-2000:]}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def cold_and_warm(dsn: str, user: str, rounds: int) -> tuple[list[float], list[float]]:
    """The first recall of ``user`` in ``rounds`` new stores, and warm recalls (ms)."""
    from memory_graph import Limits, MemoryStore, Owner

    limits = Limits(max_records_per_identity=100_000)
    rng = random.Random(3)
    cold: list[float] = []
    warm: list[float] = []
    owner = Owner(user)
    for _ in range(rounds):
        with MemoryStore.from_dsn(dsn, max_size=1, limits=limits) as store:
            store.get_profile(owner)  # the connection is open: time the recall only
            q = f"what did I say about w{rng.randrange(1, 400)} w{rng.randrange(1, 4000)}?"
            t0 = time.perf_counter()
            store.search(owner, q, limit=10)
            cold.append((time.perf_counter() - t0) * 1000.0)
            for _ in range(10):
                q = f"w{rng.randrange(1, 400)} w{rng.randrange(1, 4000)}"
                t0 = time.perf_counter()
                store.search(owner, q, limit=10)
                warm.append((time.perf_counter() - t0) * 1000.0)
    return cold, warm


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        dsn, what = argv[1], argv[2]
        if what == "trace":
            print(json.dumps(trace(dsn, argv[3])))
        else:
            cache = None if argv[5] == "-" else float(argv[5])
            print(json.dumps(child(dsn, argv[3], int(argv[4]), cache)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dsn", default=None, help="server DSN (default $MEMORY_GRAPH_DSN)")
    ap.add_argument("--small", type=int, default=2000, help="owners of the small scenario")
    ap.add_argument("--small-records", type=int, default=50, help="records per small owner")
    ap.add_argument("--big", type=int, default=200, help="owners of the big scenario")
    ap.add_argument("--big-records", type=int, default=5000, help="records per big owner")
    ap.add_argument("--cold", type=int, default=10_000, help="records of the cold-load owner")
    ap.add_argument("--trace-records", type=int, default=2000, help="records of the traced pool")
    ap.add_argument("--rounds", type=int, default=3, help="cold loads to time")
    ap.add_argument("--cache-mb", type=float, default=None, help="the workers' recall_cache_mb")
    add_result_options(ap)
    args = ap.parse_args(argv)
    cache = "-" if args.cache_mb is None else str(args.cache_mb)

    with recording("bench_memory", args) as results, scratch_database(results.server) as dsn:
        from memory_graph import MemoryStore

        with MemoryStore.from_dsn(dsn, max_size=1) as store:
            store.setup()
        t0 = time.perf_counter()
        with psycopg.connect(dsn, autocommit=True) as conn:
            load(conn, "mem-s-", args.small, args.small_records)
            load(conn, "mem-b-", args.big, args.big_records)
            load(conn, "mem-cold", 1, args.cold)
            load(conn, "mem-trace", 1, args.trace_records)
            conn.execute("VACUUM ANALYZE")
        print(f"records loaded in {time.perf_counter() - t0:.1f} s")

        idle = _run_child(dsn, "run", "mem-s-", "1", cache)
        bound = float(idle["bound_mb"])  # type: ignore[arg-type]
        base_rss = float(idle["rss_mb"])  # type: ignore[arg-type]
        target = f"<= {round(bound + base_rss)}"
        for label, prefix, owners, per in (
            ("small", "mem-s-", args.small, args.small_records),
            ("big", "mem-b-", args.big, args.big_records),
        ):
            out = _run_child(dsn, "run", prefix, str(owners), cache)
            detail(f"worker {label}", out)
            figure(
                f"RSS MB, {owners:,} owners x {per:,} records vs an idle worker",
                float(out["rss_mb"]),  # type: ignore[arg-type]
                base_rss,
                unit="MB",
                target=target,
                text=(
                    "{name}: {ours:.0f} MB vs {baseline:.0f} MB {target}"
                    f" | {out['pools']} pools held, {float(out['cache_mb']):.1f} MB estimated,"  # type: ignore[arg-type]
                    f" bound {bound:.0f} MB, {float(out['seconds']):.1f} s"  # type: ignore[arg-type]
                ),
            )
        per_rec = _run_child(dsn, "trace", "mem-trace0")
        figure(
            f"bytes per pooled record ({args.trace_records:,}-record pool), traced vs estimate",
            float(per_rec["traced"]),  # type: ignore[arg-type]
            float(per_rec["estimate"]),  # type: ignore[arg-type]
            unit="B",
        )
        cold, warm = cold_and_warm(dsn, "mem-cold0", args.rounds)
        figure(
            f"first recall of a {args.cold:,}-record owner vs a warm recall",
            cold,
            warm,
            unit="ms",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
