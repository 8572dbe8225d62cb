"""The commit path's round trips, pinned by counting them on the wire (never by timing).

The driver (``storage/driver.py``) runs a write statement by statement: ``BEGIN``, the op's
statements, ``COMMIT``, each one round trip. These tests count the round trips through the
benchmarks' counting proxy (``bench/_wire.py``) between the store and the server, so they
pin what the server sees, whatever the client library does.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import _trips
import psycopg
import pytest
from _stores import T0
from _trips import RoundTrips

from memory_graph import Owner, StaleWriteError

# Both fixtures from _trips: this module's stores connect through the counting proxy.
trips = _trips.trips
pg_dsn = _trips.pg_dsn

ALICE = Owner("alice", agent="helper")


def _prefs(store: Any) -> dict[str, str]:
    return {p.key: p.value for p in store.get_preferences(ALICE)}


def _measure(trips: RoundTrips, call: Any) -> tuple[int, Any]:
    trips.take()
    out = call()
    return sum(trips.take().values()), out


def test_a_preference_write_is_one_round_trip_once_the_store_knows_the_key(
    store: Any, trips: RoundTrips
) -> None:
    # Optimistic, in autocommit: the key's row (no lock), then one statement that writes the
    # record, the proposal and the audit rows only if that row is still as read (a gated
    # INSERT under the key's lock, a compare-and-set UPDATE, or a guard). No BEGIN, no
    # advisory-lock statement, no COMMIT. The row a write leaves is remembered by the store
    # (storage/ops/known.py), so its next write of the key sends the gated statement alone.
    def write(value: str, seconds: int) -> Any:
        return store.set_preference(
            ALICE, "tone", value, updated_at=T0 + timedelta(seconds=seconds)
        )

    n, res = _measure(trips, lambda: write("formal", 1))
    assert (n, res.status, res.revision) == (2, "CREATED", 1)
    n, res = _measure(trips, lambda: write("casual", 2))
    assert (n, res.status, res.revision) == (1, "UPDATED", 2)
    n, res = _measure(trips, lambda: write("casual", 3))
    assert (n, res.status, res.revision) == (1, "UNCHANGED", 2)
    # A stale write is decided under the lock, and rolled back: BEGIN, the key's lock, its
    # row, the commit statement, ROLLBACK (the remembered row already shows it stale).
    trips.take()
    with pytest.raises(StaleWriteError):
        write("old", 0)
    assert sum(trips.take().values()) == 5
    assert _prefs(store)["tone"] == "casual"
    # A removed key is set again under the lock (it counts against capacity again): the
    # read, then the five of the locked write.
    store.delete_preference(ALICE, "tone")
    n, res = _measure(trips, lambda: write("terse", 4))
    assert (n, res.status, res.revision) == (6, "CREATED", 4)
    assert _prefs(store)["tone"] == "terse"
    n, res = _measure(trips, lambda: write("plain", 5))
    assert (n, res.status, res.revision) == (1, "UPDATED", 5)


def test_a_trusted_add_is_four_round_trips(store: Any, trips: RoundTrips) -> None:
    # BEGIN, the identity's lock, the guarded commit statement (with the proposal row),
    # COMMIT. A duplicate fails the guard: read it, then reinforce it in one more statement.
    n, res = _measure(trips, lambda: store.add(ALICE, "fact", "Alice keeps bees"))
    assert (n, res.write_status) == (4, "CREATED")
    n, res = _measure(trips, lambda: store.add(ALICE, "fact", "Alice keeps bees"))
    assert (n, res.write_status) == (6, "UNCHANGED")


def test_a_proposal_is_four_round_trips(store: Any, trips: RoundTrips) -> None:
    # BEGIN, the replay-or-rejection lookup, the insert-or-read, COMMIT.
    args = {"kind": "fact", "content": "Alice keeps bees"}
    n, prop = _measure(trips, lambda: store.propose(ALICE, "add", args, level="user"))
    assert (n, prop.status, prop.replayed) == (4, "pending", False)
    n, again = _measure(trips, lambda: store.propose(ALICE, "add", args, level="user"))
    assert (n, again.id, again.replayed) == (4, prop.id, True)


def test_approving_an_add_is_four_round_trips(store: Any, trips: RoundTrips) -> None:
    # BEGIN, the proposal row locked (with the identity's lock), the guarded commit, COMMIT.
    prop = store.propose(ALICE, "add", {"kind": "fact", "content": "Alice swims"}, level="user")
    n, res = _measure(trips, lambda: store.decide(ALICE, prop.id, "approve"))
    assert (n, res.status, res.write_status) == (4, "approved", "CREATED")


def test_a_remembered_rejection_does_not_block_a_trusted_write(store: Any) -> None:
    # Remembered rejections keep a refused write from being *proposed* again; a trusted
    # write asks no reviewer (the application's own call), so it is written. (It used to
    # return the stored rejection, and set_preference failed with a KeyError on it.)
    prop = store.propose(
        ALICE, "set_preference", {"key": "tone", "value": "sarcastic"}, level="user"
    )
    store.decide(ALICE, prop.id, "reject")
    res = store.set_preference(ALICE, "tone", "Sarcastic")
    assert (res.status, res.revision) == ("CREATED", 1)
    assert _prefs(store)["tone"] == "Sarcastic"
    fact = {"kind": "fact", "content": "Alice keeps wasps"}
    store.decide(ALICE, store.propose(ALICE, "add", fact, level="user").id, "reject")
    assert store.add(ALICE, "fact", "Alice keeps wasps").write_status == "CREATED"
    again = store.propose(ALICE, "add", fact, level="user", idempotency_key="later")
    assert again.status == "rejected"  # a proposal is still answered by the rejection


def _trail(store: Any) -> list[tuple[str, str, str]]:
    rows = reversed(store.audit_log(ALICE))
    return [(r["target_kind"], r["action"], r["actor"]) for r in rows]


def test_a_trusted_write_leaves_the_same_proposal_and_audit_rows(store: Any) -> None:
    # The proposal row of a trusted write is inserted decided, in the commit statement; what
    # is stored is what the propose-then-approve path stored.
    res = store.set_preference(ALICE, "tone", "formal", updated_at=T0)
    added = store.add(ALICE, "fact", "Alice keeps bees")
    dup = store.add(ALICE, "fact", "Alice keeps bees")  # the guarded insert fails: reinforce
    assert [r.write_status for r in (added, dup)] == ["CREATED", "UNCHANGED"]
    assert _trail(store) == [
        ("proposal", "proposed", "system"),
        ("preference", "set", "api"),
        ("proposal", "approved", "api"),
        ("proposal", "proposed", "system"),
        ("record", "create", "api"),
        ("proposal", "approved", "api"),
        ("proposal", "proposed", "system"),
        ("record", "reinforce", "api"),
        ("proposal", "approved", "api"),
    ]
    assert res.revision == 1
    for r in (added, dup):
        prop = store.get_proposal(ALICE, r.proposal_id)
        assert (prop.status, prop.operation) == ("approved", "add")
        assert prop.decided_at == prop.created_at
        assert prop.result is not None and prop.result["write_status"] == r.write_status
    with pytest.raises(StaleWriteError):
        store.set_preference(ALICE, "tone", "casual", updated_at=T0 - timedelta(seconds=1))
    assert len(_trail(store)) == 9  # a stale write leaves no proposal and no audit row


def test_commit_statements_stay_within_psycopgs_query_cache(
    store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # psycopg parses a statement of more than 50 parameters again on every call (about
    # 0.1 ms of client CPU per commit here): the audit rows go as one jsonb parameter.
    from psycopg import _queries

    sizes: list[int] = []
    execute, async_execute = psycopg.Cursor.execute, psycopg.AsyncCursor.execute

    def counting(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        sizes.append(len(params or ()))
        return execute(self, query, params, **kw)

    async def async_counting(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
        sizes.append(len(params or ()))
        return await async_execute(self, query, params, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", counting)
    monkeypatch.setattr(psycopg.AsyncCursor, "execute", async_counting)
    prop = store.propose(ALICE, "add", {"kind": "fact", "content": "Alice swims"}, level="user")
    store.decide(ALICE, prop.id, "approve")
    store.set_preference(ALICE, "tone", "formal", updated_at=T0)
    store.set_preference(ALICE, "tone", "casual", updated_at=T0 + timedelta(seconds=1))
    store.add(ALICE, "fact", "Alice keeps bees", knowledge={"claim": {"key": "k", "value": "v"}})
    assert sizes and max(sizes) <= _queries.MAX_CACHED_STATEMENT_PARAMS


def test_the_commit_statement_is_planned_once_per_connection(pg_dsn: str) -> None:
    """A commit statement is prepared once and never re-planned per call.

    With statistics of a populated table, PostgreSQL judged a custom plan of the guarded
    commit statement (duplicate check + capacity + writes) cheaper than its generic plan and
    re-planned it on every approval: ~0.2 ms of server CPU per commit, more than executing
    it. The store's sessions use ``plan_cache_mode = force_generic_plan``; the prepared
    statement's counters say which plans ran.
    """
    from memory_graph import Limits, MemoryStore

    with MemoryStore.from_dsn(pg_dsn, max_size=1, limits=Limits()) as store:
        store.setup()
        with psycopg.connect(pg_dsn, autocommit=True) as conn:  # statistics of a used store
            conn.execute(
                "INSERT INTO mg_records (scope_id, id, level, agent_key, workspace_key, kind, "
                "content, trust, sensitivity, confidence, source, content_hash, created_at, "
                "updated_at) SELECT 'filler' || (g % 50), gen_random_uuid(), 'user', '', '', "
                "'fact', 'filler ' || g, 'user-confirmed', 'private', 1.0, 'api', md5(g::text), "
                "now(), now() FROM generate_series(1, 5000) g"
            )
            conn.execute("ANALYZE")
        pids = [
            store.propose(ALICE, "add", {"kind": "fact", "content": f"fact {i}"}, level="user").id
            for i in range(30)
        ]
        for pid in pids:
            assert store.decide(ALICE, pid, "approve").status == "approved"
        with store._pool.connection() as conn:  # the one session that ran them
            rows = conn.execute(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                "WHERE statement LIKE 'WITH g AS MATERIALIZED%%'"
            ).fetchall()
            conn.rollback()
    assert rows, "the guarded commit statement was not prepared"
    assert sum(custom for _, custom in rows) == 0
    assert sum(generic for generic, _ in rows) >= 20
