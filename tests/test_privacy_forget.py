"""Forget a user everywhere (issue 12 §1): the real agent on a PostgresSaver, then a scan of
every table and column of the database (bytea decoded) for the erased user's words."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from _graph_helpers import cfg, harness_on, turn
from _scan import scan, stats_consistent
from psycopg.types.json import Jsonb

from memory_graph import (
    AsyncMemoryStore,
    ConfigurationError,
    ForgetReport,
    MemoryStore,
    Owner,
    ValidationError,
)
from nodes import decide_all

ALICE, BOB = Owner("alice"), Owner("bob")
ALICE_WS = Owner("alice", workspace="/repo/secret", agent="coder")
ALICE_WORDS = ["Zorbulon", "Vexmirth", "Glimmerstone", "Plonkette", "Snarfwidget"]
BOB_WORDS = ["Quillfeather", "Brambleton"]


def _chat(h: Any, owner: Owner, thread: str, text: str, *, approve: bool = True) -> None:
    h.store.claim_thread(owner, thread)
    ctx = {"user_id": owner.user_id, "workspace": owner.workspace, "agent": owner.agent}
    out = h.invoke(turn(text), cfg(thread), context={k: v for k, v in ctx.items() if v})
    assert "__interrupt__" in out
    if approve:
        _, request = h.pending_review(thread, owner)
        state = h.resume_review(owner=owner, thread_id=thread, decisions=decide_all(request))
        assert {r["status"] for r in state["commit_results"]} == {"approved"}


def _populate(h: Any) -> None:
    _chat(h, ALICE, "a-1", "Call me Zorbulon. Remember that my cat is named Vexmirth.")
    _chat(h, BOB, "b-1", "Call me Quillfeather. Remember that my dog is named Brambleton.")
    # Another workspace and agent of the same user; a pending proposal left unanswered.
    _chat(h, ALICE_WS, "a-2", "Remember that my boat is named Glimmerstone.", approve=False)
    s = h.store
    s.add(ALICE_WS, "fact", "Plonkette is my password hint", level="user_workspace")
    s.set_preference(ALICE_WS, "editor.theme", "snarfwidget dark", level="agent")
    s.set_persona(ALICE, assistant_identity="Snarfwidget helper")
    s.create_grant(
        ALICE,
        expires_at=s.clock() + timedelta(days=1),
        kinds=["fact"],
        operations=["add"],
        max_mutations=3,
        max_bytes=1000,
    )
    rid = s.add(ALICE, "fact", "Plonkette was my first school").record_id
    s.remove(ALICE, rid, base_version=1)  # a removed record: kept as a status change


def _future_table(dsn: str) -> None:
    """A table a later migration might add: erasure must cover it without code changes."""
    with psycopg.connect(dsn) as conn:
        conn.execute("CREATE TABLE mg_zz_future (scope_id text NOT NULL, note text, blob bytea)")
        conn.execute('CREATE TABLE "mg_Odd ""name" (scope_id text, note jsonb)')
        for owner, word in ((ALICE, "Zorbulon"), (BOB, "Quillfeather")):
            conn.execute(
                "INSERT INTO mg_zz_future VALUES (%s, %s, %s)",
                (owner.scope_id, f"remember {word}", f"raw {word}".encode()),
            )
            conn.execute(
                'INSERT INTO "mg_Odd ""name" VALUES (%s, %s)',
                (owner.scope_id, Jsonb({"said": word})),
            )


def test_forget_user_erases_every_trace_and_keeps_the_other_user(pg_dsn: str) -> None:
    with harness_on(pg_dsn, "sync") as h:
        _populate(h)
        _future_table(pg_dsn)
        before = scan(pg_dsn, ALICE_WORDS + BOB_WORDS)
        # The scan sees every word before (in checkpoints as well as in memory tables).
        assert all(before[w] for w in ALICE_WORDS + BOB_WORDS), before
        assert any(loc.startswith("public.checkpoint") for loc in before["Vexmirth"])
        assert "public.mg_zz_future.blob" in before["Zorbulon"]
        assert 'public.mg_Odd "name.note' in before["Zorbulon"]

        report = h.store.forget_user("alice")

        assert isinstance(report, ForgetReport) and report.scope_id == ALICE.scope_id
        assert report.threads == 2 and report.checkpoint_rows > 0
        assert {
            "mg_records",
            "mg_proposals",
            "mg_grants",
            "mg_personas",
            "mg_threads",
            "mg_zz_future",
            "mg_audit",
            "mg_profiles",
        } <= set(report.rows)
        after = scan(pg_dsn, ALICE_WORDS + BOB_WORDS)
        assert {w: after[w] for w in ALICE_WORDS} == {w: [] for w in ALICE_WORDS}
        assert all(after[w] for w in BOB_WORDS)
        assert h.store.list_threads(ALICE) == []
        assert h.store.list_threads(BOB) == ["b-1"]
        stats_consistent(pg_dsn)
        with psycopg.connect(pg_dsn) as conn:
            # The user's scope survives only in the one content-free audit tombstone.
            rows = conn.execute(
                "SELECT target_kind, action, before, after FROM mg_audit WHERE scope_id = %s",
                (ALICE.scope_id,),
            ).fetchall()
            assert rows == [
                (
                    "user",
                    "forget",
                    None,
                    {
                        "rows": sum(report.rows.values()),
                        "threads": 2,
                        "checkpoint_rows": report.checkpoint_rows,
                    },
                )
            ]
            assert conn.execute("SELECT note FROM mg_zz_future").fetchall() == [
                ("remember Quillfeather",)
            ]
        # The other user is intact and still recalled, in a new turn of the real agent.
        assert [x.record.content for x in h.store.search(BOB, "Brambleton")]
        h.store.claim_thread(BOB, "b-2")
        out = h.invoke(turn("Hello"), cfg("b-2"), context={"user_id": "bob"})
        assert "Quillfeather" in out["user_context"]
        assert (
            "Brambleton"
            in h.invoke(
                turn("What is my dog named Brambleton doing?"),
                cfg("b-2"),
                context={"user_id": "bob"},
            )["recalled"]
        )
        # Alice starts from nothing; erasing again is a no-op (one more tombstone).
        assert h.store.context_block(ALICE) == h.store.context_block(Owner("nobody"))
        again = h.store.forget_user(ALICE_WS)
        assert again.threads == 0 and again.checkpoint_rows == 0
        assert set(again.rows) == set()


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_forget_is_resumable_with_an_external_checkpointer(pg_dsn: str, flavour: str) -> None:
    """A saver elsewhere: its delete_thread runs first; a failure leaves the memory intact,
    and the same call, run again, completes."""
    with harness_on(pg_dsn, flavour) as h:
        _chat(h, ALICE, "a-1", "Call me Zorbulon. Remember that my cat is named Vexmirth.")
        h.store.claim_thread(ALICE, "a-3")
        deleted: list[str] = []

        class Flaky:
            def __init__(self, fail_on: str | None) -> None:
                self.fail_on = fail_on

            def delete_thread(self, tid: str) -> None:
                if tid == self.fail_on:
                    raise RuntimeError("connection lost")
                deleted.append(tid)

        with pytest.raises(RuntimeError):
            h.store.forget_user(ALICE, checkpointer=Flaky("a-3"))
        assert deleted == ["a-1"]
        assert h.store.get_profile(ALICE).fields == {"call_them": "Zorbulon"}
        assert h.store.list_threads(ALICE) == ["a-1", "a-3"]
        report = h.store.forget_user(ALICE, checkpointer=Flaky(None))
        assert deleted == ["a-1", "a-1", "a-3"] and report.threads == 2
        assert h.store.get_profile(ALICE).fields == {}
        assert scan(pg_dsn, ["Zorbulon", "Vexmirth"]) == {"Zorbulon": [], "Vexmirth": []}


def test_forget_rejects_bad_input_and_touches_nothing(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        store.add(ALICE, "fact", "Zorbulon likes tea")
        for bad in (123, None, "", "  ", ["alice"], b"alice", ALICE.scope_id.encode(), "alice\x00"):
            with pytest.raises(ValidationError):
                store.forget_user(bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError):
            store.forget_user(ALICE, checkpointer=object())
        # Another user's id (and look-alikes) never erase alice.
        for other in ("bob", "alice\u200b", "аlice", ALICE.scope_id):
            store.forget_user(other)
        assert [r.content for r in store.list_records(ALICE)] == ["Zorbulon likes tea"]
        # Case and surrounding spaces name the same user (the scope digest folds them).
        assert store.forget_user(" ALICE ").rows["mg_records"] == 1
        assert store.list_records(ALICE) == []


def test_async_forget_awaits_adelete_thread_else_calls_delete_thread(pg_dsn: str) -> None:
    """The async store awaits a saver's ``adelete_thread``; a saver with only a sync
    ``delete_thread`` is called directly; one without ``delete_thread`` is refused first."""
    calls: list[tuple[str, str]] = []

    class AsyncSaver:
        def delete_thread(self, tid: str) -> None:
            calls.append(("sync", tid))

        async def adelete_thread(self, tid: str) -> None:
            await asyncio.sleep(0)
            calls.append(("async", tid))

    class SyncSaver:
        def delete_thread(self, tid: str) -> None:
            calls.append(("sync", tid))

    class OnlyAsync:
        async def adelete_thread(self, tid: str) -> None:
            calls.append(("async", tid))

    async def main() -> None:
        async with AsyncMemoryStore.from_dsn(pg_dsn) as store:
            await store.setup()
            for owner, thread in ((ALICE, "a-1"), (ALICE_WS, "a-2"), (BOB, "b-1")):
                await store.claim_thread(owner, thread)
            with pytest.raises(ConfigurationError):
                await store.forget_user(ALICE, checkpointer=OnlyAsync())
            assert calls == [] and await store.list_threads(ALICE_WS) == ["a-1", "a-2"]
            await store.forget_user(ALICE, checkpointer=AsyncSaver())
            assert calls == [("async", "a-1"), ("async", "a-2")]
            await store.claim_thread(ALICE, "a-9")
            await store.forget_user("alice", checkpointer=SyncSaver())
            assert calls[2:] == [("sync", "a-9")]
            assert await store.list_threads(BOB) == ["b-1"]

    asyncio.run(main())
