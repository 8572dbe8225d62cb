"""The store dumps ``jsonb`` parameters with ``orjson`` (``storage._base.dump_json``) and
reads ``jsonb`` columns with it (``storage._base.load_json``).

The stored value must be exactly what ``json.dumps`` stored, and a value read back exactly
what ``json.loads`` read; what ``orjson`` refuses or reads differently (keys that are not
strings, integers beyond 64 bits, lone surrogates, floats beyond range) goes through the
standard library and meets the same outcome as before; psycopg's global adapters are left
alone.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.adapt import PyFormat
from psycopg.pq import Format
from psycopg.types.json import Jsonb

from memory_graph import MemoryStore, Owner
from memory_graph.storage._base import dump_json, load_json

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


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_reads_what_json_loads_reads(value: Any) -> None:
    text = json.dumps(value).encode()
    assert load_json(text) == json.loads(text)
    assert load_json(memoryview(text)) == json.loads(text)


_NUMBERS = st.one_of(
    st.integers(),  # unbounded: orjson reads an integer beyond 64 bits as a float
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(allow_nan=False, allow_infinity=False, places=None).map(str),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_NUMBERS, max_size=4))
def test_numbers_read_exactly_as_json_loads(numbers: list[Any]) -> None:
    text = ("[" + ", ".join(str(n) for n in numbers) + "]").encode()
    try:
        expected = json.loads(text)
    except ValueError:
        return  # not JSON (a decimal like 1E+2 without digits before) : nothing to compare
    got = load_json(text)
    assert got == expected and [type(x) for x in got] == [type(x) for x in expected]


def test_what_orjson_reads_differently_goes_through_json_loads() -> None:
    for text in (
        b'{"n": 1180591620717411303424}',  # 2**70: orjson would give a float
        b"[-9223372036854775809]",  # below the 64-bit range
        b"[1e400]",  # beyond a float: json.loads gives inf, orjson refuses
        b'["\\ud800"]',  # a lone surrogate escape
        b'{"a": 0.1000000000000000055511151231257827021181583404541015625}',
    ):
        got, expected = load_json(text), json.loads(text)
        assert got == expected and repr(got) == repr(expected)


def test_big_integers_read_back_exactly(pg_dsn: str) -> None:
    with MemoryStore.open(pg_dsn) as store:
        store.setup()
        with store._pool.connection() as conn:
            got = conn.execute(
                "SELECT %s::jsonb, j, j::text FROM (SELECT '[1e400, 0.5, 1.5e-7]'::jsonb) AS t(j)",
                (Jsonb({"n": 2**70, "m": -(2**64)}),),
            ).fetchone()
    assert got is not None
    assert got[0] == {"n": 2**70, "m": -(2**64)} and type(got[0]["n"]) is int
    assert got[1] == json.loads(got[2]) and type(got[1][0]) is int  # 1e400 comes back as digits


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
            jsonb = conn.adapters.types["jsonb"].oid
            for fmt in (Format.TEXT, Format.BINARY):
                loader = conn.adapters.get_loader(jsonb, fmt)
                assert loader._loads is load_json  # type: ignore[union-attr]
        with psycopg.connect(pg_dsn) as other:  # a connection of the application's own
            dumper = other.adapters.get_dumper(Jsonb, PyFormat.AUTO)
            assert dumper._dumps is json.dumps  # type: ignore[attr-defined]
            loader = other.adapters.get_loader(other.adapters.types["jsonb"].oid, Format.TEXT)
            assert loader._loads is json.loads  # type: ignore[union-attr]


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
