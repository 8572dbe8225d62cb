"""The owner of a run: the context schema and fail-closed identity resolution.

The owner comes only from trusted runtime input: LangGraph's ``Runtime.context`` or
``config["configurable"]``. Graph messages and model output are never consulted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import TypedDict

from ._core import IdentityMissingError, Owner, ValidationError

__all__ = ["IDENTITY_KEYS", "MemoryContext", "owner_context", "resolve_owner"]

IDENTITY_KEYS: tuple[str, ...] = ("user_id", "workspace", "agent")
"""The keys read from ``Runtime.context`` or ``config["configurable"]``."""


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


def resolve_owner(context: Any = None, config: Mapping[str, Any] | None = None) -> Owner:
    """Return the run's owner from runtime context, else from ``config["configurable"]``.

    The runtime context wins when it carries a ``user_id``; otherwise ``configurable`` is
    used. The two sources are never mixed.

    Args:
        context: ``Runtime.context`` (a mapping, dataclass or pydantic object) or ``None``.
        config: the ``RunnableConfig`` of the run, or ``None``.

    Returns:
        The owner.

    Raises:
        IdentityMissingError: neither source carries a non-blank ``user_id``. Nothing is
            read or written, and no shared scope is used instead.

    >>> resolve_owner({"user_id": "alice", "agent": "coder"}).agent
    'coder'
    >>> resolve_owner(None, {"configurable": {"user_id": "bob"}}).user_id
    'bob'
    """
    sources: list[tuple[str, Mapping[str, Any] | None]] = [
        ("runtime context", _as_mapping(context)),
        ('config["configurable"]', (config or {}).get("configurable")),
    ]
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
