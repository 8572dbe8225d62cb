"""``list_records`` from the recall pool: the same records as the SQL read, never another's.

After a recall in this process the store holds the owner's pool (``storage/ops/recall_cache.py``);
``list_records`` of active records then takes them from the pool, brought up to date by the
stamp check, instead of reading every row again (an extraction turn lists the records right
after its recall). These tests compare it with the plain read of a store that holds no pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import _trips
import pytest
from _stores import T0
from _trips import RoundTrips

from memory_graph import MemoryStore, Owner

# Both fixtures from _trips: this module's stores connect through the counting proxy.
trips = _trips.trips
pg_dsn = _trips.pg_dsn

ALICE = Owner("alice", workspace="/repo", agent="coder")
ALICE_ELSEWHERE = Owner("alice", workspace="/other", agent="coder")
BOB = Owner("bob", workspace="/repo", agent="coder")


@pytest.fixture
def plain(pg_dsn: str, clock: Any) -> Iterator[MemoryStore]:
    """A second store on the same database (same clock) that never recalls: its reads are
    plain SQL."""
    with MemoryStore.from_dsn(pg_dsn, max_size=2, clock=clock) as s:
        yield s


def _ids(records: list[Any]) -> list[tuple[str, int, str]]:
    return [(r.id, r.version, r.content) for r in records]


def _fill(store: Any, clock: Any) -> dict[str, Any]:
    made = {
        "user": store.add(ALICE, "fact", "Alice keeps bees", level="user"),
        "ws": store.add(ALICE, "fact", "the repo uses tabs", level="user_workspace"),
        "agent": store.add(ALICE, "fact", "coder answers in English", level="agent"),
        "agent_ws": store.add(
            ALICE, "experience", "coder fixed the build", level="agent_workspace"
        ),
        "soon": store.add(
            ALICE, "fact", "Alice is in Lisbon", level="user", expires_at=T0 + timedelta(hours=1)
        ),
        "gone": store.add(ALICE, "fact", "Alice drinks coffee", level="user"),
    }
    store.set_preference(ALICE, "tone", "formal")
    store.add(ALICE_ELSEWHERE, "fact", "the other repo uses spaces", level="user_workspace")
    store.add(BOB, "fact", "Bob keeps wasps", level="user")
    store.add(BOB, "fact", "the repo uses tabs (Bob)", level="user_workspace")
    store.remove(ALICE, made["gone"].record_id, base_version=1)
    return made


def test_the_pool_lists_what_the_plain_read_lists(
    store: Any, plain: MemoryStore, clock: Any
) -> None:
    made = _fill(store, clock)
    before = store.list_records(ALICE)  # no pool held yet: the plain read
    store.search(ALICE, "bees")  # the recall loads the pool
    assert _ids(store.list_records(ALICE)) == _ids(before) == _ids(plain.list_records(ALICE))
    for kinds in (["fact"], ["experience", "preference"], ["preference"]):
        assert _ids(store.list_records(ALICE, kinds=kinds)) == _ids(
            plain.list_records(ALICE, kinds=kinds)
        )
    listed = {r.content for r in store.list_records(ALICE)}
    assert "Bob keeps wasps" not in listed and "the repo uses tabs (Bob)" not in listed
    assert "the other repo uses spaces" not in listed  # alice's other workspace
    assert "Alice drinks coffee" not in listed  # removed
    # Time passes: the expired record leaves both, with as_of and with the clock.
    clock.advance(hours=2)
    assert _ids(store.list_records(ALICE)) == _ids(plain.list_records(ALICE))
    assert made["soon"].record_id not in {r.id for r in store.list_records(ALICE)}
    early = T0 + timedelta(minutes=30)
    assert _ids(store.list_records(ALICE, as_of=early)) == _ids(
        plain.list_records(ALICE, as_of=early)
    )
    # Writes after the recall, from this store and from another one (another process).
    store.replace(ALICE, made["user"].record_id, "Alice keeps two hives", base_version=1)
    plain.add(ALICE, "fact", "Alice learns Portuguese", level="user")
    plain.remove(ALICE, made["ws"].record_id, base_version=1)
    assert _ids(store.list_records(ALICE)) == _ids(plain.list_records(ALICE))
    assert _ids(store.list_records(BOB)) == _ids(plain.list_records(BOB))


def test_inactive_and_keyed_listings_are_never_served_from_the_pool(
    store: Any, plain: MemoryStore, clock: Any
) -> None:
    _fill(store, clock)
    store.search(ALICE, "bees")
    every = store.list_records(ALICE, include_inactive=True)
    assert "Alice drinks coffee" in {r.content for r in every}
    assert _ids(every) == _ids(plain.list_records(ALICE, include_inactive=True))
    assert _ids(store.list_records(ALICE, key="tone")) == _ids(
        plain.list_records(ALICE, key="tone")
    )


def test_a_listing_after_a_recall_reads_no_rows_again(
    pg_dsn: str, trips: RoundTrips, clock: Any
) -> None:
    # One connection, so the proxy's labels are in order: it labels a round trip when the
    # next one starts on the same connection.
    with MemoryStore.from_dsn(pg_dsn, max_size=1, clock=clock) as s:
        s.setup()
        for i in range(30):
            s.add(ALICE, "fact", f"Alice note number {i}", level="user")
        s.search(ALICE, "note")
        trips.take()
        listed = s.list_records(ALICE)
        assert sum(trips.take().values()) == 1  # one round trip
        s.list_records(ALICE)  # starts the next round trip: the previous one is labelled
        counts = trips.take()
    assert len(listed) == 30
    # That round trip was the stamps' primary-key read of the held pool, not the records.
    (label,) = counts
    assert label.startswith("SELECT coalesce(json_agg(json_build_array(s.agent_key")
