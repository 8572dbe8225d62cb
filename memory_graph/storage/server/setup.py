"""DSN resolution and the ``setup()`` operation (migrations + tokenizer-version restamp)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...recall.tokenize import TOKENIZER_VERSION, index_tokens
from ..driver import Op, Query
from ..partitions import partitioned_sql, partitions_option, resolve_partitions
from ..schema import MIGRATIONS, SETUP_LOCK_KEY

__all__ = ["resolve_dsn", "setup_op"]

DSN_ENV = "MEMORY_GRAPH_DSN"


def resolve_dsn(dsn: str | None = None, *, data_dir: str | Path | None = None) -> str:
    """Return ``dsn``, else ``$MEMORY_GRAPH_DSN``, else the embedded server's URI.

    Starting the embedded server is the only side effect, and only when no DSN is given.
    """
    if dsn:
        return dsn
    env = os.environ.get(DSN_ENV)
    if env:
        return env
    from .embedded import start_embedded

    return start_embedded(data_dir)


def _knowledge_from_json(raw: Any) -> Any:
    from ...types import Claim, Knowledge

    if not raw:
        return None
    claim = raw.get("claim")
    return Knowledge(
        applies_when=tuple(raw.get("applies_when") or ()),
        counterexamples=tuple(raw.get("counterexamples") or ()),
        claim=Claim(claim["key"], claim["value"]) if claim else None,
    )


def setup_op(partitions: int | None = None) -> Op[list[int]]:
    """Apply pending migrations, then re-tokenize the records if the tokenizer changed.

    Recall tokenizes records in process (:mod:`..ops.recall_cache`); the rewrite of
    ``mg_records.tokens`` gives every record a new recall stamp, so every process's cached
    pool is rebuilt with the running tokenizer.

    Runs in one transaction under an advisory lock, so concurrent ``setup()`` calls are safe
    and a failure leaves nothing half-applied. Returns the versions applied by this call.

    Args:
        partitions: hash-partition the tables into this many partitions on a database
            without memory-graph tables (:mod:`..partitions`); default
            ``$MEMORY_GRAPH_PARTITIONS``, else what the database has (plain tables on a
            new one). ``0``: plain tables.

    Raises:
        ConfigurationError: ``partitions`` is not an integer in ``0..1024``, or differs from
            how the database was set up.
    """
    return _setup(partitions_option(partitions))


def _setup(wanted: int | None) -> Op[list[int]]:
    yield Query("SELECT pg_advisory_xact_lock(%s)", (SETUP_LOCK_KEY,), fetch="none")
    yield Query(MIGRATIONS[0], fetch="none")
    rows = yield Query("SELECT v FROM mg_migrations")
    done = {r["v"] for r in rows}
    row = yield Query("SELECT value FROM mg_meta WHERE key = 'partitions'", fetch="one")
    recorded = int(row["value"]) if row is not None else None
    partitions = resolve_partitions(wanted, recorded=recorded, fresh=not done)
    if partitions and recorded is None:
        yield Query(
            "INSERT INTO mg_meta (key, value) VALUES ('partitions', %s)",
            (str(partitions),),
            fetch="none",
        )
    applied: list[int] = []
    for version, sql in enumerate(MIGRATIONS):
        if version in done:
            continue
        yield Query(partitioned_sql(sql, partitions), fetch="none")
        yield Query("INSERT INTO mg_migrations (v) VALUES (%s)", (version,), fetch="none")
        applied.append(version)
    row = yield Query("SELECT value FROM mg_meta WHERE key = 'tokenizer_version'", fetch="one")
    if row is None or int(row["value"]) != TOKENIZER_VERSION:
        yield from _retokenize()
        yield Query(
            "INSERT INTO mg_meta (key, value) VALUES ('tokenizer_version', %s) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (str(TOKENIZER_VERSION),),
            fetch="none",
        )
    return applied


def _retokenize() -> Op[None]:
    # All-or-nothing: this runs inside setup()'s single transaction.
    rows = yield Query(
        "SELECT scope_id, id, key, content, knowledge FROM mg_records WHERE status = 'active'"
    )
    for r in rows:
        knowledge = _knowledge_from_json(r["knowledge"])
        tokens = sorted(set(index_tokens(r["content"], knowledge, r["key"])))
        yield Query(
            "UPDATE mg_records SET tokens = %s WHERE scope_id = %s AND id = %s",
            (tokens, r["scope_id"], r["id"]),
            fetch="none",
        )
