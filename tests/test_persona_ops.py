"""Persona ops on a real PostgreSQL, driven by both ``run_sync`` and ``run_async``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest

from memory_graph.errors import LimitExceededError, ValidationError
from memory_graph.identity import Owner
from memory_graph.storage.driver import Op, Query, run_async, run_sync
from memory_graph.storage.ops.persona import (
    complete_onboarding_op,
    ensure_bootstrap_op,
    get_persona_op,
    set_persona_op,
)
from memory_graph.storage.server.setup import setup_op
from memory_graph.types import Persona

Run = Callable[[Op[Any]], Any]

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
LATER = NOW + timedelta(hours=1)
ALICE = Owner("alice")
ALICE_CODER = Owner("alice", agent="coder")
BOB = Owner("bob")


@pytest.fixture(params=["sync", "async"])
def run(request: pytest.FixtureRequest, pg_dsn: str) -> Iterator[Run]:
    """Run an op in its own transaction, through the sync or the async driver."""
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        run_sync(conn, setup_op())
    if request.param == "sync":
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            yield lambda op: run_sync(conn, op)
        return
    loop = asyncio.new_event_loop()
    aconn = loop.run_until_complete(psycopg.AsyncConnection.connect(pg_dsn, autocommit=True))
    try:
        yield lambda op: loop.run_until_complete(run_async(aconn, op))
    finally:
        loop.run_until_complete(aconn.close())
        loop.close()


def set_profile_op(owner: Owner, fields: dict[str, str]) -> Op[None]:
    yield Query(
        "INSERT INTO mg_profiles (scope_id, fields, revision, updated_at) "
        "VALUES (%s, %s::jsonb, 1, %s) ON CONFLICT (scope_id) DO UPDATE "
        "SET fields = EXCLUDED.fields, revision = mg_profiles.revision + 1",
        (owner.scope_id, json.dumps(fields), NOW),
        fetch="none",
    )


def audit_op(owner: Owner) -> Op[list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = yield Query(
        "SELECT target_kind, target_id, action, before, after, version, actor, at, agent_key "
        "FROM mg_audit WHERE scope_id = %s ORDER BY seq",
        (owner.scope_id,),
    )
    return rows


def dump_op() -> Op[list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = yield Query(
        "SELECT 'persona' AS t, row_to_json(p)::text AS r FROM mg_personas p "
        "UNION ALL SELECT 'audit', row_to_json(a)::text FROM mg_audit a ORDER BY 1, 2"
    )
    return rows


def test_get_missing_persona_is_none(run: Run) -> None:
    assert run(get_persona_op(ALICE)) is None


def test_set_persona_create_update_unchanged(run: Run) -> None:
    p = run(set_persona_op(ALICE, assistant_values="Be kind.", assistant_identity=None, now=NOW))
    assert p == Persona("Be kind.", None, None, None, 1, NOW)
    assert run(get_persona_op(ALICE)) == p

    same = run(
        set_persona_op(ALICE, assistant_values="Be kind.", assistant_identity=None, now=LATER)
    )
    assert same == p  # identical: no write, no revision bump

    q = run(set_persona_op(ALICE, assistant_values=None, assistant_identity="I am Ada.", now=LATER))
    assert q == Persona("Be kind.", "I am Ada.", None, None, 2, LATER)

    audit = run(audit_op(ALICE))
    assert [(a["target_kind"], a["action"], a["version"]) for a in audit] == [
        ("persona", "create", 1),
        ("persona", "update", 2),
    ]
    assert audit[0]["before"] is None
    assert audit[1]["before"]["assistant_identity"] is None
    assert audit[1]["after"]["assistant_identity"] == "I am Ada."
    assert audit[1]["actor"] == "api" and audit[1]["at"] == LATER


def test_set_nothing_on_missing_persona_creates_nothing(run: Run) -> None:
    empty = run(set_persona_op(ALICE, assistant_values=None, assistant_identity=None, now=NOW))
    assert empty.revision == 0 and empty.assistant_values is None
    assert run(get_persona_op(ALICE)) is None
    assert run(audit_op(ALICE)) == []


def test_personas_are_per_user_and_agent(run: Run) -> None:
    run(set_persona_op(ALICE, assistant_values="global", assistant_identity=None, now=NOW))
    run(set_persona_op(ALICE_CODER, assistant_values="coder", assistant_identity=None, now=NOW))
    assert run(get_persona_op(ALICE)).assistant_values == "global"
    assert run(get_persona_op(ALICE_CODER)).assistant_values == "coder"
    assert run(get_persona_op(BOB)) is None
    audit = run(audit_op(ALICE))
    assert [a["agent_key"] for a in audit] == ["", ALICE_CODER.agent_key]
    assert [a["target_id"] for a in audit] == ["", ALICE_CODER.agent_key]


@pytest.mark.parametrize(
    ("values", "identity", "error", "pattern"),
    [
        ("  ", None, ValidationError, "assistant_values must not be blank"),
        (None, "", ValidationError, "assistant_identity must not be blank"),
        ("x" * 4097, None, LimitExceededError, "4097 bytes, more than the limit of 4096"),
        ("ok", "é" * 2049, LimitExceededError, "assistant_identity is 4098 bytes"),
        (3, None, ValidationError, "must be a string"),
    ],
)
def test_set_persona_validation_leaves_db_unchanged(
    run: Run, values: Any, identity: Any, error: type[Exception], pattern: str
) -> None:
    run(set_persona_op(ALICE, assistant_values="v", assistant_identity="i", now=NOW))
    before = run(dump_op())
    with pytest.raises(error, match=pattern):
        run(set_persona_op(ALICE, assistant_values=values, assistant_identity=identity, now=LATER))
    assert run(dump_op()) == before


def test_exactly_4096_bytes_is_accepted(run: Run) -> None:
    p = run(set_persona_op(ALICE, assistant_values="x" * 4096, assistant_identity=None, now=NOW))
    assert p.revision == 1


def test_naive_now_rejected(run: Run) -> None:
    with pytest.raises(ValidationError, match="naive"):
        run(
            set_persona_op(
                ALICE, assistant_values="v", assistant_identity=None, now=NOW.replace(tzinfo=None)
            )
        )


def test_bootstrap_created_once_and_never_overwritten(run: Run) -> None:
    assert run(ensure_bootstrap_op(ALICE, "Ask their name.", now=NOW)) is True
    assert run(ensure_bootstrap_op(ALICE, "Something else.", now=LATER)) is False
    p = run(get_persona_op(ALICE))
    assert p.bootstrap == "Ask their name." and p.revision == 1
    # setting the persona keeps the bootstrap
    run(set_persona_op(ALICE, assistant_values="v", assistant_identity=None, now=LATER))
    assert run(ensure_bootstrap_op(ALICE, "Third.", now=LATER)) is False
    assert run(get_persona_op(ALICE)).bootstrap == "Ask their name."
    actions = [a["action"] for a in run(audit_op(ALICE))]
    assert actions == ["bootstrap", "update"]


def test_bootstrap_added_to_existing_persona(run: Run) -> None:
    run(set_persona_op(ALICE, assistant_values="v", assistant_identity=None, now=NOW))
    assert run(ensure_bootstrap_op(ALICE, "Ask.", now=LATER)) is True
    p = run(get_persona_op(ALICE))
    assert (p.assistant_values, p.bootstrap, p.revision) == ("v", "Ask.", 2)


def test_bootstrap_validation(run: Run) -> None:
    with pytest.raises(ValidationError, match="bootstrap must not be blank"):
        run(ensure_bootstrap_op(ALICE, " \n", now=NOW))
    with pytest.raises(LimitExceededError):
        run(ensure_bootstrap_op(ALICE, "x" * 5000, now=NOW))
    assert run(get_persona_op(ALICE)) is None


def test_onboarding_blocked_until_profile_and_persona(run: Run) -> None:
    run(ensure_bootstrap_op(ALICE, "Ask their name.", now=NOW))
    with pytest.raises(ValidationError, match="onboarding is incomplete: .*profile.*persona"):
        run(complete_onboarding_op(ALICE, now=LATER))

    run(set_profile_op(ALICE, {"name": " "}))  # blank fields do not count
    run(set_persona_op(ALICE, assistant_values="Be kind.", assistant_identity=None, now=NOW))
    with pytest.raises(ValidationError, match="onboarding is incomplete: the user profile") as e:
        run(complete_onboarding_op(ALICE, now=LATER))
    assert "persona" not in str(e.value)
    assert run(get_persona_op(ALICE)).bootstrap == "Ask their name."

    run(set_profile_op(BOB, {"name": "Bob"}))  # another user's profile does not count
    with pytest.raises(ValidationError, match="profile"):
        run(complete_onboarding_op(ALICE, now=LATER))

    run(set_profile_op(ALICE, {"name": "Alice"}))
    done = run(complete_onboarding_op(ALICE, now=LATER))
    assert done.onboarded_at == LATER and done.bootstrap is None and done.revision == 3
    assert run(get_persona_op(ALICE)) == done

    # idempotent: no write, no audit row
    assert run(complete_onboarding_op(ALICE, now=LATER + timedelta(hours=1))) == done
    actions = [a["action"] for a in run(audit_op(ALICE))]
    assert actions == ["bootstrap", "update", "complete_onboarding"]
    last = run(audit_op(ALICE))[-1]
    assert last["before"]["bootstrap"] == "Ask their name."
    assert last["after"]["bootstrap"] is None
    assert last["after"]["onboarded_at"] == "2026-03-01T13:00:00Z"

    # after onboarding the bootstrap cannot come back
    assert run(ensure_bootstrap_op(ALICE, "Again.", now=LATER)) is False
    assert run(get_persona_op(ALICE)).bootstrap is None


def test_onboarding_needs_persona_with_text(run: Run) -> None:
    run(set_profile_op(ALICE, {"name": "Alice"}))
    with pytest.raises(ValidationError, match="onboarding is incomplete: the persona") as e:
        run(complete_onboarding_op(ALICE, now=NOW))
    assert "profile" not in str(e.value)
    run(ensure_bootstrap_op(ALICE, "Ask.", now=NOW))  # a bootstrap alone is not a persona
    with pytest.raises(ValidationError, match="the persona has neither"):
        run(complete_onboarding_op(ALICE, now=NOW))
    run(set_persona_op(ALICE, assistant_values=None, assistant_identity="I am Ada.", now=NOW))
    assert run(complete_onboarding_op(ALICE, now=LATER)).onboarded_at == LATER


def test_onboarding_is_per_agent(run: Run) -> None:
    run(set_profile_op(ALICE, {"name": "Alice"}))
    run(set_persona_op(ALICE, assistant_values="v", assistant_identity=None, now=NOW))
    run(complete_onboarding_op(ALICE, now=NOW))
    with pytest.raises(ValidationError, match="the persona has neither"):
        run(complete_onboarding_op(ALICE_CODER, now=NOW))
    assert run(ensure_bootstrap_op(ALICE_CODER, "Ask.", now=NOW)) is True


def test_failing_op_rolls_back_everything(run: Run) -> None:
    run(set_persona_op(ALICE, assistant_values="v", assistant_identity=None, now=NOW))
    before = run(dump_op())

    def failing() -> Op[None]:
        yield from set_persona_op(ALICE, assistant_values="w", assistant_identity="i", now=LATER)
        yield from ensure_bootstrap_op(ALICE, "Ask.", now=LATER)
        raise ValidationError("boom")

    with pytest.raises(ValidationError, match="boom"):
        run(failing())
    assert run(dump_op()) == before
    assert run(get_persona_op(ALICE)).revision == 1
