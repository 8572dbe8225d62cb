"""Cost of the dense leg of hybrid recall: a search with pgvector and with ``real[]`` vectors,
against the lexical search of the same store, at 100 and 1,000 records; and, on a server with
pgvector, against LangGraph's ``PostgresStore.search`` whose index embeds with the same model
(the semantic peer: both embed the query, then rank).

The dense leg is ranked in process over the owner's recall pool (``storage/ops/hybrid.py``),
so a warm search is one statement; the lexical leg of a fused search ranks deeper (30) than a
top-10 lexical search, which is most of what it costs over it.

The embedding model is a deterministic stand-in (a seeded 384-dimension vector per text; the
model's own time is not what is measured), and each query text is new, so the query vector
cache never answers. The pgvector rows need a server with pgvector (the embedded server, the
default); on one without, only the ``real[]`` rows run. A scratch database per case is
created and dropped.

Usage::

    python bench/bench_hybrid.py [--dsn DSN] [--n 50] [--sizes 100,1000] [--no-save] [--out DIR]

Prints p50/p95 and the ratio to the lexical search of the same store. Writes
``bench/results/bench_hybrid.json`` and regenerates ``bench/RESULTS.md`` (``_common``).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import psycopg  # noqa: E402
from _common import (  # noqa: E402
    add_result_options,
    paired,
    recording,
    row,
    scratch_database,
    server_dsn,
)
from langchain_core.embeddings import Embeddings  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402
from langgraph.store.postgres import PostgresStore  # noqa: E402
from psycopg.rows import dict_row  # noqa: E402
from psycopg_pool import ConnectionPool  # noqa: E402

from memory_graph import Limits, MemoryStore, Owner  # noqa: E402

DIM = 384


class SeededEmbeddings(Embeddings):
    """A fixed pseudo-random unit-free vector per text (no model time in the figures)."""

    model = "seeded-384"

    def _vector(self, text: str) -> list[float]:
        rng = random.Random(hashlib.sha256(text.encode()).digest())
        return [rng.gauss(0.0, 1.0) for _ in range(DIM)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def _case(dsn: str, records: int, pgvector: bool, n: int) -> tuple[list[float], list[float]]:
    limits = Limits(max_records_per_identity=100_000)
    owner = Owner("bench-hybrid")
    items = [
        {"kind": "fact", "content": f"note {i} about topic w{i % 97} and w{i % 13}"}
        for i in range(records)
    ]
    with (
        scratch_database(dsn) as db,
        MemoryStore.from_dsn(db, embeddings=SeededEmbeddings(), limits=limits) as hybrid,
        MemoryStore.from_dsn(db, limits=limits) as lexical,
    ):
        hybrid.setup()
        hybrid.add_many(owner, items)
        kind = hybrid.enable_embeddings(pgvector=pgvector)
        assert kind == ("vector" if pgvector else "array")
        hybrid.index_embeddings(owner)
        counter = iter(range(10**9))

        def ours() -> Any:
            return hybrid.search(owner, f"what about w{next(counter) % 97} topic", limit=10)

        def base() -> Any:
            return lexical.search(owner, f"what about w{next(counter) % 97} topic", limit=10)

        return paired(ours, base, n)


def _peer_case(dsn: str, records: int, n: int) -> tuple[list[float], list[float]]:
    """Hybrid search vs ``PostgresStore.search`` with an index of the same embeddings."""
    limits = Limits(max_records_per_identity=100_000)
    owner = Owner("bench-hybrid-peer")
    texts = [f"note {i} about topic w{i % 97} and w{i % 13}" for i in range(records)]
    with (
        scratch_database(dsn) as db,
        MemoryStore.from_dsn(db, embeddings=SeededEmbeddings(), limits=limits) as hybrid,
        ConnectionPool(
            db,
            min_size=1,
            max_size=2,
            open=True,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
        ) as pool,
    ):
        hybrid.setup()
        hybrid.add_many(owner, [{"kind": "fact", "content": t} for t in texts])
        hybrid.enable_embeddings(pgvector=True)
        hybrid.index_embeddings(owner)
        peer = PostgresStore(
            pool,  # type: ignore[arg-type]
            index={"dims": DIM, "embed": SeededEmbeddings(), "fields": ["text"]},
        )
        peer.setup()
        ns = ("bench", "user")
        peer.batch([PutOp(ns, f"k{i}", {"text": t}) for i, t in enumerate(texts)])
        counter = iter(range(10**9))

        def ours() -> Any:
            return hybrid.search(owner, f"what about w{next(counter) % 97} topic", limit=10)

        def base() -> Any:
            return peer.search(ns, query=f"what about w{next(counter) % 97} topic", limit=10)

        return paired(ours, base, n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dsn", default=None, help="a server with pgvector (default: embedded)")
    ap.add_argument("--n", type=int, default=50, help="searches per case")
    ap.add_argument("--sizes", default="100,1000", help="records per case, comma-separated")
    add_result_options(ap)
    args = ap.parse_args(argv)
    with recording("bench_hybrid", args):
        dsn = server_dsn(args.dsn)
        with psycopg.connect(dsn) as conn:
            found = conn.execute(
                "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
        kinds = [(False, "real[]")]
        if found and found[0]:
            kinds.insert(0, (True, "pgvector"))
        else:
            print("this server has no pgvector: only the real[] rows are measured")
        for records in (int(x) for x in args.sizes.split(",")):
            for pgvector, label in kinds:
                ours, base = _case(dsn, records, pgvector, args.n)
                print(row(f"hybrid search ({label}) at {records} vs lexical", ours, base))
            if kinds[0][0]:
                ours, base = _peer_case(dsn, records, args.n)
                print(
                    row(
                        f"hybrid search at {records} vs PostgresStore.search, same embeddings",
                        ours,
                        base,
                        "<= 1.2x",
                    )
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
