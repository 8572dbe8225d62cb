"""Migration v14 (issue 14): ``mg_pool_stats`` follows an update through a row trigger that
fires only when the row enters, leaves or moves within the counted pool, and the counter
tables' keys hold no counter (a bump is then a HOT update, with no new index entry).

The counts are what the capacity check reads, so after every kind of update (a preference
value, a replace, a confidence bump, a removal, a preference deletion, and direct changes of
status, sensitivity and identity) they must equal a recount from ``mg_records``.
"""

from __future__ import annotations

from datetime import timedelta

import psycopg
from _scan import stats_consistent
from _stores import T0, schema_at

from memory_graph import Limits, MemoryStore, Owner

ALICE = Owner("alice", agent="helper", workspace="w1")


def _trigger(dsn: str) -> tuple[bool, bool]:
    """(row-level, has a WHEN condition) of the update trigger."""
    with psycopg.connect(dsn) as c:
        row = c.execute(
            "SELECT (tgtype & 1) = 1, tgqual IS NOT NULL FROM pg_trigger "
            "WHERE tgname = 'mg_records_pool_upd'"
        ).fetchone()
    assert row is not None
    return bool(row[0]), bool(row[1])


def test_update_trigger_fires_per_row_only_when_the_pool_changes(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn) as store:
        store.setup()
    assert _trigger(pg_dsn) == (True, True)


def _include_columns(dsn: str) -> dict[str, int]:
    """Non-key (INCLUDE) columns of each counter table's primary key."""
    with psycopg.connect(dsn) as c:
        rows = c.execute(
            "SELECT t.relname, i.indnatts - i.indnkeyatts FROM pg_index i "
            "JOIN pg_class t ON t.oid = i.indrelid WHERE i.indisprimary "
            "AND t.relname IN ('mg_recall_stamp', 'mg_pool_stats')"
        ).fetchall()
    return {name: int(n) for name, n in rows}


def test_counter_keys_hold_no_counter(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn) as store:
        store.setup()
        for i in range(5):
            store.set_preference(ALICE, "tone", f"tone {i}", updated_at=T0 + timedelta(i))
        assert _include_columns(pg_dsn) == {"mg_recall_stamp": 0, "mg_pool_stats": 0}
        with psycopg.connect(pg_dsn) as c:  # the upserts still find their key
            stamps = c.execute("SELECT count(*), max(stamp) FROM mg_recall_stamp").fetchone()
        assert stamps is not None and stamps[0] == 1 and stamps[1] == 5
        stats_consistent(pg_dsn)


def test_counts_follow_every_kind_of_update(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn, limits=Limits(max_records_per_identity=50)) as store:
        store.setup()
        for i in range(3):
            store.set_preference(ALICE, "tone", f"tone {i}", updated_at=T0 + timedelta(i))
        store.set_preference(ALICE, "lang", "en", level="user_workspace", updated_at=T0)
        stats_consistent(pg_dsn)
        a = store.add(ALICE, "fact", "Alice keeps bees", level="user")
        b = store.add(ALICE, "fact", "Alice paints on Sundays", level="agent")
        store.replace(ALICE, str(a.record_id), "Alice keeps two hives", base_version=1)
        store.add(ALICE, "fact", "Alice paints on Sundays", level="agent")  # a repeat: confidence
        stats_consistent(pg_dsn)
        store.remove(ALICE, str(b.record_id), base_version=b.version)
        store.delete_preference(ALICE, "tone", updated_at=T0 + timedelta(5))
        store.set_preference(ALICE, "tone", "tone again", updated_at=T0 + timedelta(9))
        stats_consistent(pg_dsn)
        with psycopg.connect(pg_dsn) as c:
            rid = str(a.record_id)
            c.execute("UPDATE mg_records SET sensitivity = 'sensitive' WHERE id = %s", (rid,))
            c.execute("UPDATE mg_records SET workspace_key = 'elsewhere' WHERE id = %s", (rid,))
            c.execute("UPDATE mg_records SET status = 'removed' WHERE id = %s", (rid,))
            c.execute("UPDATE mg_records SET status = 'active' WHERE id = %s", (rid,))
            c.execute(
                "UPDATE mg_records SET status = 'expired', scope_id = 'x' WHERE id = %s", (rid,)
            )
        stats_consistent(pg_dsn)
        with psycopg.connect(pg_dsn) as c:
            total = c.execute("SELECT coalesce(sum(n), 0) FROM mg_pool_stats").fetchone()
            active = c.execute("SELECT count(*) FROM mg_records WHERE status = 'active'").fetchone()
        assert total is not None and active is not None
        assert int(total[0]) == active[0] == 2  # the two preferences


def test_an_upgraded_database_keeps_counting(pg_dsn: str) -> None:
    schema_at(pg_dsn, 13)
    with MemoryStore.open(pg_dsn) as store:
        a = store.add(ALICE, "fact", "Alice keeps bees", level="user")
        store.set_preference(ALICE, "tone", "brief", updated_at=T0)
        assert _trigger(pg_dsn) == (False, False)  # v13: the statement trigger
        assert _include_columns(pg_dsn) == {"mg_recall_stamp": 2, "mg_pool_stats": 1}
        assert store.setup()[0] == 14  # and every later migration
        assert _trigger(pg_dsn) == (True, True)
        assert _include_columns(pg_dsn) == {"mg_recall_stamp": 0, "mg_pool_stats": 0}
        store.set_preference(ALICE, "tone", "warm", updated_at=T0 + timedelta(1))
        store.remove(ALICE, str(a.record_id), base_version=1)
        stats_consistent(pg_dsn)
