"""Shared helpers for the benchmarks: a scratch database, timing, result lines and the results file.

Benchmarks are never tests: they print figures and ratios against a baseline measured in the
same run, on the same server.

**Results file.** A benchmark's ``main`` runs inside :func:`recording`; every result line it
prints through :func:`row` (latencies, p50/p95 in ms) or :func:`figure` (anything else:
throughput per second, a count, a score, a duration) is also recorded: the benchmark, the row
name, ours and the baseline with their unit, the ratio ours / baseline (p50 for latencies),
the target as printed (``"<= 2x"``) and whether it is met when the target is machine-readable
(``OP NUMBER`` with ``x`` for a ratio, without for the value itself: ``"<= 2x"``,
``">= 0.5x"``, ``"== 0"``, ``"== true"``; anything else leaves ``met`` empty). When ``main``
finishes, the run is written to ``bench/results/<name>.json`` (run date in UTC, Python
version, ``SHOW server_version``, the server's kind -- ``system`` or ``embedded`` -- and its
DSN without user or password, the machine's CPU count, the arguments, the rows and any
details), and ``bench/RESULTS.md`` is regenerated from every json file in
``bench/results/``: one table per benchmark (row, ours, baseline, ratio, target, met). Never
edit ``RESULTS.md`` by hand; run the benchmark again.

Options every benchmark takes (:func:`add_result_options`): ``--no-save`` writes nothing
(smoke runs); ``--out DIR`` (or ``$MEMORY_GRAPH_BENCH_OUT``) writes ``DIR/results/<name>.json``
and ``DIR/RESULTS.md`` instead of the ones in ``bench/`` (the smoke test uses a temporary
directory).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

BENCH_DIR = Path(__file__).resolve().parent
OUT_ENV = "MEMORY_GRAPH_BENCH_OUT"
DSN_ENV = "MEMORY_GRAPH_DSN"


def server_dsn(arg: str | None) -> str:
    """The DSN given, else ``$MEMORY_GRAPH_DSN``, else the embedded server."""
    if arg:
        return arg
    from memory_graph.storage.server.setup import resolve_dsn

    return resolve_dsn(None)


def server_kind(arg: str | None) -> str:
    """``"system"`` when :func:`server_dsn` uses a server given to it, else ``"embedded"``."""
    return "system" if arg or os.environ.get(DSN_ENV) else "embedded"


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


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


# --- result lines -----------------------------------------------------------------------------

#: A measured value: latency samples in ms, or one number (a rate, a count, a score) or a flag.
Value = Sequence[float] | float | int | bool

_TARGET = re.compile(r"^(<=|>=|==|<|>)\s*(true|false|[-+]?\d+(?:\.\d+)?)\s*(x?)$", re.IGNORECASE)


def target_text(target: str) -> str:
    """The bare target of a printed one: ``"(target <= 2x)"`` -> ``"<= 2x"``."""
    t = target.strip()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1].strip()
    if t.lower().startswith("target"):
        t = t[len("target") :].strip(" :")
    return t


def target_met(target: str, ratio: float | None, value: float | bool | None) -> bool | None:
    """Whether ``target`` holds: ``OP Nx`` compares the ratio, ``OP N`` the value (``N`` may
    be ``true``/``false``). ``None`` when the target is empty, not of that form, or what it
    compares was not measured."""
    m = _TARGET.match(target_text(target))
    if not m:
        return None
    op, raw, is_ratio = m.group(1), m.group(2).lower(), bool(m.group(3))
    subject = ratio if is_ratio else value
    if subject is None or (isinstance(subject, float) and math.isnan(subject)):
        return None
    bound = 1.0 if raw == "true" else 0.0 if raw == "false" else float(raw)
    x = float(subject)
    return {
        "<=": x <= bound,
        ">=": x >= bound,
        "<": x < bound,
        ">": x > bound,
        "==": x == bound,
    }[op]


def _measure(value: Value) -> dict[str, Any]:
    if isinstance(value, (bool, int, float)):
        return {"value": value}
    samples = [float(v) for v in value]
    if not samples:
        return {"p50": None, "p95": None, "n": 0}
    return {"p50": statistics.median(samples), "p95": p(samples, 0.95), "n": len(samples)}


def _central(measure: dict[str, Any] | None) -> float | bool | None:
    if measure is None:
        return None
    out = measure["value"] if "value" in measure else measure["p50"]
    return out if isinstance(out, (bool, int, float)) else None


def _ratio(ours: dict[str, Any], base: dict[str, Any] | None) -> float | None:
    a, b = _central(ours), _central(base)
    if a is None or b is None or isinstance(a, bool) or isinstance(b, bool) or b == 0:
        return None
    return float(a) / float(b)


class Results:
    """The rows of one benchmark run and how to write them (see the module docstring)."""

    def __init__(self, bench: str, args: argparse.Namespace, *, script: str | None = None):
        self.bench = bench
        self.script = script or f"bench/{bench}.py"
        self.args = args
        given = getattr(args, "dsn", None)
        self.server = server_dsn(given)
        self.kind = server_kind(given)
        self.rows: list[dict[str, Any]] = []
        self.details: dict[str, Any] = {}
        self.started = datetime.now(timezone.utc)
        self.server_version = _server_version(self.server)

    def add(self, entry: dict[str, Any]) -> dict[str, Any]:
        self.rows.append(entry)
        return entry

    def document(self) -> dict[str, Any]:
        skip = {"dsn", "no_save", "out"}
        return {
            "benchmark": self.bench,
            "script": self.script,
            "run_at": self.started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "python": platform.python_version(),
            "server": {
                "version": self.server_version,
                "kind": self.kind,
                "dsn": public_dsn(self.server) if self.kind == "system" else None,
            },
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "commit": _git_head(),
            "arguments": {k: v for k, v in sorted(vars(self.args).items()) if k not in skip},
            "rows": self.rows,
            "details": self.details,
        }

    def save(self) -> tuple[Path, Path] | None:
        """Write ``results/<bench>.json`` and regenerate ``RESULTS.md``; nothing on --no-save."""
        if getattr(self.args, "no_save", False):
            return None
        out = Path(getattr(self.args, "out", None) or os.environ.get(OUT_ENV) or BENCH_DIR)
        results = out / "results"
        results.mkdir(parents=True, exist_ok=True)
        path = results / f"{self.bench}.json"
        text = json.dumps(_rounded(self.document()), indent=2, default=str, allow_nan=False)
        path.write_text(text + "\n", encoding="utf-8")
        md = write_results_md(out)
        print(f"results: {path} and {md}", file=sys.stderr)
        return path, md


_ACTIVE: list[Results] = []


def _rounded(obj: Any) -> Any:
    """``obj`` with floats to 4 decimals (0.1 us for ms) and NaN as null, for the json file."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else round(obj, 4)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded(v) for v in obj]
    return obj


def _server_version(dsn: str) -> str | None:
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            got = conn.execute("SHOW server_version").fetchone()
    except psycopg.Error:
        return None
    return str(got[0]) if got else None


def _git_head() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=BENCH_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() or None


def public_dsn(dsn: str) -> str:
    """``dsn`` as a URL without user, password or other connection secrets."""
    params = conninfo_to_dict(dsn)
    host = str(params.get("host") or "")
    port = str(params.get("port") or "")
    db = str(params.get("dbname") or "")
    if host.startswith("/"):
        return f"postgresql:///{db}?host={host}" + (f"&port={port}" if port else "")
    return f"postgresql://{host}{':' + port if port else ''}/{db}"


def add_result_options(ap: argparse.ArgumentParser) -> None:
    """``--no-save`` and ``--out DIR`` (see the module docstring)."""
    ap.add_argument(
        "--no-save",
        action="store_true",
        help="do not write results/<name>.json nor regenerate RESULTS.md (smoke runs)",
    )
    ap.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"write DIR/results/<name>.json and DIR/RESULTS.md (default: ${OUT_ENV}, else bench/)",
    )


@contextlib.contextmanager
def recording(
    bench: str, args: argparse.Namespace, *, script: str | None = None
) -> Iterator[Results]:
    """Record the run's :func:`row` and :func:`figure` lines; save them when the block ends
    without an exception. ``args`` needs ``dsn`` and the :func:`add_result_options`."""
    results = Results(bench, args, script=script)
    _ACTIVE.append(results)
    try:
        yield results
    finally:
        _ACTIVE.remove(results)
    results.save()


def make_row(
    name: str,
    ours: Value,
    baseline: Value | None,
    *,
    unit: str,
    target: str = "",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One recorded row: the measures, the ratio (p50 for samples), the target and ``met``."""
    o = _measure(ours)
    b = None if baseline is None else _measure(baseline)
    ratio = _ratio(o, b)
    t = target_text(target)
    entry: dict[str, Any] = {
        "name": name,
        "unit": unit,
        "ours": o,
        "baseline": b,
        "ratio": ratio,
        "target": t,
        "met": target_met(t, ratio, _central(o)),
    }
    if extra:
        entry["extra"] = extra
    return entry


def _record(
    name: str, ours: Value, baseline: Value | None, unit: str, target: str, extra: dict[str, Any]
) -> dict[str, Any]:
    entry = make_row(name, ours, baseline, unit=unit, target=target, extra=extra)
    if _ACTIVE:
        _ACTIVE[-1].add(entry)
    return entry


def row(name: str, ours: list[float], base: list[float], target: str = "") -> str:
    """One result line: p50/p95 of ours and the baseline, and the p50 ratio (recorded)."""
    _record(name, ours, base, "ms", target, {})
    r = statistics.median(ours) / statistics.median(base)
    return (
        f"{name:<44} ours p50 {statistics.median(ours):7.3f} ms  p95 {p(ours, 0.95):7.3f} ms | "
        f"baseline p50 {statistics.median(base):7.3f} ms  p95 {p(base, 0.95):7.3f} ms | "
        f"ratio {r:5.2f}x {_printed_target(target)}"
    )


def _printed_target(target: str) -> str:
    t = target_text(target)
    return f"(target {t})" if t else ""


def figure(
    name: str,
    ours: Value,
    baseline: Value | None = None,
    *,
    unit: str,
    target: str = "",
    text: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Print and record a result that is not a :func:`row`: a rate, a count, a score...

    ``ours``/``baseline``: latency samples (ms) or one value; ``unit``: ``"ms"``, ``"/s"``,
    ``"count"``, ``"score"``... ``text``: the line(s) to print, a ``str.format`` template
    over ``name``, ``ours``, ``baseline`` (p50 of samples, else the value), ``ours_p95``,
    ``baseline_p95``, ``ratio``, ``unit``, ``target`` (``"(target <= 2x)"`` or empty) and
    the ``extra`` fields (recorded too); ``None`` prints a default line, ``""`` nothing (the
    figure is printed with another one). Returns the recorded row.
    """
    entry = _record(name, ours, baseline, unit, target, extra)
    if text == "":
        return entry
    b = entry["baseline"] or {}
    fields = {
        "name": name,
        "ours": _central(entry["ours"]),
        "ours_p95": entry["ours"].get("p95"),
        "baseline": _central(b) if b else None,
        "baseline_p95": b.get("p95"),
        "ratio": entry["ratio"],
        "unit": unit,
        "target": _printed_target(target),
        **extra,
    }
    if text is None:
        line = f"{name:<44} ours {_cell(entry['ours'], unit)}"
        if b:
            line += f" | baseline {_cell(b, unit)}"
        if entry["ratio"] is not None:
            line += f" | ratio {entry['ratio']:5.2f}x"
        text = line + (f" {fields['target']}" if fields["target"] else "")
        print(text)
    else:
        print(text.format(**fields))
    return entry


def detail(key: str, value: Any) -> None:
    """Keep ``value`` in the results file's ``details`` (not in the table)."""
    if _ACTIVE:
        _ACTIVE[-1].details[key] = value


# --- RESULTS.md -------------------------------------------------------------------------------


def _num(x: float | int | bool) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x):
        return "n/a"
    a = abs(x)
    return f"{x:.1f}" if a >= 100 else f"{x:.2f}" if a >= 1 else f"{x:.3f}"


def _cell(measure: dict[str, Any] | None, unit: str) -> str:
    if not measure:
        return ""
    if "value" not in measure:
        if measure.get("p50") is None:
            return "n/a"
        return f"p50 {_num(measure['p50'])} / p95 {_num(measure['p95'])} {unit}"
    v = measure["value"]
    if isinstance(v, bool) or unit in ("count", "score", "", "bool"):
        return _num(v)
    if unit.startswith("/"):
        return f"{_num(v)}{unit}"
    return f"{_num(v)} {unit}"


def _esc(text: str) -> str:
    return text.replace("|", "\\|")


def _met(met: bool | None) -> str:
    return "" if met is None else "yes" if met else "**no**"


def _section(doc: dict[str, Any]) -> list[str]:
    server = doc.get("server") or {}
    where = server.get("kind") or "?"
    if server.get("dsn"):
        where += f" `{server['dsn']}`"
    args = ", ".join(f"{k}={v}" for k, v in (doc.get("arguments") or {}).items())
    run_at = str(doc.get("run_at", "?")).replace("T", " ").replace("Z", " UTC")
    lines = [
        f"## {doc['benchmark']}",
        "",
        f"`python {doc.get('script', 'bench/' + doc['benchmark'] + '.py')}` · "
        f"{run_at} · Python {doc.get('python', '?')} · "
        f"PostgreSQL {server.get('version') or '?'} ({where}) · "
        f"{(doc.get('machine') or {}).get('cpus', '?')} CPUs"
        + (f" · commit {doc['commit']}" if doc.get("commit") else ""),
        "",
        f"Arguments: {args or 'defaults'}.",
        "",
        "| row | ours | baseline | ratio | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in doc.get("rows") or []:
        ratio = "" if r.get("ratio") is None else f"{r['ratio']:.2f}x"
        lines.append(
            f"| {_esc(r['name'])} | {_cell(r.get('ours'), r.get('unit', ''))} | "
            f"{_cell(r.get('baseline'), r.get('unit', ''))} | {ratio} | "
            f"{_esc(r.get('target') or '')} | {_met(r.get('met'))} |"
        )
    return lines + [""]


HEADER = """\
# Benchmark results

<!-- Generated by the benchmarks in bench/ from bench/results/*.json. Do not edit by hand. -->

This file is **generated by the benchmarks** (`python bench/<name>.py`, see each section) from
`bench/results/<name>.json`, which each benchmark rewrites at the end of its run; do not edit
it by hand, run the benchmark again (`--no-save` runs write nothing). Ratios are ours /
baseline, both measured in the same run on the same server (p50 for latencies); "met" is
empty where the row has no machine-readable target. The figures depend on the machine and on
what else ran on it at the time: compare ratios, not milliseconds.
"""


def render_results_md(docs: list[dict[str, Any]]) -> str:
    """The text of ``RESULTS.md`` for the given results documents."""
    lines = [HEADER]
    for doc in sorted(docs, key=lambda d: str(d.get("benchmark"))):
        lines += _section(doc)
    return "\n".join(lines).rstrip("\n") + "\n"


def write_results_md(out: Path) -> Path:
    """Regenerate ``out/RESULTS.md`` from every ``out/results/*.json``."""
    docs = [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((out / "results").glob("*.json"))
    ]
    md = out / "RESULTS.md"
    md.write_text(render_results_md(docs), encoding="utf-8")
    return md
