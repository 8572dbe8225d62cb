"""Every public entry under hostile input (issue 26 §5): only library errors, no state change.

The store's methods are found by introspection (a new public method is fuzzed without
being listed) and their arguments drawn from their annotations, each mixed with junk of
every type: non-``Owner`` owners, ids in other spellings (``urn:uuid:``, braces, upper
case), NUL and lone surrogates, huge integers and periods, naive datetimes, nested JSON.
``GovernedStore`` (with the default and a longer namespace template), the evidence API,
sweep / stats / forget and the review helpers join in. A call either succeeds or raises a
``MemoryGraphError``; on an error the database is exactly as before.

One database serves the module (a call that succeeds may change it: later calls start from
there). The ``ci`` profile of ``conftest.py`` makes the examples reproducible.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta, timezone
from typing import Any

import psycopg
import pytest
from _stores import FakeClock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from memory_graph import MemoryGraphError, MemoryStore, Owner
from memory_graph.evidence import EvidenceEntry, FileIdentity, new_reference
from nodes import GovernedStore, build_review_request, decide_all, validate_decisions
from nodes._payloads import check_resume_value, is_review_request
from nodes._state import proposal_to_json

ALICE = Owner("alice", agent="coder", workspace="w1")
FUZZ = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
LIFECYCLE = {"close", "setup", "enable_embeddings", "open", "from_dsn"}  # no user input

texts = st.one_of(
    st.text(max_size=24),
    st.text(alphabet=st.sampled_from("aZ9 ._-:\x00é咖\ud800\n\u202e"), max_size=16),
    st.sampled_from(["", " ", "x" * 5000, "user", "fact", "approve", "tone", "ssn 512-43-7789"]),
)
jsonish = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | texts
    | st.sampled_from([2**70, -(2**70), timedelta(days=10**8), object()]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.one_of(texts, st.integers()), inner, max_size=3)
    ),
    max_leaves=8,
)
datetimes = st.one_of(
    st.datetimes(timezones=st.just(timezone.utc)),
    st.datetimes(),  # naive
    st.sampled_from(["2026-01-01T12:00:00Z", "garbage", "9999-12-31T23:59:59-01:00"]),
)
periods = st.one_of(
    st.timedeltas(),  # from about -10**9 to 10**9 days
    st.sampled_from([timedelta(0), timedelta(days=1), timedelta(days=10**6), timedelta.max]),
)
ints = st.one_of(st.integers(), st.integers(-3, 300), st.sampled_from([2**63, 2**31, True]))
owners = st.sampled_from(
    [ALICE, Owner("alice"), Owner("bob"), "alice", None, 5, {"user_id": "alice"}, Owner]
)


@pytest.fixture(scope="module")
def world(pg_server_dsn: str) -> Iterator[dict[str, Any]]:
    """One seeded database for the module: a store, its ids, a review request."""
    name = f"mg_fuzz_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    dsn = psycopg.conninfo.make_conninfo(pg_server_dsn, dbname=name)
    try:
        with (
            MemoryStore.from_dsn(dsn, clock=FakeClock()) as store,
            psycopg.connect(dsn, autocommit=True) as conn,
        ):
            store.setup()
            rec = store.add(ALICE, "fact", "User likes green tea")
            store.set_preference(ALICE, "tone", "brief")
            p = store.propose(
                ALICE, "add", {"kind": "fact", "content": "likes oolong"}, level="user"
            )
            store.claim_thread(ALICE, "t1")
            ids = [str(rec.record_id), p.id, "t1", new_reference()]
            yield {
                "store": store,
                "conn": conn,
                "ids": ids,
                "review": build_review_request([proposal_to_json(p)]),
            }
    finally:
        with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _state(conn: psycopg.Connection[Any]) -> list[Any]:
    tables = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        " AND table_type = 'BASE TABLE' ORDER BY 1"
    ).fetchall()
    return [
        (t, sorted(r[0] for r in conn.execute(f'SELECT x::text FROM "{t}" x').fetchall()))
        for (t,) in tables
    ]


def attempt(world: dict[str, Any], call: Callable[[], Any]) -> None:
    """Run ``call``: success, or a MemoryGraphError that left the database unchanged."""
    before = _state(world["conn"])
    try:
        call()
    except MemoryGraphError:
        assert _state(world["conn"]) == before


def _ids(world: dict[str, Any]) -> st.SearchStrategy[Any]:
    rid = world["ids"][0]
    spelled = [
        rid,
        f"urn:uuid:{rid}",
        "{" + rid + "}",
        rid.upper(),
        rid.replace("-", ""),
        rid + "\x00",
        "\ud800" + rid,
        *world["ids"][1:],
        uuid.UUID(rid),
    ]
    return st.one_of(st.sampled_from(spelled), texts, jsonish)


def _entries(world: dict[str, Any]) -> st.SearchStrategy[Any]:
    digest = st.one_of(st.just("0" * 64), texts)
    entry = st.builds(
        EvidenceEntry,
        ref=st.one_of(st.builds(new_reference), texts),
        thread_id=st.just("t1"),
        message_id=st.one_of(st.just("m1"), texts, jsonish),
        position=st.one_of(ints, jsonish),
        step=st.one_of(st.none(), ints),
        tool_name=st.one_of(st.just("read_file"), texts),
        call_id=st.one_of(st.just("c1"), texts),
        args_digest=digest,
        result_digest=digest,
        size=ints,
        arg_summary=st.one_of(st.just("path"), texts, jsonish),
        file=st.one_of(
            st.none(),
            st.builds(FileIdentity, path=texts, size=ints, mtime_ns=ints, digest=digest),
            jsonish,
        ),
    )
    return st.one_of(st.lists(entry, max_size=3), jsonish)


def _for(param: inspect.Parameter, world: dict[str, Any]) -> st.SearchStrategy[Any]:
    ann = str(param.annotation)
    if param.name in ("owner", "user"):
        return owners
    if "EvidenceEntry" in ann:
        return _entries(world)
    if "timedelta" in ann:
        return st.one_of(periods, st.none(), jsonish)
    if "datetime" in ann:
        return st.one_of(datetimes, st.none(), jsonish)
    if param.name.endswith("_id") or param.name in ("ref", "thread_id"):
        return _ids(world)
    if ann.startswith(("int", "float")) or ann in ("int | None", "float | None"):
        return st.one_of(ints, st.floats(allow_nan=True), jsonish)
    if ann.startswith(("str", "Kind", "Trust", "Sensitivity", "IdentityLevel", "Operation")):
        return st.one_of(texts, jsonish)
    return jsonish


STORE_METHODS = sorted(
    name
    for name, fn in inspect.getmembers(MemoryStore, inspect.isfunction)
    if not name.startswith("_") and name not in LIFECYCLE
)


def test_the_store_methods_are_found() -> None:
    assert {"add", "get_record", "record_evidence", "sweep", "forget_user"} <= set(STORE_METHODS)
    assert len(STORE_METHODS) >= 40


@pytest.mark.parametrize("method", STORE_METHODS)
@FUZZ
@given(data=st.data())
def test_store_method(world: dict[str, Any], method: str, data: st.DataObject) -> None:
    fn = getattr(world["store"], method)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for param in list(inspect.signature(fn).parameters.values()):
        if param.default is not inspect.Parameter.empty and not data.draw(st.booleans()):
            continue  # leave an optional argument out
        value = data.draw(_for(param, world), label=param.name)
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[param.name] = value
        else:
            args.append(value)
    attempt(world, lambda: fn(*args, **kwargs))


namespaces = st.one_of(
    st.tuples(st.just("memories"), st.sampled_from(["alice", "bob", "", "\x00"])),
    st.lists(texts, max_size=6).map(tuple),
    st.sampled_from(
        [
            ("memories",),
            ("memories", "alice", "agent", "coder", "workspace", "w1"),
            ("memories", "alice", "items"),
            ("memories", "alice", "items", "agent"),
            (),
        ]
    ),
    jsonish,
)
values = st.one_of(
    st.none(),
    st.fixed_dictionaries({"content": texts}),
    st.fixed_dictionaries({"content": texts, "kind": st.one_of(texts, jsonish)}),
    jsonish,
)


@pytest.mark.parametrize(
    "template", [("memories", "{user_id}"), ("memories", "{user_id}", "items")]
)
@FUZZ
@given(
    namespace=namespaces,
    key=st.one_of(texts, jsonish),
    value=values,
    query=st.one_of(st.none(), texts, jsonish),
    limit=st.one_of(ints, jsonish),
    offset=st.one_of(ints, jsonish),
    flt=st.one_of(st.none(), jsonish),
    depth=st.one_of(st.none(), ints, jsonish),
    ttl=st.one_of(st.none(), ints, st.floats(allow_nan=True), jsonish),
)
def test_governed_store(
    world: dict[str, Any],
    template: tuple[str, ...],
    namespace: Any,
    key: Any,
    value: Any,
    query: Any,
    limit: Any,
    offset: Any,
    flt: Any,
    depth: Any,
    ttl: Any,
) -> None:
    gs = GovernedStore(world["store"], namespace=template)
    rid = world["ids"][0]
    for k in (key, f"urn:uuid:{rid}", rid + "\x00", "\ud800"):
        attempt(world, lambda k=k: gs.batch([GetOp(namespace, k)]))
        attempt(world, lambda k=k: gs.batch([GetOp(("memories", "alice"), k)]))
    attempt(world, lambda: gs.batch([PutOp(namespace, key, value, ttl=ttl)]))
    attempt(world, lambda: gs.batch([PutOp(("memories", "alice"), key, value)]))
    attempt(
        world,
        lambda: gs.batch(
            [SearchOp(namespace, filter=flt, limit=limit, offset=offset, query=query)]
        ),
    )
    attempt(world, lambda: gs.batch(value))
    attempt(world, lambda: gs.put(namespace, key, value))
    attempt(world, lambda: gs.get(namespace, key))
    attempt(world, lambda: gs.delete(namespace, key))
    attempt(world, lambda: gs.search(namespace, query=query, limit=limit, offset=offset))
    attempt(world, lambda: gs.list_namespaces(prefix=namespace, limit=limit, max_depth=depth))
    conditions = (
        (MatchCondition("prefix", namespace),) if isinstance(namespace, tuple) else namespace
    )
    attempt(
        world,
        lambda: gs.batch(
            [
                ListNamespacesOp(
                    match_conditions=conditions, max_depth=depth, limit=limit, offset=offset
                )
            ]
        ),
    )


@FUZZ
@given(request=jsonish, response=jsonish, decision=st.one_of(texts, jsonish))
def test_review_helpers(world: dict[str, Any], request: Any, response: Any, decision: Any) -> None:
    review = world["review"]
    pid = review["action_requests"][0]["proposal_id"]
    broken = {**review, "action_requests": [request]}
    for req in (request, review, broken, {"kind": "memory_review", "action_requests": [5]}):
        attempt(world, lambda req=req: decide_all(req, decision))
        attempt(world, lambda req=req: decide_all(req))
        attempt(world, lambda req=req: validate_decisions(response, req))
        attempt(
            world,
            lambda req=req: validate_decisions(
                {"decisions": [{"type": decision, "proposal_id": pid, "message": response}]}, req
            ),
        )
        is_review_request(req)
    attempt(world, lambda: check_resume_value(response))
    attempt(world, lambda: build_review_request(request))
    attempt(world, lambda: build_review_request([request]))


@pytest.mark.parametrize("flag", ["--audit-days", "--thread-idle-days", "--record-days"])
def test_cli_sweep_huge_periods_are_an_error_line(pg_dsn: str, flag: str) -> None:
    from test_cli import run

    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
    out = run(pg_dsn, "sweep", flag, str(10**12))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "error:" in out.stderr and "..36600" in out.stderr


def test_the_reported_raw_errors_are_library_errors(pg_dsn: str) -> None:
    """Each input the issue reports as a raw exception, by name (the fuzz finds the class)."""
    from memory_graph import ValidationError

    with MemoryStore.from_dsn(pg_dsn, clock=FakeClock()) as store:
        store.setup()
        rid = str(store.add(ALICE, "fact", "User likes green tea").record_id)
        # another spelling of an id is the same record, never a driver error
        assert str(store.get_record(ALICE, f"urn:uuid:{rid}").id) == rid
        assert str(store.get_record(ALICE, "{" + rid.upper() + "}").id) == rid
        gs = GovernedStore(store)
        ns = ("memories", "alice", "agent", "coder", "workspace", "w1")
        gs.get(("memories", "alice"), f"urn:uuid:{rid}")  # no driver error (no such item key)
        bad: list[Callable[[], Any]] = [
            lambda: gs.get(ns, "k\x00"),
            lambda: gs.get(ns, "\ud800"),
            lambda: gs.put(ns, "\ud800", {"content": "x"}),
            lambda: gs.search(ns, query=5),  # type: ignore[arg-type]
            lambda: gs.list_namespaces(prefix=ns, limit="10"),  # type: ignore[arg-type]
            lambda: GovernedStore(store, namespace=("memories", "{user_id}", "items")).get(
                ("memories", "alice"), "k"
            ),
            lambda: store.sweep(audit_retention=timedelta.max),
            lambda: store.sweep(thread_idle=timedelta(days=10**6)),
            lambda: store.add("alice", "fact", "x"),  # type: ignore[arg-type]
            lambda: store.get_record(None, rid),  # type: ignore[arg-type]
            lambda: store.list_records(ALICE, key="a\x00"),
            lambda: store.record_evidence(
                ALICE,
                "t1",
                [EvidenceEntry(new_reference(), "t1", "m1", "x", 1, "t", "c", "0", "0", 1, "")],  # type: ignore[arg-type]
            ),
            lambda: decide_all("not a request"),  # type: ignore[arg-type]
            lambda: validate_decisions({"decisions": []}, 5),  # type: ignore[arg-type]
        ]
        for call in bad:
            with pytest.raises(ValidationError):
                call()
