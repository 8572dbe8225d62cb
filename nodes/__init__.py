"""LangGraph nodes, tools and the prebuilt agent for memory-graph.

Node factories bind a node to a ``memory_graph.MemoryStore`` (sync nodes) or
``AsyncMemoryStore`` (async nodes). The owner always comes from the run's context
(``context={"user_id": ...}``) or ``config["configurable"]``; without it a node raises
``IdentityMissingError`` before reading or writing anything.

``MemoryMiddleware`` brings the same governance to LangChain v1's ``create_agent`` (it needs
``langchain``, the ``middleware`` extra, and is imported on first use).

``GovernedStore`` exposes the governed memory as a LangGraph ``BaseStore``: compile with
``store=GovernedStore(memory_store)`` and factories built without a store use
``runtime.store`` (reads are governed recall, writes are proposals).

Example::

    from memory_graph import MemoryStore
    from nodes import OfflineChatModel, create_memory_agent, open_checkpointer

    with MemoryStore.from_dsn() as store, open_checkpointer(store) as saver:
        agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t1"}}
        agent.invoke({"messages": [("user", "Call me Ada.")]}, cfg, context={"user_id": "ada"})
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._agent import (
    AGENT_CONFIG,
    MemoryGraphBuilder,
    build_memory_graph,
    create_memory_agent,
    open_async_checkpointer,
    open_checkpointer,
)
from ._approvals import (
    NoPendingReviewError,
    UnknownThreadError,
    alist_inbox,
    apending_review,
    aresume_review,
    decide_all,
    list_inbox,
    pending_review,
    resume_review,
)
from ._basestore import DEFAULT_NAMESPACE, GovernedStore
from ._context import MemoryContext, owner_context, resolve_owner
from ._encryption import ReencryptReport, reencrypt_checkpoints
from ._evidence import (
    EvidencePolicy,
    create_evidence_tool_node,
    create_read_evidence_tool,
    evidence_manifest,
)
from ._metrics import (
    TurnMetricsJSON,
    add_metrics_exporter,
    otel_metrics_exporter,
    remove_metrics_exporter,
)
from ._models import OfflineChatModel, chat_model_from_env, structured_method_from_env
from ._nodes import create_extract_memories, create_load_user_context, create_recall
from ._payloads import (
    ActionRequest,
    Decision,
    DecisionModel,
    ReviewConfig,
    ReviewRequest,
    ReviewResponse,
    ReviewResponseModel,
    build_review_request,
    validate_decisions,
)
from ._prompt import build_system_prompt, create_system_prompt
from ._review import create_review_memories
from ._state import (
    CommitResultJSON,
    ExtractionReportJSON,
    Goal,
    MemoryState,
    ProposalJSON,
    Task,
)
from ._tools import TOOL_NAMES, create_memory_tools

if TYPE_CHECKING:
    from ._middleware import MemoryMiddleware

__all__ = [
    "AGENT_CONFIG",
    "ActionRequest",
    "CommitResultJSON",
    "DEFAULT_NAMESPACE",
    "Decision",
    "DecisionModel",
    "EvidencePolicy",
    "ExtractionReportJSON",
    "Goal",
    "GovernedStore",
    "MemoryContext",
    "MemoryGraphBuilder",
    "MemoryMiddleware",
    "MemoryState",
    "NoPendingReviewError",
    "OfflineChatModel",
    "ProposalJSON",
    "ReencryptReport",
    "ReviewConfig",
    "ReviewRequest",
    "ReviewResponse",
    "ReviewResponseModel",
    "TOOL_NAMES",
    "Task",
    "TurnMetricsJSON",
    "UnknownThreadError",
    "add_metrics_exporter",
    "alist_inbox",
    "apending_review",
    "aresume_review",
    "build_memory_graph",
    "build_review_request",
    "build_system_prompt",
    "chat_model_from_env",
    "create_evidence_tool_node",
    "create_extract_memories",
    "create_load_user_context",
    "create_memory_agent",
    "create_memory_tools",
    "create_read_evidence_tool",
    "create_recall",
    "create_review_memories",
    "create_system_prompt",
    "decide_all",
    "evidence_manifest",
    "list_inbox",
    "open_async_checkpointer",
    "open_checkpointer",
    "otel_metrics_exporter",
    "owner_context",
    "pending_review",
    "reencrypt_checkpoints",
    "remove_metrics_exporter",
    "resolve_owner",
    "resume_review",
    "structured_method_from_env",
    "validate_decisions",
]


def __getattr__(name: str) -> Any:
    # ``MemoryMiddleware`` needs ``langchain`` (the ``middleware`` extra): imported on first
    # use, so ``import nodes`` works without it.
    if name == "MemoryMiddleware":
        try:
            from ._middleware import MemoryMiddleware
        except ImportError as exc:
            raise ImportError(
                "nodes.MemoryMiddleware needs langchain>=1.5: "
                "pip install 'langgraph-memory-graph[middleware]'"
            ) from exc
        return MemoryMiddleware
    raise AttributeError(f"module 'nodes' has no attribute {name!r}")
