"""Round-trip counting for tests that pin what the server sees (never timing).

Import both fixtures into a test module (``from _trips import pg_dsn, trips``): its stores then
connect through the benchmarks' counting proxy (``bench/_wire.py``, on the path: conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from _wire import RoundTrips, proxied

__all__ = ["RoundTrips", "pg_dsn", "trips"]


@pytest.fixture
def trips() -> RoundTrips:
    """Round trips between the test's stores and the server."""
    return RoundTrips()


@pytest.fixture
def pg_dsn(pg_dsn: str, trips: RoundTrips) -> Iterator[str]:
    """The test database, reached through the counting proxy (the stores connect here)."""
    with proxied(pg_dsn, trips) as (dsn, _):
        yield dsn
