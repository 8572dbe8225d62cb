"""The record model: frozen dataclasses with ``Literal`` aliases for closed sets.

These are runtime values returned by the store. What crosses a graph boundary (state,
interrupt payloads) is plain JSON; use :meth:`to_json`-style helpers where provided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from .identity import Identity, IdentityLevel

__all__ = [
    "DEFAULT_PROFILE_FIELDS",
    "Claim",
    "CommitResult",
    "DecisionKind",
    "Disagreement",
    "Kind",
    "Knowledge",
    "Limits",
    "Grant",
    "Operation",
    "Persona",
    "Preference",
    "PreferenceResult",
    "Profile",
    "ProfileResult",
    "Proposal",
    "ProposalStatus",
    "Provenance",
    "Record",
    "SearchHit",
    "Sensitivity",
    "Status",
    "Trust",
    "WriteStatus",
]

Kind = Literal["preference", "fact", "instruction", "experience"]
Trust = Literal["user-confirmed", "agent-observed", "external"]
Sensitivity = Literal["private", "sensitive"]
Status = Literal["active", "removed"]
WriteStatus = Literal["CREATED", "UPDATED", "UNCHANGED", "DELETED"]
Operation = Literal[
    "add", "replace", "remove", "set_preference", "delete_preference", "patch_profile"
]
ProposalStatus = Literal["pending", "approved", "rejected", "expired", "conflicted"]
DecisionKind = Literal["approve", "edit", "reject"]

DEFAULT_PROFILE_FIELDS: tuple[str, ...] = (
    "name",
    "call_them",
    "pronouns",
    "timezone",
    "language",
    "occupation",
    "notes",
)


@dataclass(frozen=True)
class Limits:
    """Configurable limits (DESIGN §3). Every field has the documented default."""

    max_content_bytes: int = 4096
    """Content plus knowledge text, in UTF-8 bytes."""
    max_records_per_identity: int = 1000
    """Active records per identity."""
    search_limit: int = 20
    """Default search top-K (valid range 1..100)."""
    max_search_limit: int = 100
    snapshot_limit: int = 20
    snapshot_bytes: int = 8192
    snapshot_tokens: int = 2048
    proposal_ttl: timedelta = timedelta(days=3)
    """How long a proposal waits for a decision: long enough to approve out of band (from
    the inbox, another process, the next working day). Deciding later marks it ``expired``."""
    expired_window: timedelta = timedelta(days=7)
    """How long the inbox keeps showing a proposal that expired undecided."""
    rejection_ttl: timedelta = timedelta(days=30)
    """How long a rejected proposal is remembered and not proposed again."""
    max_import_records: int = 100
    max_query_chars: int = 2048
    profile_fields: tuple[str, ...] = DEFAULT_PROFILE_FIELDS
    max_value_bytes: int = 4096
    """A preference value or a profile field value, in UTF-8 bytes."""
    max_lifetime: timedelta = timedelta(days=366)
    """Policy maximum of a lifetime proposed by untrusted input (a model, a tool, an import):
    a proposal's ``expires_at`` later than ``now + max_lifetime`` is clamped to it. Trusted
    writes (``add``, ``set_preference`` ...) are not clamped."""
    max_proposal_ttl: timedelta = timedelta(days=30)
    """Policy maximum of a proposal's ``ttl``; a longer ``ttl`` is clamped to it."""


@dataclass(frozen=True)
class Claim:
    """A structured assertion ``{key, value}`` used to detect disagreement."""

    key: str
    value: str


@dataclass(frozen=True)
class Knowledge:
    """Applicability notes, counterexamples (each 1..256 bytes, at most 4) and a claim."""

    applies_when: tuple[str, ...] = ()
    counterexamples: tuple[str, ...] = ()
    claim: Claim | None = None


@dataclass(frozen=True)
class Provenance:
    """Where a record came from. ``source_event_id`` is set by the harness, never a model.

    ``source_event_id`` is the harness's id of the human message (format
    :data:`memory_graph.validate.EVENT_ID_PATTERN`). A model's tool call id is kept apart, as
    ``evidence.tool_call_id`` on the proposal, and never becomes a ``source_event_id``.
    """

    source: str
    """``conversation``, ``tool``, ``import``, ``api`` ..."""
    source_event_id: str | None = None
    observed_at: datetime | None = None
    quote: str | None = None
    thread_id: str | None = None
    uri: str | None = None


@dataclass(frozen=True)
class Record:
    """A memory (fact, instruction, experience, or a keyed preference record)."""

    id: str
    identity: Identity
    kind: Kind
    content: str
    key: str | None
    trust: Trust
    sensitivity: Sensitivity
    confidence: float
    provenance: Provenance
    knowledge: Knowledge | None
    expires_at: datetime | None
    supersedes: str | None
    status: Status
    version: int
    content_hash: str
    created_at: datetime
    updated_at: datetime
    recorded_at: datetime

    @property
    def level(self) -> IdentityLevel:
        return self.identity.level

    def is_active(self, as_of: datetime) -> bool:
        """Active iff status is ``active`` and ``as_of < expires_at`` (when set)."""
        if self.status != "active":
            return False
        return self.expires_at is None or as_of < self.expires_at


@dataclass(frozen=True)
class Preference:
    """The active value of a preference key in one identity."""

    identity: Identity
    key: str
    value: str
    source: str
    source_event_id: str | None
    expires_at: datetime | None
    updated_at: datetime
    revision: int
    overridden: bool = False
    """True when a higher-precedence identity holds the same key (shadowed, not disagreement)."""


@dataclass(frozen=True)
class PreferenceResult:
    """Outcome of a preference write: ``CREATED | UPDATED | UNCHANGED | DELETED``."""

    status: WriteStatus
    key: str
    revision: int
    value: str | None = None
    previous_value: str | None = None


@dataclass(frozen=True)
class Profile:
    """The user's profile document."""

    fields: dict[str, str]
    revision: int
    updated_at: datetime | None


@dataclass(frozen=True)
class ProfileResult:
    """Outcome of a profile patch. Field lists are sorted."""

    status: WriteStatus
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    revision: int


@dataclass(frozen=True)
class Disagreement:
    """Visible active records whose claims share a key but differ in value."""

    key: str
    count: int
    ids: tuple[str, ...]
    """At most 4 ids."""


@dataclass(frozen=True)
class SearchHit:
    """One ranked search result."""

    record: Record
    score: float
    disagreement: Disagreement | None = None


@dataclass(frozen=True)
class Proposal:
    """A pending or decided write. Its id derives from scope + idempotency key."""

    id: str
    scope_id: str
    level: IdentityLevel
    operation: Operation
    target_id: str | None
    """Record id, preference key, or ``None`` for add / profile patch."""
    base_version: int | None
    args: dict[str, Any]
    """Plain-JSON payload of the operation."""
    diff: str
    evidence: dict[str, Any]
    """``{"quote", "source_event_id", "tool_call_id", "thread_id", "observed_at", "source",
    "uri"}`` (each optional)."""
    guard: dict[str, Any]
    """The guard verdict at creation: ``{"allowed": bool, "category": ..., "reason": ...}``"""
    status: ProposalStatus
    idempotency_key: str
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    result: dict[str, Any] | None = None
    actor: str | None = None
    thread_id: str | None = None
    """The graph thread the proposal belongs to (``thread_id=`` or ``evidence.thread_id``)."""
    replayed: bool = False
    """``True`` when ``propose`` returned an existing proposal (same idempotency key, same
    payload) instead of creating one; always ``False`` on reads."""


@dataclass(frozen=True)
class CommitResult:
    """The outcome of deciding a proposal. Replays return the stored result."""

    proposal_id: str
    status: ProposalStatus
    operation: Operation
    write_status: WriteStatus | None = None
    record_id: str | None = None
    version: int | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Persona:
    """The assistant's values and identity for one owner (per agent), plus the bootstrap."""

    assistant_values: str | None
    assistant_identity: str | None
    bootstrap: str | None
    """One-time onboarding instruction; removed once onboarding completes."""
    onboarded_at: datetime | None
    revision: int
    updated_at: datetime | None


@dataclass(frozen=True)
class Grant:
    """A bounded auto-approval: exact owner, expiry, allowed kinds/operations, and caps.

    Usage is stored with the grant; a restart or retry never resets it.
    """

    id: str
    scope_id: str
    agent_key: str
    workspace_key: str
    expires_at: datetime
    kinds: tuple[str, ...]
    operations: tuple[str, ...]
    max_mutations: int
    max_bytes: int
    used_mutations: int
    used_bytes: int
    created_at: datetime
    revoked_at: datetime | None = None
