"""A write's next recall derives the owner's view from the previous one (no rebuild): the
derived view must equal a build from scratch, whatever the sequence of writes."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from _stores import T0, FakeClock

from memory_graph import Limits, MemoryStore, Owner
from memory_graph.recall.model import Document
from memory_graph.recall.tokenize import tokenize
from memory_graph.storage.ops.recall_cache import OwnerPool, _owner_key, _View, rank_pool

ALICE = Owner("alice")
WORDS = "tea garden violin doctor paint harbor lesson uncle clinic river boat stone".split()
SENS = [("private",), ("private", "sensitive"), ("sensitive",)]
QUERIES = ["tea garden", "violin lesson?", "uncle clinic river", "note", "what about boat?"]


@pytest.fixture
def store(pg_dsn: str, clock: FakeClock) -> Iterator[MemoryStore]:
    limits = Limits(max_records_per_identity=10_000)
    with MemoryStore.from_dsn(pg_dsn, clock=clock, limits=limits) as s:
        s.setup()
        yield s


def describe(view: _View) -> dict[str, Any]:
    """A view as position-free facts: what a build from scratch must equal."""
    index = view.index
    ids = {p.doc.id: pos for pos, p in enumerate(index.prepared) if index.find(p.doc.id) == pos}
    at = {pos: rid for rid, pos in ids.items()}
    kind_of = {k: [at[p] for p in ps] for k, ps in view.by_kind.items()}
    return {
        "entries": {rid: view.entries[pos] for rid, pos in ids.items()},
        "prepared": {rid: index.prepared[pos] for rid, pos in ids.items()},
        "stats": index.stats,
        # postings read in order: positions differ between builds, ids and order must not
        "postings": {t: [at[p] for p in index.positions(t)] for t in index.stats.df},
        "kinds": {k: sorted(v) for k, v in kind_of.items()},
        "kind_sets": view.kinds,
        "trusts": view.trusts,
        "threads": view.threads,
        # expiries soonest first (equal times may list positions in either build's order)
        "expiry": sorted((when, at[p]) for when, p in view.expiry),
        "expiry_order": view.expiry == sorted(view.expiry),
        "places": {k: at[p] for k, p in index._place.items()},
        "ties": sorted(ids, key=lambda rid: index._key[ids[rid]]) == sorted(ids),
    }


def fresh_view(pool: OwnerPool, key: tuple[str, ...]) -> _View:
    chosen = sorted(
        (e for e in pool.entries.values() if e.record.sensitivity in key),
        key=lambda e: e.record.id,
    )
    return _View(chosen)


def ranked(pool: OwnerPool, query: str, kinds: list[str], trusts: list[str], key: Any) -> Any:
    at = T0 + timedelta(days=400)
    return [
        (r.doc.id, r.score)
        for r in rank_pool(
            pool, query, limit=8, depth=20, kinds=kinds, trusts=trusts, sensitivities=key, at=at
        )
    ]


def random_write(store: MemoryStore, rng: random.Random, clock: FakeClock, live: list[str]) -> None:
    action = rng.random()
    if action < 0.45 or len(live) < 4:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        evidence: dict[str, Any] = {}
        if rng.random() < 0.6:
            evidence["thread_id"] = rng.choice(["t1", "t2", "t3"])
        if rng.random() < 0.7:  # observed out of order: inserts land inside a thread
            seen = T0 + timedelta(hours=rng.randint(0, 500))
            evidence["observed_at"] = seen.isoformat().replace("+00:00", "Z")
        expires = clock.now + timedelta(days=rng.randint(1, 30)) if rng.random() < 0.3 else None
        result = store.add(
            ALICE,
            rng.choice(["fact", "experience", "instruction"]) if rng.random() < 0.2 else "fact",
            f"note {len(live)} {words}",
            trust=rng.choice(["user-confirmed", "agent-observed"]),
            sensitivity=rng.choice(["private", "private", "sensitive"]),
            evidence=evidence or None,
            expires_at=expires,
        )
        if result.record_id:
            live.append(result.record_id)
    elif action < 0.7:
        rid = rng.choice(live)
        rec = store.get_record(ALICE, rid)
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        expires = clock.now + timedelta(days=rng.randint(1, 30)) if rng.random() < 0.4 else None
        store.replace(ALICE, rid, f"changed {words}", base_version=rec.version, expires_at=expires)
    elif action < 0.9:
        rid = live.pop(rng.randrange(len(live)))
        store.remove(ALICE, rid, base_version=store.get_record(ALICE, rid).version)
    else:
        clock.advance(days=rng.randint(1, 10))  # some records expire


@pytest.mark.parametrize("seed", [1, 2])
def test_a_derived_view_equals_a_fresh_build(store, clock, seed):
    rng = random.Random(seed)
    live: list[str] = []
    for _ in range(40):
        random_write(store, rng, clock, live)
    store.search(ALICE, "note")
    derived = 0
    for step in range(40):
        before = store._recall.get(_owner_key(ALICE))
        assert before is not None
        # Other sensitivities' views are built every third step: the views of pools between
        # carry over, with the ids changed over several writes.
        checked = SENS if step % 3 == 0 else SENS[:1]
        views = {key: before.view(key) for key in checked}
        for key, view in views.items():
            assert describe(view) == describe(fresh_view(before, key)), (seed, step, key)
        for _ in range(rng.choice([1, 1, 2, 3])):
            random_write(store, rng, clock, live)
        store.search(ALICE, "note")  # the pool after the writes
        pool = store._recall.get(_owner_key(ALICE))
        assert pool is not None
        changed = {
            rid
            for rid in before.entries.keys() | pool.entries.keys()
            if (a := before.entries.get(rid)) is None
            or (b := pool.entries.get(rid)) is None
            or a.record != b.record
        }
        for key in checked:
            fresh = describe(fresh_view(pool, key))
            assert describe(pool.view(key)) == fresh, (seed, step, key)
            direct = _View.derived(views[key], pool.entries, key, changed)
            if direct is not None:
                derived += 1
                assert describe(direct) == fresh, (seed, step, key)
        scratch = OwnerPool(pool.entries, pool.stamps)
        for query in QUERIES:
            for kinds, trusts in [
                (["fact", "experience", "instruction"], ["user-confirmed", "agent-observed"]),
                (["fact"], ["user-confirmed"]),
            ]:
                for key in checked:
                    assert ranked(pool, query, kinds, trusts, key) == ranked(
                        scratch, query, kinds, trusts, key
                    ), (seed, step, query, key)
    assert derived >= 50  # the derived path, not its fallback, was compared


def note(rid: str, text: str, thread: str | None = None, seq: int = 0) -> Document:
    return Document(
        rid, tokenize(text), text=text, thread=thread, seq=seq, cache_key=f"{rid}|{text}"
    )


def test_an_index_changed_in_place_ranks_like_a_fresh_one() -> None:
    from memory_graph.recall.candidates import PoolIndex
    from memory_graph.recall.query import query_terms

    rng = random.Random(5)
    seqs = iter(range(10_000))
    docs = {f"{i * 7:04d}": note(f"{i * 7:04d}", f"note {rng.choice(WORDS)}") for i in range(300)}
    index = PoolIndex(sorted(docs.values(), key=lambda d: d.id))
    for step in range(60):
        put: list[Document] = []
        gone: list[str] = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < 0.3 and docs:
                rid = rng.choice(sorted(docs))
                if rid not in {d.id for d in put}:
                    gone.append(docs.pop(rid).id)
            else:  # new ids between old ones, at either end, or a rewrite of one
                rid = f"{rng.randrange(-5, 2500):04d}"
                if rid in gone:
                    continue
                text = f"note {rng.choice(WORDS)} {rng.choice(WORDS)}"
                d = note(rid, text, thread="t" if rng.random() < 0.5 else None, seq=next(seqs))
                put = [p for p in put if p.id != rid] + [d]
                docs[rid] = d
        got = index.changed(put, gone)
        order = sorted(docs.values(), key=lambda d: d.id)
        fresh = PoolIndex(order)
        if got is None:  # compaction: the caller builds afresh
            index = fresh
            continue
        index = got
        assert index.stats == fresh.stats
        for term in ("note", *WORDS):
            assert [index.docs[p].id for p in index.positions(term)] == [
                fresh.docs[p].id for p in fresh.positions(term)
            ], (step, term)
        for q in ("note tea", "garden violin", "uncle", "river boat stone"):
            qt = query_terms(q)
            assert [index.docs[p].id for p in index.select(qt, depth=30)] == [
                fresh.docs[p].id for p in fresh.select(qt, depth=30)
            ], (step, q)
    assert index.changed([replace(docs[min(docs)], confidence=0.5)], []) is not None


def test_an_index_that_cannot_change_in_place_says_so() -> None:
    from memory_graph.recall.candidates import PoolIndex

    docs = [note(f"{i:03d}", f"note {w}") for i, w in enumerate(WORDS)]
    extra = [note("005a", "note tea")]
    assert PoolIndex(docs[::-1]).changed(extra, []) is None  # not given in id order
    assert PoolIndex([*docs, docs[-1]]).changed(extra, []) is None  # a repeated id
    assert PoolIndex(docs, stats_filter=lambda d: True).changed(extra, []) is None
    assert PoolIndex(docs).changed(extra, ["999", "000", "000"]) is not None  # unknown, twice


def test_tie_keys_run_out_between_two_ids_and_the_index_says_so() -> None:
    from memory_graph.recall.candidates import PoolIndex
    from memory_graph.recall.query import query_terms

    docs = {rid: note(rid, "note tea") for rid in ("a", "b")}
    index = PoolIndex(sorted(docs.values(), key=lambda d: d.id))
    refused = 0
    for k in range(1, 50):  # "a" < "a0" < "a00" < ... < "b": each lands right after the last
        d = note("a" + "0" * k, "note tea")
        docs[d.id] = d
        fresh = PoolIndex(sorted(docs.values(), key=lambda d: d.id))
        got = index.changed([d], [])
        if got is None:
            refused += 1
            got = fresh
        index = got
        order = [fresh.docs[p].id for p in fresh.candidates(query_terms("tea"), depth=60)]
        assert [index.docs[p].id for p in index.candidates(query_terms("tea"), depth=60)] == order
        assert order == sorted(docs)  # equal scores: ties in id order
    assert refused >= 1
