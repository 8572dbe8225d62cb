"""Migration v13 (issue 14): the dead server-side token index is dropped.

Recall tokenizes and ranks in process, so ``mg_record_tokens``, ``mg_postings``,
``mg_term_df`` and their triggers are gone after ``setup()``, on a fresh database and on an
upgraded v12 one (which keeps every record and recalls it the same way). The capacity bound
(``mg_pool_stats``) and the recall stamps stay, and a tokenizer change still restamps every
record so that every process's cached pool is rebuilt.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from _stores import schema_at

from memory_graph import MemoryStore, Owner
from memory_graph.storage.schema import MIGRATIONS

DROPPED_TABLES = ("mg_record_tokens", "mg_postings", "mg_term_df")
DROPPED_FUNCTIONS = ("mg_postings_add", "mg_postings_drop", "mg_term_df_sync")
QUERIES = ("Caroline painting", "sunrise lake", "what does Bob like to eat?", "")


_TABLES = "SELECT tablename FROM pg_tables WHERE tablename LIKE 'mg_%'"
_FUNCS = "SELECT proname FROM pg_proc WHERE proname LIKE 'mg_%'"
_STAMPS = "SELECT id, rseq FROM mg_records WHERE status = 'active'"


def _catalog(dsn: str) -> tuple[set[str], set[str], set[str]]:
    """The ``mg_*`` tables, functions and triggers of the database."""
    with psycopg.connect(dsn) as c:
        tables = {r[0] for r in c.execute(_TABLES)}
        funcs = {r[0] for r in c.execute(_FUNCS)}
        trigs = {
            r[0]
            for r in c.execute(
                "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'mg_%'"
            )
        }
    return tables, funcs, trigs


def _assert_dropped(dsn: str) -> None:
    tables, funcs, trigs = _catalog(dsn)
    assert not tables & set(DROPPED_TABLES)
    assert not funcs & set(DROPPED_FUNCTIONS)
    assert not {t for t in trigs if "tokens" in t or "postings" in t}
    # What the capacity check and the recall pool read stays, with its triggers.
    assert {"mg_records", "mg_pool_stats", "mg_recall_stamp"} <= tables
    assert {"mg_pool_stats_sync", "mg_recall_stamp_row", "mg_recall_stamp_del"} <= funcs
    assert {"mg_records_pool_ins", "mg_records_stamp", "mg_records_stamp_del"} <= trigs


def _fill(store: MemoryStore, owner: Owner) -> None:
    store.add(owner, "fact", "Caroline painted a sunrise over the lake")
    store.add(owner, "fact", "Bob likes to eat spicy ramen")
    store.add(owner, "experience", "Caroline's painting class is on Tuesdays")
    gone = store.add(owner, "fact", "an old fact about the lake")
    store.remove(owner, str(gone.record_id), base_version=1)
    store.set_preference(owner, "tone", "short answers")
    store.add(owner, "fact", "the team works in Lisbon", level="user_workspace")
    store.replace(
        owner,
        str(store.add(owner, "fact", "Bob eats sushi").record_id),
        "Bob eats sushi on Fridays",
        base_version=1,
    )


def _recalls(store: MemoryStore, owner: Owner) -> dict[str, list[tuple[str, str]]]:
    return {q: [(h.record.id, h.record.content) for h in store.search(owner, q)] for q in QUERIES}


def _records(dsn: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as c:
        return c.execute(
            "SELECT scope_id, id, kind, key, content, status, version, tokens, rseq "
            "FROM mg_records ORDER BY scope_id, id"
        ).fetchall()


def test_fresh_setup_has_no_token_index(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        assert store.setup() == list(range(len(MIGRATIONS)))
        _assert_dropped(pg_dsn)
        owner = Owner("alice", workspace="w1")
        _fill(store, owner)  # every write path works without the dropped tables
        top = {h.record.content for h in store.search(owner, "Caroline painting")[:2]}
        assert top == {
            "Caroline painted a sunrise over the lake",
            "Caroline's painting class is on Tuesdays",
        }
        assert store.forget_user("alice").rows["mg_records"] == 7
        _assert_dropped(pg_dsn)


def _v12_database(dsn: str) -> None:
    """A database at schema v12 whose token index holds every active record's tokens, as
    the code before v13 kept it (the triggers fill mg_postings and mg_term_df)."""
    schema_at(dsn, 12)


def _v12_token_rows(dsn: str) -> tuple[int, int]:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(
            "INSERT INTO mg_record_tokens (scope_id, token, record_id) "
            "SELECT scope_id, unnest(tokens), id FROM mg_records WHERE status = 'active'"
        )
        row = c.execute(
            "SELECT (SELECT count(*) FROM mg_postings), "
            "(SELECT coalesce(sum(df), 0) FROM mg_term_df)"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_upgrade_from_v12_keeps_records_and_recall(pg_dsn: str) -> None:
    _v12_database(pg_dsn)
    owner = Owner("alice", workspace="w1")
    with MemoryStore.from_dsn(pg_dsn) as store:
        _fill(store, owner)
        postings, df = _v12_token_rows(pg_dsn)
        assert postings > 0 and df == postings  # a live v12 index
        records = _records(pg_dsn)
        before = _recalls(store, owner)
        assert all(before[q] for q in QUERIES)
        assert store.setup() == [13, 14, 15]  # v14: the pool counts' row trigger; v15 spaces
        _assert_dropped(pg_dsn)
        assert _records(pg_dsn) == records
        assert _recalls(store, owner) == before  # the store's cached pool
    with MemoryStore.from_dsn(pg_dsn) as fresh:  # a new process's pool, read from the rows
        assert fresh.setup() == []
        assert _recalls(fresh, owner) == before
        fresh.add(owner, "fact", "Caroline painted the lake at night")
        hits = [h.record.content for h in fresh.search(owner, "lake at night")]
        assert hits[0] == "Caroline painted the lake at night"


def test_tokenizer_change_restamps_every_record(pg_dsn: str) -> None:
    owner = Owner("alice", workspace="w1")
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        _fill(store, owner)
        with psycopg.connect(pg_dsn, autocommit=True) as c:
            old = dict(c.execute(_STAMPS).fetchall())
            c.execute("UPDATE mg_meta SET value = '0' WHERE key = 'tokenizer_version'")
        assert store.setup() == []
        with psycopg.connect(pg_dsn) as c:
            new = dict(c.execute(_STAMPS).fetchall())
        assert new.keys() == old.keys() and all(new[k] > old[k] for k in old)


def test_upgrade_to_v15_keeps_thread_claims_database_wide(pg_dsn: str) -> None:
    # v15 moves thread claims into checkpointer spaces; a claim made before it stays in the
    # database space, so the thread still cannot be taken over after the upgrade.
    from datetime import datetime, timezone

    from memory_graph import ThreadOwnerError

    schema_at(pg_dsn, 14)
    alice = Owner("alice", workspace="w1")
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute(
            "INSERT INTO mg_threads (scope_id, thread_id, agent_key, workspace_key, created_at) "
            "VALUES (%s, '1', %s, %s, %s)",
            (alice.scope_id, alice.agent_key, alice.workspace_key, datetime.now(timezone.utc)),
        )
    with MemoryStore.from_dsn(pg_dsn) as store:
        assert store.setup() == [15]
        assert store.check_thread(alice, "1") is True
        assert store.list_threads(alice) == ["1"]
        with pytest.raises(ThreadOwnerError):
            store.claim_thread(Owner("bob"), "1")
        assert store.claim_thread(Owner("bob"), "1", space="mem:other-app") is True
        assert store.setup() == []
