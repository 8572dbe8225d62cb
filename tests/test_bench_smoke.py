"""The benchmarks run end to end on the server under test, with tiny sizes.

Not a speed test: nothing here is timed. A benchmark that no longer runs against the current
API (``bench_load`` once called ``pending_review`` without ``owner=`` and counted every
approval as lost) must fail CI, and ``bench_load`` must keep its correctness contract: no
errors, no lost proposals, no duplicate commits.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_the_load_benchmark_loses_nothing(pg_server_dsn: str) -> None:
    out = _bench(
        "bench_load.py",
        "--dsn",
        pg_server_dsn,
        "--threads",
        "2",
        "--seconds",
        "1",
        "--propose-every",
        "2",
        "--race-every",
        "2",
    )
    assert "lost proposals 0 | duplicate commits 0" in out
    assert out.count("errors 0") == 2, out
    approved = int(out.split("approved ")[1].split(",")[0])
    assert approved > 0, out


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        ("bench_graph.py", ["--turns", "25"], "overhead ratio"),
        (
            "bench_core.py",
            [
                "--n",
                "5",
                "--workers",
                "2",
                "--seconds",
                "0.1",
                "--proposals",
                "400",
                "--pool-records",
                "30",
            ],
            "commit throughput",
        ),
    ],
)
def test_a_benchmark_runs_on_the_current_api(
    pg_server_dsn: str, script: str, args: list[str], expect: str
) -> None:
    dsn_args = [pg_server_dsn] if script == "bench_graph.py" else ["--dsn", pg_server_dsn]
    assert expect in _bench(script, *dsn_args, *args)
