"""The optimistic preference write: a write that lost a race is retried under the lock.

``set_preference`` reads the key's row without a lock and commits in one statement gated on
that row being unchanged (``memory_graph.storage.ops.prefs.apply_set_preference``). These
tests put another writer between the read and the commit, and race many writers, on a real
server: the result is always the one the locked path gives, nothing is lost and nothing is
written twice.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from _stores import T0

from memory_graph import AsyncMemoryStore, MemoryStore, Owner, StaleWriteError
from memory_graph.storage.driver import Op, run_async, run_sync
from memory_graph.storage.ops import writes as W

ALICE = Owner("alice", agent="helper")
BOB = Owner("bob", agent="helper")


def _at(seconds: int) -> Any:
    return T0 + timedelta(seconds=seconds)


def _interleaved(op: Op[Any], between: Callable[[], None]) -> Op[Any]:
    """Drive ``op``, running ``between()`` after its first statement (the unlocked read)."""
    res = yield next(op)
    between()
    while True:
        try:
            q = op.send(res)
        except StopIteration as stop:
            return stop.value
        res = yield q


@pytest.fixture(params=["sync", "async"])
def write_between(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[Any]:
    """``(store, write)``: ``write(value, at, between)`` sets ALICE's ``tone`` with another
    write made between its read and its commit, through the sync or the async driver."""
    store = MemoryStore.open(pg_dsn, max_size=4)
    store.setup()
    loop = asyncio.new_event_loop()
    astore = loop.run_until_complete(AsyncMemoryStore.open(pg_dsn, max_size=2))
    # The write under test belongs to a store that has not written the key (its KnownPrefs
    # is empty), so it reads the row; the other writer is ``store``.
    mine = MemoryStore.open(pg_dsn, max_size=1)

    def op(value: str, at: int, between: Callable[[], None]) -> Op[Any]:
        body = W.set_preference(
            ALICE,
            "tone",
            value,
            level="user",
            source="api",
            source_event_id=None,
            expires_at=None,
            updated_at=_at(at),
            store=mine,
        )
        return _interleaved(body, between)

    def sync_write(value: str, at: int, between: Callable[[], None]) -> Any:
        with store._pool.connection() as conn:
            return run_sync(conn, op(value, at, between), autocommit=True)

    def async_write(value: str, at: int, between: Callable[[], None]) -> Any:
        async def go() -> Any:
            async with astore._pool.connection() as conn:
                return await run_async(conn, op(value, at, between), autocommit=True)

        return loop.run_until_complete(go())

    try:
        yield store, sync_write if request.param == "sync" else async_write
    finally:
        loop.run_until_complete(astore.close())
        loop.close()
        mine.close()
        store.close()


def _set(store: MemoryStore, value: str, at: int) -> None:
    """The other writer: ALICE's ``tone`` through the store's own method."""
    store.set_preference(ALICE, "tone", value, updated_at=_at(at))


def _trail(dsn: str) -> Counter[tuple[str, str]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT target_kind, action FROM mg_audit WHERE target_kind IN "
            "('preference', 'proposal')"
        ).fetchall()
    return Counter((r[0], r[1]) for r in rows)


def _proposals(dsn: str) -> Counter[str]:
    with psycopg.connect(dsn) as conn:
        return Counter(r[0] for r in conn.execute("SELECT status FROM mg_proposals"))


def _tone(store: MemoryStore, owner: Owner = ALICE) -> tuple[str, int]:
    (pref,) = [p for p in store.get_preferences(owner) if p.key == "tone"]
    return pref.value, pref.revision


def test_an_update_between_the_read_and_the_commit_sends_the_write_to_the_lock(
    write_between: Any, pg_dsn: str
) -> None:
    store, write = write_between
    store.set_preference(ALICE, "tone", "formal", updated_at=_at(1))
    res = write(
        "casual", 3, lambda: store.set_preference(ALICE, "tone", "brief", updated_at=_at(2))
    )
    # Without the gate, this write would have overwritten revision 2 as revision 2.
    assert (res.status, res.revision, res.previous_value) == ("UPDATED", 3, "brief")
    assert _tone(store) == ("casual", 3)
    assert _proposals(pg_dsn) == {"approved": 3}
    assert _trail(pg_dsn)[("preference", "set")] == 3
    assert _trail(pg_dsn)[("proposal", "approved")] == 3


def test_a_later_write_between_makes_this_one_stale_and_it_writes_nothing(
    write_between: Any, pg_dsn: str
) -> None:
    store, write = write_between
    store.set_preference(ALICE, "tone", "formal", updated_at=_at(1))
    with pytest.raises(StaleWriteError):
        write("casual", 3, lambda: store.set_preference(ALICE, "tone", "brief", updated_at=_at(4)))
    assert _tone(store) == ("brief", 2)
    assert _proposals(pg_dsn) == {"approved": 2}  # no row of the stale write, not even refused
    assert _trail(pg_dsn)[("preference", "set")] == 2


def test_a_first_write_of_the_key_between_turns_this_creation_into_an_update(
    write_between: Any, pg_dsn: str
) -> None:
    store, write = write_between
    res = write(
        "casual", 2, lambda: store.set_preference(ALICE, "tone", "brief", updated_at=_at(1))
    )
    assert (res.status, res.revision, res.previous_value) == ("UPDATED", 2, "brief")
    assert _tone(store) == ("casual", 2)
    with psycopg.connect(pg_dsn) as conn:  # one row for the key, never two
        (n,) = conn.execute("SELECT count(*) FROM mg_records WHERE key = 'tone'").fetchone()
    assert n == 1


def test_an_unchanged_write_is_not_reported_unchanged_after_the_value_changed(
    write_between: Any, pg_dsn: str
) -> None:
    store, write = write_between
    store.set_preference(ALICE, "tone", "casual", updated_at=_at(1))
    # As read, the key holds this very value (UNCHANGED); by the commit, it holds another.
    res = write(
        "casual", 3, lambda: store.set_preference(ALICE, "tone", "brief", updated_at=_at(2))
    )
    assert (res.status, res.revision) == ("UPDATED", 3)
    assert _tone(store) == ("casual", 3)
    assert _proposals(pg_dsn) == {"approved": 3}


def test_racing_writers_lose_nothing_and_write_nothing_twice(pg_dsn: str) -> None:
    # 6 threads x 25 writes of the same key of two users, each write with its own updated_at.
    # Every write is CREATED/UPDATED/UNCHANGED or refused as stale; each success is one
    # revision and one audit row, and the latest write overall is the value that stays.
    threads, per = 6, 25
    outcomes: Counter[tuple[str, str]] = Counter()
    errors: list[BaseException] = []
    lock = threading.Lock()
    with MemoryStore.open(pg_dsn, max_size=threads) as store:
        store.setup()

        def run(i: int) -> None:
            for j in range(per):
                owner = (ALICE, BOB)[(i + j) % 2]
                at = j * threads + i + 1
                try:
                    res = store.set_preference(owner, "tone", f"v{at}", updated_at=_at(at))
                    status = res.status
                except StaleWriteError:
                    status = "stale"
                except BaseException as exc:  # noqa: BLE001 - reported below
                    with lock:
                        errors.append(exc)
                    continue
                with lock:
                    outcomes[(owner.user_id, status)] += 1

        pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        assert errors == []
        assert sum(outcomes.values()) == threads * per
        for owner in (ALICE, BOB):
            written = sum(
                n for (u, s), n in outcomes.items() if u == owner.user_id and s != "stale"
            )
            value, revision = _tone(store, owner)
            assert revision == written  # every success is one revision, none twice
            ats = range(1, threads * per + 1)
            last = max(a for a in ats if _owner_of(a, threads).user_id == owner.user_id)
            assert value == f"v{last}"  # the latest write of the owner is never refused
        trail = _trail(pg_dsn)
        successes = sum(n for (_, s), n in outcomes.items() if s != "stale")
        assert trail[("preference", "set")] == successes
        assert _proposals(pg_dsn) == {"approved": successes}


def _owner_of(at: int, threads: int) -> Owner:
    i, j = (at - 1) % threads, (at - 1) // threads
    return (ALICE, BOB)[(i + j) % 2]


# --- the remembered row (storage/ops/known.py) ---------------------------------------------------
# A store remembers the row each of its preference writes left and decides its next write of
# the key from it, without reading. Another writer (a second store here, as another process
# would be) changes the row in between: the write must still end as a write with no memory
# would, because the commit statement is gated on everything the decision used.


@pytest.fixture
def two(pg_dsn: str) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    """``(mine, other)``: two stores on one database, each with its own remembered rows."""
    with MemoryStore.open(pg_dsn, max_size=2) as mine, MemoryStore.open(pg_dsn) as other:
        mine.setup()
        yield mine, other


def _remembered(store: MemoryStore) -> int:
    return len(store._known_prefs)


def test_a_remembered_row_another_store_changed_is_not_trusted(
    two: tuple[MemoryStore, MemoryStore], pg_dsn: str
) -> None:
    mine, other = two
    mine.set_preference(ALICE, "tone", "formal", updated_at=_at(1))
    assert _remembered(mine) == 1
    other.set_preference(ALICE, "tone", "brief", updated_at=_at(2))
    res = mine.set_preference(ALICE, "tone", "casual", updated_at=_at(3))
    assert (res.status, res.revision, res.previous_value) == ("UPDATED", 3, "brief")
    assert _tone(mine) == ("casual", 3)
    with psycopg.connect(pg_dsn) as conn:  # the audit's "before" is the row as it was
        befores = [
            r[0]["value"]
            for r in conn.execute(
                "SELECT before FROM mg_audit WHERE target_kind = 'preference' AND before "
                "IS NOT NULL ORDER BY seq"
            )
        ]
    assert befores == ["formal", "brief"]
    assert _proposals(pg_dsn) == {"approved": 3}


def test_a_remembered_row_does_not_hide_a_later_write_elsewhere(
    two: tuple[MemoryStore, MemoryStore], pg_dsn: str
) -> None:
    mine, other = two
    mine.set_preference(ALICE, "tone", "formal", updated_at=_at(1))
    other.set_preference(ALICE, "tone", "brief", updated_at=_at(5))
    with pytest.raises(StaleWriteError):
        mine.set_preference(ALICE, "tone", "casual", updated_at=_at(3))
    assert _tone(mine) == ("brief", 2)
    assert _proposals(pg_dsn) == {"approved": 2}


def test_a_remembered_value_is_not_reported_unchanged_after_it_changed_elsewhere(
    two: tuple[MemoryStore, MemoryStore],
) -> None:
    mine, other = two
    mine.set_preference(ALICE, "tone", "casual", updated_at=_at(1))
    other.set_preference(ALICE, "tone", "brief", updated_at=_at(2))
    res = mine.set_preference(ALICE, "tone", "casual", updated_at=_at(3))
    assert (res.status, res.revision, res.previous_value) == ("UPDATED", 3, "brief")
    assert _tone(mine) == ("casual", 3)


@pytest.mark.parametrize(
    ("change", "value", "expected"),
    [
        # The row changed at the same version (as after a rolled-back write and another
        # one: the version alone is not proof). Each write must end as it would unremembered.
        ("content = 'brief'", "casual", ("UPDATED", 2, "casual")),
        ("source = 'import'", "casual", ("UPDATED", 2, "casual")),
        ("source_event_id = 'evt-9'", "casual", ("UPDATED", 2, "casual")),
        ("expires_at = updated_at + interval '1 day'", "casual", ("UPDATED", 2, "casual")),
        ("updated_at = updated_at + interval '1 hour'", "brief", "stale"),
        ("status = 'removed'", "casual", ("CREATED", 2, "casual")),
    ],
)
def test_a_row_changed_without_a_new_version_is_decided_from_the_database(
    two: tuple[MemoryStore, MemoryStore], pg_dsn: str, change: str, value: str, expected: Any
) -> None:
    mine, _ = two
    mine.set_preference(ALICE, "tone", "casual", updated_at=_at(1))
    with psycopg.connect(pg_dsn) as conn:
        conn.execute(f"UPDATE mg_records SET {change} WHERE kind = 'preference'")
    if expected == "stale":
        with pytest.raises(StaleWriteError):
            mine.set_preference(ALICE, "tone", value, updated_at=_at(3))
        assert _remembered(mine) == 0
        return
    res = mine.set_preference(ALICE, "tone", value, updated_at=_at(3))
    assert (res.status, res.revision, res.value) == expected
    assert _tone(mine) == (expected[2], expected[1])


def test_deleting_or_erasing_forgets_the_remembered_rows(
    two: tuple[MemoryStore, MemoryStore],
) -> None:
    mine, _ = two
    mine.set_preference(ALICE, "tone", "casual", updated_at=_at(1))
    mine.set_preference(ALICE, "lang", "en", updated_at=_at(1))
    mine.set_preference(BOB, "tone", "brief", updated_at=_at(1))
    assert _remembered(mine) == 3
    mine.delete_preference(ALICE, "lang")
    assert _remembered(mine) == 2
    mine.forget_user(ALICE)
    assert _remembered(mine) == 1  # only BOB's row; no value of an erased user stays here
    assert mine.get_preferences(ALICE) == []


def test_the_async_store_remembers_and_checks_the_same_way(pg_dsn: str) -> None:
    async def go() -> None:
        async with await AsyncMemoryStore.open(pg_dsn) as mine:
            await mine.setup()
            with MemoryStore.open(pg_dsn) as other:
                await mine.set_preference(ALICE, "tone", "casual", updated_at=_at(1))
                assert len(mine._known_prefs) == 1
                other.set_preference(ALICE, "tone", "brief", updated_at=_at(2))
                res = await mine.set_preference(ALICE, "tone", "casual", updated_at=_at(3))
                assert (res.status, res.revision, res.previous_value) == ("UPDATED", 3, "brief")

    asyncio.run(go())


def test_remembered_rows_are_bounded() -> None:
    from memory_graph.storage.ops.known import KnownPrefs

    known = KnownPrefs(size=3)
    for i in range(5):
        known.put(("s", "a", "w", f"k{i}"), {"id": str(i)})
    assert len(known) == 3
    assert known.get(("s", "a", "w", "k0")) is None
    assert known.get(("s", "a", "w", "k4")) == {"id": "4"}
    known.put(("s", "a", "w", "k2"), {"id": "2b"})  # a rewrite is the newest again
    known.put(("s", "a", "w", "k5"), {"id": "5"})
    assert known.get(("s", "a", "w", "k2")) == {"id": "2b"}
    assert known.get(("s", "a", "w", "k3")) is None
    known.forget("s")
    assert len(known) == 0
