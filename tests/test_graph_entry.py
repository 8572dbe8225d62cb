"""The turn's entry (issue 14): one statement for context, recall and pending proposals.

The store's ``_turn_entry`` must return exactly what ``context_block``, ``snapshot`` and
``list_pending`` return, in every state of the recall pool (none held, held, changed) and of
the thread (nothing pending, something pending, no thread). The thread claim is one
statement that still refuses another principal, also under a race. A plain turn of the
prebuilt agent sends two store statements (claim, entry), and the model sees what the entry
read and masked in the same step.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from _graph_helpers import ALICE, CTX, cfg, harness_on, turn
from test_hybrid import TrigramEmbeddings

import memory_graph.storage.shell.base_sync as sync_store
from memory_graph import MemoryStore, Owner, ThreadOwnerError, ValidationError
from memory_graph.testing import FakeToolCallingChatModel
from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

BOB = Owner("bob")
RECALL: dict[str, Any] = {
    "task_step": None,
    "latest_input": "what do I cook with tomatoes",
    "goal": None,
    "limit": None,
    "max_bytes": None,
    "max_tokens": None,
}
ADD = {"kind": "fact", "content": "Alice grows tomatoes on her balcony"}


def _separate(store: Any, owner: Owner, thread_id: str | None) -> tuple[str, str, Any]:
    pending = None if thread_id is None else store.list_pending(owner, thread_id=thread_id)
    return store.context_block(owner), store.snapshot(owner, **RECALL), pending


def _entry(store: Any, owner: Owner, thread_id: str | None) -> tuple[str, str | None, Any]:
    got = store._turn_entry(owner, thread_id=thread_id, recall=RECALL)
    return got.context, got.recalled, got.pending


def test_entry_reads_what_the_three_reads_return(store: Any) -> None:
    # An owner with nothing stored: no context rows at all, no pool yet.
    assert _entry(store, ALICE, "t1") == _separate(store, ALICE, "t1")
    store.patch_profile(ALICE, {"name": "Alice"})
    store.set_preference(ALICE, "reply.length", "short")
    store.add(ALICE, "fact", "Alice cooks rice with tomatoes on Fridays")
    # The first recall after writes reads the pool in full; the next finds it held.
    for _ in range(2):
        assert _entry(store, ALICE, "t1") == _separate(store, ALICE, "t1")
    proposed = store.propose(ALICE, "add", ADD, level="user", thread_id="t1")
    store.propose(
        ALICE, "add", {**ADD, "content": "Alice owns a bike"}, level="user", thread_id="t2"
    )
    context, recalled, pending = _entry(store, ALICE, "t1")
    assert [p.id for p in pending] == [proposed.id]  # this thread's only
    assert (context, recalled, pending) == _separate(store, ALICE, "t1")
    # A write changes the held pool: the entry reads the changed rows after its statement.
    store.add(ALICE, "fact", "Alice likes basil with her tomatoes")
    context, recalled, pending = _entry(store, ALICE, "t1")
    assert recalled is not None and "basil" in recalled
    assert (context, recalled, pending) == _separate(store, ALICE, "t1")
    # No thread: no pending read; no recall asked: no snapshot.
    assert _entry(store, ALICE, None) == _separate(store, ALICE, None)
    bare = store._turn_entry(ALICE, thread_id="t1", recall=None)
    assert bare.recalled is None and bare.context == store.context_block(ALICE)
    # Another owner sees none of it.
    assert _entry(store, BOB, "t1") == _separate(store, BOB, "t1")
    assert _entry(store, BOB, "t1")[2] == []


def test_entry_refuses_bad_recall_arguments_before_reading(store: Any) -> None:
    with pytest.raises(ValidationError):
        store._turn_entry(ALICE, thread_id="t1", recall={**RECALL, "limit": 0})
    with pytest.raises(ValidationError):
        store._turn_entry(ALICE, thread_id="t1", recall={**RECALL, "latest_input": 5})
    with pytest.raises(ValidationError):
        store._turn_entry(ALICE, thread_id="\x00", recall=RECALL)


def test_thread_claim_is_one_statement_that_refuses_another_principal(store: Any) -> None:
    assert store._own_thread(ALICE, "t1") is True
    assert store._own_thread(ALICE, "t1") is True  # known thread: same answer
    assert store.check_thread(ALICE, "t1") is True
    for other in (BOB, Owner("alice", workspace="w"), Owner("alice", agent="a")):
        with pytest.raises(ThreadOwnerError):
            store._own_thread(other, "t1")
    with pytest.raises(ValidationError):
        store._own_thread(ALICE, " ")


def test_racing_claims_leave_one_owner(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn, max_size=10) as store:
        store.setup()
        owners = [Owner(f"user-{i}") for i in range(8)]
        outcomes: list[str] = []
        start = threading.Barrier(len(owners))

        def claim(owner: Owner) -> None:
            start.wait()
            try:
                store._own_thread(owner, "contested")
                outcomes.append(owner.user_id)
            except ThreadOwnerError:
                outcomes.append("refused")

        workers = [threading.Thread(target=claim, args=(o,)) for o in owners]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        winners = [o for o in outcomes if o != "refused"]
        assert len(outcomes) == 8 and len(winners) == 1
        assert store.check_thread(Owner(winners[0]), "contested") is True


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The SQL statements the sync store sends (instrumented driver, real server)."""
    sent: list[str] = []
    real = sync_store.run_sync

    def counting(conn: Any, op: Any, *, autocommit: bool = False) -> Any:
        def watched() -> Any:
            query = next(op)
            while True:
                sent.append(query.sql)
                try:
                    query = op.send((yield query))
                except StopIteration as stop:
                    return stop.value

        return real(conn, watched(), autocommit=autocommit)

    monkeypatch.setattr(sync_store, "run_sync", counting)
    yield sent


def test_a_plain_turn_sends_two_store_statements(pg_dsn: str, statements: list[str]) -> None:
    with harness_on(pg_dsn, "sync") as h:
        h.store.add(ALICE, "fact", "Alice cooks rice with tomatoes")
        h.invoke(turn("What should I cook with tomatoes?"), cfg("s1"), context=CTX)  # warm
        for thread in ("s1", "s2"):  # a known thread, then a new one
            statements.clear()
            out = h.invoke(turn("What should I cook with tomatoes?"), cfg(thread), context=CTX)
            assert "tomatoes" in out["recalled"]
            assert len(statements) == 2, statements  # the owner claim, the entry read
            assert "mg_threads" in statements[0] and "mg_entry_one" in statements[1]


def test_the_model_sees_the_entry_and_the_masked_message_in_the_same_step(pg_dsn: str) -> None:
    said = "Call me Zorbulon. I was diagnosed with diabetes."
    model = FakeToolCallingChatModel.from_tool_calls(["Hello Zorbulon."])
    with harness_on(pg_dsn, "sync", model, redact_blocked=True) as h:
        h.store.add(ALICE, "fact", "Alice was called Zorbulon at school")
        h.invoke(turn(said), cfg("m1"), context=CTX)
        (prompt,) = model.received
        system = "\n".join(str(m.content) for m in prompt if m.type == "system")
        human = "\n".join(str(m.content) for m in prompt if m.type == "human")
        assert "called Zorbulon at school" in system  # recalled in this very step
        assert "<user_context>" in system
        assert "diabetes" not in human and "[redacted: health]" in human


def test_an_embeddings_store_recalls_through_snapshot(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn, embeddings=TrigramEmbeddings()) as store:
        store.setup()
        store.add(ALICE, "fact", "Alice cooks rice with tomatoes")
        entry = store._turn_entry(ALICE, thread_id="t1", recall=RECALL)
        assert entry.recalled == store.snapshot(ALICE, **RECALL)  # vectors not enabled
        assert entry.context == store.context_block(ALICE) and entry.pending == []
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            out = agent.invoke(turn(RECALL["latest_input"]), cfg("e1"), context=CTX)
        assert out["recalled"] == store.snapshot(ALICE, **RECALL)
        assert "cooks rice" in out["recalled"]
