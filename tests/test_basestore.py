"""``GovernedStore``: LangGraph's store semantics, governed (sync and async twins).

Trusted mode (a grant auto-approves) must behave like LangGraph's own stores for put / get /
search / delete / list_namespaces; governed mode (no policy) turns every write into a
pending proposal that only a decision makes visible.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore, GetOp, PutOp, SearchOp

from memory_graph import (
    ApprovalPolicy,
    AsyncMemoryStore,
    MemoryGraphError,
    MemoryStore,
    Owner,
    ScopeError,
    ValidationError,
)
from nodes import GovernedStore

ALICE = Owner("alice")
NS = ("memories", "alice")
KINDS = ["fact", "instruction", "experience"]
OPS = ["add", "replace", "remove"]


class SyncFacade:
    """Calls the async methods of a store on a private loop, with the sync call shape."""

    def __init__(self, loop: asyncio.AbstractEventLoop, inner: GovernedStore) -> None:
        self._loop = loop
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in ("get", "search", "put", "delete", "list_namespaces", "batch"):
            attr = getattr(self.inner, "a" + name)

            def call(*args: Any, **kwargs: Any) -> Any:
                return self._loop.run_until_complete(attr(*args, **kwargs))

            return call
        attr = getattr(self.inner.memory_store, name)
        if inspect.iscoroutinefunction(attr):
            return lambda *a, **k: self._loop.run_until_complete(attr(*a, **k))
        return attr


@pytest.fixture(params=["sync", "async"])
def open_store(
    request: pytest.FixtureRequest, pg_dsn: str
) -> Iterator[Callable[..., tuple[Any, Any]]]:
    """``open_store(policy=None, grant=False)`` -> (facade over GovernedStore, memory store)."""
    loop = asyncio.new_event_loop()
    closers: list[Callable[[], None]] = []

    def make(
        *, grant: bool | dict[str, Any] = False, policy: ApprovalPolicy | None = None
    ) -> tuple[Any, Any]:
        if request.param == "sync":
            memory: Any = MemoryStore.open(pg_dsn)
            memory.setup()
            closers.append(memory.close)
        else:
            inner = loop.run_until_complete(AsyncMemoryStore.open(pg_dsn))
            loop.run_until_complete(inner.setup())
            closers.append(lambda: loop.run_until_complete(inner.close()))
            memory = inner
        call = (
            (lambda f, *a, **k: f(*a, **k))
            if request.param == "sync"
            else (lambda f, *a, **k: loop.run_until_complete(f(*a, **k)))
        )
        if grant:
            options: dict[str, Any] = {
                "expires_at": memory.clock() + timedelta(hours=1),
                "kinds": KINDS,
                "operations": OPS,
                "max_mutations": 1000,
                "max_bytes": 1_000_000,
            }
            options.update(grant if isinstance(grant, dict) else {})
            g = call(memory.create_grant, ALICE, **options)
            policy = ApprovalPolicy(grant_id=g.id)
        raw = GovernedStore(memory, policy=policy)
        facade: Any = raw if request.param == "sync" else SyncFacade(loop, raw)
        helper: Any = memory if request.param == "sync" else SyncFacade(loop, raw)
        return facade, helper

    try:
        yield make
    finally:
        for close in reversed(closers):
            close()
        loop.close()


# --- trusted mode: LangGraph's semantics ----------------------------------------------------


def test_is_a_langgraph_base_store(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    assert isinstance(store if isinstance(store, BaseStore) else store.inner, BaseStore)


def test_put_get_overwrite_delete(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    assert store.get(NS, "editor") is None
    store.put(NS, "editor", {"content": "Alice edits code in Emacs"})
    item = store.get(NS, "editor")
    assert item is not None
    assert (item.namespace, item.key) == (NS, "editor")
    assert item.value == {"content": "Alice edits code in Emacs", "kind": "fact"}
    assert item.created_at.tzinfo is not None
    store.put(NS, "editor", {"content": "Alice edits code in Helix"})
    again = store.get(NS, "editor")
    assert again is not None and again.value["content"] == "Alice edits code in Helix"
    assert again.updated_at >= item.updated_at
    store.delete(NS, "editor")
    assert store.get(NS, "editor") is None
    store.delete(NS, "editor")  # deleting a missing item is a no-op
    store.delete(NS, "never-there")


def test_batch_returns_one_result_per_op_in_order(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    results = store.batch(
        [
            PutOp(NS, "a", {"content": "Alice likes tea"}),
            GetOp(NS, "a"),
            SearchOp(NS, query="tea"),
            GetOp(NS, "missing"),
        ]
    )
    assert results[0] is None
    assert results[1] is not None and results[1].value["content"] == "Alice likes tea"
    assert [i.key for i in results[2]] == ["a"]
    assert results[3] is None


def test_search_without_query_filter_limit_offset(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    for i in range(5):
        kind = "instruction" if i % 2 else "fact"
        store.put(NS, f"k{i}", {"content": f"Alice note number {i}", "kind": kind})
    everything = store.search(NS, limit=100)
    assert sorted(i.key for i in everything) == [f"k{i}" for i in range(5)]
    assert all(i.score is None for i in everything)
    facts = store.search(NS, filter={"kind": "fact"})
    assert sorted(i.key for i in facts) == ["k0", "k2", "k4"]
    not_facts = store.search(NS, filter={"kind": {"$ne": "fact"}})
    assert sorted(i.key for i in not_facts) == ["k1", "k3"]
    page1 = store.search(NS, limit=2)
    page2 = store.search(NS, limit=2, offset=2)
    page3 = store.search(NS, limit=2, offset=4)
    keys = [i.key for i in page1 + page2 + page3]
    assert sorted(keys) == [f"k{i}" for i in range(5)] and len(set(keys)) == 5
    assert store.search(NS, filter={"content": "Alice note number 3"})[0].key == "k3"


def test_search_query_is_recall_ranked(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    store.put(NS, "coffee", {"content": "Alice drinks oat milk coffee every morning"})
    store.put(NS, "editor", {"content": "Alice writes Rust in Helix"})
    store.put(NS, "cjk", {"content": "我喜欢喝咖啡"})
    hits = store.search(NS, query="coffee")
    assert [h.key for h in hits] == ["coffee"]
    assert hits[0].score is not None and hits[0].score > 0
    assert [h.key for h in store.search(NS, query="咖啡")] == ["cjk"]
    assert store.search(NS, query="bicycle") == []


def test_list_namespaces_prefix_suffix_depth_paging(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    assert store.list_namespaces(prefix=NS) == []
    store.put(NS, "x", {"content": "Alice likes tea"})
    assert store.list_namespaces(prefix=NS) == [NS]
    assert store.list_namespaces(prefix=("memories", "alice")) == [NS]
    assert store.list_namespaces(prefix=NS, suffix=("alice",)) == [NS]
    assert store.list_namespaces(prefix=NS, suffix=("nope",)) == []
    assert store.list_namespaces(prefix=NS, max_depth=1) == [("memories",)]
    assert store.list_namespaces(prefix=NS, offset=1) == []


def test_levels_map_to_namespaces(open_store: Callable[..., Any]) -> None:
    store, memory = open_store()  # governed: approve through the inbox
    coder = Owner("alice", agent="coder", workspace="/repo")
    ns_agent_ws = ("memories", "alice", "agent", "coder", "workspace", "/repo")
    ns_ws = ("memories", "alice", "workspace", "/repo")
    store.put(
        ns_agent_ws, "style", {"content": "Alice wants four-space indents", "kind": "instruction"}
    )
    store.put(ns_ws, "db", {"content": "Alice's repo uses PostgreSQL"})
    for p in memory.list_pending(coder):
        assert memory.decide(coder, p.id, "approve").status == "approved"
    levels = {r.content: r.identity.level for r in memory.list_records(coder)}
    assert levels == {
        "Alice wants four-space indents": "agent_workspace",
        "Alice's repo uses PostgreSQL": "user_workspace",
    }
    got = store.get(ns_agent_ws, "style")
    assert got is not None and got.value["kind"] == "instruction"
    assert store.get(ns_ws, "style") is None  # another level's item
    assert store.get(NS, "db") is None  # the global namespace does not see the workspace
    listed = store.list_namespaces(
        prefix=("memories", "alice", "agent", "coder", "workspace", "/repo")
    )
    assert listed == [ns_agent_ws]
    found = store.search(("memories", "alice", "workspace", "/repo"))
    assert [(i.namespace, i.key) for i in found] == [(ns_ws, "db")]


# --- governed mode ---------------------------------------------------------------------------


def test_without_policy_put_and_delete_are_pending_proposals(
    open_store: Callable[..., Any],
) -> None:
    store, memory = open_store()
    store.put(NS, "editor", {"content": "Alice uses Emacs"})
    assert store.get(NS, "editor") is None
    assert store.search(NS, query="Emacs") == []
    (pending,) = memory.list_pending(ALICE)
    assert (pending.operation, pending.args["key"]) == ("add", "editor")
    assert pending.evidence.get("source") == "store"
    store.put(NS, "editor", {"content": "Alice uses Emacs"})  # the same put again
    assert len(memory.list_pending(ALICE)) == 1  # replays the same proposal
    assert memory.decide(ALICE, pending.id, "approve").status == "approved"
    item = store.get(NS, "editor")
    assert item is not None and item.value["content"] == "Alice uses Emacs"
    store.delete(NS, "editor")
    assert store.get(NS, "editor") is not None  # removal waits for approval too
    (removal,) = memory.list_pending(ALICE)
    assert removal.operation == "remove"
    assert memory.decide(ALICE, removal.id, "reject").status == "rejected"
    assert store.get(NS, "editor") is not None


def test_auto_reject_policy(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(policy=ApprovalPolicy(auto_reject_operations=frozenset({"add"})))
    store.put(NS, "k", {"content": "Alice likes tea"})
    assert store.get(NS, "k") is None
    assert memory.list_pending(ALICE) == []


def test_exhausted_grant_stops_committing(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant={"max_mutations": 1})
    store.put(NS, "one", {"content": "Alice likes tea"})
    store.put(NS, "two", {"content": "Alice likes green tea"})
    assert store.get(NS, "one") is not None
    assert store.get(NS, "two") is None
    assert [p.args["key"] for p in memory.list_pending(ALICE)] == ["two"]
    trust = {r.content: r.trust for r in memory.list_records(ALICE)}
    assert trust == {"Alice likes tea": "agent-observed"}


def test_guard_blocks_sensitive_content(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    with pytest.raises(ValidationError):
        store.put(NS, "card", {"content": "My card number is 4111 1111 1111 1111"})
    assert store.get(NS, "card") is None
    assert memory.list_pending(ALICE) == []


@pytest.mark.parametrize(
    "value",
    [
        {"data": "x"},
        {"content": 5},
        {"content": "ok", "kind": "preference"},
        {"content": "ok", "trust": "user-confirmed"},
        "just text",
        ["content", "x"],
        {"content": {"nested": "x"}},
        {"content": "a\u202eb", "kind": "fact", "extra": 1},
    ],
)
def test_hostile_values_are_refused(open_store: Callable[..., Any], value: Any) -> None:
    store, memory = open_store(grant=True)
    with pytest.raises(ValidationError):
        store.put(NS, "k", value)
    assert memory.list_pending(ALICE) == [] and memory.list_records(ALICE) == []


@pytest.mark.parametrize("key", ["a\nb", "a\x00b", "\u202eevil", "x" * 5000, " ", ""])
def test_hostile_keys_are_refused(open_store: Callable[..., Any], key: str) -> None:
    store, memory = open_store(grant=True)
    with pytest.raises(ValidationError):
        store.batch([PutOp(NS, key, {"content": "Alice likes tea"})])
    assert memory.list_pending(ALICE) == [] and memory.list_records(ALICE) == []


def test_huge_content_is_refused(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    with pytest.raises(MemoryGraphError):
        store.put(NS, "k", {"content": "x" * 100_000})
    assert memory.list_records(ALICE) == []


@pytest.mark.parametrize(
    "namespace",
    [
        ("memories",),
        ("other", "alice"),
        ("memories", "alice", "agent"),
        ("memories", "alice", "workspace", "/r", "agent", "a"),
        ("memories", "alice", "bogus", "x"),
        ("memories", "   "),
        ("memories", "alice\n"),
        ("memories", "al\x00ice"),
        ("memories", "x" * 1000),
    ],
)
def test_bad_namespaces_are_refused(open_store: Callable[..., Any], namespace: Any) -> None:
    store, memory = open_store(grant=True)
    with pytest.raises(MemoryGraphError):
        store.batch([PutOp(namespace, "k", {"content": "Alice likes tea"})])
    with pytest.raises(MemoryGraphError):
        store.batch([GetOp(namespace, "k")])
    assert memory.list_records(ALICE) == []


def test_search_and_list_must_name_one_user(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    store.put(NS, "k", {"content": "Alice likes tea"})
    with pytest.raises(ScopeError):
        store.search(("memories",))
    with pytest.raises(ScopeError):
        store.list_namespaces(prefix=("memories",))
    with pytest.raises(ScopeError):
        store.list_namespaces()


def test_users_are_isolated(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    store.put(NS, "k", {"content": "Alice likes tea"})
    bob = ("memories", "bob")
    assert store.get(bob, "k") is None
    assert store.search(bob, query="tea") == []
    assert store.list_namespaces(prefix=bob) == []
    store.put(bob, "k", {"content": "Bob likes tea"})  # no grant for bob: pending
    assert store.get(bob, "k") is None
    assert store.get(NS, "k").value["content"] == "Alice likes tea"


def test_the_same_content_under_a_second_key_is_a_duplicate(
    open_store: Callable[..., Any],
) -> None:
    store, memory = open_store(grant=True)
    store.put(NS, "first", {"content": "Alice likes tea"})
    store.put(NS, "second", {"content": "Alice likes tea"})
    assert store.get(NS, "first") is not None and store.get(NS, "second") is None
    assert len(memory.list_records(ALICE)) == 1


def test_ttl_becomes_expiry_and_bad_ttl_is_refused(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    store.put(NS, "k", {"content": "Alice is in Paris this week"}, ttl=60)
    (record,) = memory.list_records(ALICE)
    assert record.expires_at is not None
    delta = record.expires_at - memory.clock()
    assert timedelta(minutes=59) < delta <= timedelta(minutes=60)
    for bad in (-1, 0, float("nan"), "60", True):
        with pytest.raises(ValidationError):
            store.batch([PutOp(NS, "k2", {"content": "Alice x"}, ttl=bad)])


def test_bad_filters_and_paging_are_refused(open_store: Callable[..., Any]) -> None:
    store, _ = open_store(grant=True)
    with pytest.raises(ValidationError):
        store.search(NS, filter={"kind": {"$regex": ".*"}})
    with pytest.raises(ValidationError):
        store.batch([SearchOp(NS, limit=-1)])


def test_template_validation() -> None:
    for bad in [(), ("memories",), ("{user_id}", "{user_id}"), ("m", "{agent}", "{user_id}")]:
        with pytest.raises(ValidationError):
            GovernedStore(None, namespace=bad)  # type: ignore[arg-type]


def test_a_record_without_key_is_addressed_by_its_id(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    result = memory.add(ALICE, "fact", "Alice keeps bees")  # e.g. approved from extraction
    item = store.get(NS, result.record_id)
    assert item is not None and item.key == result.record_id
    store.put(NS, result.record_id, {"content": "Alice keeps two hives of bees"})
    (record,) = memory.list_records(ALICE)
    assert (record.id, record.content, record.version) == (
        result.record_id,
        "Alice keeps two hives of bees",
        2,
    )
    assert store.get(NS, "00000000-0000-0000-0000-000000000000") is None


def test_list_records_filters_by_key(open_store: Callable[..., Any]) -> None:
    store, memory = open_store(grant=True)
    store.put(NS, "a", {"content": "Alice likes tea"})
    store.put(NS, "b", {"content": "Alice likes cocoa"})
    assert [r.content for r in memory.list_records(ALICE, key="b")] == ["Alice likes cocoa"]
    assert memory.list_records(ALICE, key="zzz") == []


@settings(max_examples=300, deadline=None)
@example(["memories", "alice", "workspace", ""])  # a blank id named a level without an identity
@example(["memories", "alice", "agent", " "])
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["memories", "alice", "agent", "workspace", "coder", "/r", "", "*"]),
            st.text(max_size=12),
        ),
        max_size=8,
    )
)
def test_namespace_parsing_round_trips_or_refuses(parts: list[str]) -> None:
    from nodes._basestore import _template_only

    shell = _template_only(("memories", "{user_id}"))
    namespace = tuple(parts)
    try:
        owner, level = shell._parse(namespace, prefix=False, config=None)
    except MemoryGraphError:
        return  # refused with a documented error, never another exception
    assert level is not None
    assert shell.namespace_for(owner, level) == namespace
