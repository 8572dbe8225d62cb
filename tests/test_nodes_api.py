"""The nodes package surface: a pinned, sorted ``__all__``; identity resolution; payloads."""

from __future__ import annotations

import pytest

import nodes
from memory_graph import IdentityMissingError, ResumeError
from nodes import build_review_request, resolve_owner, validate_decisions


def test_all_is_sorted_and_pinned() -> None:
    assert nodes.__all__ == sorted(nodes.__all__)
    for name in nodes.__all__:
        assert getattr(nodes, name) is not None


def test_identity_only_from_context_or_configurable() -> None:
    assert resolve_owner({"user_id": "a", "workspace": "/w"}).workspace == "/w"
    assert resolve_owner(None, {"configurable": {"user_id": "b"}}).user_id == "b"
    with pytest.raises(IdentityMissingError, match="available keys: thread_id"):
        resolve_owner(None, {"configurable": {"thread_id": "t"}})
    with pytest.raises(IdentityMissingError):
        resolve_owner({"user_id": " "}, None)


def _proposal(pid: str, op: str = "set_preference") -> dict[str, object]:
    return {
        "id": pid,
        "scope_id": "s",
        "level": "user",
        "operation": op,
        "target_id": None,
        "base_version": 0,
        "args": {},
        "diff": "d",
        "evidence": {},
        "guard": {},
        "status": "pending",
        "expires_at": "2026-01-01T00:00:00Z",
    }


def test_decisions_are_bound_to_the_batch() -> None:
    request = build_review_request([_proposal("p1"), _proposal("p2", "remove")])  # type: ignore[list-item]
    ok = validate_decisions(
        {
            "decisions": [
                {"type": "approve", "proposal_id": "p1"},
                {"type": "reject", "proposal_id": "p2", "message": "no"},
            ]
        },
        request,
    )
    assert [d["type"] for d in ok] == ["approve", "reject"]
    with pytest.raises(ResumeError, match="stale or foreign"):
        validate_decisions({"decisions": [{"type": "approve", "proposal_id": "p1"}]}, request)
    with pytest.raises(ResumeError, match="not allowed"):
        validate_decisions(
            {
                "decisions": [
                    {"type": "approve", "proposal_id": "p1"},
                    {"type": "edit", "proposal_id": "p2", "args": {}},
                ]
            },
            request,
        )
    with pytest.raises(ResumeError, match="malformed"):
        validate_decisions({"decisions": [{"type": "edit", "proposal_id": "p1"}]}, request)
