"""The public namespace is pinned, and the sync and async twins expose the same API."""

from __future__ import annotations

import inspect
import subprocess
import sys

import memory_graph
from memory_graph import AsyncMemoryStore, MemoryStore

EXPECTED = [
    "ApprovalPolicy",
    "AsyncMemoryStore",
    "AuthIdentityError",
    "Claim",
    "Clock",
    "CommitResult",
    "ConfigurationError",
    "ConflictError",
    "DecisionKind",
    "Disagreement",
    "ForgetReport",
    "Grant",
    "IDENTITY_LEVELS",
    "IdempotencyConflictError",
    "Identity",
    "IdentityLevel",
    "IdentityMissingError",
    "Kind",
    "Knowledge",
    "LimitExceededError",
    "Limits",
    "MemoryGraphError",
    "MemoryStore",
    "NoPendingReviewError",
    "NotFoundError",
    "Operation",
    "Owner",
    "Persona",
    "Preference",
    "PreferenceResult",
    "Profile",
    "ProfileResult",
    "Proposal",
    "ProposalExpiredError",
    "ProposalStatus",
    "Provenance",
    "Record",
    "ResumeError",
    "ScopeError",
    "SearchHit",
    "Sensitivity",
    "StaleWriteError",
    "Status",
    "StorageUnavailableError",
    "SweepReport",
    "ThreadOwnerError",
    "Trust",
    "UnknownFieldError",
    "UnknownThreadError",
    "ValidationError",
    "WriteStatus",
    "loose_user_id",
    "system_clock",
]

STORE_API = [
    "add",
    "add_many",
    "audit_log",
    "audit_summary",
    "check_thread",
    "claim_thread",
    "clock",
    "close",
    "complete_onboarding",
    "context_block",
    "create_grant",
    "decide",
    "decide_with_grant",
    "delete_preference",
    "dsn",
    "enable_embeddings",
    "ensure_bootstrap",
    "export",
    "forget_user",
    "from_dsn",
    "get_evidence",
    "get_grant",
    "get_persona",
    "get_preferences",
    "get_profile",
    "get_proposal",
    "get_record",
    "import_document",
    "index_embeddings",
    "limits",
    "list_evidence",
    "list_expired",
    "list_page",
    "list_pending",
    "list_records",
    "list_threads",
    "memory_md",
    "note_blocked",
    "open",
    "patch_profile",
    "propose",
    "record_evidence",
    "reinforce",
    "remove",
    "replace",
    "search",
    "search_confirmed",
    "set_persona",
    "set_preference",
    "setup",
    "snapshot",
    "sweep",
]


def test_all_is_pinned_and_sorted():
    assert memory_graph.__all__ == EXPECTED
    assert sorted(memory_graph.__all__) == memory_graph.__all__
    for name in EXPECTED:
        assert hasattr(memory_graph, name), name


def public(cls):
    return sorted(n for n in dir(cls) if not n.startswith("_"))


def test_store_api_and_twin_parity():
    assert public(MemoryStore) == STORE_API
    assert public(AsyncMemoryStore) == STORE_API
    for name in STORE_API:
        s, a = getattr(MemoryStore, name), getattr(AsyncMemoryStore, name)
        if isinstance(s, property) or name == "from_dsn":
            continue
        assert inspect.iscoroutinefunction(a) == (name != "from_dsn"), name
        ss, sa = inspect.signature(s), inspect.signature(a)
        assert ss.parameters == sa.parameters, name
        if name != "open":
            assert ss.return_annotation == sa.return_annotation, name


def test_import_does_not_touch_nodes_or_database():
    code = (
        "import sys, memory_graph; "
        "assert 'nodes' not in sys.modules, 'nodes imported eagerly'; "
        "from memory_graph import *; "
        "assert 'nodes' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_docstrings_everywhere():
    for cls in (MemoryStore, AsyncMemoryStore):
        for name in STORE_API:
            attr = getattr(cls, name)
            assert (attr.__doc__ or "").strip(), f"{cls.__name__}.{name} has no docstring"
