"""A sharding-ready schema, shown by running it (issue 30 §6).

``setup(partitions=8)`` hash-partitions every ``mg_*`` table on its distribution key
(``scope_id``; ``thread_id`` for the thread directory ``mg_threads``). Every key and unique
index includes that key, and each statement the store sends on the per-user paths (recall,
turn entry, propose, decide, audit, forget, and the other per-user calls) reads and writes one
partition of each table (a user's thread listing and forget scan the thread directory):
``EXPLAIN`` of the statements captured from the store's own connections says so. The rest of
the store suite runs on a partitioned database in CI (``MEMORY_GRAPH_PARTITIONS=8``, a stage
of ``.ci/test``).
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from memory_graph import ConfigurationError, MemoryStore, Owner
from memory_graph.storage.driver import PoolOptions, open_pool
from memory_graph.storage.ops.vector import EMBEDDINGS_SQL
from memory_graph.storage.partitions import PARTITIONS_ENV, partitioned_sql
from memory_graph.storage.shell.common import pool_kwargs

N = 8
ALICE = Owner("alice", workspace="/w/shop", agent="coder")
BOB = Owner("bob")
GLOBAL = {"mg_migrations", "mg_meta"}
# The thread directory: one claim per (space, thread_id) across owners (ops/threads.py).
THREAD_DIRECTORY = {"mg_threads": "thread_id"}


@pytest.fixture(autouse=True)
def _no_partitions_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CI stage that runs the store suite partitioned sets the variable; these tests
    # choose the layout themselves.
    monkeypatch.delenv(PARTITIONS_ENV, raising=False)


def _tables(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """``mg_*`` tables that are not partitions, with their relkind."""
    rows = conn.execute(
        "SELECT relname, relkind FROM pg_class WHERE relname LIKE 'mg\\_%' "
        "AND relkind IN ('r', 'p') AND NOT relispartition "
        "AND relnamespace = 'public'::regnamespace"
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def _layout(conn: psycopg.Connection[Any]) -> dict[str, tuple[str, int]]:
    """Partitioned table -> (its partition key column, its number of partitions)."""
    rows = conn.execute(
        "SELECT c.relname, a.attname, (SELECT count(*) FROM pg_inherits i "
        "WHERE i.inhparent = c.oid) FROM pg_partitioned_table p "
        "JOIN pg_class c ON c.oid = p.partrelid "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0] "
        "WHERE p.partstrat = 'h' AND p.partnatts = 1"
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def _unique_keys(conn: psycopg.Connection[Any]) -> list[tuple[str, str, list[str]]]:
    """(table, index, key columns) of every primary key and unique index on mg_* tables."""
    rows = conn.execute(
        "SELECT t.relname, i.relname, ARRAY(SELECT a.attname FROM unnest(x.indkey[0:"
        "x.indnkeyatts - 1]) k JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k) "
        "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "JOIN pg_class t ON t.oid = x.indrelid WHERE x.indisunique "
        "AND t.relname LIKE 'mg\\_%' AND NOT t.relispartition"
    ).fetchall()
    return [(r[0], r[1], list(r[2])) for r in rows]


def _setup(dsn: str, partitions: int | None = None) -> list[int]:
    with MemoryStore.from_dsn(dsn, max_size=2) as store:
        return store.setup(partitions=partitions)


@pytest.mark.parametrize("partitions", [0, N])
def test_every_key_includes_the_distribution_key(pg_dsn: str, partitions: int) -> None:
    _setup(pg_dsn, partitions)
    with psycopg.connect(pg_dsn) as conn:
        tables = _tables(conn)
        keys = _unique_keys(conn)
        cols = conn.execute(
            "SELECT table_name FROM information_schema.columns "
            "WHERE column_name = 'scope_id' AND table_name LIKE 'mg\\_%'"
        ).fetchall()
    scoped = {r[0] for r in cols} & set(tables)
    # Every table but the two bookkeeping ones carries scope_id.
    assert scoped == set(tables) - GLOBAL and "mg_records" in scoped
    assert {t for t, _i, _k in keys} >= scoped
    for table, index, key in keys:
        if table in GLOBAL:
            continue
        assert THREAD_DIRECTORY.get(table, "scope_id") in key, (table, index, key)
    # The thread directory's primary key carries scope_id too (erasure deletes by it).
    assert any(t == "mg_threads" and "scope_id" in k for t, _i, k in keys)


def test_setup_partitions_hashes_every_table_on_its_key(pg_dsn: str) -> None:
    assert _setup(pg_dsn, N)[-1] == 15
    assert _setup(pg_dsn) == [] and _setup(pg_dsn, N) == []  # later setups keep the layout
    with psycopg.connect(pg_dsn) as conn:
        tables = _tables(conn)
        layout = _layout(conn)
        meta = conn.execute("SELECT value FROM mg_meta WHERE key = 'partitions'").fetchone()
    assert meta == (str(N),)
    assert {t for t, kind in tables.items() if kind == "r"} == GLOBAL
    assert set(layout) == set(tables) - GLOBAL
    for table, (key, count) in layout.items():
        assert (key, count) == (THREAD_DIRECTORY.get(table, "scope_id"), N), table


def test_a_new_table_of_a_later_migration_is_partitioned_too() -> None:
    # The optional vector table (enable_embeddings) goes through the same rewrite; the
    # parent's column list and indexes stay as written.
    sql = partitioned_sql(EMBEDDINGS_SQL, 4)
    assert "CREATE EXTENSION IF NOT EXISTS vector;" in sql
    assert ") PARTITION BY HASH (scope_id);" in sql
    assert [int(k) for k in re.findall(r"mg_embeddings_p(\d) PARTITION OF", sql)] == [0, 1, 2, 3]
    assert "CREATE INDEX IF NOT EXISTS mg_embeddings_record" in sql
    assert partitioned_sql(EMBEDDINGS_SQL, 0) == EMBEDDINGS_SQL
    # mg_meta and mg_migrations have no distribution key: never partitioned.
    from memory_graph.storage.schema import MIGRATIONS

    assert partitioned_sql(MIGRATIONS[0], N) == MIGRATIONS[0]


def test_setup_refuses_another_layout_and_bad_counts(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _setup(pg_dsn)  # plain tables
    for bad in (N, 1):
        with pytest.raises(ConfigurationError, match="set up without partitions"):
            _setup(pg_dsn, bad)
    monkeypatch.setenv(PARTITIONS_ENV, str(N))
    with pytest.raises(ConfigurationError, match="without partitions"):
        _setup(pg_dsn)
    monkeypatch.setenv(PARTITIONS_ENV, "eight")
    with pytest.raises(ConfigurationError, match=PARTITIONS_ENV):
        _setup(pg_dsn)
    monkeypatch.delenv(PARTITIONS_ENV)
    assert _setup(pg_dsn, 0) == []
    for value in (-1, 1025, True, "8", 2.0):
        with pytest.raises(ConfigurationError, match="integer from 0"):
            _setup(pg_dsn, value)  # type: ignore[arg-type]
    with psycopg.connect(pg_dsn) as conn:
        assert _layout(conn) == {}
        assert conn.execute("SELECT value FROM mg_meta WHERE key = 'partitions'").fetchone() is None


def test_a_partitioned_database_refuses_another_count(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PARTITIONS_ENV, str(N))
    assert _setup(pg_dsn)[0] == 0  # the variable partitions a new database
    monkeypatch.delenv(PARTITIONS_ENV)
    for other in (0, 4):
        with pytest.raises(ConfigurationError, match=f"with {N} partitions"):
            _setup(pg_dsn, other)
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT value FROM mg_meta WHERE key = 'partitions'").fetchone() == (
            str(N),
        )
        assert _layout(conn)["mg_records"] == ("scope_id", N)


@pytest.fixture(scope="module")
def vector_server_dsn(pg_server_dsn: str) -> str:
    """A server with pgvector: the embedded one (the system server lacks pgvector)."""
    if not os.environ.get("MEMORY_GRAPH_TEST_DSN"):
        return pg_server_dsn
    from memory_graph.storage.server.embedded import start_embedded

    return start_embedded(tempfile.mkdtemp(prefix="mg-test-vec-"))


def test_the_vector_table_follows_the_recorded_count(vector_server_dsn: str) -> None:
    from test_hybrid import TrigramEmbeddings

    name = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(vector_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = make_conninfo(vector_server_dsn, dbname=name)
    try:
        with MemoryStore.from_dsn(dsn, max_size=2, embeddings=TrigramEmbeddings()) as store:
            store.setup(partitions=4)
            store.enable_embeddings()
            store.add(ALICE, "fact", "Alice grows tomatoes on the balcony")
            store.add(BOB, "fact", "Bob keeps bees")
            assert store.index_embeddings(ALICE) == 1 and store.index_embeddings(BOB) == 1
            hits = store.search(ALICE, "tomato balcony")
            assert [h.record.content for h in hits][:1] == ["Alice grows tomatoes on the balcony"]
            assert store.forget_user(ALICE.user_id).rows["mg_embeddings"] == 1
        with psycopg.connect(dsn) as conn:
            assert _layout(conn)["mg_embeddings"] == ("scope_id", 4)
            assert conn.execute("SELECT count(*) FROM mg_embeddings").fetchone() == (1,)
    finally:
        with psycopg.connect(vector_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# --- the hot statements, captured from the store's connections ------------------------------


class _Recorder(psycopg.Cursor[Any]):
    """A cursor that keeps every statement it runs (text and parameters)."""

    sent: list[tuple[str, Any]] = []

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        _Recorder.sent.append((query, params))
        return super().execute(query, params, **kwargs)


@pytest.fixture
def recorded(pg_dsn: str) -> Iterator[MemoryStore]:
    """A store on a database set up with 8 partitions, whose statements are recorded."""
    _setup(pg_dsn, N)
    pool = open_pool(pg_dsn, PoolOptions(max_size=2), **pool_kwargs(), cursor_factory=_Recorder)
    store = MemoryStore(pool, dsn=pg_dsn)
    try:
        yield store
    finally:
        store.close()


def _plan_relations(plan: dict[str, Any]) -> Iterator[str]:
    if "Relation Name" in plan:
        yield plan["Relation Name"]
    for child in plan.get("Plans", ()):
        yield from _plan_relations(child)


def _touched(dsn: str, statements: list[tuple[str, Any]]) -> list[tuple[str, dict[str, set[str]]]]:
    """Each statement with the partitions its plan reads or writes, by partitioned table."""
    out = []
    with psycopg.connect(dsn, options="-c TimeZone=UTC") as conn:
        parent = dict(
            conn.execute(
                "SELECT c.relname, p.relname FROM pg_inherits i JOIN pg_class c "
                "ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent"
            ).fetchall()
        )
        partitioned = set(parent.values())
        for sql, params in statements:
            text = sql if isinstance(sql, str) else sql.as_string(conn)
            if not re.search(r"\bmg_", text):
                continue
            plan = conn.execute("EXPLAIN (FORMAT JSON) " + text, params).fetchone()[0][0]
            conn.rollback()
            by_table: dict[str, set[str]] = {}
            for rel in _plan_relations(plan["Plan"]):
                if rel in parent:
                    by_table.setdefault(parent[rel], set()).add(rel)
                elif rel in partitioned:
                    by_table.setdefault(rel, set())  # inserted into: routed by its key
            out.append((" ".join(text.split())[:90], by_table))
    return out


def _run(store: MemoryStore, call: Any) -> list[tuple[str, Any]]:
    _Recorder.sent = []
    call()
    return list(_Recorder.sent)


def _record_writes(store: MemoryStore) -> None:
    added = store.add(ALICE, "fact", "Alice walks to work", level="user")
    assert added.record_id is not None
    record = store.reinforce(ALICE, added.record_id, source_event_id="m-1")
    replaced = store.replace(
        ALICE, added.record_id, "Alice cycles to work", base_version=record.version
    )
    assert replaced.record_id is not None and replaced.version is not None
    store.remove(ALICE, replaced.record_id, base_version=replaced.version)


def _grant(store: MemoryStore) -> None:
    grant = store.create_grant(
        ALICE,
        expires_at=datetime.now(timezone.utc) + timedelta(hours=1),
        kinds=["fact"],
        operations=["add"],
        max_mutations=2,
        max_bytes=200,
    )
    p = store.propose(ALICE, "add", {"kind": "fact", "content": "Alice bakes bread"}, level="user")
    store.decide_with_grant(ALICE, p.id, grant.id)


def test_each_hot_statement_touches_one_partition(recorded: MemoryStore, pg_dsn: str) -> None:
    store = recorded
    for owner in (ALICE, BOB, Owner("carol"), Owner("dave", agent="coder")):
        store.set_preference(owner, "reply.language", "en")
        store.add(owner, "fact", f"{owner.user_id} grows tomatoes on the balcony")
    store.claim_thread(BOB, "b-1")
    ops = {
        "claim thread": lambda: store.claim_thread(ALICE, "t-1"),
        "check thread": lambda: store.check_thread(ALICE, "t-1"),
        "propose": lambda: store.propose(
            ALICE,
            "add",
            {"kind": "fact", "content": "Alice cooks with tomatoes"},
            level="user",
            thread_id="t-1",
            idempotency_key="k1",
        ),
        "turn entry": lambda: store._turn_entry(
            ALICE,
            thread_id="t-1",
            recall={
                "task_step": None,
                "latest_input": "tomatoes",
                "goal": None,
                "limit": None,
                "max_bytes": None,
                "max_tokens": None,
            },
        ),
        "recall snapshot": lambda: store.snapshot(ALICE, latest_input="what do I cook"),
        "search": lambda: store.search(ALICE, "tomatoes"),
        "list page": lambda: store.list_page(ALICE),
        "context block": lambda: store.context_block(ALICE),
        "decide": lambda: store.decide(ALICE, store.list_pending(ALICE)[0].id, "approve"),
        "set preference": lambda: store.set_preference(ALICE, "reply.tone", "short"),
        "audit read": lambda: store.audit_log(ALICE),
        "profile": lambda: (store.patch_profile(ALICE, {"name": "Al"}), store.get_profile(ALICE)),
        "persona": lambda: (
            store.set_persona(ALICE, assistant_values="kind"),
            store.get_persona(ALICE),
        ),
        "preferences": lambda: store.get_preferences(ALICE),
        "record writes": lambda: _record_writes(store),
        "grant": lambda: _grant(store),
        "export": lambda: (store.export(ALICE), store.memory_md(ALICE)),
        "list threads": lambda: store.list_threads(ALICE),
        "forget": lambda: store.forget_user(ALICE.user_id),
    }
    seen: set[str] = set()
    cross: list[str] = []
    for name, call in ops.items():
        statements = _run(store, call)
        touched = _touched(pg_dsn, statements)
        assert touched, name  # the path sends statements on mg_* tables
        for text, by_table in touched:
            seen |= set(by_table)
            for table, parts in by_table.items():
                if name in ("forget", "list threads") and table in THREAD_DIRECTORY:
                    # The documented cross-shard statements: a user's thread claims are
                    # listed and erased by scope_id in the thread directory.
                    if len(parts) == N:
                        cross.append(text)
                    continue
                assert len(parts) <= 1, (name, table, sorted(parts), text)
    assert {"mg_records", "mg_proposals", "mg_audit", "mg_threads", "mg_profiles"} <= seen
    # The plans are read right: a statement without the key is seen touching every partition.
    assert cross and all("mg_threads" in t and "scope_id = %s" in t for t in cross), cross


def test_forget_names_each_table_once_on_a_partitioned_database(recorded: MemoryStore) -> None:
    store = recorded
    store.add(ALICE, "fact", "Alice grows tomatoes")
    store.add(BOB, "fact", "Bob grows beans")
    store.claim_thread(ALICE, "t-1")
    _Recorder.sent = []
    report = store.forget_user(ALICE.user_id)
    deletes = [str(s) for s, _p in _Recorder.sent if str(s).startswith("DELETE FROM")]
    # Each table once (by its parent, so one partition), never a partition by name.
    assert not [d for d in deletes if re.search(r"_p\d+\b", d)], deletes
    assert {"mg_records", "mg_threads", "mg_audit"} <= set(report.rows)
    assert not [t for t in report.rows if re.search(r"_p\d+$", t)], report.rows
    assert store.list_records(BOB) and not store.list_records(ALICE)
