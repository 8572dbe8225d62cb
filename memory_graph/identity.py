"""Owners, the four visible identities, their precedence, and the ``scope_id`` digest."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from .errors import ValidationError

__all__ = [
    "IDENTITY_LEVELS",
    "Identity",
    "IdentityLevel",
    "Owner",
    "digest",
    "fold_id",
    "loose_user_id",
    "scope_id",
]

IdentityLevel = Literal["user_workspace", "user", "agent_workspace", "agent"]
"""Which of an owner's four identities a record lives in."""

IDENTITY_LEVELS: tuple[IdentityLevel, ...] = ("user_workspace", "user", "agent_workspace", "agent")
"""The four identity levels, highest precedence first."""


@lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    folded = c.casefold()
    if len(folded) == 1 and unicodedata.normalize("NFKC", c) == c:
        return folded
    return c


def fold_id(raw: str) -> str:
    """The normal form that decides which ids name the same owner (user, workspace, agent).

    Surrounding whitespace is stripped and case is folded, character by character: a
    character is replaced by its Unicode case folding only when that folding is one character
    and the character is its own NFKC form. Nothing else is merged: ``ß`` stays apart from
    ``ss``, the Kelvin sign from ``K``, full-width and other NFKC look-alikes from ASCII.
    For ASCII ids this is exactly ``strip().casefold()``, so their scope ids are unchanged.

    >>> fold_id("  Alice@Example.COM ")
    'alice@example.com'
    >>> fold_id("Straße") == fold_id("STRASSE"), fold_id("\u212a") == fold_id("k")
    (False, False)
    >>> fold_id("ΣΟΦΙΑ") == fold_id("σοφια")
    True
    """
    s = raw.strip()
    if s.isascii():
        return s.lower()
    return "".join(_fold_char(c) for c in s)


def loose_user_id(raw: str) -> str:
    """Opt-in looser matching: NFKC, then full Unicode case folding.

    Pass the result as the id (``Owner(loose_user_id(raw))``, or the same in the runtime
    context) to make ids that differ by compatibility look-alikes, ``ß``/``ss`` or the
    Kelvin sign name one owner. It also reproduces the scope ids that versions before the
    per-character folding gave non-ASCII ids (which were ``strip().casefold()``).

    >>> loose_user_id("STRASSE") == loose_user_id("Straße")
    True
    """
    return unicodedata.normalize("NFKC", raw).strip().casefold()


def digest(raw: str) -> str:
    """Return the first 16 hex digits of SHA-256 of :func:`fold_id` of ``raw`` in UTF-8.

    >>> digest("  Alice ") == digest("alice")
    True
    >>> len(digest("alice"))
    16
    """
    return hashlib.sha256(fold_id(raw).encode("utf-8")).hexdigest()[:16]


def scope_id(user_id: str) -> str:
    """Return the scope id of a user: :func:`digest` of the raw user id."""
    return digest(user_id)


def _clean(name: str, value: str | None, *, required: bool) -> str | None:
    if value is None:
        if required:
            raise ValidationError(f"{name} is required: pass a non-empty string")
        return None
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > 512:
        raise ValidationError(f"{name} is longer than 512 bytes: pass a shorter id")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value.strip()):
        raise ValidationError(
            f"{name} contains a control character, NUL or lone surrogate: pass plain text"
        )
    if not value.strip():
        if required:
            raise ValidationError(f"{name} must not be blank: pass a non-empty string")
        return None
    if len(value.encode("utf-8", "surrogatepass")) > 512:
        raise ValidationError(f"{name} is longer than 512 bytes: pass a shorter id")
    return value


@dataclass(frozen=True)
class Identity:
    """One storage identity: the user's scope plus optional agent and workspace digests.

    ``agent_key`` and ``workspace_key`` are ``""`` for the global variants. Raw ids never
    appear here, only digests.
    """

    scope_id: str
    level: IdentityLevel
    agent_key: str
    workspace_key: str

    @property
    def precedence(self) -> int:
        """0 is highest (user/workspace), 3 is lowest (agent/global)."""
        return IDENTITY_LEVELS.index(self.level)


@dataclass(frozen=True)
class Owner:
    """The principal a session acts for, taken from trusted runtime context only.

    Ids that are equal after :func:`fold_id` (surrounding whitespace, case) name the same
    owner; nothing else is merged unless the application passes :func:`loose_user_id`.
    Control characters, NUL and lone surrogates are refused.

    Args:
        user_id: the end user's id. Required and non-blank.
        workspace: optional project id or absolute path.
        agent: optional assistant preset name.

    >>> o = Owner("alice", workspace="/repo", agent="coder")
    >>> [i.level for i in o.identities()]
    ['user_workspace', 'user', 'agent_workspace', 'agent']
    >>> [i.level for i in Owner("alice").identities()]
    ['user']
    """

    user_id: str
    workspace: str | None = None
    agent: str | None = None

    def __post_init__(self) -> None:
        _clean("user_id", self.user_id, required=True)
        object.__setattr__(self, "workspace", _clean("workspace", self.workspace, required=False))
        object.__setattr__(self, "agent", _clean("agent", self.agent, required=False))

    # The digests are computed once per owner (a turn reads them a few dozen times); the
    # fields are frozen, so a cached value can never go stale.
    @cached_property
    def scope_id(self) -> str:
        """The 16-hex digest of the user id."""
        return scope_id(self.user_id)

    @cached_property
    def workspace_key(self) -> str:
        """Digest of the workspace, or ``""`` when there is none."""
        return digest(self.workspace) if self.workspace else ""

    @cached_property
    def agent_key(self) -> str:
        """Digest of the agent, or ``""`` when there is none."""
        return digest(self.agent) if self.agent else ""

    def identity(self, level: IdentityLevel) -> Identity:
        """Return the identity at ``level``.

        Raises:
            ScopeError: the owner has no workspace or agent for that level.
        """
        from .errors import ScopeError

        if level not in IDENTITY_LEVELS:
            raise ValidationError(
                f"unknown identity level {level!r}: allowed levels are {', '.join(IDENTITY_LEVELS)}"
            )
        needs_ws = level.endswith("workspace")
        needs_agent = level.startswith("agent")
        if needs_ws and not self.workspace:
            raise ScopeError(f"identity {level!r} needs a workspace: set Owner.workspace")
        if needs_agent and not self.agent:
            raise ScopeError(f"identity {level!r} needs an agent: set Owner.agent")
        return Identity(
            scope_id=self.scope_id,
            level=level,
            agent_key=self.agent_key if needs_agent else "",
            workspace_key=self.workspace_key if needs_ws else "",
        )

    def identities(self) -> list[Identity]:
        """The visible identities, highest precedence first."""
        out: list[Identity] = []
        for level in IDENTITY_LEVELS:
            if level.endswith("workspace") and not self.workspace:
                continue
            if level.startswith("agent") and not self.agent:
                continue
            out.append(self.identity(level))
        return out
