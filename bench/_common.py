"""Shared helpers for the benchmarks: a scratch database, timing and ratio printing.

Benchmarks are never tests: they print figures and ratios against a baseline measured in the
same run, on the same server.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import uuid
from collections.abc import Callable, Iterator

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo


def server_dsn(arg: str | None) -> str:
    """The DSN given, else ``$MEMORY_GRAPH_DSN``, else the embedded server."""
    if arg:
        return arg
    from memory_graph.storage.server.setup import resolve_dsn

    return resolve_dsn(None)


@contextlib.contextmanager
def scratch_database(dsn: str) -> Iterator[str]:
    """Create a throwaway database on the server of ``dsn`` and drop it afterwards."""
    name = f"mg_bench_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    try:
        yield make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def timed(fn: Callable[[], object], n: int, warmup: int = 5) -> list[float]:
    """Run ``fn`` ``warmup`` times, then ``n`` times; return latencies in milliseconds."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def paired(
    ours: Callable[[], object], base: Callable[[], object], n: int, warmup: int = 5
) -> tuple[list[float], list[float]]:
    """Time ``ours`` and ``base`` alternately (drift in server load hits both alike)."""
    for _ in range(warmup):
        ours()
        base()
    a: list[float] = []
    b: list[float] = []
    for _ in range(n):
        for fn, out in ((ours, a), (base, b)):
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1000.0)
    return a, b


def p(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q * 100) - 1]


def row(name: str, ours: list[float], base: list[float], target: str = "") -> str:
    """One result line: p50/p95 of ours and the baseline, and the p50 ratio."""
    r = statistics.median(ours) / statistics.median(base)
    return (
        f"{name:<44} ours p50 {statistics.median(ours):7.3f} ms  p95 {p(ours, 0.95):7.3f} ms | "
        f"baseline p50 {statistics.median(base):7.3f} ms  p95 {p(base, 0.95):7.3f} ms | "
        f"ratio {r:5.2f}x {target}"
    )


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))
