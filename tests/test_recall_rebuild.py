"""A pool kept current by writes ranks exactly like a pool loaded from scratch.

The store's recall pool is updated in place of a reload after each write, and its index is
rebuilt reusing the prepared documents that did not change. Here a warm store (its pool
followed every write) and a fresh store (an empty cache, so a full load) must return the same
hits, scores and snapshot after each kind of write: an add into a thread (later turns move
one place), a replace, a reinforcement, a remove, an expiry.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from _stores import T0, FakeClock

from memory_graph import MemoryStore, Owner

ALICE = Owner("alice")
QUERIES = (
    "what is my uncle's favourite band?",
    "violin lesson on tuesday",
    "who answered about the museum trip?",
    "tea",
)


@pytest.fixture
def warm(pg_dsn: str, clock: FakeClock) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn, clock=clock) as s:
        s.setup()
        yield s


def turn(thread: str, minute: int) -> dict[str, Any]:
    return {"thread_id": thread, "observed_at": T0 + timedelta(minutes=minute)}


def recall(store: MemoryStore) -> list[Any]:
    out: list[Any] = []
    for q in QUERIES:
        out.append([(h.record.id, h.record.version, h.score) for h in store.search(ALICE, q)])
        out.append(store.snapshot(ALICE, latest_input=q))
    return out


def same_as_fresh(warm: MemoryStore, pg_dsn: str, clock: FakeClock) -> list[Any]:
    got = recall(warm)
    with MemoryStore.from_dsn(pg_dsn, clock=clock) as fresh:
        assert recall(fresh) == got
    return got


def test_writes_leave_the_pool_as_a_fresh_load(warm, pg_dsn, clock):
    filler = ["tea in the garden", "green tea", "sunset paint", "bread oven", "dog walk"]
    for i in range(24):  # the multi-hop pass needs a pool of 20 or more
        warm.add(ALICE, "fact", f"{filler[i % 5]} note {i}")
    uncle = warm.add(ALICE, "fact", "my uncle's favourite band is Zorblax").record_id
    warm.add(ALICE, "fact", "the Zorblax fan plays the violin on tuesday")
    q = warm.add(ALICE, "fact", "who went on the museum trip?", evidence=turn("s1", 1))
    warm.add(ALICE, "fact", "Caroline did, last summer", evidence=turn("s1", 3))
    before = same_as_fresh(warm, pg_dsn, clock)

    # An answer between the question and the old answer: the thread's places move.
    warm.add(ALICE, "fact", "Melanie answered: I went with Caroline", evidence=turn("s1", 2))
    after_add = same_as_fresh(warm, pg_dsn, clock)
    assert after_add != before

    rec = warm.get_record(ALICE, uncle)
    warm.replace(ALICE, uncle, "my uncle's favourite band is now Quuxtet", base_version=rec.version)
    after_replace = same_as_fresh(warm, pg_dsn, clock)
    assert "Quuxtet" in after_replace[1] and "band is Zorblax" not in after_replace[1]

    warm.add(ALICE, "fact", "green tea")  # a duplicate: confidence up, same version
    same_as_fresh(warm, pg_dsn, clock)

    warm.remove(ALICE, q.record_id, base_version=1)
    warm.add(ALICE, "fact", "tea tasting today", expires_at=T0 + timedelta(hours=1))
    same_as_fresh(warm, pg_dsn, clock)
    clock.advance(hours=2)
    last = same_as_fresh(warm, pg_dsn, clock)
    assert "tasting" not in " ".join(str(x) for x in last)
