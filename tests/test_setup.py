"""setup(): migrations run once, twice is a no-op; DSN resolution; configuration errors."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from psycopg_pool import ConnectionPool

from memory_graph import (
    AsyncMemoryStore,
    ConfigurationError,
    Limits,
    MemoryStore,
    Owner,
    StorageUnavailableError,
)
from memory_graph.storage.schema import MIGRATIONS


def test_migrations_run_twice(store, pg_dsn):
    assert store.setup() == []  # the fixture already ran it
    assert store.setup() == []
    with psycopg.connect(pg_dsn) as c:
        versions = [r[0] for r in c.execute("SELECT v FROM mg_migrations ORDER BY v")]
        tables = {
            r[0] for r in c.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'mg_%'")
        }
    assert versions == list(range(len(MIGRATIONS)))
    assert {
        "mg_records",
        "mg_pool_stats",
        "mg_profiles",
        "mg_personas",
        "mg_proposals",
        "mg_grants",
        "mg_audit",
        "mg_migrations",
        "mg_meta",
    } <= tables
    assert not tables & {"mg_record_tokens", "mg_postings", "mg_term_df"}  # v13


def test_first_setup_applies_all(pg_dsn):
    with MemoryStore.from_dsn(pg_dsn) as s:
        assert s.setup() == list(range(len(MIGRATIONS)))
        assert s.setup() == []


def test_missing_setup_names_the_fix(pg_dsn):
    with MemoryStore.from_dsn(pg_dsn) as s:
        with pytest.raises(ConfigurationError, match=r"store.setup\(\)"):
            s.get_profile(Owner("alice"))
        with pytest.raises(ConfigurationError, match=r"store.setup\(\)"):
            s.set_preference(Owner("alice"), "tone", "x")


def test_dsn_from_environment(pg_dsn, monkeypatch):
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    with MemoryStore.from_dsn() as s:
        assert s.dsn == pg_dsn
        s.setup()
        assert s.limits == Limits()

    async def main() -> None:
        async with AsyncMemoryStore.from_dsn() as a:
            assert a.dsn == pg_dsn
            assert (await a.get_profile(Owner("alice"))).revision == 0

    asyncio.run(main())


def test_store_from_pool(pg_dsn):
    pool = ConnectionPool(pg_dsn, open=False, kwargs={"autocommit": False})
    pool.open()
    try:
        s = MemoryStore(pool)
        with pytest.raises(ConfigurationError, match="dsn="):
            _ = s.dsn
        s.setup()
        assert s.set_preference(Owner("alice"), "tone", "x").status == "CREATED"
        assert MemoryStore(pool, dsn=pg_dsn).dsn == pg_dsn
    finally:
        pool.close()
    with pytest.raises(ConfigurationError):
        MemoryStore(pool, limits="big")  # type: ignore[arg-type]


def test_unreachable_server():
    with pytest.raises(StorageUnavailableError):
        MemoryStore.open("postgresql://postgres@127.0.0.1:1/postgres")
    with pytest.raises(StorageUnavailableError):
        asyncio.run(AsyncMemoryStore.open("postgresql://postgres@127.0.0.1:1/postgres"))


def test_open_and_close(pg_dsn):
    s = MemoryStore.open(pg_dsn)
    s.setup()
    s.close()
