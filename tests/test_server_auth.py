"""The shipped ``langgraph.json`` with auth on, driven from outside by three SDK clients.

One real ``langgraph dev`` serves the module (started once: a module-scoped fixture).
Alice and Bob hold different development tokens (``MEMORY_GRAPH_DEV_TOKENS``); a third
client sends none. Bob may not read, search, stream, resume, fork (``update_state`` /
``copy``) or delete Alice's thread, nor list or read her store items: each is refused with
a status and a message, and her thread is left exactly as it was. Alice's run, review and
recall work; anonymous requests are refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest
from _lgdev import headers, langgraph_dev, token_of
from langgraph_sdk import Auth
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memory_graph import (
    AuthIdentityError,
    ConfigurationError,
    IdentityMissingError,
    MemoryStore,
    Owner,
    ScopeError,
    StorageUnavailableError,
    ThreadOwnerError,
)
from nodes.auth import (
    DEV_TOKENS_ENV,
    VERIFIER_ENV,
    dev_token_verifier,
    make_auth,
    verifier_from_env,
)

STREAM_MODES = ["values", "updates", "messages", "debug", "tasks", "checkpoints", "custom"]
FIRST = "Call me Ada. I prefer short replies. I like green tea."
_LOCAL = {"LANGSMITH_LANGGRAPH_API_VARIANT": "local_dev"}


@pytest.fixture(scope="module")
def served(pg_server_dsn: str) -> Iterator[dict[str, Any]]:
    """One ``langgraph dev`` for the module, on a database of its own."""
    name = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(pg_server_dsn)
    params["dbname"] = name
    try:
        dsn = make_conninfo(**params)  # type: ignore[arg-type]
        with langgraph_dev(dsn) as server:
            yield {**server, "dsn": dsn}
    finally:
        with psycopg.connect(pg_server_dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _client(url: str, user: str | None, **extra: str) -> Any:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=url, headers={**headers(user and token_of(user)), **extra})


@pytest.fixture(scope="module")
def alice(served: dict[str, Any]) -> Any:
    return _client(served["url"], "alice")


@pytest.fixture(scope="module")
def bob(served: dict[str, Any]) -> Any:
    return _client(served["url"], "bob")


def _interrupts(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for task in state["tasks"] for i in task.get("interrupts") or []]


@pytest.fixture(scope="module")
def review(alice: Any) -> dict[str, Any]:
    """Alice's thread, waiting at its memory review."""
    tid = alice.threads.create()["thread_id"]
    alice.runs.wait(tid, "memory_agent", input={"messages": [{"role": "user", "content": FIRST}]})
    state = alice.threads.get_state(tid)
    (pending,) = _interrupts(state)
    return {"thread_id": tid, "state": state, "interrupt": pending}


def _refused(call: Callable[[], Any], *statuses: int) -> str:
    """Run ``call``; it must fail with one of ``statuses`` and a message. Returns it."""
    from langgraph_sdk.errors import APIStatusError

    with pytest.raises((APIStatusError, httpx.HTTPStatusError)) as info:
        call()
    err = info.value
    status = getattr(err, "status_code", None) or err.response.status_code  # type: ignore[union-attr]
    assert status in statuses, (status, str(err))
    try:
        detail = err.response.json().get("detail")  # type: ignore[union-attr]
    except (ValueError, httpx.ResponseNotRead):
        detail = str(err)
    assert isinstance(detail, str) and detail.strip(), err
    return detail


def test_langgraph_json_ships_the_auth_module() -> None:
    from _lgdev import ROOT

    spec = json.loads((ROOT / "langgraph.json").read_text())
    assert spec["auth"] == {"path": "nodes.auth:auth", "disable_studio_auth": True}


def test_anonymous_and_forged_requests_are_refused(served: dict[str, Any]) -> None:
    url = served["url"]
    for client in (
        _client(url, None),
        _client(url, None, Authorization="Bearer not-a-token"),
        _client(url, None, Authorization="Basic ZGV2LXRva2VuLWFsaWNlLTAwMDE="),
        _client(url, None, Authorization=f"Bearer {token_of('alice')}x"),
        _client(url, None, **{"x-auth-scheme": "langsmith"}),  # Studio's built-in user
    ):
        detail = _refused(client.threads.create, 401, 403)
        assert "AuthIdentityError" in detail
        _refused(lambda c=client: c.threads.search(), 401, 403)
        _refused(lambda c=client: c.assistants.search(), 401, 403)
        _refused(lambda c=client: c.store.search_items(("memories", "alice")), 401, 403)
        _refused(lambda c=client: c.store.list_namespaces(prefix=["memories"]), 401, 403)


def test_bob_cannot_touch_alices_thread(alice: Any, bob: Any, review: dict[str, Any]) -> None:
    tid = review["thread_id"]
    before = alice.threads.get_state(tid)
    message = "Thread with ID"
    assert message in _refused(lambda: bob.threads.get(tid), 404)
    assert message in _refused(lambda: bob.threads.get_state(tid), 404)
    assert message in _refused(lambda: bob.threads.get_history(tid), 404)
    assert message in _refused(lambda: bob.runs.list(tid), 404)
    assert tid not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    assert tid not in {t["thread_id"] for t in bob.threads.search(metadata={"owner": "alice"})}
    # Stream (every mode) and resume: refused before any chunk.
    chunks: list[Any] = []

    def stream(**kw: Any) -> None:
        for chunk in bob.runs.stream(tid, "memory_agent", stream_mode=STREAM_MODES, **kw):
            chunks.append(chunk)

    bobby = {"messages": [{"role": "user", "content": "Call me Bobby"}]}
    _refused(lambda: stream(input=bobby), 404)
    _refused(lambda: stream(command={"resume": {"decisions": []}}), 404)
    assert chunks == []
    resume = {"resume": {review["interrupt"]["id"]: {"decisions": []}}}
    detail = _refused(lambda: bob.runs.create(tid, "memory_agent", command=resume), 404)
    assert "not found" in detail
    _refused(lambda: bob.runs.wait(tid, "memory_agent", command=resume), 404)
    run_id = alice.runs.list(tid)[0]["run_id"]
    _refused(lambda: bob.runs.get(tid, run_id), 404)
    for joined in (bob.runs.join_stream(tid, run_id), bob.threads.join_stream(tid)):
        parts = list(joined)  # a stream join reports its refusal as its only event
        assert [(p.event, p.data.get("message")) for p in parts] == [
            ("error", "404: Thread not found")
        ], parts
    _refused(lambda: bob.runs.cancel(tid, run_id), 404)
    # Fork and delete. langgraph-api answers a copy it cannot find with 409 "Conflict".
    fork = {"messages": [{"role": "user", "content": "Call me Bobby"}]}
    assert message in _refused(lambda: bob.threads.update_state(tid, fork), 404)
    _refused(lambda: bob.threads.copy(tid), 404, 409)
    assert message in _refused(lambda: bob.threads.delete(tid), 404)
    _refused(lambda: bob.threads.update(tid, metadata={"owner": "bob"}), 404)
    _refused(
        lambda: bob.crons.create_for_thread(tid, "memory_agent", schedule="0 0 * * *"), 404, 403
    )
    # Her thread is exactly as it was, and her review still waits.
    after = alice.threads.get_state(tid)
    assert after["checkpoint"] == before["checkpoint"]
    assert after["values"] == before["values"]
    assert _interrupts(after) == _interrupts(before)
    assert "Bobby" not in json.dumps(after)
    assert alice.threads.get(tid)["metadata"]["owner"] == "alice"


def test_a_run_naming_another_user_is_refused(alice: Any, bob: Any) -> None:
    tid = bob.threads.create()["thread_id"]
    say = {"messages": [{"role": "user", "content": "Call me Bobby"}]}
    for spoof in (
        {"context": {"user_id": "alice"}},
        {"context": {"user_id": "ALICE "}},
        {"context": {"user_id": "\u0430lice"}},  # Cyrillic a
        {"config": {"configurable": {"user_id": "alice"}}},
        {"context": {"user_id": ["alice"]}},
    ):
        detail = _refused(lambda s=spoof: bob.runs.create(tid, "memory_agent", input=say, **s), 403)
        assert detail.startswith("AuthIdentityError:"), detail
        assert "alice" not in detail.lower()
    # Nothing of Bob's reached the thread; his own name still works.
    assert not (bob.threads.get_state(tid)["values"] or {}).get("messages")
    out = bob.runs.wait(tid, "memory_agent", input=say, context={"user_id": " Bob "})
    assert out["messages"][0]["content"] == "Call me Bobby"


def test_an_in_graph_refusal_reaches_the_sdk_with_class_and_message(alice: Any, bob: Any) -> None:
    # An assistant whose stored context names Alice: the run passes the API (the run itself
    # names no one) and the graph refuses it; the SDK sees the class and the message.
    assistant = bob.assistants.create("memory_agent", context={"user_id": "alice"})
    assert assistant["metadata"]["owner"] == "bob"
    _refused(lambda: alice.assistants.get(assistant["assistant_id"]), 404)
    tid = bob.threads.create()["thread_id"]
    say = {"messages": [{"role": "user", "content": "Call me Bobby"}]}
    with pytest.raises(Exception, match=r"^AuthIdentityError: the user_id in the runtime"):
        bob.runs.wait(tid, assistant["assistant_id"], input=say)
    assert not (bob.threads.get_state(tid)["values"] or {}).get("user_context")


def test_metadata_cannot_forge_an_owner(alice: Any, bob: Any) -> None:
    forged = bob.threads.create(metadata={"owner": "alice", "note": "x"})
    assert forged["metadata"]["owner"] == "bob"
    bob.threads.update(forged["thread_id"], metadata={"owner": "alice"})
    assert bob.threads.get(forged["thread_id"])["metadata"]["owner"] == "bob"
    assert forged["thread_id"] not in {t["thread_id"] for t in alice.threads.search(limit=100)}
    _refused(lambda: alice.threads.get(forged["thread_id"]), 404)


def test_store_is_scoped_to_the_signed_in_user(alice: Any, bob: Any) -> None:
    for ns in (("memories", "alice"), ("memories", "ALICE"), ("memories",), ("other", "bob")):
        detail = _refused(lambda n=ns: bob.store.search_items(n, query="tea"), 403)
        assert detail.startswith("ScopeError:"), detail
        _refused(lambda n=ns: bob.store.get_item(n, "k"), 403)
        _refused(lambda n=ns: bob.store.put_item(n, "k", {"content": "Alice likes coffee"}), 403)
        _refused(lambda n=ns: bob.store.delete_item(n, "k"), 403)
    for prefix in (["memories"], None, ["memories", "alice"], []):
        _refused(lambda p=prefix: bob.store.list_namespaces(prefix=p), 403)
    assert bob.store.search_items(("memories", "bob"))["items"] == []
    assert bob.store.list_namespaces(prefix=["memories", "bob"])["namespaces"] == []


def test_the_inbox_refuses_a_review_the_server_runs(
    served: dict[str, Any], alice: Any, review: dict[str, Any]
) -> None:
    # Decided out of band, the server's thread would stay "interrupted": refused, with the
    # SDK path named; nothing is decided and the review still waits (resumed just below).
    tid = review["thread_id"]
    pid = review["interrupt"]["value"]["action_requests"][0]["proposal_id"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MEMORY_GRAPH"))}
    done = subprocess.run(
        [sys.executable, "-m", "memory_graph.cli", "--dsn", served["dsn"], "inbox", "decide"]
        + [pid, "--user", "alice", "--approve"],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "400"},
        timeout=120,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 2, out
    assert "Traceback" not in out
    assert "LangGraph Server" in out and "client.runs.wait" in out and "nothing was decided" in out
    assert alice.threads.get(tid)["status"] == "interrupted"
    assert _interrupts(alice.threads.get_state(tid)) == [review["interrupt"]]
    with MemoryStore.open(served["dsn"]) as store:
        assert store.get_proposal(Owner("alice"), pid).status == "pending"


def test_alice_reviews_and_recalls(alice: Any, bob: Any, review: dict[str, Any]) -> None:
    # Run after Bob's attempts (pytest keeps file order): her review is still resumable.
    tid, pending = review["thread_id"], review["interrupt"]
    decisions = [
        {"type": "approve", "proposal_id": a["proposal_id"]}
        for a in pending["value"]["action_requests"]
    ]
    out = alice.runs.wait(
        tid, "memory_agent", command={"resume": {pending["id"]: {"decisions": decisions}}}
    )
    assert {r["status"] for r in out["commit_results"]} == {"approved"}, out
    assert alice.threads.get(tid)["status"] == "idle"
    fresh = alice.threads.create()["thread_id"]
    again = alice.runs.wait(
        fresh, "memory_agent", input={"messages": [{"role": "user", "content": "hello"}]}
    )
    assert "Ada" in again["user_context"]
    items = alice.store.search_items(("memories", "alice"), query="green tea")["items"]
    assert any("green tea" in i["value"]["content"] for i in items), items
    assert alice.store.list_namespaces(prefix=["memories", "alice"])["namespaces"]
    # Bob sees nothing of it, through his runs or the store, even with the server's own
    # auth keys forged into his context and configurable (the server strips them).
    forged = {"langgraph_auth_user_id": "alice", "langgraph_auth_user": {"identity": "alice"}}
    theirs = bob.runs.wait(
        bob.threads.create()["thread_id"],
        "memory_agent",
        input={"messages": [{"role": "user", "content": "hello"}]},
        context=forged,
        config={"configurable": forged},
    )
    assert "Ada" not in json.dumps(theirs) and "green tea" not in json.dumps(theirs)
    _refused(lambda: bob.store.search_items(("memories", "alice"), query="tea"), 403)


# --- without a server: the error serializer and the verifier plumbing ------------------------


@pytest.mark.parametrize(
    "exc",
    [
        ThreadOwnerError("thread 't1' belongs to another principal: start a new thread"),
        AuthIdentityError("the user_id in the runtime context is not the authenticated user"),
        IdentityMissingError("no user_id in the runtime context or config['configurable']"),
        ScopeError("namespace outside the owner's identities"),
    ],
)
def test_refusals_keep_class_and_message_through_the_servers_serializer(exc: Exception) -> None:
    from langgraph_api.serde import json_dumpb

    assert json.loads(json_dumpb(exc)) == {"error": type(exc).__name__, "message": str(exc)}


def test_internal_errors_stay_hidden_from_clients() -> None:
    from langgraph_api.serde import json_dumpb

    exc = StorageUnavailableError("cannot reach postgresql://user:secret@db/mem")
    assert "secret" not in json_dumpb(exc).decode()


@pytest.mark.parametrize(
    ("env", "match"),
    [
        ({DEV_TOKENS_ENV: '{"dev-token-0001": "alice"}'}, "langgraph dev` only"),
        ({DEV_TOKENS_ENV: "tokens", **_LOCAL}, "not JSON"),
        ({DEV_TOKENS_ENV: '["dev-token-0001"]', **_LOCAL}, "JSON object"),
        ({DEV_TOKENS_ENV: '{"short": "alice"}', **_LOCAL}, "8\\+ chars"),
        ({DEV_TOKENS_ENV: '{"dev-token-0001": {"name": "a"}}', **_LOCAL}, "'identity'"),
        ({DEV_TOKENS_ENV: '{"dev-token-0001": "al\\u0000ice"}', **_LOCAL}, "invalid"),
        (
            {DEV_TOKENS_ENV: '{"dev-token-0001": {"identity": "a", "agents": "x"}}', **_LOCAL},
            "list",
        ),
        ({VERIFIER_ENV: "no_such_module_mg:verify"}, "no_such_module_mg"),
        ({VERIFIER_ENV: "json"}, "module:callable"),
        ({VERIFIER_ENV: "json:__name__"}, "module:callable"),
    ],
)
def test_a_misconfigured_verifier_stops_the_server(env: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        verifier_from_env(env)


def _authenticate(auth: Any, authorization: str | None) -> Any:
    handler = auth._authenticate_handler  # what langgraph-api calls on every request
    return asyncio.run(handler(authorization=authorization))


def test_no_verifier_refuses_every_request_and_says_what_to_set() -> None:
    auth = make_auth(verifier_from_env({}))
    with pytest.raises(Auth.exceptions.HTTPException) as info:
        _authenticate(auth, "Bearer anything-at-all")
    assert info.value.status_code == 401
    assert VERIFIER_ENV in str(info.value.detail) and DEV_TOKENS_ENV in str(info.value.detail)


def test_a_production_verifier_plugs_in() -> None:
    seen: list[str] = []

    async def verify(token: str) -> dict[str, Any] | None:
        seen.append(token)
        return {"identity": "alice", "agents": ["coder"]} if token == "jwt-ok" else None

    auth = make_auth(verify)
    user = _authenticate(auth, "bearer  jwt-ok ")
    assert (user["identity"], user["agents"], user["is_authenticated"]) == (
        "alice",
        ["coder"],
        True,
    )
    for bad in (None, "", "Bearer", "Bearer jwt-bad", "Token jwt-ok", "jwt-ok"):
        with pytest.raises(Auth.exceptions.HTTPException) as info:
            _authenticate(auth, bad)
        assert info.value.status_code == 401 and info.value.detail.startswith("AuthIdentityError")
    assert seen == ["jwt-ok", "jwt-bad"]

    def lying(token: str) -> Any:  # a sync verifier returning a malformed user
        return {"identity": "x" * 600}

    with pytest.raises(Auth.exceptions.HTTPException, match="identity is invalid"):
        _authenticate(make_auth(lying), "Bearer t")
    assert _authenticate(make_auth(lambda t: "bob"), "Bearer t")["identity"] == "bob"


def test_dev_tokens_compare_whole_tokens() -> None:
    verify = dev_token_verifier({"dev-token-alice-0001": "alice"})
    assert verify("dev-token-alice-0001") == "alice"
    for near in ("dev-token-alice-000", "dev-token-alice-00011", "DEV-TOKEN-ALICE-0001", "\udc80"):
        assert verify(near) is None
