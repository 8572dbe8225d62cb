"""Recall latency benchmark against LangGraph's ``PostgresStore.search`` on the same server.

Measures ``MemoryStore.search(owner, query, limit=10)`` and ``MemoryStore.snapshot`` p50/p95
for owners with 100, 1k and 10k visible records, first in a database holding only them, then
after ``--others`` rows of other users are bulk-loaded (in SQL, straight into ``mg_records``
and ``mg_pool_stats``, with a Zipf-like vocabulary). The baseline is one
``PostgresStore.search(namespace, limit=10)`` over 1k items, measured in the same run.

Samples are interleaved: each round calls every measured operation once (search and
snapshot at each size, and the baseline), so load from other processes on the machine hits
them alike (the ratios of separately timed phases drifted with it).

Ratios printed (targets from the recall issue):
- search at 1k visible vs one PostgresStore search (<= 2x);
- ``GovernedStore.search`` without a query (a listing page of 10) over the 1k owner vs one
  PostgresStore search (<= 2x);
- growth from 100 to 10k visible (<= 1.5x);
- with the other users' rows vs the database without them (<= 1.2x).

Also printed, without a target: the first recall of each owner in a new store (the pool
load), and a search right after a write to that owner (the pool update and index rebuild),
both at 100 and 10k visible.

Usage::

    python bench/bench_recall.py [--dsn DSN] [--others 1000000] [--n 200] [--no-save] [--out DIR]

Writes ``bench/results/bench_recall.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from _common import (  # noqa: E402
    add_result_options,
    figure,
    recording,
    row,
    scratch_database,
)
from langgraph.store.postgres import PostgresStore  # noqa: E402
from psycopg_pool import ConnectionPool  # noqa: E402

from memory_graph import Limits, MemoryStore, Owner  # noqa: E402
from nodes import GovernedStore  # noqa: E402

VOCAB = 20_000
WORDS_PER_DOC = 12
OTHER_USER_ROWS = 500

# A bulk loader for synthetic records of one scope/identity: content is WORDS_PER_DOC words
# drawn log-uniformly from the vocabulary (rank ~ Zipf), tokens are its distinct words.
_LOAD = """
WITH docs AS (
    SELECT scope, gen_random_uuid() AS id, (
        SELECT string_agg('w' || floor(exp(random() * ln(%(vocab)s)))::int, ' ')
        FROM generate_series(1, %(words)s) WHERE g > 0
    ) AS content
    FROM (SELECT CASE WHEN %(per)s > 0 THEN substr(md5(%(seed)s || (g / %(per)s)::text), 1, 16)
                 ELSE %(scope)s END AS scope, g
          FROM generate_series(1, %(n)s) g) s
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


def load(
    conn: psycopg.Connection[object], *, scope: str, n: int, per: int = 0, seed: str = ""
) -> None:
    """Insert ``n`` synthetic records for ``scope`` (or for many scopes, ``per`` each)."""
    # The statement fills the pool statistics itself, so the triggers are skipped for the
    # load.
    conn.execute("SET session_replication_role = replica")
    conn.execute("SET synchronous_commit = off")
    conn.execute("SET work_mem = '256MB'")
    conn.execute(
        _LOAD,
        {"vocab": VOCAB, "words": WORDS_PER_DOC, "per": per, "seed": seed, "scope": scope, "n": n},
    )
    conn.execute("SET session_replication_role = DEFAULT")


def queries_for(
    conn: psycopg.Connection[object], scope: str, count: int, rng: random.Random
) -> list[str]:
    """Questions built from 3 words of random documents of the owner plus function words."""
    rows = conn.execute(
        "SELECT content FROM mg_records WHERE scope_id = %s ORDER BY id LIMIT 200", (scope,)
    ).fetchall()
    out = []
    for i in range(count):
        words = str(rows[i % len(rows)][0]).split()
        out.append("what did I say about " + " ".join(rng.sample(words, 3)) + "?")
    return out


def interleaved(
    fns: dict[tuple[str, int], list[Callable[[], object]]], n: int, warmup: int = 20
) -> dict[tuple[str, int], list[float]]:
    """``n`` latencies (ms) of each measure; sample ``i`` of a measure calls its function
    ``i`` (cycling). Each round calls every measure once, so drift in the machine's load
    (other processes, the server) hits all of them alike and their ratios stay fair."""
    for calls in fns.values():
        for i in range(warmup):
            calls[i % len(calls)]()
    out: dict[tuple[str, int], list[float]] = {key: [] for key in fns}
    for i in range(n):
        for key, calls in fns.items():
            t0 = time.perf_counter()
            calls[i % len(calls)]()
            out[key].append((time.perf_counter() - t0) * 1000.0)
    return out


BIG = Limits(max_records_per_identity=100_000)
WRITES = 5


def load_and_write(
    dsn: str, store: MemoryStore, owners: dict[int, Owner], queries: dict[int, list[str]]
) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """Per owner size: the first search in new stores (the pool load), then searches each
    right after a write to the owner (the pool update and index rebuild); in ms."""
    first: dict[int, list[float]] = {}
    after: dict[int, list[float]] = {}
    for size, owner in owners.items():
        first[size] = []
        for i in range(WRITES):
            with MemoryStore.from_dsn(dsn, max_size=1, limits=BIG) as fresh:
                t0 = time.perf_counter()
                fresh.search(owner, queries[size][i], limit=10)
                first[size].append((time.perf_counter() - t0) * 1000.0)
        after[size] = []
        for i in range(WRITES):
            store.add(owner, "fact", f"bench note {i} " + queries[size][i].split()[-1])
            t0 = time.perf_counter()
            store.search(owner, queries[size][i], limit=10)
            after[size].append((time.perf_counter() - t0) * 1000.0)
    return first, after


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--dsn", default=None, help="server DSN (default $MEMORY_GRAPH_DSN or embedded)"
    )
    ap.add_argument("--others", type=int, default=1_000_000, help="other users' rows to load")
    ap.add_argument("--n", type=int, default=200, help="samples per latency measure")
    add_result_options(ap)
    args = ap.parse_args(argv)
    rng = random.Random(7)
    sizes = (100, 1_000, 10_000)

    with recording("bench_recall", args) as results, scratch_database(results.server) as dsn:
        pool = ConnectionPool(
            dsn,
            min_size=1,
            max_size=2,
            open=True,
            kwargs={"autocommit": True, "prepare_threshold": 0},
        )
        lg = PostgresStore(pool)  # type: ignore[arg-type]
        lg.setup()
        with (
            MemoryStore.from_dsn(dsn, max_size=2, limits=BIG) as store,
            psycopg.connect(dsn, autocommit=True) as conn,
        ):
            store.setup()
            owners = {size: Owner(f"bench-visible-{size}") for size in sizes}
            for size, owner in owners.items():
                load(conn, scope=owner.scope_id, n=size)
            ns = ("bench", "user")
            for i in range(1_000):
                lg.put(ns, f"k{i}", {"text": f"memory number {i}"})
            conn.execute("VACUUM ANALYZE")
            queries = {s: queries_for(conn, o.scope_id, 50, rng) for s, o in owners.items()}
            governed = GovernedStore(store)  # how LangMem and store consumers list memories
            listed = ("memories", owners[1000].user_id)

            def run_phase(label: str) -> dict[tuple[str, int], list[float]]:
                fns: dict[tuple[str, int], list[Callable[[], object]]] = {
                    ("baseline", 0): [lambda: lg.search(ns, limit=10)],
                    ("listing", 1000): [lambda: governed.search(listed, limit=10)],
                }
                for size, owner in owners.items():
                    qs = queries[size]
                    fns[("search", size)] = [
                        lambda q=q, o=owner: store.search(o, q, limit=10) for q in qs
                    ]
                    fns[("snapshot", size)] = [
                        lambda q=q, o=owner: store.snapshot(o, latest_input=q) for q in qs
                    ]
                out = interleaved(fns, args.n)
                for size in owners:
                    for kind in ("search", "snapshot"):
                        figure(
                            f"[{label}] {kind} {size} visible",
                            out[(kind, size)],
                            unit="ms",
                            text=f"[{label}] {kind:<8} {size:>6} visible: p50 "
                            "{ours:7.3f} ms  p95 {ours_p95:7.3f} ms",
                        )
                return out

            print(f"server: {dsn.split('?')[0]}  samples: {args.n}")
            empty = run_phase("empty db")
            base = empty[("baseline", 0)]

            t0 = time.perf_counter()
            if args.others > 0:
                load(conn, scope="", n=args.others, per=OTHER_USER_ROWS, seed="other")
                conn.execute("VACUUM ANALYZE")
            figure(
                f"load {args.others:,} other users' rows (setup)",
                time.perf_counter() - t0,
                unit="s",
                text=f"loaded {args.others:,} other users' rows "
                f"({args.others // OTHER_USER_ROWS:,} users) in " + "{ours:.1f} s",
            )
            full = run_phase(f"+{args.others:,} others")
            base2 = full[("baseline", 0)]

            print()
            print(
                row(
                    "search 1k visible vs PostgresStore.search",
                    empty[("search", 1000)],
                    base,
                    "(target <= 2x)",
                )
            )
            print(
                row("snapshot 1k visible vs PostgresStore.search", empty[("snapshot", 1000)], base)
            )
            print(
                row(
                    "GovernedStore.search, no query, 1k vs PostgresStore.search",
                    empty[("listing", 1000)],
                    base,
                    "(target <= 2x)",
                )
            )
            for kind in ("search", "snapshot"):
                print(
                    row(
                        f"{kind} growth 10k vs 100 visible",
                        empty[(kind, 10_000)],
                        empty[(kind, 100)],
                        "(target <= 1.5x)",
                    )
                )
                print(
                    row(
                        f"{kind} 1k visible, +others vs empty db",
                        full[(kind, 1000)],
                        empty[(kind, 1000)],
                        "(target <= 1.2x)",
                    )
                )
            print(row("PostgresStore.search, +others vs empty db", base2, base))
            print()
            first, after = load_and_write(dsn, store, owners, queries)
            print(row("first recall (pool load) 10k vs 100", first[10_000], first[100]))
            print(row("search after a write 10k vs 100", after[10_000], after[100]))
        pool.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
