"""Interrupt payloads of the review node, in LangChain v1's human-in-the-loop shape.

The types are our own ``TypedDict`` copies (upstream field names changed between
versions). One interrupt carries the whole batch::

    {"action_requests": [...], "review_configs": [...]}

and is answered with one decision per request, in order, each bound to its proposal id::

    {"decisions": [{"type": "approve", "proposal_id": "..."},
                   {"type": "edit", "proposal_id": "...", "args": {...}},
                   {"type": "reject", "proposal_id": "...", "message": "..."}]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator
from typing_extensions import NotRequired, TypedDict

from ._core import ResumeError, terminal_text
from ._state import ProposalJSON

__all__ = [
    "ActionRequest",
    "Decision",
    "DecisionModel",
    "DecisionType",
    "ReviewConfig",
    "ReviewRequest",
    "ReviewResponse",
    "ReviewResponseModel",
    "build_review_request",
    "is_review_request",
    "response_schema_for",
    "validate_decisions",
]

DecisionType = Literal["approve", "edit", "reject"]

_EDITABLE = frozenset({"add", "replace", "set_preference", "patch_profile"})
REVIEW_KIND = "memory_review"


class ActionRequest(TypedDict):
    """One proposal awaiting a decision."""

    name: str
    """The operation, used as the action name (``add``, ``set_preference`` ...)."""
    args: dict[str, Any]
    description: str
    """The human-readable diff, on one line through the rendering rule (``terminal_text``)."""
    proposal_id: str
    operation: str
    diff: str
    evidence: dict[str, Any]
    """``{"quote": ..., "source_event_id": ..., "thread_id": ...}``"""
    expires_at: str


class ReviewConfig(TypedDict):
    """Which decisions an action accepts."""

    action_name: str
    allowed_decisions: list[DecisionType]


class ReviewRequest(TypedDict):
    """The value of the review interrupt."""

    kind: str
    """Always ``"memory_review"``; tells this interrupt apart from others in a graph."""
    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class Decision(TypedDict):
    """One decision of a resume."""

    type: DecisionType
    proposal_id: str
    args: NotRequired[dict[str, Any]]
    """Edited args (``edit`` only); they are validated and guarded again."""
    message: NotRequired[str]
    """Optional reason (``reject``)."""


class ReviewResponse(TypedDict):
    """The resume value of the review interrupt."""

    decisions: list[Decision]


class DecisionModel(BaseModel):
    """Pydantic twin of :class:`Decision`, used to validate resume values."""

    model_config = ConfigDict(extra="forbid")

    type: DecisionType
    proposal_id: str
    args: dict[str, Any] | None = None
    message: str | None = None

    @model_validator(mode="after")
    def _shape(self) -> DecisionModel:
        if self.type == "edit" and self.args is None:
            raise ValueError(f"decision 'edit' for {self.proposal_id} needs 'args'")
        if self.type != "edit" and self.args is not None:
            raise ValueError(f"only 'edit' takes 'args' (proposal {self.proposal_id})")
        return self

    def to_json(self) -> Decision:
        """Return the plain-JSON decision."""
        out: Decision = {"type": self.type, "proposal_id": self.proposal_id}
        if self.args is not None:
            out["args"] = dict(self.args)
        if self.message is not None:
            out["message"] = self.message
        return out


class ReviewResponseModel(BaseModel):
    """Pydantic twin of :class:`ReviewResponse` (shape only, not bound to a batch)."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[DecisionModel]


def _allowed(operation: str) -> list[DecisionType]:
    if operation in _EDITABLE:
        return ["approve", "edit", "reject"]
    return ["approve", "reject"]


def build_review_request(proposals: Sequence[ProposalJSON]) -> ReviewRequest:
    """Build the interrupt value for a batch of proposals (pure).

    Args:
        proposals: the batch, in the order decisions must follow.

    Returns:
        The ``{"kind", "action_requests", "review_configs"}`` payload.
    """
    requests: list[ActionRequest] = []
    configs: dict[str, ReviewConfig] = {}
    for p in proposals:
        requests.append(
            {
                "name": p["operation"],
                "args": dict(p["args"]),
                "description": terminal_text(p["diff"]),
                "proposal_id": p["id"],
                "operation": p["operation"],
                "diff": terminal_text(p["diff"]),
                "evidence": dict(p["evidence"]),
                "expires_at": p["expires_at"],
            }
        )
        configs.setdefault(
            p["operation"],
            {"action_name": p["operation"], "allowed_decisions": _allowed(p["operation"])},
        )
    return {
        "kind": REVIEW_KIND,
        "action_requests": requests,
        "review_configs": [configs[name] for name in sorted(configs)],
    }


def is_review_request(value: Any) -> bool:
    """Whether an interrupt value is a memory review request."""
    return (
        isinstance(value, Mapping)
        and value.get("kind") == REVIEW_KIND
        and isinstance(value.get("action_requests"), list)
    )


def validate_decisions(
    response: ReviewResponseModel | Mapping[str, Any], request: ReviewRequest
) -> list[Decision]:
    """Check a resume value against the review it answers (pure).

    Args:
        response: the resume value (validated model or raw mapping).
        request: the pending review request.

    Returns:
        The decisions as plain JSON, in request order.

    Raises:
        ResumeError: the value is malformed, or its proposal ids are not exactly those of
            the request in order (a stale or foreign resume), or a decision type is not
            allowed for its operation.
    """
    if not isinstance(response, ReviewResponseModel):
        try:
            response = ReviewResponseModel.model_validate(response)
        except ValueError as exc:  # pydantic.ValidationError subclasses ValueError
            raise ResumeError(
                "malformed resume: expected {'decisions': [{'type': 'approve'|'edit'|'reject', "
                f"'proposal_id': ...}}, ...]}}: {exc}"
            ) from exc
    expected = [r["proposal_id"] for r in request["action_requests"]]
    got = [d.proposal_id for d in response.decisions]
    if got != expected:
        unknown = sorted(set(got) - set(expected))
        detail = (
            f"unknown proposal ids {unknown}" if unknown else f"expected ids in order {expected}"
        )
        raise ResumeError(
            "stale or foreign resume: the decisions do not match the pending review "
            f"({detail}); read the pending interrupt again and decide each of its "
            f"{len(expected)} proposals in order"
        )
    allowed = {c["action_name"]: c["allowed_decisions"] for c in request["review_configs"]}
    for req, dec in zip(request["action_requests"], response.decisions, strict=True):
        if dec.type not in allowed.get(req["name"], []):
            raise ResumeError(
                f"decision {dec.type!r} is not allowed for {req['name']} proposal "
                f"{dec.proposal_id}: allowed are {', '.join(allowed.get(req['name'], []))}"
            )
    return [d.to_json() for d in response.decisions]


def response_schema_for(request: ReviewRequest) -> type[ReviewResponseModel]:
    """Return a response model bound to one review request.

    Passed to ``interrupt(..., response_schema=...)``: LangGraph validates the resume value
    before saving it, so a stale, foreign or malformed resume is refused and the interrupt
    stays pending.
    """

    class BoundReviewResponse(ReviewResponseModel):
        @model_validator(mode="after")
        def _bound(self) -> BoundReviewResponse:
            validate_decisions(self, request)
            return self

    BoundReviewResponse.__name__ = "ReviewResponse"
    return BoundReviewResponse
