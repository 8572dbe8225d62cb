"""Fixtures of the dense-leg tests: stores on a server with pgvector, in every flavour.

The dense leg needs pgvector, which the embedded server ships and Debian's PostgreSQL 15 does
not: the session's embedded server when ``MEMORY_GRAPH_TEST_DSN`` is unset, else one started
for these tests.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from _stores import AsyncAdapter, FakeClock
from langchain_core.embeddings import Embeddings
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import AsyncMemoryStore, MemoryStore


def _with_db(dsn: str, dbname: str) -> str:
    params = conninfo_to_dict(dsn)
    params["dbname"] = dbname
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def vector_server_dsn(pg_server_dsn: str) -> str:
    """A server with pgvector: the embedded one (the system server lacks pgvector)."""
    if not os.environ.get("MEMORY_GRAPH_TEST_DSN"):
        return pg_server_dsn  # already the embedded server
    from memory_graph.storage.server.embedded import start_embedded

    return start_embedded(tempfile.mkdtemp(prefix="mg-test-vec-"))


@pytest.fixture
def vector_dsn(vector_server_dsn: str) -> Iterator[str]:
    """A fresh database on the pgvector server."""
    name = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(vector_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_db(vector_server_dsn, name)
    finally:
        with psycopg.connect(vector_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _opener(request: pytest.FixtureRequest, dsn: str, clock: FakeClock) -> Any:
    opened: list[Callable[[], None]] = []
    loop = asyncio.new_event_loop() if request.param.startswith("async") else None

    def make(embeddings: Embeddings | None = None) -> Any:
        if loop is None:
            s = MemoryStore.open(dsn, clock=clock, max_size=4, embeddings=embeddings)
            opened.append(s.close)
            s.setup()
            return s
        inner = loop.run_until_complete(
            AsyncMemoryStore.open(dsn, clock=clock, max_size=4, embeddings=embeddings)
        )
        opened.append(lambda: loop.run_until_complete(inner.close()))
        a = AsyncAdapter(loop, inner)
        a.setup()
        return a

    def close() -> None:
        for c in reversed(opened):
            c()
        if loop is not None:
            loop.close()

    return make, close


@pytest.fixture(params=["sync", "async-sql", "sync-array-sql", "async-array"])
def vmake(
    request: pytest.FixtureRequest,
    vector_dsn: str,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Callable[..., Any]]:
    """``vmake(embeddings=None)``: a set-up store of the parametrised flavour on a server with
    pgvector; the ``-array`` flavours store ``real[]`` vectors (what a server without pgvector
    gets) and the ``-sql`` ones rank the dense leg in SQL (what a process without numpy
    does) rather than in process, so every dense-leg test runs on both kinds, both rankings
    and both twins."""
    if request.param.endswith("-sql"):
        from memory_graph.storage.ops import hybrid as H

        monkeypatch.setattr(H, "IN_PROCESS", False)
    if "-array" in request.param:
        from memory_graph.storage.ops import vector as V
        from memory_graph.storage.shell import recall_async, recall_sync

        def arrays(pgvector: bool | None = None) -> Any:
            return V.enable_embeddings_op(False if pgvector is None else pgvector)

        monkeypatch.setattr(recall_sync, "enable_embeddings_op", arrays)
        monkeypatch.setattr(recall_async, "enable_embeddings_op", arrays)
    make, close = _opener(request, vector_dsn, clock)
    try:
        yield make
    finally:
        close()


@pytest.fixture(params=["sync", "async"])
def smake(
    request: pytest.FixtureRequest, pg_dsn: str, clock: FakeClock
) -> Iterator[Callable[..., Any]]:
    """``smake(embeddings=None)``: a store on the server under test (the system one in CI)."""
    make, close = _opener(request, pg_dsn, clock)
    try:
        yield make
    finally:
        close()
