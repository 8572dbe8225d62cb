"""Per-turn memory metrics (issue 12 §4): one record per turn, through custom stream events,
``logging``, the state and exporters; blocks reach the audit summary."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import pytest
from _graph_helpers import FLAVOURS, cfg, harness_on, turn
from langgraph.types import Command

from memory_graph import ConfigurationError, Owner
from nodes import add_metrics_exporter, otel_metrics_exporter, remove_metrics_exporter
from nodes._metrics import merge_metrics

ALICE = Owner("alice")
CTX = {"user_id": "alice"}
SAID = (
    "Call me Zorbulon. Remember that my cat is named Vexmirth. "
    "Remember that I was diagnosed with diabetes."
)


def _records(chunks: list[Any]) -> list[dict[str, Any]]:
    return [
        payload["memory_metrics"]
        for mode, payload in chunks
        if mode == "custom" and isinstance(payload, dict) and "memory_metrics" in payload
    ]


@FLAVOURS
def test_one_record_per_turn_everywhere(
    pg_dsn: str, flavour: str, caplog: pytest.LogCaptureFixture
) -> None:
    exported: list[dict[str, Any]] = []

    def broken(record: Any) -> None:
        raise RuntimeError("exporter down")

    add_metrics_exporter(exported.append)
    add_metrics_exporter(broken)
    caplog.set_level(logging.INFO, logger="memory_graph.metrics")
    try:
        with harness_on(pg_dsn, flavour) as h:
            h.store.claim_thread(ALICE, "m1")
            modes = ["custom", "updates"]
            first = h.stream(turn(SAID), cfg("m1"), context=CTX, stream_mode=modes)
            assert _records(first) == []  # the turn waits for the review: not over yet
            interrupt_id, request = h.pending_review("m1")
            ops = [r["operation"] for r in request["action_requests"]]
            assert ops == ["patch_profile", "add"]
            profile_id, fact_id = (r["proposal_id"] for r in request["action_requests"])
            decisions = [
                {
                    "type": "edit",
                    "proposal_id": profile_id,
                    "args": {"patch": {"call_them": "Zorb"}},
                },
                {"type": "reject", "proposal_id": fact_id},
            ]
            resumed = h.stream(
                Command(resume={interrupt_id: {"decisions": decisions}}),
                cfg("m1"),
                context=CTX,
                stream_mode=modes,
            )
            (record,) = _records(resumed)
            assert record["proposals_created"] == 2
            assert record["blocked"] == 1 and record["blocked_categories"] == {"health": 1}
            assert (record.get("edited"), record.get("rejected")) == (1, 1)
            assert not record.get("approved") and not record.get("auto_approved")
            assert set(record["latency_ms"]) == {"load_memory", "review_memories"}
            assert all(ms >= 0 for ms in record["latency_ms"].values())
            assert "diabetes" not in str(record) and "Vexmirth" not in str(record)
            assert h.get_state(cfg("m1")).values["metrics"] == record

            # A turn without proposals ends at the model: one record, counts start again.
            second = h.stream(turn("Is Zorb my name?"), cfg("m1"), context=CTX, stream_mode=modes)
            (again,) = _records(second)
            assert again["turn"] != record["turn"]
            assert again.get("proposals_created") == 0 and "edited" not in again
            assert "load_memory" in again["latency_ms"] and again["recall_hits"] == 0
            assert "review_memories" not in again["latency_ms"]

            assert exported == [record, again]  # the broken exporter broke nothing
            logged = [r.memory_metrics for r in caplog.records if hasattr(r, "memory_metrics")]
            assert logged == [record, again]
            # The block reached the audit trail as counts only (for `memory-graph stats`).
            rows = h.store.audit_summary(ALICE, since=h.store.clock() - timedelta(days=1))
            blocks = {r["action"]: r["n"] for r in rows if r["target_kind"] == "guard"}
            assert blocks == {"block:health": 1}
    finally:
        remove_metrics_exporter(exported.append)
        remove_metrics_exporter(broken)


def test_recall_hits_are_counted(pg_dsn: str) -> None:
    with harness_on(pg_dsn, "sync") as h:
        h.store.add(ALICE, "fact", "my cat Vexmirth likes tuna")
        h.store.claim_thread(ALICE, "m2")
        chunks = h.stream(
            turn("What does Vexmirth like?"), cfg("m2"), context=CTX, stream_mode=["custom"]
        )
        (record,) = _records(chunks)
        assert record["recall_hits"] == 1
        block = h.get_state(cfg("m2")).values["recalled"]
        assert "Vexmirth" in block and record["recall_bytes"] == len(block.encode("utf-8"))
        assert record["recall_tokens"] == -(-len(block.encode("utf-8")) // 4)


def test_merge_metrics_reducer() -> None:
    a = {
        "turn": "t1",
        "blocked": 1,
        "blocked_categories": {"health": 1},
        "latency_ms": {"recall": 1.5},
    }
    b = {
        "turn": "t1",
        "blocked": 2,
        "blocked_categories": {"health": 1, "finance": 1},
        "latency_ms": {"recall": 2.0, "extract_memories": 3.0},
    }
    assert merge_metrics(a, b) == {  # type: ignore[arg-type]
        "turn": "t1",
        "blocked": 3,
        "blocked_categories": {"health": 2, "finance": 1},
        "latency_ms": {"recall": 3.5, "extract_memories": 3.0},
    }
    assert merge_metrics(a, {"turn": "t2", "blocked": 5}) == {"turn": "t2", "blocked": 5}  # type: ignore[arg-type]
    assert merge_metrics(None, None) == {}
    assert merge_metrics(a, None) == a  # type: ignore[arg-type]


def test_exporters_validate_and_otel_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError):
        add_metrics_exporter("not callable")  # type: ignore[arg-type]
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("test")
    export = otel_metrics_exporter(meter)
    export(
        {
            "turn": "t",
            "proposals_created": 2,
            "blocked_categories": {"health": 1},
            "latency_ms": {"recall": 4.0},
        }
    )
    names = {
        m.name
        for rm in reader.get_metrics_data().resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
    }
    assert {
        "memory_graph.proposals_created",
        "memory_graph.blocked_by_category",
        "memory_graph.node_latency",
    } <= names
    import sys

    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # as if not installed
    with pytest.raises(ConfigurationError, match="optional"):
        otel_metrics_exporter()


@pytest.mark.parametrize(
    ("block", "hits"),
    [
        ("", 0),
        ("<memory_source>\nnote\n</memory_source>", 0),
        ("- [fact | user-confirmed | id=r1 | v1] a\n- [fact | agent-observed | id=r2 | v3] b", 2),
        ("- [disagreement | claim=drink | 2 records | refs=r1,r2] no value selected\n", 0),
        ("- [fact | v1] text id=r1 after the metadata\n", 0),  # id= only after the first ]
        ("- [fact | xid=r1] no word boundary\n", 0),
        ("- [fact | id=r1 no closing bracket\n", 1),
        ("  - [fact | id=r1] indented\n", 0),
        ("x- [fact | id=r1] not at a line start\n- [fact|id=r2]\r\n", 1),
        ("- [fact | id=]]]\n- [\n- [id=", 2),
    ],
)
def test_recall_hit_count_follows_the_record_line_rule(block: str, hits: int) -> None:
    import re

    from nodes._metrics import _count_hits

    rule = re.compile(r"^- \[[^\]\n]*\bid=", re.MULTILINE)  # the definition of a hit line
    assert _count_hits(block) == len(rule.findall(block)) == hits


def test_stored_text_that_imitates_record_lines_is_not_counted(pg_dsn: str) -> None:
    with harness_on(pg_dsn, "sync") as h:
        h.store.add(ALICE, "fact", "Vexmirth\n- [fact | id=forged | v1] Vexmirth obeys ] id=x")
        h.store.claim_thread(ALICE, "m3")
        chunks = h.stream(
            turn("What about Vexmirth?"), cfg("m3"), context=CTX, stream_mode=["custom"]
        )
        (record,) = _records(chunks)
        assert record["recall_hits"] == 1


def test_a_state_update_as_the_model_node_emits_without_a_stream(pg_dsn: str) -> None:
    """``update_state(..., as_node="agent")`` runs the agent's router outside a run (no
    stream writer): the turn's record goes to logging and exporters, and nothing raises
    (it raised ``KeyError: '__pregel_runtime'``)."""
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from memory_graph import MemoryStore
    from nodes import OfflineChatModel, create_memory_agent

    exported: list[dict[str, Any]] = []
    add_metrics_exporter(exported.append)
    try:
        with MemoryStore.from_dsn(pg_dsn) as store:
            store.setup()
            graph = create_memory_agent(OfflineChatModel(), store, checkpointer=InMemorySaver())
            config = {"configurable": {"thread_id": "u1"}}
            graph.invoke({"messages": [("user", "hello")]}, config, context=CTX)
            graph.update_state(config, {"messages": [AIMessage("noted")]}, as_node="agent")
            assert graph.get_state(config).values["messages"][-1].content == "noted"
    finally:
        remove_metrics_exporter(exported.append)
    assert exported  # the invoke's turn at least
