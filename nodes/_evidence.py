"""Tool evidence in the graph (issue 13): index results, list trimmed ones, re-read them.

- :func:`create_evidence_tool_node` wraps a ``ToolNode``: after the tools ran, every
  successful text result of an allow-listed tool is indexed in the store (digests, sizes, the
  step whose checkpoint holds it; never the text) and its reference enters the state's
  ``tool_evidence``. No extra superstep: indexing is one store write inside the tools step.
- :func:`evidence_manifest` lists, for a model step, the indexed results that are no longer
  among the messages the model sees (trimmed by ``RemoveMessage`` or by a message window such
  as ``trim_messages``), as a bounded ``<tool_evidence>`` block.
- :func:`create_read_evidence_tool` gives the model ``read_evidence(reference, offset=None,
  query=None)``: one page (4,096 characters of the original at most) of the original
  result, read back from the thread's checkpointed history after checking the owner, the
  thread and the digests, and shown through the rendering rule
  (:func:`~memory_graph.safetext.prompt_block`: lines kept, markup escaped). A file read
  whose history is gone can be re-read through the application's own read tool, only while
  the file's identity (size, mtime, content digest) is unchanged.

Evidence never becomes long-term memory by itself, and the memory tools, ``read_evidence``
itself, shell output and images are never indexed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolArg, StructuredTool
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolRuntime
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field

from memory_graph.evidence import (
    PAGE_CHARS,
    QUERY_CHARS,
    EvidenceEntry,
    FileIdentity,
    arg_names,
    arg_summary,
    digest_args,
    digest_text,
    new_reference,
    page,
    render_manifest,
    result_text,
    valid_entry,
)
from memory_graph.guard import check as guard_check
from memory_graph.safetext import prompt_block, prompt_value

from ._context import resolve_owner
from ._core import AnyStore, ConfigurationError, MemoryGraphError, NotFoundError, Owner
from ._drive import is_async_store
from ._tools import TOOL_NAMES

__all__ = [
    "EvidencePolicy",
    "create_evidence_tool_node",
    "create_read_evidence_tool",
    "evidence_manifest",
    "index_tool_messages",
]

READ_EVIDENCE = "read_evidence"
_NEVER = frozenset({*TOOL_NAMES, READ_EVIDENCE})
_SHELL_HINTS = ("shell", "bash", "terminal", "exec", "command")


@dataclass(frozen=True)
class EvidencePolicy:
    """Which tool results are indexed, and the caps.

    Args:
        tools: names of the application's read-only tools whose results are indexed.
        file_tools: file-read tools among them, mapped to the argument that holds the path;
            their entries also record the file's canonical path and identity.
        max_result_chars: a longer result is not indexed.
        max_per_thread: entries per thread at most (later results are not indexed).
        manifest_items: references listed in one manifest at most.
        manifest_bytes: UTF-8 bytes of one manifest at most.
        max_file_bytes: files up to this size get a content digest.

    Raises:
        ConfigurationError: a memory tool, ``read_evidence`` or a shell-like tool is named,
            or a cap is not positive.
    """

    tools: frozenset[str] = frozenset()
    file_tools: Mapping[str, str] = field(default_factory=dict)
    max_result_chars: int = 1_000_000
    max_per_thread: int = 200
    manifest_items: int = 20
    manifest_bytes: int = 2048
    max_file_bytes: int = 8 * 1024 * 1024

    def __post_init__(self) -> None:
        names = frozenset(self.tools) | frozenset(self.file_tools)
        object.__setattr__(self, "tools", names)
        object.__setattr__(self, "file_tools", dict(self.file_tools))
        bad = sorted(n for n in names if n in _NEVER or any(h in n.lower() for h in _SHELL_HINTS))
        if bad:
            raise ConfigurationError(
                f"tools {bad} cannot be evidence: memory tools, read_evidence and shell "
                "tools are never indexed"
            )
        for cap in ("max_result_chars", "max_per_thread", "manifest_items", "manifest_bytes"):
            value = getattr(self, cap)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"EvidencePolicy.{cap} must be a positive integer")


def _file_identity(path: str, max_bytes: int) -> FileIdentity | None:
    try:
        real = os.path.realpath(path)
        if not guard_check(real).allowed:  # a path the guard blocks is not stored
            return None
        st = os.stat(real)
        digest = None
        if st.st_size <= max_bytes:
            with open(real, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
        return FileIdentity(real, st.st_size, st.st_mtime_ns, digest)
    except (OSError, ValueError):
        return None


def _tool_args(messages: Iterable[AnyMessage]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id"):
                    out[str(call["id"])] = dict(call.get("args") or {})
    return out


def _is_text(content: Any) -> bool:
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content
    )


def index_tool_messages(
    history: Sequence[AnyMessage],
    results: Sequence[AnyMessage],
    policy: EvidencePolicy,
    *,
    thread_id: str,
    step: int | None,
) -> list[EvidenceEntry]:
    """Evidence entries for the allow-listed, successful text results in ``results``.

    Each entry's ``arg_summary`` shows the arguments (a value the guard blocks is
    redacted); it lives in the thread's state. The store keeps only the argument names
    (:func:`_for_store`).

    Args:
        history: the state's messages before the results (for the calls' arguments).
        results: the new tool messages (each must carry an ``id``).
        policy: the allow-list and caps.
        thread_id: the thread.
        step: the superstep whose checkpoint will hold the results.
    """
    args_by_call = _tool_args([*history, *results])
    entries = []
    for offset, message in enumerate(results):
        if not isinstance(message, ToolMessage) or message.name not in policy.tools:
            continue
        if message.status == "error" or not _is_text(message.content) or not message.id:
            continue
        text = result_text(message.content)
        if len(text) > policy.max_result_chars:
            continue
        args = args_by_call.get(message.tool_call_id, {})
        file = None
        path_arg = policy.file_tools.get(message.name or "")
        if path_arg and isinstance(args.get(path_arg), str):
            file = _file_identity(args[path_arg], policy.max_file_bytes)
        entries.append(
            EvidenceEntry(
                ref=new_reference(),
                thread_id=thread_id,
                message_id=str(message.id),
                position=len(history) + offset,
                step=step,
                tool_name=str(message.name),
                call_id=str(message.tool_call_id),
                args_digest=digest_args(args),
                result_digest=digest_text(text),
                size=len(text),
                arg_summary=arg_summary(args),
                file=file,
            )
        )
    return entries


def _for_store(
    history: Sequence[AnyMessage], entries: Sequence[EvidenceEntry]
) -> list[EvidenceEntry]:
    """``entries`` as the store keeps them: the argument names instead of the summary.

    The summary (argument values) stays in the thread's state, which the checkpointer
    encrypts when a key is set; the evidence table never holds a tool argument. An entry the
    store would refuse (an id it cannot keep, a name the guard blocks) is left out.
    """
    args_by_call = _tool_args(history)
    out = []
    for e in entries:
        row = dataclasses.replace(e, arg_summary=arg_names(args_by_call.get(e.call_id, {})))
        try:
            out.append(valid_entry(row))
        except MemoryGraphError:
            continue  # e.g. a model's call id with a line break: not indexed, never an error
    return out


def _thread(config: Mapping[str, Any] | None) -> str | None:
    value = (config or {}).get("configurable", {}).get("thread_id")
    return None if value is None else str(value)


def _with_ids(update: Any) -> tuple[Any, list[AnyMessage]]:
    if not isinstance(update, dict) or not isinstance(update.get("messages"), list):
        return update, []  # Command results are passed through unindexed
    messages = update["messages"]
    for message in messages:
        if isinstance(message, ToolMessage) and not message.id:
            message.id = str(uuid.uuid4())
    return update, messages


def create_evidence_tool_node(
    tools: Sequence[BaseTool], store: AnyStore, policy: EvidencePolicy
) -> Callable[..., Any]:
    """A ``tools`` node: a ``ToolNode`` over ``tools`` that also indexes its results.

    The owner comes from the runtime context, like every memory node; results are indexed
    only when the run has a ``thread_id``. Returns a sync or async node matching ``store``.
    """
    inner = ToolNode(list(tools))

    def _entries(
        state: Mapping[str, Any], config: RunnableConfig, messages: list[AnyMessage]
    ) -> tuple[str | None, list[EvidenceEntry], list[EvidenceEntry]]:
        thread = _thread(config)
        if thread is None or not messages:
            return None, [], []
        step = (config.get("metadata") or {}).get("langgraph_step")
        history = list(state.get("messages") or [])
        entries = index_tool_messages(
            history,
            messages,
            policy,
            thread_id=thread,
            step=step if isinstance(step, int) else None,
        )
        return thread, entries, _for_store([*history, *messages], entries)

    def _state(entries: list[EvidenceEntry], stored: list[EvidenceEntry]) -> list[Any]:
        kept = {e.ref for e in stored}  # the full summaries, for the entries the store kept
        return [e.to_json() for e in entries if e.ref in kept]

    if is_async_store(store):

        async def atools(
            state: Mapping[str, Any], runtime: Runtime[Any], config: RunnableConfig
        ) -> Any:
            owner = resolve_owner(runtime.context, config)
            update, messages = _with_ids(await inner.ainvoke(state, config))
            thread, entries, rows = _entries(state, config, messages)
            if thread is None or not entries:
                return update
            stored = await store.record_evidence(  # type: ignore[misc]
                owner, thread, rows, max_per_thread=policy.max_per_thread
            )
            return {**update, "tool_evidence": _state(entries, stored)}

        atools.__name__ = "tools"
        return atools

    def tools_node(state: Mapping[str, Any], runtime: Runtime[Any], config: RunnableConfig) -> Any:
        owner = resolve_owner(runtime.context, config)
        update, messages = _with_ids(inner.invoke(state, config))
        thread, entries, rows = _entries(state, config, messages)
        if thread is None or not entries:
            return update
        stored = store.record_evidence(owner, thread, rows, max_per_thread=policy.max_per_thread)
        return {**update, "tool_evidence": _state(entries, stored)}  # type: ignore[arg-type]

    tools_node.__name__ = "tools"
    return tools_node


def evidence_manifest(
    state: Mapping[str, Any], visible: Sequence[AnyMessage], policy: EvidencePolicy
) -> str:
    """The ``<tool_evidence>`` block for the references whose result the model no longer sees.

    Args:
        state: the graph state (its ``tool_evidence`` references).
        visible: the messages the model is about to see (after trimming).
        policy: the manifest caps.
    """
    seen = {str(m.id) for m in visible if getattr(m, "id", None)}
    trimmed = [e for e in state.get("tool_evidence") or [] if e.get("message_id") not in seen]
    return render_manifest(
        trimmed, max_items=policy.manifest_items, max_bytes=policy.manifest_bytes
    )


class ReadEvidenceArgs(BaseModel):
    """Re-read an earlier tool result that was trimmed from the conversation."""

    model_config = ConfigDict(extra="forbid")

    reference: str = Field(description="A ref from <tool_evidence>, e.g. ev-…", max_length=64)
    offset: int | None = Field(
        default=None, ge=0, le=2**31 - 1, description="Start at this character offset."
    )
    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=QUERY_CHARS,
        description="Start at the first match of this text (instead of offset).",
    )
    runtime: Annotated[Any, InjectedToolArg()]


def _checkpointer(explicit: Any, config: Mapping[str, Any] | None) -> Any:
    if explicit is not None:
        return explicit
    return (config or {}).get("configurable", {}).get("__pregel_checkpointer")


def _messages(tup: Any) -> list[Any]:
    return list(tup.checkpoint.get("channel_values", {}).get("messages") or [])


def _find(messages: Iterable[Any], message_id: str) -> Any:
    for message in messages or []:
        if str(getattr(message, "id", None)) == message_id:
            return message
    return None


def _history_text(saver: Any, thread: str, entry: EvidenceEntry, scan: int) -> str | None:
    if saver is None:
        return None
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    tries: list[dict[str, Any]] = []
    if entry.step is not None:
        tries.append({"filter": {"step": entry.step}, "limit": 3})
    tries.append({"limit": scan})
    for kwargs in tries:
        for tup in saver.list(cfg, **kwargs):
            found = _find(_messages(tup), entry.message_id)
            if found is not None:
                return result_text(found.content)
    return None


async def _ahistory_text(saver: Any, thread: str, entry: EvidenceEntry, scan: int) -> str | None:
    if saver is None:
        return None
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    tries: list[dict[str, Any]] = []
    if entry.step is not None:
        tries.append({"filter": {"step": entry.step}, "limit": 3})
    tries.append({"limit": scan})
    for kwargs in tries:
        async for tup in saver.alist(cfg, **kwargs):
            found = _find(_messages(tup), entry.message_id)
            if found is not None:
                return result_text(found.content)
    return None


def _file_note(entry: EvidenceEntry, policy: EvidencePolicy) -> tuple[bool, str]:
    """(identity unchanged, note)."""
    if entry.file is None:
        return False, ""
    now = _file_identity(entry.file.path, policy.max_file_bytes)
    same = now is not None and (now.size, now.mtime_ns, now.digest) == (
        entry.file.size,
        entry.file.mtime_ns,
        entry.file.digest,
    )
    if same:
        return True, ""
    return False, "note: the file changed since it was read; this is the text as it was read\n"


def _reread_file(
    entry: EvidenceEntry, policy: EvidencePolicy, tools: Mapping[str, BaseTool]
) -> tuple[dict[str, Any], BaseTool] | None:
    """The app's read tool and the arguments that reproduce the original call, if any."""
    path_arg = policy.file_tools.get(entry.tool_name)
    tool = tools.get(entry.tool_name)
    if entry.file is None or not path_arg or tool is None:
        return None
    args = {path_arg: entry.file.path}
    if digest_args(args) != entry.args_digest:
        return None
    return args, tool


def _render_page(entry: EvidenceEntry, text: str, a: Mapping[str, Any], note: str) -> str:
    pg = page(text, offset=a.get("offset"), query=a.get("query"), size=PAGE_CHARS)
    nxt = "none" if pg.next_offset is None else str(pg.next_offset)
    head = (
        f"<tool_evidence_page ref={prompt_value(entry.ref)} "
        f"tool={prompt_value(entry.tool_name)} offset={pg.offset} chars={len(pg.text)} "
        f"total={pg.total} next_offset={nxt}>\n"
    )
    # The page is the result's text through the rule (lines kept, tags and look-alikes
    # escaped), so it can neither close this frame nor forge another page header.
    return head + note + prompt_block(pg.text) + "\n</tool_evidence_page>"


def create_read_evidence_tool(
    store: AnyStore,
    policy: EvidencePolicy,
    *,
    checkpointer: Any = None,
    tools: Sequence[BaseTool] = (),
    history_scan: int = 1000,
) -> BaseTool:
    """The ``read_evidence(reference, offset=None, query=None)`` tool.

    Args:
        store: the memory store holding the evidence entries.
        policy: the evidence policy (file tools for re-reads).
        checkpointer: the graph's checkpointer; ``None`` uses the one of the running graph.
        tools: the application's tools (a file tool is re-run only while the file is
            unchanged and the thread's history no longer holds the result).
        history_scan: checkpoints scanned at most when the indexed step is not found.

    Returns:
        A sync or async tool matching ``store``. Refusals (a forged reference, another
        owner's or thread's reference, a digest mismatch, a changed file that cannot be read
        back) come back as ``Error: ...`` text, never another result.
    """
    by_name = {t.name: t for t in tools}

    def _verify(entry: EvidenceEntry, text: str | None) -> tuple[str | None, str]:
        if text is not None and digest_text(text) != entry.result_digest:
            raise MemoryGraphError("the thread's copy of this result does not match its digest")
        if text is None:
            return None, ""
        return text, _file_note(entry, policy)[1]

    def _prepare(runtime: ToolRuntime) -> tuple[Owner, str]:
        owner = resolve_owner(runtime.context, runtime.config)
        thread = _thread(runtime.config)
        if thread is None:
            raise NotFoundError("read_evidence needs a thread (configurable.thread_id)")
        return owner, thread

    def run_sync(runtime: ToolRuntime, reference: str, **a: Any) -> str:
        try:
            owner, thread = _prepare(runtime)
            entry = store.get_evidence(owner, thread, reference)
            saver = _checkpointer(checkpointer, runtime.config)
            text, note = _verify(entry, _history_text(saver, thread, entry, history_scan))  # type: ignore[arg-type]
            if text is None:
                again = _reread_file(entry, policy, by_name)  # type: ignore[arg-type]
                if again is None or not _file_note(entry, policy)[0]:  # type: ignore[arg-type]
                    raise NotFoundError("this result is no longer in the thread's history")
                text = result_text(again[1].invoke(again[0]))
                text, note = _verify(entry, text)  # type: ignore[arg-type]
            return _render_page(entry, text or "", a, note)  # type: ignore[arg-type]
        except MemoryGraphError as exc:
            return f"Error: {prompt_value(exc)}"

    async def run_async(runtime: ToolRuntime, reference: str, **a: Any) -> str:
        try:
            owner, thread = _prepare(runtime)
            entry = await store.get_evidence(owner, thread, reference)  # type: ignore[misc]
            saver = _checkpointer(checkpointer, runtime.config)
            text, note = _verify(entry, await _ahistory_text(saver, thread, entry, history_scan))
            if text is None:
                again = _reread_file(entry, policy, by_name)
                if again is None or not _file_note(entry, policy)[0]:
                    raise NotFoundError("this result is no longer in the thread's history")
                text = result_text(await again[1].ainvoke(again[0]))
                text, note = _verify(entry, text)
            return _render_page(entry, text or "", a, note)
        except MemoryGraphError as exc:
            return f"Error: {prompt_value(exc)}"

    description = (
        "Re-read an earlier tool result listed in <tool_evidence> (exact text, one page of "
        f"at most {PAGE_CHARS} characters). Pass offset to page on, or query to jump to text."
    )
    if is_async_store(store):
        return StructuredTool.from_function(
            coroutine=run_async,
            name=READ_EVIDENCE,
            description=description,
            args_schema=ReadEvidenceArgs,
        )
    return StructuredTool.from_function(
        func=run_sync, name=READ_EVIDENCE, description=description, args_schema=ReadEvidenceArgs
    )
