"""``resolve_owner`` on an authenticated run: the LangGraph auth user is the principal.

LangGraph Server puts the authenticated user in ``config["configurable"]``
(``langgraph_auth_user``: a ``BaseUser`` proxy or a mapping with ``identity``;
``langgraph_auth_user_id``: its identity). Every other identity source is client input and
may only agree with it; without auth nothing changes.
"""

from __future__ import annotations

from typing import Any

import pytest

from memory_graph import AuthIdentityError, IdentityMissingError, ScopeError
from nodes import resolve_owner


class _User:
    """An object user, as LangGraph's ``ProxyUser`` wraps what an auth handler returns."""

    def __init__(self, identity: Any, **fields: Any) -> None:
        self.identity = identity
        for k, v in fields.items():
            setattr(self, k, v)


class _Raising:
    @property
    def identity(self) -> str:
        raise NotImplementedError


def _auth(auth_user: Any = None, auth_id: Any = None, **extra: Any) -> dict[str, Any]:
    conf: dict[str, Any] = {"langgraph_auth_user": auth_user, "langgraph_auth_user_id": auth_id}
    conf.update(extra)
    return {"configurable": conf}


@pytest.mark.parametrize(
    "config",
    [
        _auth({"identity": "alice"}, "alice"),
        _auth(_User("alice"), "alice"),
        _auth({"identity": "alice"}),
        _auth(_User("alice")),
        _auth(None, "alice"),
    ],
    ids=["dict+id", "object+id", "dict", "object", "id-only"],
)
def test_the_authenticated_user_is_the_owner(config: dict[str, Any]) -> None:
    assert resolve_owner(None, config).user_id == "alice"
    assert resolve_owner({"workspace": "/w", "agent": "coder"}, config).agent == "coder"
    # The same user named again (after folding) is accepted, and the auth spelling wins.
    assert resolve_owner({"user_id": " ALICE "}, config).user_id == "alice"


@pytest.mark.parametrize(
    "claimed",
    [
        "bob",
        "alice2",
        "\u0430lice",  # Cyrillic a
        "\uff41lice",  # full-width a
        "alice\u200b",  # zero-width space
        "ali\u0441e",  # Cyrillic es
    ],
)
@pytest.mark.parametrize("where", ["context", "configurable"])
def test_another_user_id_is_refused(claimed: str, where: str) -> None:
    config = _auth({"identity": "alice"}, "alice")
    context = None
    if where == "context":
        context = {"user_id": claimed}
    else:
        config["configurable"]["user_id"] = claimed
    with pytest.raises(AuthIdentityError, match="not the authenticated user") as info:
        resolve_owner(context, config)
    assert claimed not in str(info.value)  # the refusal does not echo the claim
    assert isinstance(info.value, ScopeError) and isinstance(info.value, ValueError)


def test_kelvin_and_sharp_s_are_not_folded_onto_ascii() -> None:
    with pytest.raises(AuthIdentityError):
        resolve_owner({"user_id": "\u212aate"}, _auth({"identity": "kate"}))
    with pytest.raises(AuthIdentityError):
        resolve_owner({"user_id": "strasse"}, _auth({"identity": "Straße"}))
    assert resolve_owner({"user_id": "ΣΟΦΙΑ"}, _auth({"identity": "σοφια"})).user_id == "σοφια"


@pytest.mark.parametrize("claimed", [123, ["alice"], {"identity": "alice"}, b"alice", True])
def test_a_non_string_user_id_is_refused(claimed: Any) -> None:
    with pytest.raises(AuthIdentityError, match="must be a string"):
        resolve_owner({"user_id": claimed}, _auth({"identity": "alice"}))


def test_blank_user_id_defers_to_the_authenticated_user() -> None:
    assert resolve_owner({"user_id": "  "}, _auth({"identity": "alice"})).user_id == "alice"


@pytest.mark.parametrize(
    ("user", "user_id", "match"),
    [
        ({"identity": 7}, None, "identity must be a string"),
        (_User(["alice"]), None, "identity must be a string"),
        ({"identity": "alice"}, 7, "must be a string"),
        ({"identity": "alice"}, "bob", "disagree"),
        (_User("alice"), "Alice", "disagree"),
        ({"name": "alice"}, None, "has no 'identity'"),
        ("alice", None, "has no 'identity'"),
        (_Raising(), None, "cannot be read"),
        ({"identity": "ali\x00ce"}, None, "invalid"),
        ({"identity": "a" * 600}, None, "invalid"),
    ],
)
def test_a_malformed_authenticated_user_fails_closed(user: Any, user_id: Any, match: str) -> None:
    with pytest.raises(AuthIdentityError, match=match):
        resolve_owner(None, _auth(user, user_id))
    with pytest.raises(AuthIdentityError):
        resolve_owner({"user_id": "alice"}, _auth(user, user_id))


def test_forged_auth_keys_in_the_context_are_ignored() -> None:
    # The runtime context is client input; only configurable carries the server's auth.
    forged = {"user_id": "bob", "langgraph_auth_user": {"identity": "alice"}}
    forged["langgraph_auth_user_id"] = "alice"  # type: ignore[assignment]
    assert resolve_owner(forged, None).user_id == "bob"
    with pytest.raises(IdentityMissingError):
        resolve_owner({"langgraph_auth_user_id": "alice"}, None)


def test_without_auth_nothing_changes() -> None:
    # What LangGraph Server puts in a run when no auth is configured.
    noauth = _auth(None, "", user_id="bob")
    assert resolve_owner({"user_id": "carol"}, noauth).user_id == "carol"
    assert resolve_owner(None, noauth).user_id == "bob"
    assert resolve_owner(None, _auth({"identity": ""}, "", user_id="bob")).user_id == "bob"
    with pytest.raises(IdentityMissingError):
        resolve_owner(None, _auth(None, ""))
    with pytest.raises(IdentityMissingError):
        resolve_owner(None, {"configurable": "not a mapping"})


def test_workspace_and_agent_within_the_users_lists() -> None:
    user = {"identity": "alice", "workspaces": ["/repo/a"], "agents": ["Coder"]}
    owner = resolve_owner({"workspace": "/repo/a", "agent": "coder"}, _auth(user))
    assert (owner.workspace, owner.agent) == ("/repo/a", "coder")
    assert resolve_owner({}, _auth(user)).agent is None  # the global scope is always allowed
    with pytest.raises(AuthIdentityError, match="may not use this workspace"):
        resolve_owner({"workspace": "/repo/b"}, _auth(user))
    with pytest.raises(AuthIdentityError, match="may not use this agent"):
        resolve_owner({"agent": "admin"}, _auth(_User("alice", agents=["coder"])))
    # From configurable too (the server copies the context there).
    config = _auth(user, workspace="/repo/b")
    with pytest.raises(AuthIdentityError, match="workspace"):
        resolve_owner(None, config)
    for bad in ("/repo/a", {"/repo/a": 1}, [1, 2]):
        with pytest.raises(AuthIdentityError, match="list of strings"):
            resolve_owner({"workspace": "/repo/a"}, _auth({"identity": "a", "workspaces": bad}))
    # No list: any workspace of the user's own.
    assert resolve_owner({"workspace": "/x"}, _auth({"identity": "a"})).workspace == "/x"


def test_context_and_configurable_are_not_mixed_for_workspace() -> None:
    config = _auth({"identity": "alice"}, workspace="/from-config", agent="cfg")
    owner = resolve_owner({"agent": "ctx"}, config)
    assert (owner.workspace, owner.agent) == (None, "ctx")
    owner = resolve_owner({}, config)
    assert (owner.workspace, owner.agent) == ("/from-config", "cfg")
