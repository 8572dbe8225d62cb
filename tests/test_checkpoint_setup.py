"""The checkpointer's first setup is safe from many processes at once, and repairs an index.

LangGraph's ``PostgresSaver.setup()`` creates its tables and indexes without a lock (some with
``CREATE INDEX CONCURRENTLY IF NOT EXISTS``): several processes opening a brand-new database at
once raced into ``UniqueViolation`` / ``DuplicateTable`` / deadlocks, and a concurrent build that
failed left an *invalid* index that ``IF NOT EXISTS`` then skips forever.
``nodes.open_checkpointer`` runs setup under an advisory lock and rebuilds an invalid index of
the checkpoint tables.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import MemoryStore
from nodes import open_async_checkpointer, open_checkpointer

ROOT = Path(__file__).resolve().parents[1]
_INVALID = """
    SELECT c.relname FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_class t ON t.oid = i.indrelid
    WHERE NOT i.indisvalid AND t.relname LIKE 'checkpoint%%'
"""

_OPENER = """
import sys, time
from memory_graph import MemoryStore
from nodes import open_checkpointer
dsn, start = sys.argv[1], float(sys.argv[2])
with MemoryStore.open(dsn) as store:
    time.sleep(max(0.0, start - time.time()))
    with open_checkpointer(store) as saver:
        saver.get_tuple({"configurable": {"thread_id": "t"}})
print("ok")
"""


def _invalid(dsn: str) -> list[str]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return [row[0] for row in conn.execute(_INVALID).fetchall()]


@pytest.mark.slow
def test_many_processes_set_up_a_new_database_at_once(pg_server_dsn: str) -> None:
    for round_ in range(3):
        name = f"mg_ckpt_race_{round_}_{int(time.time() * 1000) % 10**8}"
        with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        params = conninfo_to_dict(pg_server_dsn)
        params["dbname"] = name
        dsn = make_conninfo(**params)  # type: ignore[arg-type]
        try:
            start = time.time() + 6.0  # every process imports first, then all open together
            procs = [
                subprocess.Popen(
                    [sys.executable, "-c", _OPENER, dsn, str(start)],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(6)
            ]
            results = [p.communicate(timeout=180) for p in procs]
            failures = [
                err[-800:] for p, (_, err) in zip(procs, results, strict=True) if p.returncode
            ]
            assert failures == [], failures[0] if failures else ""
            assert all(out.strip() == "ok" for out, _ in results)
            assert _invalid(dsn) == []
        finally:
            with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _make_index_invalid(dsn: str) -> str:
    with psycopg.connect(dsn, autocommit=True) as conn:
        name = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'checkpoint_blobs'"
            " AND indexname <> 'checkpoint_blobs_pkey' ORDER BY indexname LIMIT 1"
        ).fetchone()
        assert name is not None, "the checkpointer's setup creates a secondary index"
        # What a failed CREATE INDEX CONCURRENTLY leaves behind.
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", (name[0],)
        )
    assert _invalid(dsn) == [name[0]]
    return str(name[0])


def test_setup_rebuilds_an_invalid_checkpoint_index(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn) as store:
        with open_checkpointer(store):
            pass
        _make_index_invalid(pg_dsn)
        with open_checkpointer(store):
            pass
        assert _invalid(pg_dsn) == []
        _make_index_invalid(pg_dsn)
        with open_checkpointer(store, setup=False):
            pass
        assert len(_invalid(pg_dsn)) == 1  # setup=False touches nothing


def test_async_setup_rebuilds_an_invalid_checkpoint_index(pg_dsn: str) -> None:
    async def main(store: MemoryStore) -> None:
        async with open_async_checkpointer(store):
            pass
        _make_index_invalid(pg_dsn)
        async with open_async_checkpointer(store):
            pass

    with MemoryStore.open(pg_dsn) as store:
        asyncio.run(main(store))
    assert _invalid(pg_dsn) == []
