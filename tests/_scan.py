"""Whole-database scans for the privacy tests: every table, every column, decoded.

Every row of every table outside the system schemas is read back; a ``bytea`` value is
searched as raw bytes (checkpoint blobs are msgpack, which stores strings as raw UTF-8), a
``jsonb`` value as its JSON text, anything else (text, arrays, numbers) as its text form.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg import sql

from memory_graph.storage.schema import RECALL_STATS_REFRESH

__all__ = ["scan", "scan_tables", "stats_consistent"]


def scan_tables(dsn: str) -> list[tuple[str, str]]:
    """Every ordinary table of the database as ``(schema, name)``."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_type = 'BASE TABLE' AND table_schema NOT IN "
            "('pg_catalog', 'information_schema') ORDER BY 1, 2"
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def _texts(value: Any) -> list[bytes]:
    if value is None:
        return []
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [bytes(value)]
    if isinstance(value, (dict, list)):
        return [json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")]
    return [str(value).encode("utf-8")]


def scan(dsn: str, words: list[str]) -> dict[str, list[str]]:
    """Where each word occurs: ``{word: ["schema.table.column", ...]}`` (case-insensitive)."""
    needles = {w: w.casefold().encode("utf-8") for w in words}
    hits: dict[str, list[str]] = {w: [] for w in words}
    with psycopg.connect(dsn) as conn:
        for schema, table in scan_tables(dsn):
            cur = conn.execute(
                sql.SQL("SELECT * FROM {}.{}").format(sql.Identifier(schema), sql.Identifier(table))
            )
            cols = [d.name for d in cur.description or []]
            for row in cur.fetchall():
                for col, value in zip(cols, row, strict=True):
                    for blob in _texts(value):
                        low = blob.lower()
                        for word, needle in needles.items():
                            if needle in low or word.encode("utf-8") in blob:
                                hits[word].append(f"{schema}.{table}.{col}")
    return hits


def stats_consistent(dsn: str) -> None:
    """Assert that mg_pool_stats equals a recount from mg_records."""
    q = "SELECT * FROM mg_pool_stats ORDER BY scope_id, agent_key, workspace_key, sensitivity"
    with psycopg.connect(dsn) as conn:
        before = conn.execute(q).fetchall()
        conn.execute(RECALL_STATS_REFRESH)  # recount, then roll back
        after = conn.execute(q).fetchall()
        conn.rollback()
    assert before == after
