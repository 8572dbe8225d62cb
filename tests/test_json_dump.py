"""The store dumps ``jsonb`` parameters with ``orjson`` (``storage.ops.rows.dump_json``) and
reads ``jsonb`` columns with it (``storage.ops.rows.load_json``). Rows and audit values go as
they are: ``dump_json`` writes their datetimes and UUIDs as ``jsonable`` did, on the store's
own pool and on the application's.

The stored value must be exactly what ``json.dumps`` stored, and a value read back exactly
what ``json.loads`` read; what ``orjson`` refuses or reads differently (keys that are not
strings, integers beyond 64 bits, lone surrogates, floats beyond range) goes through the
standard library and meets the same outcome as before; psycopg's global adapters are left
alone.
"""

from __future__ import annotations

import json
import uuid
from datetime import date, datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.adapt import PyFormat
from psycopg.pq import Format
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from memory_graph import MemoryStore, Owner
from memory_graph.errors import ValidationError
from memory_graph.storage.ops.rows import dump_json, jsonable, load_json

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


_AWARE = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
)
_ROW = st.recursive(
    _JSON | _AWARE | st.uuids(),
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_ROW)
def test_writes_rows_as_jsonable_does(value: Any) -> None:
    # The store's writes pass datetimes and UUIDs as they are (any timezone: written in UTC)
    assert dump_json(value) == dump_json(jsonable(value))
    assert json.loads(dump_json(value)) == json.loads(json.dumps(jsonable(value)))


def test_what_jsonable_refuses_is_refused_alike() -> None:
    naive = {"at": datetime(2026, 1, 1)}
    for bad in (naive, [naive], {"x": object()}, {"d": date(2026, 1, 1)}):
        with pytest.raises((ValidationError, TypeError)) as dumped:
            dump_json(bad)
        with pytest.raises((ValidationError, TypeError)) as old:
            json.dumps(jsonable(bad))
        assert type(dumped.value) is type(old.value)
    # keys that are not strings go through json.dumps, as before; their values convert alike
    keyed = {1: datetime(2026, 1, 1, tzinfo=timezone.utc), None: [uuid.UUID(int=7)]}
    assert dump_json(keyed) == json.dumps(
        {1: "2026-01-01T00:00:00Z", None: [str(uuid.UUID(int=7))]}
    ).encode()


def test_a_pool_of_the_application_writes_the_same(pg_dsn: str) -> None:
    """A store built on the application's own pool (psycopg's global json.dumps, no UTC
    session) writes its rows and audit values exactly as on its own pool."""
    at = datetime(2026, 1, 1, 9, tzinfo=timezone(timedelta(hours=8)))
    pool = ConnectionPool(pg_dsn, open=True, kwargs={"autocommit": False})
    try:
        store = MemoryStore(pool, clock=lambda: at)  # a clock in UTC+8
        store.setup()
        owner = Owner("alice")
        store.set_preference(owner, "tone", "warm", updated_at=at)
        assert store.set_preference(owner, "tone", "dry", updated_at=at + timedelta(1)).status == (
            "UPDATED"
        )
        store.add(owner, "fact", "likes tea", expires_at=at + timedelta(days=30))
        pid = store.propose(owner, "add", {"kind": "fact", "content": "owns a bike"}, level="user")
        assert store.decide(owner, pid.id, "approve").status == "approved"
    finally:
        pool.close()
    with psycopg.connect(pg_dsn) as c:
        stamps = [
            r[0]
            for r in c.execute(
                "SELECT after->>'updated_at' FROM mg_audit WHERE target_kind = 'preference' "
                "UNION ALL SELECT after->'args'->>'expires_at' FROM mg_audit "
                "WHERE action = 'proposed' AND after->'args' ? 'expires_at'"
            )
        ]
        rec = c.execute("SELECT expires_at FROM mg_records WHERE content = 'likes tea'").fetchone()
        n = c.execute("SELECT count(*) FROM mg_audit").fetchone()
        ats = {r[0] for r in c.execute("SELECT DISTINCT at FROM mg_audit")}
        created = c.execute("SELECT DISTINCT args->>'expires_at' FROM mg_proposals").fetchall()
    assert stamps == ["2026-01-01T01:00:00Z", "2026-01-02T01:00:00Z", "2026-01-31T01:00:00Z"]
    assert rec == (at + timedelta(days=30),) and n is not None and n[0] >= 9
    assert ats == {at} and sorted(created, key=str) == sorted(
        [(None,), ("2026-01-31T01:00:00Z",)], key=str
    )


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
