"""LangGraph Server auth for memory-graph: who a request is, and what it may touch.

``langgraph.json`` as shipped names this module::

    "auth": {"path": "nodes.auth:auth", "disable_studio_auth": true}

Every request must carry ``Authorization: Bearer <token>``; a **token verifier** turns the
token into a user (anonymous requests get 401). The resource handlers then make that user
the owner of everything it touches:

- **threads** (create, read, update, delete, search, runs, state, history, stream, copy):
  ``metadata["owner"]`` is stamped with the user's folded id on every create and update
  (a client cannot set or change it), and every read, search, run, resume and delete is
  filtered by it: another user's thread is "not found" (404).
- **runs**: a run whose ``context`` / ``configurable`` names another ``user_id``, or a
  workspace or agent outside the user's lists, is refused (403) before it is created. In the
  graph, :func:`~nodes.resolve_owner` makes the authenticated user the owner as well.
- **assistants and crons**: stamped and filtered the same way; the graphs' own (system)
  assistants stay readable by every user.
- **store**: a namespace must start with ``("memories", <the user's id>)``; anything else,
  including a cross-user ``list_namespaces``, is refused with 403.
- anything else: refused (403).

The user of Studio's built-in sign-in is refused too (``disable_studio_auth`` keeps Studio
on your tokens), so ``x-auth-scheme: langsmith`` is no way around a token.

**Token verifiers.** A verifier is ``verify(token) -> user | None`` (sync or async), where the
user is an identity string or a mapping ``{"identity": str, "workspaces": [...], "agents":
[...], "permissions": [...], "display_name": str}``; ``workspaces`` / ``agents`` (optional)
bound what the user's runs may name (see :func:`~nodes.resolve_owner`). The shipped ``auth``
picks its verifier from the environment when the server starts:

- ``MEMORY_GRAPH_AUTH_VERIFIER="myapp.auth:verify"``: the application's verifier (production:
  check a JWT's signature, audience and expiry, or ask your identity provider);
- else ``MEMORY_GRAPH_DEV_TOKENS='{"dev-token-alice": "alice", ...}'``: fixed tokens for
  ``langgraph dev`` only (refused anywhere else);
- else every request is refused with 401 and a message saying what to set.

Or build your own instance: ``auth = make_auth(verify)`` in your module, and point
``langgraph.json`` at it.
"""

from __future__ import annotations

import asyncio
import hmac
import importlib
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langgraph_sdk import Auth
from langgraph_sdk.auth import is_studio_user

from memory_graph.errors import AuthIdentityError, ConfigurationError
from memory_graph.identity import fold_id

from ._context import AUTH_USER_KEY, resolve_owner
from ._core import Owner, ValidationError

__all__ = [
    "DEV_TOKENS_ENV",
    "OWNER_KEY",
    "VERIFIER_ENV",
    "TokenVerifier",
    "auth",
    "dev_token_verifier",
    "make_auth",
    "verifier_from_env",
]

TokenVerifier = Callable[[str], "Awaitable[Any] | Any"]
"""``verify(token)`` returns an identity string, a user mapping, or ``None`` (refused)."""

OWNER_KEY = "owner"
"""The metadata key that records a thread's, assistant's or cron's owner (a folded id)."""

VERIFIER_ENV = "MEMORY_GRAPH_AUTH_VERIFIER"
"""``module:function`` of the application's token verifier."""

DEV_TOKENS_ENV = "MEMORY_GRAPH_DEV_TOKENS"
"""A JSON object ``{token: identity | user mapping}`` for ``langgraph dev``."""

_NAMESPACE_ROOT = "memories"
_USER_FIELDS = ("workspaces", "agents")


def _http(status: int, cls: str, message: str) -> Auth.exceptions.HTTPException:
    """An HTTP refusal whose detail names the memory-graph error class and the fix."""
    return Auth.exceptions.HTTPException(status_code=status, detail=f"{cls}: {message}")


# --- verifiers -----------------------------------------------------------------------------


def dev_token_verifier(tokens: Mapping[str, Any]) -> TokenVerifier:
    """A verifier for development: each fixed token names one user.

    Args:
        tokens: ``{token: identity}`` or ``{token: {"identity": ..., "agents": [...]}}``;
            every token is a string of at least 8 characters.

    Raises:
        ConfigurationError: a token is empty or a user has no identity.

    >>> verify = dev_token_verifier({"dev-token-alice": "alice"})
    >>> verify("dev-token-alice"), verify("dev-token-bob")
    ('alice', None)
    """
    table: list[tuple[bytes, Any]] = []
    for token, user in tokens.items():
        if not isinstance(token, str) or len(token.strip()) < 8:
            raise ConfigurationError(f"{DEV_TOKENS_ENV}: every token is a string of 8+ chars")
        _normalize_user(user, source=DEV_TOKENS_ENV)  # fail at start-up, not per request
        table.append((token.encode("utf-8"), user))

    def verify(token: str) -> Any:
        given = token.encode("utf-8", "surrogatepass")
        found = None
        for known, user in table:  # compare every token in constant time
            if hmac.compare_digest(given, known):
                found = user
        return found

    return verify


def _refuse_all(token: str) -> Any:
    raise _http(
        401,
        "ConfigurationError",
        f"no token verifier is configured on this server: set {VERIFIER_ENV} "
        f"(production) or {DEV_TOKENS_ENV} (langgraph dev)",
    )


def verifier_from_env(environ: Mapping[str, str] | None = None) -> TokenVerifier:
    """The verifier named by the environment (module docstring); refuse-all when none is.

    Raises:
        ConfigurationError: ``MEMORY_GRAPH_AUTH_VERIFIER`` does not name a callable,
            ``MEMORY_GRAPH_DEV_TOKENS`` is not a JSON object of tokens, or dev tokens are
            set outside ``langgraph dev``.
    """
    env = os.environ if environ is None else environ
    path = (env.get(VERIFIER_ENV) or "").strip()
    if path:
        module, _, name = path.partition(":")
        try:
            fn = getattr(importlib.import_module(module), name) if name else None
        except (ImportError, AttributeError) as exc:
            raise ConfigurationError(f"{VERIFIER_ENV}={path!r}: {exc}") from exc
        if not callable(fn):
            raise ConfigurationError(f"{VERIFIER_ENV}={path!r} is not module:callable")
        verifier: TokenVerifier = fn
        return verifier
    raw = (env.get(DEV_TOKENS_ENV) or "").strip()
    if raw:
        if env.get("LANGSMITH_LANGGRAPH_API_VARIANT") != "local_dev":
            raise ConfigurationError(
                f"{DEV_TOKENS_ENV} is for `langgraph dev` only: set {VERIFIER_ENV} to your "
                "application's token verifier"
            )
        try:
            tokens = json.loads(raw)
        except ValueError as exc:
            raise ConfigurationError(f"{DEV_TOKENS_ENV} is not JSON: {exc}") from exc
        if not isinstance(tokens, dict):
            raise ConfigurationError(f"{DEV_TOKENS_ENV} must be a JSON object {{token: user}}")
        return dev_token_verifier(tokens)
    return _refuse_all


def _string_list(value: Any, field: str, source: str) -> list[str]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{source}: the user's {field!r} must be a list of strings")
    return list(value)


def _normalize_user(user: Any, *, source: str) -> dict[str, Any]:
    """The user dict LangGraph keeps for the request (identity checked like an Owner)."""
    if isinstance(user, str):
        user = {"identity": user}
    if not isinstance(user, Mapping):
        raise ConfigurationError(f"{source}: a user is an identity string or a mapping")
    identity = user.get("identity")
    if not isinstance(identity, str):
        raise ConfigurationError(f"{source}: the user's 'identity' must be a string")
    try:
        Owner(identity)
    except ValidationError as exc:
        raise ConfigurationError(f"{source}: the user's identity is invalid: {exc}") from exc
    out: dict[str, Any] = {"identity": identity, "is_authenticated": True}
    out["display_name"] = str(user.get("display_name") or identity)
    out["permissions"] = _string_list(user.get("permissions") or [], "permissions", source)
    for field in _USER_FIELDS:
        if user.get(field) is not None:
            out[field] = _string_list(user[field], field, source)
    return out


# --- the Auth instance -----------------------------------------------------------------------


def _bearer(authorization: str | None) -> str:
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _http(
            401,
            "AuthIdentityError",
            "sign in: send the header 'Authorization: Bearer <token>'",
        )
    return token.strip()


def _me(ctx: Auth.types.AuthContext) -> str:
    """The request's principal as stored in ``metadata["owner"]`` (its folded id)."""
    user = ctx.user
    identity = None if is_studio_user(user) else getattr(user, "identity", None)
    if not isinstance(identity, str) or not identity.strip():
        raise _http(403, "AuthIdentityError", "this user is not a memory-graph principal")
    return fold_id(identity)


def _user_dict(ctx: Auth.types.AuthContext) -> dict[str, Any]:
    user = ctx.user
    out = {"identity": user.identity}
    for field in _USER_FIELDS:
        value = getattr(user, field, None)
        if value is not None:
            out[field] = value
    return out


def _stamp(value: Any, me: str) -> None:
    if not isinstance(value, dict):
        return
    metadata = value.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
        value["metadata"] = metadata
    metadata[OWNER_KEY] = me


def _check_run(ctx: Auth.types.AuthContext, value: Mapping[str, Any]) -> None:
    """Refuse a run that names another user (or a workspace / agent the user may not use)."""
    kwargs = value.get("kwargs") or {}
    config = kwargs.get("config") or {}
    configurable = config.get("configurable") if isinstance(config, Mapping) else None
    merged = dict(configurable) if isinstance(configurable, Mapping) else {}
    merged[AUTH_USER_KEY] = _user_dict(ctx)
    try:
        resolve_owner(kwargs.get("context"), {"configurable": merged})
    except AuthIdentityError as exc:
        raise _http(403, "AuthIdentityError", str(exc)) from None
    except ValidationError as exc:
        raise _http(422, type(exc).__name__, str(exc)) from None


def _check_namespace(ctx: Auth.types.AuthContext, namespace: Any, me: str) -> None:
    ns = tuple(namespace or ())
    user = ctx.user
    mine = (
        len(ns) >= 2
        and ns[0] == _NAMESPACE_ROOT
        and isinstance(ns[1], str)
        and fold_id(ns[1]) == me
    )
    if not mine:
        raise _http(
            403,
            "ScopeError",
            f"a store namespace must start with ('{_NAMESPACE_ROOT}', <your user id>): "
            "there is no listing or reading across users",
        )
    # The level suffix: ("workspace", w) | ("agent", a) | ("agent", a, "workspace", w).
    rest = ns[2:]
    for label, name in zip(rest[::2], rest[1::2], strict=False):
        field = {"workspace": "workspaces", "agent": "agents"}.get(label)
        allowed = getattr(user, field, None) if field else None
        if allowed is not None and not (
            isinstance(name, str) and fold_id(name) in {fold_id(a) for a in allowed}
        ):
            raise _http(403, "AuthIdentityError", f"the user may not use this {label}")


def make_auth(verifier: TokenVerifier | None = None) -> Auth:
    """A ``langgraph_sdk.Auth`` with memory-graph's handlers around ``verifier``.

    Args:
        verifier: ``verify(token)``; ``None``: :func:`verifier_from_env` (read now).

    Returns:
        The ``Auth`` object to name in ``langgraph.json``.
    """
    verify = verifier_from_env() if verifier is None else verifier
    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
        token = _bearer(authorization)
        if inspect.iscoroutinefunction(verify):
            found = await verify(token)
        else:  # a production verifier may block (a key fetch): keep the loop free
            found = await asyncio.to_thread(verify, token)
            if inspect.isawaitable(found):
                found = await found
        if found is None or found is False:
            raise _http(401, "AuthIdentityError", "the token is not valid")
        try:
            return _normalize_user(found, source="the token verifier")  # type: ignore[return-value]
        except ConfigurationError as exc:
            raise _http(401, "ConfigurationError", str(exc)) from None

    @auth.on
    async def deny_unhandled(ctx: Auth.types.AuthContext, value: Any) -> bool:
        _me(ctx)
        raise _http(403, "ScopeError", f"{ctx.resource}.{ctx.action} is not allowed")

    @auth.on.threads
    async def threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
        me = _me(ctx)
        if ctx.action == "create_run":
            _check_run(ctx, value)
        if ctx.action in ("create", "update", "create_run"):
            _stamp(value, me)
        return {OWNER_KEY: me}

    @auth.on.crons
    async def crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
        me = _me(ctx)
        if ctx.action in ("create", "update"):
            _stamp(value, me)
        return {OWNER_KEY: me}

    @auth.on.assistants
    async def assistants(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
        me = _me(ctx)
        if ctx.action in ("create", "update"):
            _stamp(value, me)
        if ctx.action in ("read", "search"):  # the graphs' own assistants are everyone's
            return {"$or": [{OWNER_KEY: me}, {"created_by": "system"}]}  # type: ignore[return-value]
        return {OWNER_KEY: me}

    @auth.on.store
    async def store(ctx: Auth.types.AuthContext, value: Any) -> bool:
        _check_namespace(ctx, value.get("namespace"), _me(ctx))
        return True

    return auth


auth = make_auth()
"""The shipped ``Auth``: its verifier comes from the environment (module docstring)."""
