"""Per-turn memory metrics: counted in the state, emitted once per turn (issue 12 §4).

Every memory node (``load_user_context``, ``recall``, ``extract_memories``/``collect_proposals``,
``review_memories``) and the prebuilt agent's turn entry (``load_memory``: context, first
recall and extraction, run in the model node) adds its counts and its latency to the
``metrics`` state field (summed
per turn by :func:`merge_metrics`; a new human message starts a new turn). When the turn
ends (the graph routes to ``END``, or the review node finishes after its resume), one record
is emitted:

- as a LangGraph custom stream event ``{"memory_metrics": record}`` (``stream_mode="custom"``);
- on the ``memory_graph.metrics`` logger at INFO (the record in ``extra["memory_metrics"]``);
- to every exporter registered with :func:`add_metrics_exporter` (e.g.
  :func:`otel_metrics_exporter`, which needs the optional ``opentelemetry-api``).

A record holds counts only, never text: proposals created, blocked (and by category), dropped
(ungrounded, invalid or duplicate), auto-approved, approved, edited, rejected, expired,
conflicted, recall hits / bytes / tokens rendered (summed over the turn's recall steps), and
each memory node's latency in milliseconds (summed over its runs in the turn; a review's
wait for the human is not included).
"""

from __future__ import annotations

import functools
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.graph import END
from typing_extensions import TypedDict

from ._core import ConfigurationError

__all__ = [
    "METRICS_LOGGER",
    "TurnMetricsJSON",
    "add_metrics_exporter",
    "emit_turn",
    "ends_turn",
    "measured",
    "merge_metrics",
    "otel_metrics_exporter",
    "remove_metrics_exporter",
]

METRICS_LOGGER = logging.getLogger("memory_graph.metrics")
_ID = re.compile(r"\bid=")
_EXPORTERS: list[Callable[[Mapping[str, Any]], Any]] = []


class TurnMetricsJSON(TypedDict, total=False):
    """One turn's memory metrics (counts and milliseconds only)."""

    turn: str | None
    """Id of the human message that started the turn."""
    proposals_created: int
    blocked: int
    blocked_categories: dict[str, int]
    dropped: int
    auto_approved: int
    approved: int
    edited: int
    rejected: int
    expired: int
    conflicted: int
    recall_hits: int
    recall_bytes: int
    recall_tokens: int
    latency_ms: dict[str, float]


def merge_metrics(old: TurnMetricsJSON | None, new: TurnMetricsJSON | None) -> TurnMetricsJSON:
    """State reducer: sum counts within a turn; a new turn id starts from the new counts."""
    if not new:
        return old or {}
    if not old or old.get("turn") != new.get("turn"):
        return dict(new)  # type: ignore[return-value]
    out: dict[str, Any] = dict(old)
    for key, value in new.items():
        if key == "turn":
            continue
        if isinstance(value, dict):
            merged = dict(out.get(key) or {})
            for k, v in value.items():
                merged[k] = round(merged.get(k, 0) + v, 3)
            out[key] = merged
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
    return out  # type: ignore[return-value]


def _turn_id(state: Mapping[str, Any]) -> str | None:
    for message in reversed(list(state.get("messages") or [])):
        if getattr(message, "type", None) == "human":
            return getattr(message, "id", None)
    return None


def _count_hits(block: str) -> int:
    """Record lines in a recalled block: lines ``- [...]`` whose metadata carries an ``id=``.

    Values are escaped (``]`` never appears inside one), so a line's metadata ends at its
    first ``]``; a disagreement marker (``refs=``, no ``id=``) is not a hit. Only the lines
    that start with ``- [`` are searched (a multi-line regex tried every position).

    Examples:
        >>> _count_hits("<m>\\n- [fact | id=a | v1] x\\n- [disagreement | refs=a,b] y\\n</m>")
        1
    """
    hits = 0
    for line in block.split("\n"):
        if line.startswith("- [") and _ID.search(line, 3, _meta_end(line)):
            hits += 1
    return hits


def _meta_end(line: str) -> int:
    end = line.find("]", 3)
    return len(line) if end < 0 else end


def _counts(name: str, result: Mapping[str, Any]) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    if isinstance(result.get("recalled"), str):  # recall and the entry node
        block = result["recalled"]
        size = len(block.encode("utf-8"))
        counts.update(
            recall_hits=_count_hits(block),
            recall_bytes=size,
            recall_tokens=math.ceil(size / 4),
        )
    report = result.get("extraction")
    if isinstance(report, Mapping):
        counts.update(
            proposals_created=int(report.get("proposed") or 0),
            blocked=int(report.get("blocked") or 0),
            blocked_categories=dict(report.get("blocked_categories") or {}),
            dropped=int(report.get("dropped") or 0),
        )
    results: Sequence[Mapping[str, Any]] = result.get("commit_results") or []
    for r in results:
        status, decision = r.get("status"), r.get("decision")
        if status == "approved":
            key = (
                "auto_approved"
                if decision in ("policy", "grant")
                else "edited"
                if decision == "edit"
                else "approved"
            )
        elif status in ("rejected", "expired", "conflicted"):
            key = str(status)
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    return counts


def measured(
    name: str, state: Mapping[str, Any], result: dict[str, Any], started: float
) -> dict[str, Any]:
    """``result`` plus this node's ``metrics`` update; the review node also ends the turn."""
    partial: dict[str, Any] = {
        "turn": _turn_id(state),
        **_counts(name, result),
        "latency_ms": {name: round((time.perf_counter() - started) * 1000, 3)},
    }
    out = {**result, "metrics": partial}
    if name == "review_memories":
        emit_turn(merge_metrics(state.get("metrics"), partial))  # type: ignore[arg-type]
    return out


def emit_turn(record: Mapping[str, Any]) -> None:
    """Emit one turn's record: custom stream event, ``logging``, registered exporters."""
    if not record:
        return
    data = dict(record)
    try:
        from langgraph.config import get_stream_writer

        get_stream_writer()({"memory_metrics": data})
    except (RuntimeError, KeyError):
        # Outside a runnable context, or in a router that ``update_state`` runs outside a
        # run (no runtime in its config): there is no stream to write to.
        pass
    METRICS_LOGGER.info(
        "memory turn: %d proposed, %d blocked, %d recalled",
        data.get("proposals_created", 0),
        data.get("blocked", 0),
        data.get("recall_hits", 0),
        extra={"memory_metrics": data},
    )
    for exporter in list(_EXPORTERS):
        try:
            exporter(data)
        except Exception:  # an exporter must never break a turn
            METRICS_LOGGER.exception("memory metrics exporter %r failed", exporter)


def ends_turn(route: Callable[[Mapping[str, Any]], str]) -> Callable[[Mapping[str, Any]], str]:
    """Decorate a router: when it routes to ``END``, the turn's record is emitted."""

    @functools.wraps(route)
    def wrapped(state: Mapping[str, Any]) -> str:
        target = route(state)
        if target == END:
            emit_turn(state.get("metrics") or {})
        return target

    return wrapped


def add_metrics_exporter(exporter: Callable[[Mapping[str, Any]], Any]) -> None:
    """Call ``exporter(record)`` for every turn's record (in the graph's process).

    Raises:
        ConfigurationError: ``exporter`` is not callable.
    """
    if not callable(exporter):
        raise ConfigurationError("a metrics exporter must be callable with one record")
    if exporter not in _EXPORTERS:
        _EXPORTERS.append(exporter)


def remove_metrics_exporter(exporter: Callable[[Mapping[str, Any]], Any]) -> None:
    """Stop calling ``exporter`` (no error if it was not registered)."""
    if exporter in _EXPORTERS:
        _EXPORTERS.remove(exporter)


def otel_metrics_exporter(meter: Any = None) -> Callable[[Mapping[str, Any]], None]:
    """An exporter recording the turn counts as OpenTelemetry counters and histograms.

    Counters ``memory_graph.<count>`` (``blocked`` carries a ``category`` attribute per
    category) and a histogram ``memory_graph.node_latency`` (ms, ``node`` attribute).
    Register it with :func:`add_metrics_exporter`.

    Args:
        meter: an OpenTelemetry ``Meter``; default ``metrics.get_meter("memory_graph")``.

    Raises:
        ConfigurationError: ``opentelemetry-api`` is not installed (it is optional).
    """
    try:
        from opentelemetry import metrics
    except ImportError as exc:
        raise ConfigurationError(
            "OpenTelemetry export needs the optional opentelemetry-api package"
        ) from exc
    meter = meter or metrics.get_meter("memory_graph")
    counters: dict[str, Any] = {}
    latency = meter.create_histogram("memory_graph.node_latency", unit="ms")

    def counter(name: str) -> Any:
        if name not in counters:
            counters[name] = meter.create_counter(f"memory_graph.{name}")
        return counters[name]

    def export(record: Mapping[str, Any]) -> None:
        for key, value in record.items():
            if key == "blocked_categories":
                for category, n in value.items():
                    counter("blocked_by_category").add(n, {"category": category})
            elif key == "latency_ms":
                for node, ms in value.items():
                    latency.record(ms, {"node": node})
            elif isinstance(value, int) and not isinstance(value, bool) and value:
                counter(key).add(value)

    return export
