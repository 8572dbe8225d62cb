"""Shared fixtures: a real PostgreSQL server and a fresh database per test.

The server is ``$MEMORY_GRAPH_TEST_DSN`` when set (CI uses the system PostgreSQL), otherwise
the embedded server, started once per session in a temporary directory.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import settings
from psycopg.conninfo import conninfo_to_dict, make_conninfo

# In CI the property tests run a fixed, reproducible set of examples (no example database, so
# the work tree stays clean); locally they explore new examples on every run.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Store fixtures (store, make_store, clock) shared by the store suites.
pytest_plugins = ["_stores"]

# The benchmarks' counting proxy (``bench/_wire.py``) counts round trips in the commit-path
# and driver tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

if not os.environ.get("XDG_RUNTIME_DIR"):
    _runtime = tempfile.mkdtemp(prefix="mg-runtime-")
    os.environ["XDG_RUNTIME_DIR"] = _runtime
    atexit.register(shutil.rmtree, _runtime, True)


@pytest.fixture(scope="session")
def pg_server_dsn() -> Iterator[str]:
    """DSN of the server under test (its maintenance database)."""
    env = os.environ.get("MEMORY_GRAPH_TEST_DSN")
    if env:
        yield env
        return
    from memory_graph.storage.server.embedded import start_embedded, stop_embedded

    base = Path(tempfile.mkdtemp(prefix="mg-test-pg-"))
    try:
        yield start_embedded(base)
    finally:
        stop_embedded(base)  # stop the server, then drop its ~50 MB data directory
        shutil.rmtree(base, ignore_errors=True)


def _with_db(dsn: str, dbname: str) -> str:
    params = conninfo_to_dict(dsn)
    params["dbname"] = dbname
    return make_conninfo(**params)  # type: ignore[arg-type]


@pytest.fixture
def pg_dsn(pg_server_dsn: str) -> Iterator[str]:
    """A DSN to a brand-new, empty database, dropped after the test."""
    name = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _with_db(pg_server_dsn, name)
    finally:
        with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
