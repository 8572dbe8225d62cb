"""The store dumps ``jsonb`` parameters with ``orjson`` (``storage._base.dump_json``).

The stored value must be exactly what ``json.dumps`` stored; what ``orjson`` refuses (keys
that are not strings, integers beyond 64 bits, lone surrogates) goes through ``json.dumps``
and meets the same outcome as before; psycopg's global adapters are left alone.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.adapt import PyFormat
from psycopg.types.json import Jsonb

from memory_graph import MemoryStore, Owner
from memory_graph.storage._base import dump_json

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_same_value_as_json_dumps(value: Any) -> None:
    assert json.loads(dump_json(value)) == json.loads(json.dumps(value))


def test_what_orjson_refuses_goes_through_json_dumps() -> None:
    for value in ({1: "a", "b": 2}, {"n": 2**70}, ["\ud800"], {None: 1}):
        assert dump_json(value) == json.dumps(value).encode()


def test_only_the_store_connections_use_it(pg_dsn: str) -> None:
    plain = psycopg.adapters.get_dumper(Jsonb, PyFormat.AUTO)
    assert plain._dumps is json.dumps  # type: ignore[attr-defined]
    with MemoryStore.open(pg_dsn) as store:
        store.setup()
        with store._pool.connection() as conn:
            dumper = conn.adapters.get_dumper(Jsonb, PyFormat.AUTO)
            assert dumper._dumps is dump_json  # type: ignore[attr-defined]
        with psycopg.connect(pg_dsn) as other:  # a connection of the application's own
            dumper = other.adapters.get_dumper(Jsonb, PyFormat.AUTO)
            assert dumper._dumps is json.dumps  # type: ignore[attr-defined]


def test_stored_json_round_trips(pg_dsn: str) -> None:
    value = 'tab\there "quoted" \\ back é 中文 \u2028 end'
    owner = Owner("alice")
    with MemoryStore.open(pg_dsn) as store:
        store.setup()
        at = datetime(2026, 1, 1, tzinfo=timezone.utc)
        store.set_preference(owner, "style", value, updated_at=at)
        with psycopg.connect(pg_dsn) as c:
            row = c.execute(
                "SELECT after->>'value' FROM mg_audit WHERE target_kind = 'preference'"
            ).fetchone()
            args = c.execute("SELECT args->>'value' FROM mg_proposals").fetchone()
    assert row == (value,) and args == (value,)
