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

import math
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator
from typing_extensions import NotRequired, TypedDict

from memory_graph.safetext import fold, terminal_value

from ._core import (
    Limits,
    MemoryGraphError,
    ResumeError,
    ValidationError,
    guard_check,
    guard_text,
    operation_args,
    terminal_text,
)
from ._state import ProposalJSON

__all__ = [
    "MAX_RESUME_BYTES",
    "MAX_RESUME_DEPTH",
    "MAX_RESUME_MESSAGE_BYTES",
    "ActionRequest",
    "BoundReviewResponse",
    "Decision",
    "DecisionModel",
    "DecisionType",
    "ReviewConfig",
    "ReviewRequest",
    "ReviewResponse",
    "ReviewResponseModel",
    "build_review_request",
    "is_review_request",
    "bound_response_schema",
    "validate_decisions",
]

DecisionType = Literal["approve", "edit", "reject"]

MAX_RESUME_DEPTH = 16
"""Deepest nesting of a resume value (containers inside containers); edit args need 4."""
MAX_RESUME_BYTES = 256 * 1024
"""Total UTF-8 bytes of the strings (keys and values) of one resume value."""
MAX_RESUME_ITEMS = 10_000
"""Values (containers, strings, numbers) in one resume value."""
MAX_RESUME_MESSAGE_BYTES = 4096
"""A decision's ``message``, in UTF-8 bytes (the store's limit)."""
_MAX_INT = 2**53
_QUOTE = 80

_EDITABLE = frozenset({"add", "replace", "set_preference", "patch_profile"})
REVIEW_KIND = "memory_review"


class ActionRequest(TypedDict):
    """One proposal awaiting a decision."""

    name: str
    """The operation, used as the action name (``add``, ``set_preference`` ...)."""
    args: dict[str, Any]
    description: str
    """The human-readable diff on one line, then the user's quote that supports it, or a
    note that none does. Values are escaped (``terminal_value``) so only the notes this
    payload adds appear as ``(...)``."""
    quote: str | None
    """The user's words the proposal rests on (``None`` for a model's tool call): shown
    beside the content so the reviewer can check that the quote says it."""
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
    """Pydantic twin of :class:`ReviewResponse` (shape only, not bound to a batch).

    The raw value is checked first (:func:`check_resume_value`: JSON types, depth, size,
    text without NUL, surrogates or control characters), so nothing hostile reaches pydantic.
    """

    model_config = ConfigDict(extra="forbid")

    decisions: list[DecisionModel]

    @model_validator(mode="before")
    @classmethod
    def _raw(cls, value: Any) -> Any:
        if not isinstance(value, BaseModel):
            check_resume_value(value)
        return value


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

    Raises:
        ValidationError: ``proposals`` is not a list of proposals.
    """
    if isinstance(proposals, (str, bytes, Mapping)) or not isinstance(proposals, Sequence):
        raise ValidationError("proposals must be a list of proposals (ProposalJSON)")
    for p in proposals:
        if (
            not isinstance(p, Mapping)
            or not all(isinstance(p.get(k), str) for k in ("id", "operation", "diff"))
            or not all(isinstance(p.get(k), Mapping) for k in ("args", "evidence"))
        ):
            raise ValidationError(
                "a proposal must be a ProposalJSON (id, operation, diff, args, evidence, ...)"
            )
    requests: list[ActionRequest] = []
    configs: dict[str, ReviewConfig] = {}
    for p in proposals:
        quote = p["evidence"].get("quote")
        quote = quote if isinstance(quote, str) and quote else None
        requests.append(
            {
                "name": p["operation"],
                "args": dict(p["args"]),
                "description": _description(p, quote),
                "quote": quote,
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


def _description(p: ProposalJSON, quote: str | None) -> str:
    """The diff, then the notes only this function writes: ``(expires ...)``, ``(the user
    said: "...")`` or ``(no quote: ...)``, and a cited evidence reference.

    Every stored or model-written value goes through :func:`terminal_value` (parentheses
    escaped as ``\\(``, and ``"`` inside the quote), so no value can add or close a note.
    The diff's own expiry note is rebuilt from the proposal's ``expires_at`` argument. The
    diff (whose values :func:`~memory_graph.proposals.render_diff` already quoted and
    escaped) goes through :func:`_diff_notes`: its bare parentheses are escaped, its escaped
    ones kept, so a value is escaped once and never turned into ``\\\\(``.
    """
    diff = p["diff"]
    expires = p["args"].get("expires_at")
    suffix = f" (expires {expires})" if isinstance(expires, str) and expires else ""
    if suffix and diff.endswith(suffix):
        diff = diff[: -len(suffix)]
        suffix = f" (expires {terminal_value(expires)})"
    else:
        suffix = ""
    if quote:
        said = f'the user said: "{terminal_value(quote, quoted=True)}"'
    else:
        said = "no quote: proposed by the model"
    uri = p["evidence"].get("uri")
    if isinstance(uri, str) and uri.startswith("evidence:"):
        said += f"; cites tool evidence {terminal_value(uri.removeprefix('evidence:'))}"
    return f"{_diff_notes(diff)}{suffix} ({said})"


_ESCAPED_OR_PAREN = re.compile(r"\\.|[()]")


def _diff_notes(diff: str) -> str:
    r"""The diff on one line (:func:`~memory_graph.safetext.fold`) with every parenthesis
    that a backslash does not escape escaped; backslash pairs (``\\``, ``\(``, ``\"``) kept.

    >>> print(_diff_notes('+ fact: "a \\(b\\)" (expires x)\n- c\\\\(d)'))
    + fact: "a \(b\)" \(expires x\) - c\\\(d\)
    """
    return _ESCAPED_OR_PAREN.sub(lambda m: m[0] if len(m[0]) == 2 else "\\" + m[0], fold(diff))


def check_review_request(request: Any) -> ReviewRequest:
    """Check the shape of a review request (the pending interrupt value) before reading it.

    Raises:
        ValidationError: not a memory review request: a mapping with ``kind``
            ``memory_review``, ``action_requests`` (objects with a string ``proposal_id``,
            ``name`` and ``operation`` and an object ``args``) and ``review_configs``
            (objects with a string ``action_name`` and a list of ``allowed_decisions``).
    """
    problem = "a memory review request (the pending interrupt's value) is expected"
    if not is_review_request(request):
        raise ValidationError(f"{problem}: got {type(request).__name__}")
    for r in request["action_requests"]:
        if (
            not isinstance(r, Mapping)
            or not all(isinstance(r.get(k), str) for k in ("proposal_id", "name", "operation"))
            or not isinstance(r.get("args"), Mapping)
        ):
            raise ValidationError(f"{problem}: an action request is malformed")
    configs = request.get("review_configs")
    if not isinstance(configs, list) or any(
        not isinstance(c, Mapping)
        or not isinstance(c.get("action_name"), str)
        or not isinstance(c.get("allowed_decisions"), list)
        for c in configs
    ):
        raise ValidationError(f"{problem}: review_configs is malformed")
    return request  # type: ignore[no-any-return]


def is_review_request(value: Any) -> bool:
    """Whether an interrupt value is a memory review request."""
    return (
        isinstance(value, Mapping)
        and value.get("kind") == REVIEW_KIND
        and isinstance(value.get("action_requests"), list)
    )


def validate_decisions(
    response: ReviewResponseModel | Mapping[str, Any],
    request: ReviewRequest,
    *,
    limits: Limits | None = None,
) -> list[Decision]:
    """Check a resume value against the review it answers, completely (pure).

    Everything the commit would refuse is refused here, before ``interrupt()`` returns, so a
    refused resume leaves the whole review pending: the raw value's shape and size
    (:func:`check_resume_value`), the decision types allowed per operation, proposal ids
    bound to the batch in order, each ``message`` (text of at most
    :data:`MAX_RESUME_MESSAGE_BYTES` bytes, no control characters but tab and newline), and
    each edit's ``args`` (the store's validation and the sensitive-data guard).

    Args:
        response: the resume value (validated model or raw mapping).
        request: the pending review request.
        limits: the store's limits for edited args (defaults when ``None``).

    Returns:
        The decisions as plain JSON, in request order.

    Raises:
        ResumeError: the value is malformed, or its proposal ids are not exactly those of
            the request in order (a stale or foreign resume), or a decision type is not
            allowed for its operation, or a message or edit would be refused.
        ValidationError: ``request`` is not a review request (:func:`check_review_request`).
    """
    request = check_review_request(request)
    if not isinstance(response, ReviewResponseModel):
        check_resume_value(response)
        try:
            response = ReviewResponseModel.model_validate(response)
        except ValueError as exc:  # pydantic.ValidationError subclasses ValueError
            raise ResumeError(malformed_message(exc)) from exc
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
        _check_decision(req, dec, limits or Limits())
    return [d.to_json() for d in response.decisions]


def _quote(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTE else text[: _QUOTE - 1] + "…"


def malformed_message(exc: Exception) -> str:
    """The ``ResumeError`` text for a value of the wrong shape (input quoted, capped)."""
    inner = None
    for error in getattr(exc, "errors", lambda: [])():
        ctx = error.get("ctx") or {}
        if isinstance(ctx.get("error"), ResumeError):
            return str(ctx["error"])
        if inner is None:
            where = ".".join(str(p) for p in error.get("loc", ()))
            inner = f"{where or 'value'}: {error.get('msg', '')}"
    detail = _quote(inner or str(exc))
    return (
        "malformed resume: expected {'decisions': [{'type': 'approve'|'edit'|'reject', "
        f"'proposal_id': ...}}, ...]}} ({detail})"
    )


def _bad_text(where: str, value: str, *, allow_breaks: bool) -> str | None:
    for ch in value:
        if ch == "\x00":
            return f"{where} contains a NUL character"
        cat = unicodedata.category(ch)
        if cat == "Cs":
            return f"{where} is not valid Unicode text (lone surrogate)"
        if cat == "Cc" and not (allow_breaks and ch in "\t\n"):
            return f"{where} contains the control character U+{ord(ch):04X}"
    return None


def check_resume_value(value: Any) -> None:
    """Refuse a raw resume value that is not small, plain JSON (pure, iterative).

    Allowed: ``dict`` with ``str`` keys, ``list``/``tuple``, ``str``, ``bool``, ``None``,
    ``int`` of magnitude below 2**53 and finite ``float``; at most :data:`MAX_RESUME_DEPTH`
    levels, :data:`MAX_RESUME_ITEMS` values and :data:`MAX_RESUME_BYTES` bytes of text; no
    NUL, lone surrogate or control character (tab and newline allowed) in any string.

    Raises:
        ResumeError: the first violation found; the message quotes no more than 80 chars.
    """
    if not isinstance(value, Mapping):
        raise ResumeError(
            "malformed resume: expected an object {'decisions': [...]}, "
            f"got {type(value).__name__}"
        )
    stack: list[tuple[Any, int]] = [(value, 1)]
    items = size = 0
    while stack:
        item, depth = stack.pop()
        items += 1
        if items > MAX_RESUME_ITEMS:
            raise ResumeError(f"resume value too large: more than {MAX_RESUME_ITEMS} values")
        if isinstance(item, str):
            strings = [item]
        elif item is None or isinstance(item, bool):
            continue
        elif isinstance(item, int):
            if abs(item) >= _MAX_INT:
                raise ResumeError("resume value has an integer outside ±2**53")
            continue
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ResumeError("resume value has a non-finite number")
            continue
        elif isinstance(item, (Mapping, list, tuple)):
            if depth > MAX_RESUME_DEPTH:
                raise ResumeError(
                    f"resume value nested deeper than {MAX_RESUME_DEPTH} levels: flatten it"
                )
            if isinstance(item, Mapping):
                strings = []
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise ResumeError(
                            f"resume value has a non-string key of type {type(key).__name__}"
                        )
                    strings.append(key)
                    stack.append((sub, depth + 1))
            else:
                stack.extend((sub, depth + 1) for sub in item)
                continue
        else:
            raise ResumeError(
                f"resume value holds a {type(item).__name__}: only plain JSON is accepted"
            )
        for text in strings:
            problem = _bad_text("a resume string", text, allow_breaks=True)
            if problem:
                raise ResumeError(f"malformed resume: {problem}")
            size += len(text.encode("utf-8"))
            if size > MAX_RESUME_BYTES:
                raise ResumeError(f"resume value too large: over {MAX_RESUME_BYTES} bytes of text")


def _check_decision(req: ActionRequest, dec: DecisionModel, limits: Limits) -> None:
    """Refuse what the commit would refuse: a bad message, or an edit the store rejects."""
    pid = dec.proposal_id
    if dec.message is not None:
        problem = _bad_text(f"the message for {pid}", dec.message, allow_breaks=True)
        if problem:
            raise ResumeError(f"refused resume: {problem}; the review is still pending")
        size = len(dec.message.encode("utf-8"))
        if size > MAX_RESUME_MESSAGE_BYTES:
            raise ResumeError(
                f"refused resume: the message for {pid} is {size} bytes, more than "
                f"{MAX_RESUME_MESSAGE_BYTES}; the review is still pending"
            )
        said = guard_check(dec.message)  # the message is stored with the decision
        if not said.allowed:
            raise ResumeError(
                f"refused resume: the message for {pid} is blocked by the sensitive-data "
                f"guard (category: {said.category}); the review is still pending"
            )
    if dec.type != "edit" or dec.args is None:
        return
    operation = req["operation"]
    try:
        canonical = operation_args(operation, dict(dec.args), limits)
    except MemoryGraphError as exc:
        raise ResumeError(
            f"refused edit of {pid}: {_quote(str(exc))}; the review is still pending"
        ) from exc
    if operation == "set_preference" and canonical.get("key") != req["args"].get("key"):
        raise ResumeError(
            f"refused edit of {pid}: an edit cannot change the preference key; propose a "
            "new write instead"
        )
    verdict = guard_check(guard_text(operation, canonical))
    if not verdict.allowed:
        raise ResumeError(
            f"refused edit of {pid}: blocked by the sensitive-data guard (category: "
            f"{verdict.category}); the review is still pending"
        )


# The resume value of the review bound by ``bound_response_schema`` (see there). No
# docstring: pydantic would surface it as the schema's description to every client.
class BoundReviewResponse(ReviewResponseModel):
    @model_validator(mode="after")
    def _bound(self) -> BoundReviewResponse:
        bound = _BOUND.get()
        if bound is None:  # fail closed: never accept a resume that no review checked
            raise ResumeError(
                "refused resume: no review request is bound; validate inside "
                "bound_response_schema(request)"
            )
        validate_decisions(self, bound[0], limits=bound[1])
        return self


BoundReviewResponse.__name__ = "ReviewResponse"

_BOUND: ContextVar[tuple[ReviewRequest, Limits | None] | None] = ContextVar(
    "memory_graph_bound_review", default=None
)


@contextmanager
def bound_response_schema(
    request: ReviewRequest, *, limits: Limits | None = None
) -> Iterator[type[ReviewResponseModel]]:
    """Bind the response model to one review request, for the ``with`` block.

    Pass the yielded model to ``interrupt(..., response_schema=...)`` inside the block:
    LangGraph validates the resume value before saving it, so a stale, foreign or malformed
    resume is refused and the interrupt stays pending. The model is one class for every
    review (pydantic builds its schema once, not per request); the request it checks
    against is held in a context variable, so concurrent reviews never see each other's.
    """
    token = _BOUND.set((request, limits))
    try:
        yield BoundReviewResponse
    finally:
        _BOUND.reset(token)
