"""The owner of a run: the context schema and fail-closed identity resolution.

The owner comes only from trusted runtime input: LangGraph's ``Runtime.context`` or
``config["configurable"]``. Graph messages and model output are never consulted.

On LangGraph Server with an ``auth`` handler (``langgraph.json``, e.g. :mod:`nodes.auth`)
the server puts the authenticated user in ``config["configurable"]``
(``langgraph_auth_user``, ``langgraph_auth_user_id``; it strips those keys from what a
client sends). That user is then the owner, whatever ``user_id`` the client passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict

from memory_graph.errors import AuthIdentityError
from memory_graph.identity import fold_id

from ._core import IdentityMissingError, Owner, ValidationError

__all__ = [
    "AUTH_USER_ID_KEY",
    "AUTH_USER_KEY",
    "IDENTITY_KEYS",
    "MemoryContext",
    "authenticated_user",
    "owner_context",
    "resolve_owner",
]

IDENTITY_KEYS: tuple[str, ...] = ("user_id", "workspace", "agent")
"""The keys read from ``Runtime.context`` or ``config["configurable"]``."""

AUTH_USER_KEY = "langgraph_auth_user"
"""The ``configurable`` key where LangGraph Server puts the authenticated user."""
AUTH_USER_ID_KEY = "langgraph_auth_user_id"
"""The ``configurable`` key where LangGraph Server puts the authenticated user's identity."""

_ALLOWED_FIELDS = {"workspace": "workspaces", "agent": "agents"}


class MemoryContext(TypedDict, total=False):
    """The graph's context schema: who the run acts for.

    Pass it as ``graph.invoke(..., context={"user_id": "alice"})``. LangGraph does not
    checkpoint it, so pass it again on every resume.
    """

    user_id: str
    """The end user's id. Required."""
    workspace: str | None
    """Optional project id or absolute path."""
    agent: str | None
    """Optional assistant preset name."""


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value
    # A dataclass or pydantic context schema: read the identity attributes.
    found = {key: getattr(value, key) for key in IDENTITY_KEYS if hasattr(value, key)}
    return found or None


def _field(user: Any, name: str) -> Any:
    """``user[name]`` for a mapping, ``user.name`` for an object (``BaseUser``, proxy)."""
    try:
        if isinstance(user, Mapping):
            return user.get(name)
        return getattr(user, name, None)
    except Exception as exc:  # a user class whose property raises: fail closed
        raise AuthIdentityError(
            f"the authenticated user's {name!r} cannot be read ({type(exc).__name__}): "
            "fix the auth handler"
        ) from None


def authenticated_user(config: Mapping[str, Any] | None) -> tuple[str, Any] | None:
    """The authenticated user of a LangGraph Server run: ``(identity, user)``, or ``None``.

    Read from ``config["configurable"]`` only (never from the runtime context, which is
    client input). ``None`` when the run carries no authenticated user (no ``auth`` in
    ``langgraph.json``, or a run invoked in process), i.e. both keys are absent or blank.

    Raises:
        AuthIdentityError: the user is present but malformed: its ``identity`` is not a
            string, or it disagrees with ``langgraph_auth_user_id``.

    >>> authenticated_user({"configurable": {"langgraph_auth_user": {"identity": "ann"}}})
    ('ann', {'identity': 'ann'})
    >>> authenticated_user({"configurable": {"user_id": "ann"}}) is None
    True
    """
    configurable = (config or {}).get("configurable")
    if not isinstance(configurable, Mapping):
        return None
    user = configurable.get(AUTH_USER_KEY)
    user_id = configurable.get(AUTH_USER_ID_KEY)
    identity = None if user is None else _field(user, "identity")
    for name, value in (("identity", identity), (AUTH_USER_ID_KEY, user_id)):
        if value is not None and not isinstance(value, str):
            raise AuthIdentityError(
                f"the authenticated user's {name} must be a string, got "
                f"{type(value).__name__}: fix the auth handler"
            )
    if user is not None and identity is None and user_id is None:
        raise AuthIdentityError(
            f"{AUTH_USER_KEY} has no 'identity': return a user with an identity from the "
            "auth handler"
        )
    identity = identity if identity and identity.strip() else None
    user_id = user_id if user_id and user_id.strip() else None
    if identity is None and user_id is None:
        return None  # the server without auth: an UnauthenticatedUser has identity ""
    if identity is not None and user_id is not None and identity != user_id:
        raise AuthIdentityError(
            f"{AUTH_USER_KEY}.identity and {AUTH_USER_ID_KEY} disagree: fix the auth handler"
        )
    return (identity or user_id or ""), user


def _check_allowed(user: Any, key: str, value: str | None) -> None:
    """Refuse a workspace / agent outside the user's ``workspaces`` / ``agents`` list."""
    field = _ALLOWED_FIELDS[key]
    allowed = None if user is None else _field(user, field)
    if allowed is None or value is None:
        return
    if isinstance(allowed, str | bytes) or not isinstance(allowed, list | tuple | frozenset | set):
        raise AuthIdentityError(
            f"the authenticated user's {field!r} must be a list of strings: fix the auth handler"
        )
    if not all(isinstance(a, str) for a in allowed):
        raise AuthIdentityError(
            f"the authenticated user's {field!r} must be a list of strings: fix the auth handler"
        )
    if fold_id(value) not in {fold_id(a) for a in allowed}:
        raise AuthIdentityError(
            f"the authenticated user may not use this {key}: pass one of its {field}, or none"
        )


def _resolve_authenticated(
    identity: str, user: Any, sources: list[tuple[str, Mapping[str, Any] | None]]
) -> Owner:
    for name, source in sources:
        claimed = source.get("user_id") if source else None
        if claimed is None:
            continue
        if not isinstance(claimed, str):
            raise AuthIdentityError(
                f"the user_id in the {name} must be a string, got {type(claimed).__name__}; "
                "on an authenticated server leave it out: the signed-in user is the owner"
            )
        if claimed.strip() and fold_id(claimed) != fold_id(identity):
            raise AuthIdentityError(
                f"the user_id in the {name} is not the authenticated user: an authenticated "
                "run acts only for its signed-in user; leave user_id out"
            )
    # Workspace and agent: from the runtime context when it names any identity key, else
    # from configurable (the server copies a run's context there); never mixed.
    chosen: Mapping[str, Any] = {}
    for _name, source in sources:
        if source and any(source.get(k) is not None for k in IDENTITY_KEYS):
            chosen = source
            break
    workspace, agent = chosen.get("workspace"), chosen.get("agent")
    try:
        owner = Owner(identity, workspace=workspace, agent=agent)
    except ValidationError as exc:
        raise AuthIdentityError(f"the authenticated owner is invalid: {exc}") from exc
    _check_allowed(user, "workspace", owner.workspace)
    _check_allowed(user, "agent", owner.agent)
    return owner


def resolve_owner(context: Any = None, config: Mapping[str, Any] | None = None) -> Owner:
    """Return the run's owner: the authenticated user, else the runtime context's, else
    ``config["configurable"]``'s.

    **With LangGraph auth** (``config["configurable"]`` carries ``langgraph_auth_user`` /
    ``langgraph_auth_user_id``, see :func:`authenticated_user`), the authenticated identity
    is the owner's ``user_id``. A ``user_id`` in the context or ``configurable`` may be left
    out; when present it must name the same user (compared after :func:`~memory_graph.
    identity.fold_id`, so ``" Alice "`` is ``alice`` but a look-alike is not). ``workspace``
    and ``agent`` still come from the context (else ``configurable``); when the auth handler
    puts a ``workspaces`` / ``agents`` list on the user, a value outside it is refused
    (``None``, the user's global scope, is always allowed; no list means any value).

    **Without auth** the runtime context wins when it carries a ``user_id``; otherwise
    ``configurable`` is used. The two sources are never mixed.

    Args:
        context: ``Runtime.context`` (a mapping, dataclass or pydantic object) or ``None``.
        config: the ``RunnableConfig`` of the run, or ``None``.

    Returns:
        The owner.

    Raises:
        IdentityMissingError: no authenticated user, and neither source carries a
            non-blank ``user_id``. Nothing is read or written, and no shared scope is used
            instead.
        AuthIdentityError: an authenticated run names another ``user_id``, a non-string
            ``user_id``, a workspace or agent the user may not use, or the authenticated
            user is malformed.

    >>> resolve_owner({"user_id": "alice", "agent": "coder"}).agent
    'coder'
    >>> resolve_owner(None, {"configurable": {"user_id": "bob"}}).user_id
    'bob'
    >>> auth = {"configurable": {"langgraph_auth_user_id": "ann"}}
    >>> resolve_owner({"agent": "coder"}, auth).user_id
    'ann'
    """
    configurable = (config or {}).get("configurable")
    sources: list[tuple[str, Mapping[str, Any] | None]] = [
        ("runtime context", _as_mapping(context)),
        ('config["configurable"]', configurable if isinstance(configurable, Mapping) else None),
    ]
    auth = authenticated_user(config)
    if auth is not None:
        return _resolve_authenticated(auth[0], auth[1], sources)
    for _name, source in sources:
        if not source:
            continue
        user_id = source.get("user_id")
        if not isinstance(user_id, str) or not user_id.strip():
            continue
        try:
            return Owner(user_id, workspace=source.get("workspace"), agent=source.get("agent"))
        except ValidationError as exc:
            raise IdentityMissingError(f"the owner in the {_name} is invalid: {exc}") from exc
    available = sorted({str(k) for _n, s in sources if s for k in s if not str(k).startswith("__")})
    raise IdentityMissingError(
        "no user_id in the runtime context or config['configurable']: invoke the graph with "
        "context={'user_id': ...} (and pass it again on every resume); "
        f"available keys: {', '.join(available) or 'none'}"
    )


def owner_context(owner: Owner) -> MemoryContext:
    """Return the ``context=`` mapping that re-supplies ``owner`` to a graph run.

    >>> owner_context(Owner("alice"))
    {'user_id': 'alice', 'workspace': None, 'agent': None}
    """
    return {"user_id": owner.user_id, "workspace": owner.workspace, "agent": owner.agent}
