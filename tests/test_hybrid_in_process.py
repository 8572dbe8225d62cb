"""The dense leg ranked in process over the owner's recall pool (``storage/ops/hybrid.py``).

The pool holds each record's vector once read; a warm hybrid search is one statement (the
pool's stamps), ranks exactly as the SQL dense leg does, and reads again only vectors it
lacks, so a vector written by another process is used by the next search. Runs on a server
with pgvector (the fixtures of ``tests/_vectors.py``).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from test_hybrid import ALICE, BOB, TrigramEmbeddings

from memory_graph import MemoryStore, Owner
from memory_graph.storage.ops import hybrid as H
from memory_graph.storage.ops.hybrid import unit_vector

WORDS = (
    "hiking mountains tea coffee chess garden tomatoes piano jazz running marathon paris "
    "kyoto sushi ramen cycling swimming novels poetry painting photography climbing"
).split()


class RandomEmbeddings(TrigramEmbeddings):
    """A seeded Gaussian vector per text (its similarities are far from ties, so two exact
    rankings must agree), and all zeros for a text that mentions 'void' (never rankable)."""

    model = "random-256"

    def _embed(self, text: str) -> list[float]:
        if "void" in text:
            return [0.0] * 256
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        rng = random.Random(seed)
        return [rng.gauss(0.0, 1.0) for _ in range(256)]


def _counted(op: Generator[Any, Any, Any], seen: list[str]) -> Generator[Any, Any, Any]:
    """``op``, recording each statement it sends."""
    try:
        query = next(op)
        while True:
            seen.append(query.sql)
            query = op.send((yield query))
    except StopIteration as stop:
        return stop.value


def _counting(store: Any) -> list[str]:
    """Record the statements of ``store``'s reads (either twin)."""
    seen: list[str] = []
    target = getattr(store, "_inner", store)
    inner = target._read
    if isinstance(store, MemoryStore):
        target._read = lambda op: inner(_counted(op, seen))
    else:

        async def read(op: Any) -> Any:
            return await inner(_counted(op, seen))

        target._read = read
    return seen


def _fill(store: Any, rng: random.Random, n: int, clock: Any) -> None:
    owners = [ALICE, Owner("alice", workspace="/w/a"), Owner("alice", agent="bot")]
    levels = ["user", "user_workspace", "agent"]
    for i in range(n):
        which = rng.randrange(3)
        words = " ".join(rng.sample(WORDS, 4))
        extra: dict[str, Any] = {}
        if i % 7 == 3:
            extra["expires_at"] = clock.now + timedelta(hours=1)
        if i % 11 == 5:
            words += " void"
        store.add(
            owners[which],
            rng.choice(["fact", "experience"]) if which == 0 else "fact",
            f"{words} {i}",
            level=levels[which],
            sensitivity="sensitive" if i % 13 == 6 else "private",
            **extra,
        )


def test_in_process_and_sql_dense_rankings_agree(vmake, clock, monkeypatch):
    store = vmake(RandomEmbeddings())
    store.enable_embeddings()
    _fill(store, random.Random(7), 60, clock)
    viewer = Owner("alice", workspace="/w/a", agent="bot")
    store.index_embeddings(viewer)
    rng = random.Random(11)
    queries = [" ".join(rng.sample(WORDS, 2)) for _ in range(12)] + ["void", "hikers kyotos"]
    filters: list[dict[str, Any]] = [
        {},
        {"kinds": ["fact"]},
        {"sensitivities": ["private", "sensitive"]},
        {"trusts": ["user-confirmed"]},
    ]

    def ranked() -> list[list[str]]:
        return [
            [h.record.id for h in store.search(viewer, q, limit=8, **f)]
            for q in queries
            for f in filters
        ]

    monkeypatch.setattr(H, "IN_PROCESS", True)
    before = ranked()
    clock.advance(hours=2)  # some records expire
    later = ranked()
    monkeypatch.setattr(H, "IN_PROCESS", False)
    assert ranked() == later
    clock.advance(hours=-2)
    assert ranked() == before
    assert any(before) and before != later


def test_a_warm_hybrid_search_is_one_statement(vmake, monkeypatch):
    monkeypatch.setattr(H, "ABSENT_SECONDS", 1e9)  # never passes on a slow machine
    monkeypatch.setattr(H, "IN_PROCESS", True)
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    for text in ("Enjoys hiking in the mountains", "Drinks green tea", "Plays chess"):
        store.add(ALICE, "fact", text)
    store.index_embeddings(ALICE)
    seen = _counting(store)
    store.search(ALICE, "hikers mountaineering")  # loads the pool and its vectors
    seen.clear()
    hits = store.search(ALICE, "hikers mountaineering")
    assert len(seen) == 1 and "mg_recall_stamp" in seen[0]
    assert hits[0].record.content == "Enjoys hiking in the mountains"
    seen.clear()
    block = store.snapshot(ALICE, task_step="chess openings")
    assert len(seen) == 1 and "Plays chess" in block
    # A new record without a vector yet: the pool's changed rows, then the vector it lacks
    # is asked for once; not again (an owner never indexed costs no statement per search)
    # until this store writes vectors.
    store.add(ALICE, "fact", "Climbs rocks with hikers")
    seen.clear()
    assert any("Climbs" in h.record.content for h in store.search(ALICE, "hikers"))
    assert len(seen) == 3 and "mg_embeddings" in seen[-1]
    seen.clear()
    store.search(ALICE, "mountaineering")
    assert len(seen) == 1
    assert store.index_embeddings(ALICE) == 1
    seen.clear()
    assert "Climbs" in store.search(ALICE, "rock climbers")[0].record.content
    assert len(seen) == 2 and "mg_embeddings" in seen[-1]
    seen.clear()
    store.search(ALICE, "mountaineering")
    assert len(seen) == 1


def test_the_turn_entry_reads_a_hybrid_block_in_one_statement(vmake, monkeypatch):
    monkeypatch.setattr(H, "IN_PROCESS", True)
    emb = TrigramEmbeddings()
    store = vmake(emb)
    store.enable_embeddings()
    store.add(ALICE, "fact", "Enjoys hiking in the mountains")
    store.add(ALICE, "fact", "Plays chess")
    store.index_embeddings(ALICE)
    recall = {"task_step": None, "latest_input": "any tips for hikers?", "goal": None}
    first = store._turn_entry(ALICE, thread_id="t-1", recall=recall)
    assert "hiking in the mountains" in first.recalled
    assert first.recalled == store.snapshot(ALICE, **recall)
    seen = _counting(store)
    again = store._turn_entry(ALICE, thread_id="t-1", recall=recall)
    assert again == first and len(seen) == 1
    assert emb.queries == 1  # the query text was embedded once


def test_a_vector_written_elsewhere_is_used_once_the_absent_time_passed(vmake, monkeypatch):
    monkeypatch.setattr(H, "ABSENT_SECONDS", 1e9)  # never passes on a slow machine
    monkeypatch.setattr(H, "IN_PROCESS", True)
    emb = TrigramEmbeddings()
    reader = vmake(emb)
    reader.enable_embeddings()
    writer = vmake()  # no model: its writes have no vector yet
    writer.add(ALICE, "fact", "Enjoys hiking in the mountains")
    query = "hikers mountaineering"
    assert reader.search(ALICE, query) == []  # no vector, no lexical match
    other = vmake(TrigramEmbeddings())  # another process indexes it
    assert other.index_embeddings(ALICE) == 1
    assert reader.search(ALICE, query) == []  # asked within ABSENT_SECONDS: not asked again
    monkeypatch.setattr(H, "ABSENT_SECONDS", 0.0)  # the absent time has passed
    assert [h.record.content for h in reader.search(ALICE, query)] == [
        "Enjoys hiking in the mountains"
    ]
    assert emb.documents == 0  # the reader embedded no document itself


def test_a_bulk_load_never_indexed_costs_no_statement_per_search(vmake, monkeypatch):
    monkeypatch.setattr(H, "ABSENT_SECONDS", 1e9)  # never passes on a slow machine
    monkeypatch.setattr(H, "IN_PROCESS", True)
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    store.add_many(ALICE, [{"kind": "fact", "content": f"note {i} on tea"} for i in range(300)])
    seen = _counting(store)
    assert len(store.search(ALICE, "tea", limit=5)) == 5
    assert sum("mg_embeddings" in q for q in seen) == 1
    seen.clear()
    for _ in range(3):
        store.search(ALICE, "tea notes", limit=5)
    assert len(seen) == 3  # the stamps only


def test_pooled_vectors_are_counted_and_never_cross_owners(vmake, monkeypatch):
    monkeypatch.setattr(H, "IN_PROCESS", True)
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    for i in range(20):
        store.add(BOB, "fact", f"Enjoys hiking in the mountains {i}")
    store.add(ALICE, "fact", "Plays chess")
    store.index_embeddings(BOB)
    store.index_embeddings(ALICE)
    cache = getattr(store, "_inner", store)._recall
    store.search(ALICE, "chess")
    before = cache.nbytes
    mine = {"Plays chess"}
    assert {h.record.content for h in store.search(ALICE, "hikers mountaineering")} <= mine
    assert len(store.search(BOB, "hikers mountaineering", limit=30)) == 20
    assert cache.nbytes - before >= 20 * 256 * 4  # BOB's vectors are accounted for
    assert {h.record.content for h in store.search(ALICE, "hikers mountaineering")} <= mine


def test_unit_vector_refuses_what_sql_would_not_rank() -> None:
    assert unit_vector([]) is None
    assert unit_vector([0.0, 0.0, 0.0]) is None
    assert unit_vector("[1,inf]") is None
    assert unit_vector([[1.0, 2.0]]) is None  # nested
    assert unit_vector(["a", "b"]) is None
    assert unit_vector("[1,2,3]", 2) is None  # another dimension
    tiny = unit_vector([1e-300, 1e-300])
    assert tiny is not None and abs(float(tiny @ tiny) - 1.0) < 1e-6
    huge = unit_vector([1e300, -1e300])
    assert huge is not None and abs(float(huge @ huge) - 1.0) < 1e-6


def test_a_model_that_returns_garbage_for_a_query_degrades_to_lexical(vmake, monkeypatch):
    monkeypatch.setattr(H, "IN_PROCESS", True)

    class Liar(TrigramEmbeddings):
        model = "liar"

        def embed_query(self, text: str) -> list[float]:
            return [0.0] * 256

    store = vmake(Liar())
    store.enable_embeddings()
    store.add(ALICE, "fact", "Plays chess")
    store.index_embeddings(ALICE)
    assert [h.record.content for h in store.search(ALICE, "chess")] == ["Plays chess"]
    assert store.search(ALICE, "xylophones") == []


def test_the_in_process_leg_is_on_where_numpy_is_installed() -> None:
    import numpy  # noqa: F401  (the dev install has it: every local model needs it)

    assert H.IN_PROCESS is True


def test_threads_racing_on_a_cold_pool_rank_alike(vector_dsn, clock, monkeypatch):
    monkeypatch.setattr(H, "IN_PROCESS", True)
    with MemoryStore.open(vector_dsn, clock=clock, max_size=4, embeddings=RandomEmbeddings()) as s:
        s.setup()
        s.enable_embeddings()
        _fill(s, random.Random(3), 40, clock)
        s.index_embeddings(ALICE)
        expected = [h.record.id for h in s.search(ALICE, "tea garden", limit=8)]
        assert expected
        for _ in range(3):
            s._recall.clear()  # every round starts cold: the threads load and add vectors
            with ThreadPoolExecutor(8) as pool:
                got = list(
                    pool.map(
                        lambda _: [h.record.id for h in s.search(ALICE, "tea garden", limit=8)],
                        range(16),
                    )
                )
            assert all(g == expected for g in got)
            assert s._recall.nbytes < 40 * (256 * 4 + 200) * 3 + 10 * 2**20
