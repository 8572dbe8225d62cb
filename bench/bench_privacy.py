"""Cost of the privacy operations: checkpoint encryption per turn, and a sweep over 100k rows.

1. Encryption: the prebuilt agent on ``PostgresSaver`` (durability ``sync``), plain and
   sealed (``open_checkpointer(encryption_key=...)``) in the same process and database, turns
   interleaved on threads of the same length. Prints medians and the ratio sealed / plain.
2. Sweep: ``--rows`` rows due for retention (40% removed records with 3 tokens each, 30%
   expired pending proposals, 30% audit rows with content past the audit retention) over 1000
   users, plus as many rows that must stay. Times ``store.sweep()`` (batches of 1000,
   ``SKIP LOCKED``) against a baseline in the same run: the same deletes and updates as one
   statement per table on an identical copy (what a naive cron job would do, holding every
   lock until it commits). Also checks the recall statistics still match a recount.

Usage::

    python bench/bench_privacy.py postgresql://postgres@127.0.0.1:5432/postgres \
        [--turns 30] [--rows 100000] [--only encryption|sweep] [--no-save] [--out DIR]

Writes ``bench/results/bench_privacy.json`` (the rows of the parts run) and regenerates
``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import base64
import os
import statistics
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
from _common import add_result_options, detail, figure, recording, scratch_database
from langchain_core.messages import HumanMessage

from memory_graph import MemoryStore, Owner
from memory_graph.storage.schema import RECALL_STATS_REFRESH
from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

TEXT = "What should I cook tonight with tomatoes and rice? My sister Ada likes basil."
DAY = timedelta(days=1)


class _Timed:
    """A serializer proxy that adds up the time spent in it (what encryption changes)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.ms = inner, 0.0

    def dumps_typed(self, obj: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.dumps_typed(obj)
        finally:
            self.ms += (time.perf_counter() - t0) * 1000

    def loads_typed(self, data: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return self.inner.loads_typed(data)
        finally:
            self.ms += (time.perf_counter() - t0) * 1000


def bench_encryption(dsn: str, turns: int) -> tuple[float, float, float, float]:
    key = base64.b64encode(os.urandom(32)).decode()
    with MemoryStore.from_dsn(dsn) as store:
        store.setup()
        owner = Owner("bench")
        for i in range(50):
            store.add(owner, "fact", f"fact {i} about cooking with tomatoes and rice")
        with (
            open_checkpointer(store) as plain_saver,
            open_checkpointer(store, encryption_key=key) as sealed_saver,
        ):
            timers = {"plain": _Timed(plain_saver.serde), "sealed": _Timed(sealed_saver.serde)}
            plain_saver.serde, sealed_saver.serde = timers["plain"], timers["sealed"]
            graphs = {
                "plain": create_memory_agent(OfflineChatModel(), store, checkpointer=plain_saver),
                "sealed": create_memory_agent(OfflineChatModel(), store, checkpointer=sealed_saver),
            }
            times: dict[str, list[float]] = {"plain": [], "sealed": []}
            for i in range(turns + 3):
                order = ["plain", "sealed"] if i % 2 else ["sealed", "plain"]
                for name in order:  # alternate who goes first
                    graph = graphs[name]
                    cfg = {"configurable": {"thread_id": f"{name}-thread"}}
                    t0 = time.perf_counter()
                    graph.invoke(
                        {"messages": [HumanMessage(f"{TEXT} ({i})")]},
                        cfg,
                        context={"user_id": "bench"},
                    )
                    if i == 2:
                        timers[name].ms = 0.0
                    if i >= 3:  # warm-up turns are not counted
                        times[name].append((time.perf_counter() - t0) * 1000)
    return (
        statistics.median(times["plain"]),
        statistics.median(times["sealed"]),
        timers["plain"].ms / turns,
        timers["sealed"].ms / turns,
    )


def load(dsn: str, rows: int, now: datetime) -> None:
    """``rows`` rows due for retention and as many that stay, over 1000 users."""
    n_rec, n_prop = rows * 4 // 10, rows * 3 // 10
    n_audit = rows - n_rec - n_prop
    old = now - 400 * DAY
    with psycopg.connect(dsn) as conn:
        for status, count, at in (("removed", n_rec, old), ("active", n_rec, now)):
            conn.execute(
                "INSERT INTO mg_records (scope_id, id, level, kind, content, trust, sensitivity, "
                "confidence, source, status, content_hash, tokens, created_at, updated_at, "
                "recorded_at) SELECT 'u' || (g %% 1000), gen_random_uuid(), 'user', 'fact', "
                "'fact ' || g, 'user-confirmed', 'private', 0.8, 'api', %s, md5(g::text), "
                "ARRAY['fact', 't' || (g %% 500), 'w' || (g %% 97)], %s, %s, %s "
                "FROM generate_series(1, %s) g",
                (status, at, at, at, count),
            )
        for exp, count in ((old, n_prop), (now + DAY, n_prop)):
            conn.execute(
                "INSERT INTO mg_proposals (scope_id, id, level, operation, args, payload_hash, "
                "diff, idempotency_key, created_at, expires_at) SELECT 'u' || (g %% 1000), "
                "md5(random()::text), 'user', 'add', '{\"content\": \"x\"}', 'h', '+ x', "
                "md5(random()::text), %s, %s FROM generate_series(1, %s) g",
                (exp - DAY, exp, count),
            )
        for at, count in ((old, n_audit), (now, n_audit)):
            conn.execute(
                "INSERT INTO mg_audit (scope_id, target_kind, target_id, action, before, after, "
                "actor, at) SELECT 'u' || (g %% 1000), 'record', g::text, 'add', NULL, "
                "jsonb_build_object('content', 'old content ' || g), 'api', %s "
                "FROM generate_series(1, %s) g",
                (at, count),
            )
        conn.execute("ANALYZE")


def naive(dsn: str, now: datetime) -> float:
    t0 = time.perf_counter()
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "UPDATE mg_proposals SET status = 'expired', decided_at = %s "
            "WHERE status = 'pending' AND expires_at <= %s",
            (now, now),
        )
        conn.execute(
            "DELETE FROM mg_records WHERE status <> 'active' AND recorded_at < %s",
            (now - 30 * DAY,),
        )
        conn.execute(
            "UPDATE mg_audit SET before = NULL, after = NULL WHERE at < %s",
            (now - 365 * DAY,),
        )
    return (time.perf_counter() - t0) * 1000


def stats_match(dsn: str) -> bool:
    q = "SELECT * FROM mg_pool_stats ORDER BY scope_id, agent_key, workspace_key, sensitivity"
    with psycopg.connect(dsn) as conn:
        before = conn.execute(q).fetchall()
        conn.execute(RECALL_STATS_REFRESH)
        after = conn.execute(q).fetchall()
        conn.rollback()
    return before == after


def bench_sweep(server: str, rows: int) -> None:
    now = datetime.now(timezone.utc)
    results: dict[str, Any] = {}
    for mode in ("naive", "sweep"):
        with scratch_database(server) as dsn:
            with MemoryStore.from_dsn(dsn) as store:
                store.setup()
            t0 = time.perf_counter()
            load(dsn, rows, now)
            load_ms = (time.perf_counter() - t0) * 1000
            if mode == "naive":
                results[mode] = naive(dsn, now)
            else:
                with MemoryStore.from_dsn(dsn) as store:
                    t0 = time.perf_counter()
                    report = store.sweep()
                    results[mode] = (time.perf_counter() - t0) * 1000
                    results["report"] = report
                    results["stats_ok"] = stats_match(dsn)
            print(f"  {mode}: loaded {2 * rows} rows in {load_ms:.0f} ms")
            detail(f"sweep setup: {mode} load ms", round(load_ms, 1))
    report = results["report"]
    handled = report.expired_proposals + report.deleted_records + report.trimmed_audit
    detail("sweep report", str(report))
    figure(
        f"sweep over {rows} due rows vs one statement per table",
        results["sweep"],
        results["naive"],
        unit="ms",
        text=f"sweep over {rows} due rows ({2 * rows} in the tables): "
        "{ours:.0f} ms in {batches} batches ({us_per_row:.1f} us/row)\n"
        f"  report: {str(report).replace('{', '{{').replace('}', '}}')}\n"
        "  baseline, one statement per table: {baseline:.0f} ms; "
        "ratio sweep/baseline {ratio:.2f}x",
        batches=report.batches,
        us_per_row=results["sweep"] / max(handled, 1) * 1000,
    )
    figure(
        "recall statistics match a recount after the sweep",
        results["stats_ok"],
        unit="bool",
        target="== true",
        text="  recall statistics match a recount after the sweep: {ours}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dsn", nargs="?")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--only", choices=["encryption", "sweep"])
    add_result_options(parser)
    args = parser.parse_args(argv)
    with recording("bench_privacy", args) as results:
        server = results.server
        if args.only != "sweep":
            with scratch_database(server) as dsn:
                plain, sealed, s_plain, s_sealed = bench_encryption(dsn, args.turns)
            figure(
                "turn, encrypted vs plain checkpoints",
                sealed,
                plain,
                unit="ms",
                text="turn, plain checkpoints: {baseline:.1f} ms"
                f" (median of {args.turns})\n"
                "turn, encrypted checkpoints: {ours:.1f} ms; +{delta:.1f} ms, ratio {ratio:.2f}x",
                delta=sealed - plain,
            )
            figure(
                "serializer time per turn (mean), encrypted vs plain",
                s_sealed,
                s_plain,
                unit="ms",
                text="serializer time per turn (mean): plain {baseline:.2f} ms, encrypted "
                "{ours:.2f} ms; +{delta:.2f} ms per turn",
                delta=s_sealed - s_plain,
            )
        if args.only != "encryption":
            bench_sweep(server, args.rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
