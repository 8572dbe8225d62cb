"""Fuzzing the public entry points: no unhandled exception, and no state change on an error."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from _stores import FakeClock, db_state
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_graph import MemoryGraphError, MemoryStore, Owner

ALICE = Owner("alice")
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.sampled_from("aZ9 ._-\x00é咖\ud800\n"), max_size=20),
    st.sampled_from(
        ["", " ", "x" * 4097, "tone", "reply.language", "My card number is 4111 1111 1111 1111"]
    ),
)
jsonish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
datetimes = st.one_of(
    st.none(),
    st.datetimes(timezones=st.just(timezone.utc)),
    st.datetimes(),  # naive
    st.sampled_from(["2026-01-01T12:00:00Z", "garbage", "9999-12-31T23:59:59-01:00"]),
)


@pytest.fixture
def fstore(pg_dsn: str) -> Iterator[MemoryStore]:
    with MemoryStore.from_dsn(pg_dsn, clock=FakeClock()) as s:
        s.setup()
        s.set_preference(ALICE, "tone", "brief")
        s.add(ALICE, "fact", "seed fact")
        s.patch_profile(ALICE, {"name": "Alice"})
        yield s


def attempt(store: MemoryStore, dsn: str, call: Any) -> None:
    """Run ``call``; a MemoryGraphError must leave the database exactly as it was."""
    before = db_state(dsn)
    try:
        call()
    except MemoryGraphError:
        assert db_state(dsn) == before


@SETTINGS
@given(patch=jsonish, updated_at=datetimes)
def test_fuzz_patch_profile(fstore, pg_dsn, patch, updated_at):
    attempt(fstore, pg_dsn, lambda: fstore.patch_profile(ALICE, patch, updated_at=updated_at))


@SETTINGS
@given(
    key=jsonish,
    value=jsonish,
    expires_at=datetimes,
    updated_at=datetimes,
    level=st.sampled_from(["user", "agent", "x", None]),
)
def test_fuzz_set_preference(fstore, pg_dsn, key, value, expires_at, updated_at, level):
    attempt(
        fstore,
        pg_dsn,
        lambda: fstore.set_preference(
            ALICE, key, value, level=level, expires_at=expires_at, updated_at=updated_at
        ),
    )


@SETTINGS
@given(
    kind=st.sampled_from(["fact", "instruction", "preference", "memo", None]),
    content=texts,
    knowledge=jsonish,
    confidence=jsonish,
    expires_at=datetimes,
    evidence=jsonish,
    key=jsonish,
    trust=jsonish,
    sensitivity=jsonish,
    level=st.sampled_from(["user", "agent", "user_workspace", 3]),
)
def test_fuzz_add(
    fstore,
    pg_dsn,
    kind,
    content,
    knowledge,
    confidence,
    expires_at,
    evidence,
    key,
    trust,
    sensitivity,
    level,
):
    attempt(
        fstore,
        pg_dsn,
        lambda: fstore.add(
            ALICE,
            kind,
            content,
            knowledge=knowledge,
            confidence=confidence,
            expires_at=expires_at,
            evidence=evidence,
            key=key,
            trust=trust,
            sensitivity=sensitivity,
            level=level,
        ),
    )


@SETTINGS
@given(record_id=jsonish, content=texts, base_version=jsonish, knowledge=jsonish)
def test_fuzz_replace_remove(fstore, pg_dsn, record_id, content, base_version, knowledge):
    rec = next(r for r in fstore.list_records(ALICE, include_inactive=True) if r.kind == "fact")
    for rid in (record_id, rec.id):
        attempt(
            fstore,
            pg_dsn,
            lambda rid=rid: fstore.replace(
                ALICE, rid, content, base_version=base_version, knowledge=knowledge
            ),
        )
        attempt(
            fstore, pg_dsn, lambda rid=rid: fstore.remove(ALICE, rid, base_version=base_version)
        )


@SETTINGS
@given(
    operation=st.sampled_from(
        [
            "add",
            "replace",
            "remove",
            "set_preference",
            "delete_preference",
            "patch_profile",
            "bogus",
        ]
    ),
    args=jsonish,
    edit=jsonish,
    decision=st.sampled_from(["approve", "edit", "reject", "x"]),
    key=st.one_of(st.none(), texts),
)
def test_fuzz_propose_and_decide(fstore, pg_dsn, operation, args, edit, decision, key):
    proposal: list[Any] = []

    def propose() -> None:
        proposal.append(fstore.propose(ALICE, operation, args, idempotency_key=key, level="user"))

    attempt(fstore, pg_dsn, propose)
    pending = fstore.list_pending(ALICE)
    if pending:
        pid = pending[0].id
        attempt(fstore, pg_dsn, lambda: fstore.decide(ALICE, pid, decision, args=edit))


@SETTINGS
@given(query=jsonish, as_of=datetimes, limit=jsonish)
def test_fuzz_reads(fstore, pg_dsn, query, as_of, limit):
    before = db_state(pg_dsn)
    for call in (
        lambda: fstore.search(ALICE, query, limit=limit, as_of=as_of),
        lambda: fstore.get_preferences(ALICE, as_of=as_of),
        lambda: fstore.get_record(ALICE, query),
        lambda: fstore.snapshot(ALICE, latest_input=query, as_of=as_of),
    ):
        try:
            call()
        except MemoryGraphError:
            pass
    assert db_state(pg_dsn) == before  # reads never write


def test_fuzz_fixture_expiry_boundary(fstore):
    # a deterministic companion: expiry equal to now is refused, a microsecond later accepted
    now = fstore.clock()
    with pytest.raises(MemoryGraphError):
        fstore.add(ALICE, "fact", "x", expires_at=now)
    assert (
        fstore.add(ALICE, "fact", "x", expires_at=now + timedelta(microseconds=1)).status
        == "approved"
    )
    assert isinstance(now, datetime)
