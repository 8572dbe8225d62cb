"""Where a thread claim lives (issue 25 §4), on the real graph.

A claim lives in the space of the checkpointer that holds the thread: one space for every
persistent checkpointer (so a thread id there can never be taken over, whichever saver the
taker brings), one per ``InMemorySaver`` (so two applications on one memory database do not
collide on LangGraph's example thread ``"1"``). The sweep deletes only what it can prove
idle, so a thread whose checkpoints live in another saver keeps its owner; ``forget_user``
erases a user's claims and only the checkpoints its database-space claims name.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from _graph_helpers import cfg, turn
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import MemoryStore, Owner, ThreadOwnerError
from nodes import create_memory_agent, open_checkpointer, owner_context, pending_review

ALICE, BOB = Owner("alice"), Owner("bob")
SECRET = "Call me Ada. I prefer short replies. My diary password hint is the blue door."


class CountingModel:
    """Wraps the offline model; counts calls (a takeover would reach the model)."""

    def __init__(self) -> None:
        from nodes import OfflineChatModel

        calls: list[Any] = []

        class Model(OfflineChatModel):
            def reply(self, messages: Any) -> str:
                calls.append(messages)
                return super().reply(messages)

        self.model = Model()
        self.calls = calls


@pytest.fixture
def other_dsn(pg_server_dsn: str) -> Iterator[str]:
    """A second fresh database (another application's checkpoints)."""
    name = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(pg_server_dsn)
    params["dbname"] = name
    try:
        yield make_conninfo(**params)  # type: ignore[arg-type]
    finally:
        with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _rows(dsn: str, thread: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,))
        return int(row.fetchone()[0])  # type: ignore[index]


def _refused(agent: Any, owner: Owner, thread: str) -> None:
    chunks: list[Any] = []
    with pytest.raises(ThreadOwnerError):
        for chunk in agent.stream(
            turn("Call me Bobby. What did she say?"),
            cfg(thread),
            context=owner_context(owner),
            stream_mode=["values", "updates", "checkpoints", "debug", "tasks"],
        ):
            chunks.append(chunk)
    assert chunks == []


def test_two_apps_with_in_memory_savers_do_not_collide_on_thread_1(pg_dsn: str) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        model = CountingModel()
        app_a = create_memory_agent(model.model, store, checkpointer=InMemorySaver())
        app_b = create_memory_agent(model.model, store, checkpointer=InMemorySaver())
        assert "__interrupt__" in app_a.invoke(turn(SECRET), cfg("1"), context={"user_id": "alice"})
        # Another application on the same memory database uses its own thread "1".
        out = app_b.invoke(turn("Hello there"), cfg("1"), context={"user_id": "bob"})
        assert "blue door" not in repr(out)
        # Within one application the thread id is still the first owner's.
        model.calls.clear()
        _refused(app_a, BOB, "1")
        _refused(app_b, ALICE, "1")
        assert model.calls == []
        assert pending_review(app_a, "1", owner=ALICE)[1]["action_requests"]
        with pytest.raises(ThreadOwnerError):
            pending_review(app_b, "1", owner=ALICE)
        assert store.list_threads(ALICE) == ["1"] and store.list_threads(BOB) == ["1"]
        # Persistent checkpointers share one space: "1" there is a third thread, owned once.
        with open_checkpointer(store) as saver_c, open_checkpointer(store) as saver_d:
            app_c = create_memory_agent(model.model, store, checkpointer=saver_c)
            app_d = create_memory_agent(model.model, store, checkpointer=saver_d)
            app_c.invoke(turn("Hello"), cfg("1"), context={"user_id": "carol"})
            _refused(app_d, Owner("dave"), "1")
            _refused(app_d, ALICE, "1")


def test_a_copy_of_an_in_memory_saver_shares_its_space() -> None:
    from nodes._owner import saver_space

    saver = InMemorySaver()
    assert saver_space(saver).startswith("mem:")
    assert saver_space(saver.with_allowlist(set())) == saver_space(saver)
    assert saver_space(InMemorySaver()) != saver_space(saver)
    assert saver_space(None) == saver_space(PostgresSaver.__new__(PostgresSaver)) == ""


@pytest.mark.parametrize("where", ["in-memory", "other-database"])
def test_sweep_keeps_the_owner_of_a_thread_it_cannot_see(
    pg_dsn: str, other_dsn: str, where: str
) -> None:
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        with open_checkpointer(store) as local:  # this database has checkpoint tables too
            create_memory_agent(CountingModel().model, store, checkpointer=local).invoke(
                turn("Hello"), cfg("t-local"), context={"user_id": "carol"}
            )
        model = CountingModel()
        if where == "in-memory":
            saver: Any = InMemorySaver()
        else:
            saver_cm = PostgresSaver.from_conn_string(other_dsn)
            saver = saver_cm.__enter__()
            saver.setup()
        try:
            agent = create_memory_agent(model.model, store, checkpointer=saver)
            agent.invoke(turn(SECRET), cfg("t-alice"), context={"user_id": "alice"})
            before = agent.get_state(cfg("t-alice")).values
            # Used today, its checkpoints out of the sweep's sight: the owner row stays.
            report = store.sweep(thread_idle=timedelta(0))
            assert report.deleted_threads == 1  # t-local: idle by its checkpoints, here
            assert store.list_threads(ALICE) == ["t-alice"]
            model.calls.clear()
            _refused(agent, BOB, "t-alice")
            assert model.calls == []
            assert agent.get_state(cfg("t-alice")).values == before
        finally:
            if where != "in-memory":
                saver_cm.__exit__(None, None, None)


def test_forget_erases_only_the_checkpoints_its_database_claims_name(pg_dsn: str) -> None:
    # Alice's thread "1" is in an in-memory saver; Bob's "1" is in this database. Erasing
    # Alice must not erase Bob's thread of the same id.
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        model = CountingModel()
        mem_app = create_memory_agent(model.model, store, checkpointer=InMemorySaver())
        with open_checkpointer(store) as saver:
            db_app = create_memory_agent(model.model, store, checkpointer=saver)
            db_app.invoke(turn("Hello, I like tea"), cfg("1"), context={"user_id": "bob"})
            mem_app.invoke(turn(SECRET), cfg("1"), context={"user_id": "alice"})
            kept = _rows(pg_dsn, "1")
            assert kept > 0
            report = store.forget_user("alice")
            assert report.threads == 1 and report.checkpoint_rows == 0
            assert _rows(pg_dsn, "1") == kept
            assert store.list_threads(BOB) == ["1"] and store.list_threads(ALICE) == []
            _refused(db_app, ALICE, "1")
            report = store.forget_user("bob")
            assert report.threads == 1 and report.checkpoint_rows > 0
            assert _rows(pg_dsn, "1") == 0
