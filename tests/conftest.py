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
pytest_plugins = ["_stores", "_vectors"]

# The benchmarks' counting proxy (``bench/_wire.py``) counts round trips in the commit-path
# and driver tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

# The tests whose behaviour can depend on the server they run against (its version and
# extensions, the embedded launcher, Unix-socket DSNs, migrations, the commit statement, the
# zero-setup default). CI runs the whole suite on the system server and these again on the
# embedded server (``-m both_servers``); every other test exercises Python code whose SQL these
# already cover.
BOTH_SERVERS = frozenset(
    {
        "test_checkpoint_setup.py",
        "test_cli.py",
        "test_commit_path.py",
        "test_driver.py",
        "test_graph_approval.py",
        "test_hybrid.py",
        "test_offline_experience.py",
        "test_partitioned.py",
        "test_privacy_forget.py",
        "test_readme.py",
        "test_recall_pool.py",
        "test_runtime_faults.py",
        "test_schema_upgrade.py",
        "test_search_sql.py",
        "test_server_embeddings.py",
        "test_setup.py",
        "test_store_proposals.py",
        "test_store_records.py",
    }
)


def pytest_configure(config: pytest.Config) -> None:
    here = Path(__file__).resolve().parent
    missing = sorted(name for name in BOTH_SERVERS if not (here / name).is_file())
    if missing:
        raise pytest.UsageError(f"conftest BOTH_SERVERS names missing test files: {missing}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in BOTH_SERVERS:
            item.add_marker(pytest.mark.both_servers)


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
