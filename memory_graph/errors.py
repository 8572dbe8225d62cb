"""The exception tree of memory-graph.

Every error raised on purpose by this package derives from :class:`MemoryGraphError`.
Driver exceptions (psycopg) are mapped onto this tree in one place, the storage package,
with ``raise ... from exc``.

Expected outcomes are data, not exceptions: a guard verdict, a human "reject", a
``conflicted`` or ``expired`` proposal and an ``UNCHANGED`` write are returned as values.

::

    MemoryGraphError
    ├── ConfigurationError            bad or missing configuration (DSN, setup() not run, limits)
    │   └── IdentityMissingError (ValueError)  no owner in runtime context / configurable
    ├── ValidationError (ValueError)  bad input: names the field and the fix
    │   ├── UnknownFieldError         a profile field outside the configured schema
    │   ├── LimitExceededError        a size / count limit (bytes, capacity, import size)
    │   └── ResumeError               a malformed, stale or foreign approval resume
    │       ├── UnknownThreadError        resuming a thread that has no checkpoint
    │       └── NoPendingReviewError      the thread has no pending memory review
    ├── ScopeError (ValueError)       a read or write outside the owner's four identities
    │   ├── ThreadOwnerError          a LangGraph thread started by another principal
    │   └── AuthIdentityError         a run whose user_id / workspace / agent the
    │                                 authenticated user may not use
    ├── NotFoundError                 a record / proposal that does not exist for this owner
    ├── ConflictError                 compare-and-set lost, or the same key with another payload
    │   └── IdempotencyConflictError  same idempotency key, different payload
    ├── StaleWriteError               a preference write whose updated_at is not newer
    ├── ProposalExpiredError          acting on a proposal at or after its expires_at
    └── StorageUnavailableError       the database cannot be reached or started
"""

from __future__ import annotations

__all__ = [
    "AuthIdentityError",
    "ConfigurationError",
    "ConflictError",
    "IdempotencyConflictError",
    "IdentityMissingError",
    "LimitExceededError",
    "MemoryGraphError",
    "NoPendingReviewError",
    "NotFoundError",
    "ProposalExpiredError",
    "ResumeError",
    "ScopeError",
    "StaleWriteError",
    "StorageUnavailableError",
    "ThreadOwnerError",
    "UnknownFieldError",
    "UnknownThreadError",
    "ValidationError",
]


class MemoryGraphError(Exception):
    """Root of every error raised on purpose by memory-graph."""


class ConfigurationError(MemoryGraphError):
    """The package is configured wrongly, e.g. ``setup()`` was not run or a DSN is invalid."""


class IdentityMissingError(ConfigurationError, ValueError):
    """No owner (``user_id``) was found in the trusted runtime context.

    Nodes fail closed: nothing is read or written, and no shared scope is used instead.
    """


class ValidationError(MemoryGraphError, ValueError):
    """Input does not satisfy the data model. The message names the field and the fix."""


class UnknownFieldError(ValidationError):
    """A profile patch names a field outside the configured schema."""


class LimitExceededError(ValidationError):
    """A configured limit (bytes, record capacity, import size, query length) was exceeded."""


class ResumeError(ValidationError):
    """An approval resume payload is malformed, stale, or names proposals of another review."""


class UnknownThreadError(ResumeError):
    """The thread has no checkpoint: resuming it would start the graph from ``START``."""


class NoPendingReviewError(ResumeError):
    """The thread exists but has no pending memory review (finished, or decided elsewhere)."""


class ScopeError(MemoryGraphError, ValueError):
    """A read or write addressed data outside the owner's four visible identities.

    It is a ``ValueError`` (as is :class:`IdentityMissingError`) because LangGraph Server
    sends an exception's message to the client only for builtin classes such as
    ``ValueError``; other classes arrive as "An internal error occurred". The messages
    never name another principal.
    """


class ThreadOwnerError(ScopeError):
    """The thread was started by another principal (user, workspace or agent).

    Invoking, streaming, resuming or reading the review of a thread is allowed only for the
    principal recorded by its first turn. The message never names the other principal.
    """


class AuthIdentityError(ScopeError):
    """The run carries an authenticated user, and asks to act as someone else.

    On LangGraph Server with an ``auth`` handler, ``config["configurable"]`` carries
    ``langgraph_auth_user`` / ``langgraph_auth_user_id``; that user is the run's owner. A
    ``user_id`` in the context or ``configurable`` that does not fold to the same id, a
    ``workspace`` or ``agent`` outside the user's ``workspaces`` / ``agents`` lists, or a
    malformed authenticated user is refused with this error before anything is read.
    """


class NotFoundError(MemoryGraphError):
    """The record or proposal does not exist for this owner."""


class ConflictError(MemoryGraphError):
    """A compare-and-set failed because the target changed since its base version."""


class IdempotencyConflictError(ConflictError):
    """The same idempotency key was used with a different payload."""


class StaleWriteError(MemoryGraphError):
    """A write carries an ``updated_at`` that is not later than the stored one."""


class ProposalExpiredError(MemoryGraphError):
    """A proposal was acted on at or after its ``expires_at``."""


class StorageUnavailableError(MemoryGraphError):
    """The PostgreSQL server cannot be reached, or the embedded server cannot start."""
