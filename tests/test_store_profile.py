"""Profile patch semantics (DESIGN §3), on both store twins."""

from __future__ import annotations

from datetime import datetime

import pytest
from _stores import db_state

from memory_graph import LimitExceededError, Limits, Owner, UnknownFieldError, ValidationError

ALICE = Owner("alice")


def test_empty_profile(store):
    p = store.get_profile(ALICE)
    assert p.fields == {} and p.revision == 0 and p.updated_at is None


def test_patch_create_update_unchanged(store):
    r = store.patch_profile(ALICE, {"name": "Alice", "timezone": "Europe/Paris"})
    assert (r.status, r.changed, r.unchanged, r.revision) == (
        "CREATED",
        ("name", "timezone"),
        (),
        1,
    )
    r = store.patch_profile(ALICE, {"timezone": "Europe/Paris", "pronouns": "she/her"})
    assert (r.status, r.changed, r.unchanged, r.revision) == (
        "UPDATED",
        ("pronouns",),
        ("timezone",),
        2,
    )
    p = store.get_profile(ALICE)
    assert p.fields == {"name": "Alice", "pronouns": "she/her", "timezone": "Europe/Paris"}
    assert p.revision == 2


def test_identical_patch_writes_nothing(store, pg_dsn):
    store.patch_profile(ALICE, {"name": "Alice"})
    before = db_state(pg_dsn)
    r = store.patch_profile(ALICE, {"name": "Alice"})
    assert (r.status, r.changed, r.unchanged, r.revision) == ("UNCHANGED", (), ("name",), 1)
    after = db_state(pg_dsn)
    # Only the trusted write's proposal bookkeeping may change, never the profile.
    assert before["mg_profiles"] == after["mg_profiles"]
    assert store.get_profile(ALICE).revision == 1


def test_none_deletes_field(store):
    store.patch_profile(ALICE, {"name": "Alice", "notes": "x"})
    r = store.patch_profile(ALICE, {"notes": None, "language": None})
    assert r.changed == ("notes",) and r.unchanged == ("language",)
    assert store.get_profile(ALICE).fields == {"name": "Alice"}


def test_unknown_field_lists_allowed_sorted(store, pg_dsn):
    store.patch_profile(ALICE, {"name": "Alice"})
    before = db_state(pg_dsn)
    with pytest.raises(UnknownFieldError) as exc:
        store.patch_profile(ALICE, {"name": "Bob", "favourite_color": "blue"})
    msg = str(exc.value)
    assert "favourite_color" in msg
    assert "call_them, language, name, notes, occupation, pronouns, timezone" in msg
    assert db_state(pg_dsn) == before


def test_configured_fields(make_store):
    s = make_store(Limits(profile_fields=("nickname", "city")))
    assert s.patch_profile(ALICE, {"nickname": "Al"}).status == "CREATED"
    with pytest.raises(UnknownFieldError, match="allowed fields are: city, nickname"):
        s.patch_profile(ALICE, {"name": "Alice"})


def test_value_limit_boundary(store):
    assert store.patch_profile(ALICE, {"notes": "x" * 4096}).status == "CREATED"
    with pytest.raises(LimitExceededError):
        store.patch_profile(ALICE, {"notes": "é" * 2049})
    with pytest.raises(ValidationError):
        store.patch_profile(ALICE, {"notes": ""})
    with pytest.raises(ValidationError):
        store.patch_profile(ALICE, {"notes": 5})


def test_naive_updated_at_rejected(store, pg_dsn):
    before = db_state(pg_dsn)
    with pytest.raises(ValidationError, match="naive"):
        store.patch_profile(ALICE, {"name": "A"}, updated_at=datetime(2026, 1, 1))
    assert db_state(pg_dsn) == before


def test_profile_is_per_user_and_shared_by_agents(store):
    store.patch_profile(Owner("alice", agent="coder", workspace="/w"), {"name": "Alice"})
    assert store.get_profile(ALICE).fields == {"name": "Alice"}
    assert store.get_profile(Owner("bob")).fields == {}


def test_patch_is_audited(store):
    store.patch_profile(ALICE, {"name": "Alice"})
    rows = [r for r in store.audit_log(ALICE) if r["target_kind"] == "profile"]
    assert len(rows) == 1
    assert rows[0]["after"] == {"fields": {"name": "Alice"}} and rows[0]["actor"] == "api"
