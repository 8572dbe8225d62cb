"""Issue 8 §6: every public store entry, driven with hostile values (hypothesis).

Each call either succeeds or raises a documented ``MemoryGraphError`` subclass: no raw
exception ever escapes, an error leaves the database exactly as it was (every memory table
compared before and after), and no error message echoes an unbounded input.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _stores import FakeClock, db_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_graph import AsyncMemoryStore, MemoryGraphError, MemoryStore, Owner, ValidationError

ALICE = Owner("alice", workspace="w1", agent="a1")
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _nested(depth: int) -> Any:
    v: Any = "x"
    for _ in range(depth):
        v = [v] if depth % 2 else {"k": v}
    return v


hostile_text = st.one_of(
    st.text(max_size=30),
    st.text(
        alphabet=st.sampled_from("aZ9 ._-\x00\x1b\x85\u202e\u200b\ufeffé咖\ud800\n\t"), max_size=30
    ),
    st.sampled_from(
        [
            "",
            " ",
            "x" * 5000,
            "y" * 100_000,
            "human-msg-0001",
            "tone",
            "fact",
            "user",
            "agent_workspace",
            "add",
            "approve",
            "00000000-0000-0000-0000-000000000000",
            "My card number is 4111 1111 1111 1111",
            "9999-12-31T00:00Z",
        ]
    ),
)
hostile_int = st.one_of(
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([2**31 - 1, 2**31, 2**63, -(2**63), 10**100]),
)
hostile_scalar = st.one_of(
    st.none(),
    st.booleans(),
    hostile_int,
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
    st.just(b"bytes"),
    st.just(object()),
)
hostile_json = st.one_of(
    st.recursive(
        hostile_scalar,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4)
        ),
        max_leaves=10,
    ),
    st.builds(_nested, st.sampled_from([50, 300, 2000])),
)
hostile_time = st.one_of(
    st.none(),
    st.datetimes(timezones=st.just(timezone.utc)),
    st.datetimes(),
    st.sampled_from(
        [datetime.max.replace(tzinfo=timezone.utc), "garbage", "9999-12-31T23:59:59-01:00", 10**20]
    ),
)
hostile_delta = st.one_of(
    st.none(),
    st.sampled_from([timedelta.max, timedelta(0), timedelta(days=-1), timedelta(seconds=1)]),
    hostile_scalar,
)
hostile_owner = st.one_of(
    st.just(ALICE),
    st.builds(
        lambda u, w, a: (u, w, a),
        hostile_text,
        st.one_of(st.none(), hostile_text),
        st.one_of(st.none(), hostile_text),
    ),
)
v = st.one_of(hostile_json, hostile_text)  # any value
names = st.one_of(
    st.sampled_from(
        [
            ["fact"],
            ["add"],
            ["preference", "profile"],
            "fact",
            5,
            [[1]],
            None,
            ["x" * 10_000],
            {"fact": 1},
        ]
    ),
    v,
)

# Each public entry: a strategy of its keyword arguments (owner, when any, is drawn apart).
ENTRIES: dict[str, Any] = {
    "get_profile": st.fixed_dictionaries({}),
    "get_preferences": st.fixed_dictionaries({"as_of": hostile_time}),
    "get_record": st.fixed_dictionaries({"record_id": v}),
    "list_records": st.fixed_dictionaries(
        {"kinds": names, "include_inactive": v, "as_of": hostile_time}
    ),
    "list_page": st.fixed_dictionaries(
        {
            "limit": v,
            "offset": v,
            "kinds": names,
            "levels": names,
            "include_sensitive": v,
            "as_of": hostile_time,
        }
    ),
    "search": st.fixed_dictionaries(
        {
            "query": v,
            "limit": v,
            "kinds": names,
            "trusts": names,
            "sensitivities": names,
            "as_of": hostile_time,
        }
    ),
    "search_confirmed": st.fixed_dictionaries({"query": v, "limit": v, "as_of": hostile_time}),
    "index_embeddings": st.fixed_dictionaries({"batch_size": v}),
    "audit_log": st.fixed_dictionaries({"limit": v}),
    "propose": st.fixed_dictionaries(
        {
            "operation": st.one_of(
                st.sampled_from(
                    [
                        "add",
                        "replace",
                        "remove",
                        "set_preference",
                        "delete_preference",
                        "patch_profile",
                    ]
                ),
                v,
            ),
            "args": st.one_of(
                st.sampled_from(
                    [
                        {"kind": "fact", "content": "ok"},
                        {"key": "tone", "value": "v"},
                        {"patch": {"name": "x"}},
                        {},
                    ]
                ),
                v,
            ),
            "level": st.one_of(st.sampled_from(["user", "agent_workspace", None]), v),
            "target_id": v,
            "base_version": v,
            "idempotency_key": v,
            "evidence": v,
            "thread_id": v,
            "ttl": hostile_delta,
        }
    ),
    "get_proposal": st.fixed_dictionaries({"proposal_id": v}),
    "list_pending": st.fixed_dictionaries({"thread_id": v}),
    "list_expired": st.fixed_dictionaries({"thread_id": v}),
    "audit_summary": st.fixed_dictionaries({"since": hostile_time, "by": v}),
    "note_blocked": st.fixed_dictionaries({"categories": v, "thread_id": v}),
    "decide": st.fixed_dictionaries(
        {
            "proposal_id": v,
            "decision": st.one_of(st.sampled_from(["approve", "edit", "reject"]), v),
            "args": v,
            "message": v,
            "actor": v,
        }
    ),
    "set_preference": st.fixed_dictionaries(
        {
            "key": v,
            "value": v,
            "level": v,
            "source": v,
            "source_event_id": v,
            "expires_at": hostile_time,
            "updated_at": hostile_time,
        }
    ),
    "delete_preference": st.fixed_dictionaries({"key": v, "level": v, "updated_at": hostile_time}),
    "patch_profile": st.fixed_dictionaries({"patch": v, "updated_at": hostile_time}),
    "add": st.fixed_dictionaries(
        {
            "kind": v,
            "content": v,
            "level": v,
            "key": v,
            "knowledge": v,
            "trust": v,
            "sensitivity": v,
            "confidence": v,
            "evidence": v,
            "expires_at": hostile_time,
        }
    ),
    "add_many": st.fixed_dictionaries({"items": v, "level": v, "skip_refused": v}),
    "replace": st.fixed_dictionaries(
        {
            "record_id": v,
            "content": v,
            "base_version": v,
            "knowledge": v,
            "expires_at": hostile_time,
        }
    ),
    "remove": st.fixed_dictionaries({"record_id": v, "base_version": v}),
    "reinforce": st.fixed_dictionaries({"record_id": v, "source_event_id": v}),
    "create_grant": st.fixed_dictionaries(
        {
            "expires_at": hostile_time,
            "kinds": names,
            "operations": names,
            "max_mutations": v,
            "max_bytes": v,
        }
    ),
    "get_grant": st.fixed_dictionaries({"grant_id": v}),
    "decide_with_grant": st.fixed_dictionaries({"proposal_id": v, "grant_id": v}),
    "snapshot": st.fixed_dictionaries(
        {
            "task_step": v,
            "latest_input": v,
            "goal": v,
            "as_of": hostile_time,
            "limit": v,
            "max_bytes": v,
            "max_tokens": v,
        }
    ),
    "context_block": st.fixed_dictionaries({"as_of": hostile_time}),
    "memory_md": st.fixed_dictionaries({"as_of": hostile_time}),
    "export": st.fixed_dictionaries({}),
    "import_document": st.fixed_dictionaries({"document": v, "thread_id": v}),
    "get_persona": st.fixed_dictionaries({}),
    "set_persona": st.fixed_dictionaries({"assistant_values": v, "assistant_identity": v}),
    "ensure_bootstrap": st.fixed_dictionaries({"text": v}),
    "complete_onboarding": st.fixed_dictionaries({}),
    "claim_thread": st.fixed_dictionaries({"thread_id": v}),
    "check_thread": st.fixed_dictionaries({"thread_id": v}),
    "list_threads": st.fixed_dictionaries({}),
    "get_evidence": st.fixed_dictionaries({"thread_id": v, "ref": v}),
    "list_evidence": st.fixed_dictionaries({"thread_id": v}),
    "record_evidence": st.fixed_dictionaries({"thread_id": v, "entries": v, "max_per_thread": v}),
}
# Entries without owner-scoped hostile input (lifecycle, server-wide DDL): covered elsewhere.
# sweep and forget_user act on every owner / a whole user: their hostile inputs are driven in
# tests/test_privacy_sweep.py and tests/test_privacy_forget.py.
NOT_DRIVEN = {"setup", "close", "open", "from_dsn", "enable_embeddings", "sweep", "forget_user"}


def public_entries(cls: type) -> set[str]:
    return {n for n, m in inspect.getmembers(cls) if not n.startswith("_") and callable(m)}


def test_every_public_entry_is_driven() -> None:
    for cls in (MemoryStore, AsyncMemoryStore):
        assert public_entries(cls) - NOT_DRIVEN == set(ENTRIES)


def _owner(raw: Any) -> Owner:
    return raw if isinstance(raw, Owner) else Owner(raw[0], workspace=raw[1], agent=raw[2])


def _call(store: Any, name: str, raw_owner: Any, kw: dict[str, Any]) -> Any:
    method = getattr(store, name)
    params = inspect.signature(method).parameters.values()
    pos = [kw.pop(p.name) for p in params if p.kind is p.POSITIONAL_OR_KEYWORD and p.name in kw]
    return method(_owner(raw_owner), *pos, **kw)


@pytest.fixture
def hstore(pg_dsn: str) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn, clock=FakeClock()) as s:
        s.setup()
        s.set_preference(ALICE, "tone", "brief")
        s.add(ALICE, "fact", "seed fact", level="agent_workspace")
        s.propose(ALICE, "add", {"kind": "fact", "content": "pending"}, level="user")
        yield s


def check(dsn: str, call: Callable[[], Any]) -> None:
    before = db_state(dsn)
    try:
        call()
    except MemoryGraphError as exc:
        assert len(str(exc)) < 600, str(exc)[:200]
        assert db_state(dsn) == before, "an error changed the database"


@SETTINGS
@given(data=st.data(), name=st.sampled_from(sorted(ENTRIES)), owner=hostile_owner)
def test_hostile_values_end_in_library_errors(
    hstore: MemoryStore, pg_dsn: str, data: Any, name: str, owner: Any
) -> None:
    kw = data.draw(ENTRIES[name], label=name)
    # some draws aim at existing ids, so the hostile values reach the deeper checks
    if "proposal_id" in kw and data.draw(st.booleans()):
        pending = hstore.list_pending(ALICE)
        if pending:
            kw["proposal_id"] = pending[0].id
    if "record_id" in kw and data.draw(st.booleans()):
        kw["record_id"] = hstore.list_records(ALICE)[0].id
    check(pg_dsn, lambda: _call(hstore, name, owner, kw))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), name=st.sampled_from(sorted(ENTRIES)), owner=hostile_owner)
def test_hostile_values_async_twin(pg_dsn: str, data: Any, name: str, owner: Any) -> None:
    kw = data.draw(ENTRIES[name], label=name)

    async def run() -> None:
        async with AsyncMemoryStore.from_dsn(pg_dsn, clock=FakeClock()) as s:
            await s.setup()
            before = db_state(pg_dsn)
            try:
                await _call(s, name, owner, kw)
            except MemoryGraphError as exc:
                assert len(str(exc)) < 600
                assert db_state(pg_dsn) == before

    asyncio.run(run())


@pytest.mark.parametrize("bad", [b"t1", {"a": 1}, ["t"], 7, "t\x00", "x" * 600])
@pytest.mark.parametrize("entry", ["list_pending", "list_expired"])
def test_a_hostile_thread_filter_is_a_validation_error(
    hstore: MemoryStore, entry: str, bad: Any
) -> None:
    # hypothesis reached list_expired's unvalidated filter only on some seeds; pin it.
    with pytest.raises(ValidationError):
        getattr(hstore, entry)(ALICE, thread_id=bad)


@pytest.mark.parametrize("bad", [_nested(2000), _nested(50), 7, None, b"\x00" * 16, {"id": 1}])
def test_a_record_id_that_is_not_text_is_a_validation_error(hstore: MemoryStore, bad: Any) -> None:
    # hypothesis reached get_record with a list nested 2000 deep on some seeds: str() of it
    # recursed past the interpreter's limit (a RecursionError, not a library error); pin it.
    before = len(hstore.list_records(ALICE))
    with pytest.raises(ValidationError, match="record id must be a string"):
        hstore.get_record(ALICE, bad)
    assert len(hstore.list_records(ALICE)) == before


def test_a_record_id_may_be_a_uuid(hstore: MemoryStore) -> None:
    rid = hstore.list_records(ALICE)[0].id
    assert hstore.get_record(ALICE, uuid.UUID(rid)).id == rid
