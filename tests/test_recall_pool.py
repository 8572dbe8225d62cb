"""The in-process recall pool: one statement when current, coherent across processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from _stores import T0, FakeClock
from psycopg.rows import dict_row

from memory_graph import Limits, MemoryStore, Owner
from memory_graph.storage.driver import Query
from memory_graph.storage.ops import search as S
from memory_graph.storage.ops.recall_cache import RecallCache, _owner_key

ALICE = Owner("alice")
BOB = Owner("bob")

CHILD = textwrap.dedent(
    """
    import sys
    from memory_graph import MemoryStore, Owner
    dsn, action, arg = sys.argv[1], sys.argv[2], sys.argv[3]
    with MemoryStore.from_dsn(dsn) as s:
        owner = Owner("alice")
        if action == "add":
            print(s.add(owner, "fact", arg).record_id)
        elif action == "replace":
            rec = s.get_record(owner, arg)
            s.replace(owner, arg, "Caroline now paints seascapes", base_version=rec.version)
        elif action == "remove":
            s.remove(owner, arg, base_version=s.get_record(owner, arg).version)
        elif action == "pref":
            s.set_preference(owner, "editor", arg, source="settings")
    """
)


def child(dsn: str, action: str, arg: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, dsn, action, arg],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def sync_store(pg_dsn: str, clock: FakeClock) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn, clock=clock) as s:
        s.setup()
        yield s


def ids(hits: list[Any]) -> list[str]:
    return [h.record.id for h in hits]


def drive(dsn: str, op: Any) -> tuple[Any, list[str]]:
    """Run an op on one autocommit connection, recording each statement it sends."""
    sent: list[str] = []
    with psycopg.connect(dsn, autocommit=True, row_factory=dict_row) as conn:
        try:
            q = next(op)
            while True:
                assert isinstance(q, Query)
                sent.append(q.sql)
                cur = conn.execute(q.sql, q.params)
                result: Any = None
                if q.fetch == "all":
                    result = cur.fetchall()
                elif q.fetch == "one":
                    result = cur.fetchone()
                q = op.send(result)
        except StopIteration as stop:
            return stop.value, sent


def test_a_write_in_another_process_is_seen_by_the_next_recall(sync_store, pg_dsn):
    first = sync_store.add(ALICE, "fact", "Caroline paints sunsets").record_id
    assert ids(sync_store.search(ALICE, "what does Caroline paint?")) == [first]
    # Another process adds, replaces, removes: each is visible to this process's next recall.
    added = child(pg_dsn, "add", "Melanie paints portraits")
    assert set(ids(sync_store.search(ALICE, "who paints?"))) == {first, added}
    child(pg_dsn, "replace", first)
    hits = sync_store.search(ALICE, "seascapes")
    assert ids(hits) == [first] and hits[0].record.version == 2
    assert sync_store.search(ALICE, "sunsets") == []
    child(pg_dsn, "remove", added)
    assert ids(sync_store.search(ALICE, "who paints?")) == [first]
    child(pg_dsn, "pref", "helix")
    snap = sync_store.snapshot(ALICE, latest_input="which editor do I use?")
    assert "editor: helix" in snap


def test_hard_deletes_and_truncation_reload_the_pool(sync_store, pg_dsn):
    a = sync_store.add(ALICE, "fact", "likes green tea").record_id
    b = sync_store.add(ALICE, "fact", "likes black tea").record_id
    assert set(ids(sync_store.search(ALICE, "tea"))) == {a, b}
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("DELETE FROM mg_records WHERE id = %s", (a,))
    assert ids(sync_store.search(ALICE, "tea")) == [b]
    with psycopg.connect(pg_dsn, autocommit=True) as c:
        c.execute("TRUNCATE mg_records, mg_recall_stamp")  # no row trigger fires
    assert sync_store.search(ALICE, "tea") == []


def test_a_current_pool_costs_one_statement(sync_store, pg_dsn, clock):
    rid = sync_store.add(ALICE, "fact", "Caroline paints sunsets").record_id
    cache = RecallCache()

    def search(q: str) -> Any:
        return S.search_op(ALICE, q, clock=clock, limits=Limits(), cache=cache)

    hits, sent = drive(pg_dsn, search("paints"))
    assert ids(hits) == [rid] and len(sent) == 1
    hits, sent = drive(pg_dsn, search("sunsets"))
    assert ids(hits) == [rid] and len(sent) == 1
    snap_op = S.snapshot_op(
        ALICE,
        task_step="paint",
        latest_input="sunsets?",
        goal=None,
        as_of=None,
        limit=None,
        max_bytes=None,
        max_tokens=None,
        clock=clock,
        limits=Limits(),
        cache=cache,
    )
    snap, sent = drive(pg_dsn, snap_op)
    assert rid in snap and len(sent) == 1
    # A write elsewhere: the stamps, then the changed rows; then one statement again.
    other = sync_store.add(ALICE, "fact", "Melanie paints sunsets too").record_id
    hits, sent = drive(pg_dsn, search("sunsets"))
    assert set(ids(hits)) == {rid, other} and len(sent) == 2
    hits, sent = drive(pg_dsn, search("sunsets"))
    assert set(ids(hits)) == {rid, other} and len(sent) == 1


def test_pool_respects_owner_expiry_and_filters(sync_store, clock):
    mine = sync_store.add(ALICE, "fact", "the blue door code is in the safe").record_id
    sync_store.add(BOB, "fact", "the blue door code is 1234")
    brief = sync_store.add(
        ALICE, "fact", "blue door visit today", expires_at=T0 + timedelta(hours=1)
    ).record_id
    assert set(ids(sync_store.search(ALICE, "blue door"))) == {mine, brief}
    clock.advance(hours=2)
    assert ids(sync_store.search(ALICE, "blue door")) == [mine]
    assert ids(sync_store.search(ALICE, "blue door", as_of=T0)) != [mine]
    assert sync_store.search(ALICE, "blue door", kinds=["preference"]) == []
    assert sync_store.search(ALICE, "blue door", trusts=["external"]) == []
    secret = sync_store.add(ALICE, "fact", "blue door key", sensitivity="sensitive").record_id
    assert secret not in ids(sync_store.search(ALICE, "blue door key"))
    assert ids(sync_store.search(ALICE, "blue door key", sensitivities=["sensitive"])) == [secret]


def test_reinforcement_updates_the_pooled_confidence(sync_store):
    rid = sync_store.add(ALICE, "fact", "likes tea", trust="agent-observed").record_id
    before = sync_store.search(ALICE, "tea")[0]
    sync_store.add(ALICE, "fact", "likes tea", trust="agent-observed")  # a duplicate reinforces
    after = sync_store.search(ALICE, "tea")[0]
    assert after.record.id == rid and after.record.confidence > before.record.confidence
    assert after.score > before.score


def record_lines(block: str) -> list[str]:
    return [ln for ln in block.splitlines() if ln.startswith("- [") and "disagreement" not in ln]


def test_snapshot_limit_counts_records_and_a_group_that_does_not_fit_is_a_marker(sync_store):
    for value in ("tea", "coffee", "cocoa"):
        sync_store.add(
            ALICE,
            "fact",
            f"morning drink is {value}",
            knowledge={"claim": {"key": "drink.morning", "value": value}},
        )
    plain = sync_store.add(ALICE, "fact", "morning run at seven").record_id
    full = sync_store.snapshot(ALICE, latest_input="morning drink", limit=10)
    assert len(record_lines(full)) == 4  # the whole group plus the plain record
    for limit in (1, 2, 3):
        block = sync_store.snapshot(ALICE, latest_input="morning drink", limit=limit)
        shown = record_lines(block)
        markers = [ln for ln in block.splitlines() if "no value selected" in ln]
        assert len(shown) + len(markers) <= limit
        # Never one side of the group alone: all three sides, or the marker.
        sides = [ln for ln in shown if "morning drink is" in ln]
        assert len(sides) in (0, 3)
        assert (len(sides) == 3) != bool(markers)
        if limit < 3:
            assert markers and "3 records" in markers[0]
    assert plain in sync_store.snapshot(ALICE, latest_input="morning drink", limit=2)
    assert len(record_lines(sync_store.snapshot(ALICE, latest_input="morning", limit=4))) == 4


def test_preference_keys_are_searchable(sync_store):
    sync_store.set_preference(ALICE, "editor", "vim", source="settings")
    sync_store.set_preference(ALICE, "reply.language", "French", source="settings")
    sync_store.add(ALICE, "fact", "my sister edits videos")
    hits = sync_store.search(ALICE, "What do you remember about my editor?")
    assert hits and hits[0].record.key == "editor" and hits[0].record.content == "vim"
    hits = sync_store.search(ALICE, "which language should replies use?")
    assert hits and hits[0].record.key == "reply.language"
    assert "editor: vim" in sync_store.snapshot(ALICE, latest_input="my editor?")
    # Key words are indexed in the store's token rows too (the database-side index).
    with psycopg.connect(sync_store.dsn) as c:
        [(tokens,)] = c.execute("SELECT tokens FROM mg_records WHERE key = 'reply.language'")
    assert {"reply", "language", "french"} <= set(tokens)


def test_rendered_lines_are_kept_with_the_pool_and_follow_each_new_version(
    sync_store, pg_dsn, clock
):
    from dataclasses import replace as dc_replace

    from memory_graph.recall.render import record_lines as render_lines
    from memory_graph.storage.ops.recall_cache import _owner_key

    kept = sync_store.add(ALICE, "fact", "Caroline paints sunsets").record_id
    changed = sync_store.add(ALICE, "fact", "Caroline paints with oils").record_id
    first = sync_store.snapshot(ALICE, latest_input="what does Caroline paint?")
    pool = sync_store._recall.get(_owner_key(ALICE))
    record = pool.entries[kept].record
    lines = pool.record_lines(record)
    assert lines == render_lines(record) and lines[0] in first
    # A look-alike object with the same id is rendered as itself and never kept.
    forged = dc_replace(record, content="Caroline obeys <memory_source>")
    assert pool.record_lines(forged) == render_lines(forged)
    assert pool.record_lines(record) is lines
    # A new version (written by another process) is rendered afresh; the unchanged record's
    # lines carry over to the new pool.
    child(pg_dsn, "replace", changed)
    second = sync_store.snapshot(ALICE, latest_input="what does Caroline paint?")
    assert "seascapes" in second and "with oils" not in second
    fresh = sync_store._recall.get(_owner_key(ALICE))
    assert fresh is not pool and fresh.record_lines(fresh.entries[kept].record) is lines
    # The block is exactly what a store without any memo renders.
    with MemoryStore.from_dsn(pg_dsn, clock=clock) as cold:
        assert cold.snapshot(ALICE, latest_input="what does Caroline paint?") == second


def test_the_recall_cache_is_bounded_by_bytes_and_keeps_the_hot_owners() -> None:
    from memory_graph.storage.ops.recall_cache import OwnerPool

    cache = RecallCache(1000)
    for name in "abcd":
        cache.put((name,), OwnerPool({}, {}, nbytes=300))
    assert len(cache) == 3 and cache.nbytes == 900  # "a" was the least recently used
    assert cache.get(("a",)) is None
    assert cache.get(("b",)) is not None  # "b" is hot again: "c" goes next
    cache.put(("e",), OwnerPool({}, {}, nbytes=300))
    assert [cache.get((n,)) is not None for n in "bcde"] == [True, False, True, True]
    cache.put(("big",), OwnerPool({}, {}, nbytes=5000))  # over the bound alone: kept alone
    assert len(cache) == 1 and cache.get(("big",)) is not None
    cache.put(("big",), OwnerPool({}, {}, nbytes=100))  # a replaced pool's bytes are released
    assert cache.nbytes == 100


def test_a_pool_estimate_follows_its_records(sync_store: MemoryStore) -> None:
    sync_store.add(ALICE, "fact", "Alice keeps bees on the roof")
    sync_store.search(ALICE, "bees")
    pool = next(iter(sync_store._recall._pools.values()))
    one = pool.nbytes
    sync_store.add(ALICE, "fact", "Alice sells the honey at the Saturday market " * 20)
    sync_store.search(ALICE, "honey")
    pool = next(iter(sync_store._recall._pools.values()))
    assert pool.nbytes > one + 800  # the long record's text and tokens count
    long = pool.nbytes
    rec = next(r for r in sync_store.list_records(ALICE) if "honey" in r.content)
    sync_store.remove(ALICE, rec.id, base_version=rec.version)
    sync_store.search(ALICE, "bees")
    pool = next(iter(sync_store._recall._pools.values()))
    assert pool.nbytes == one < long  # the removed record's bytes are released


def test_the_recall_cache_size_is_a_store_option_and_an_environment_variable(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_graph import ConfigurationError

    monkeypatch.setenv("MEMORY_GRAPH_RECALL_CACHE_MB", "1.5")
    with MemoryStore.from_dsn(pg_dsn, max_size=1) as s:
        assert s._recall.max_bytes == int(1.5 * 2**20)
    with MemoryStore.from_dsn(pg_dsn, max_size=1, recall_cache_mb=0.01) as s:
        s.setup()
        assert s._recall.max_bytes == int(0.01 * 2**20)  # the option wins
        for i in range(4):  # each pool is estimated over 10 KB: only the last one stays
            s.add(Owner(f"u{i}"), "fact", f"note number {i}")
            s.search(Owner(f"u{i}"), "note")
        assert len(s._recall) < 4 and s._recall.get(_owner_key(Owner("u3"))) is not None
    monkeypatch.delenv("MEMORY_GRAPH_RECALL_CACHE_MB")
    with MemoryStore.from_dsn(pg_dsn, max_size=1) as s:
        assert s._recall.max_bytes == 256 * 2**20
    for bad in ("lots", "-3", "nan"):
        monkeypatch.setenv("MEMORY_GRAPH_RECALL_CACHE_MB", bad)
        with pytest.raises(ConfigurationError, match="MEMORY_GRAPH_RECALL_CACHE_MB"):
            MemoryStore.open(pg_dsn)


def test_a_listing_is_one_page_and_matches_the_full_listing(
    sync_store: MemoryStore, clock: FakeClock
) -> None:
    from memory_graph import LimitExceededError, ValidationError
    from nodes import GovernedStore

    owner = Owner("alice", workspace="w1")
    for i in range(12):
        clock.advance(seconds=1 + i % 3)
        level = "user_workspace" if i % 3 == 0 else "user"
        sens = "sensitive" if i == 5 else "private"
        sync_store.add(owner, "fact", f"listed note {i}", level=level, sensitivity=sens)
    expired = sync_store.add(owner, "fact", "gone soon", expires_at=clock() + timedelta(seconds=1))
    clock.advance(minutes=1)
    gov = GovernedStore(sync_store)
    for prefix, named in (
        (("memories", "alice"), Owner("alice")),
        (("memories", "alice", "workspace", "w1"), owner),
    ):
        every = [r for r in sync_store.list_records(named) if r.sensitivity != "sensitive"]
        every.sort(key=lambda r: (r.updated_at, r.id), reverse=True)
        assert expired.record_id not in {r.id for r in every}
        under = [
            r for r in every if gov.namespace_for(named, r.identity.level)[: len(prefix)] == prefix
        ]
        assert len(under) >= 4
        for offset, limit in ((0, 10), (3, 4), (0, 100), (20, 5)):
            items = gov.search(prefix, limit=limit, offset=offset)
            assert [i.value["content"] for i in items] == [
                r.content for r in under[offset : offset + limit]
            ]
            assert all(i.score is None for i in items)
    assert sync_store._recall.get(_owner_key(owner)) is None  # no recall pool was loaded
    page = sync_store.list_page(owner, limit=3, levels=["user_workspace"], include_sensitive=True)
    assert {r.identity.level for r in page} == {"user_workspace"}
    for bad in ({"limit": -1}, {"limit": True}, {"offset": 1.5}, {"levels": ["root"]}):
        with pytest.raises(ValidationError):
            sync_store.list_page(owner, **bad)
    with pytest.raises(LimitExceededError):
        sync_store.list_page(owner, limit=10_000, offset=1)
    assert sync_store.list_page(Owner("bob"), limit=10) == []  # another owner sees nothing
