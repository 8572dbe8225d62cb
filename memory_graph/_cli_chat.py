"""``memory-graph chat``: an interactive loop over the prebuilt agent, approvals at the terminal.

The chat model is ``ChatOpenAI`` when ``OPENAI_API_KEY`` is set (``nodes.chat_model_from_env``),
with the LLM extractor on the same model; otherwise the offline model and the offline
pattern extractor. Each review interrupt is decided here, proposal by proposal, and the
thread is resumed through ``nodes.resume_review``.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from . import _cli_render as render
from ._identity import Owner

if TYPE_CHECKING:
    from .storage import MemoryStore

__all__ = ["ask_decisions", "run_chat"]

_QUIT = {"/quit", "/exit", "/q"}


def _ask(console: Console, prompt: str | Text) -> str | None:
    try:
        return console.input(Text(prompt) if isinstance(prompt, str) else prompt)
    except EOFError:
        return None


def ask_decisions(console: Console, request: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Ask approve / edit / reject for each proposal of a review request.

    Args:
        console: the terminal.
        request: the review interrupt's value.

    Returns:
        One decision per action request in order, or ``None`` when input ended (the
        review stays pending and can be decided later from the inbox).
    """
    allowed = {c["action_name"]: c["allowed_decisions"] for c in request["review_configs"]}
    decisions: list[dict[str, Any]] = []
    for index, item in enumerate(request["action_requests"], start=1):
        choices = allowed.get(item["name"], ["approve", "reject"])
        console.print(Text(f"[{index}] {item['diff']}", style="bold"))
        while True:
            answer = _ask(console, f"    {'/'.join(choices)} [approve]: ")
            if answer is None:
                return None
            choice = answer.strip().casefold() or "approve"
            matches = [c for c in choices if c.startswith(choice)]
            if len(matches) == 1:
                break
            console.print(Text(f"    please answer one of: {', '.join(choices)}", style="red"))
        decision: dict[str, Any] = {"type": matches[0], "proposal_id": item["proposal_id"]}
        if matches[0] == "edit":
            current = json.dumps(item["args"], ensure_ascii=False)
            console.print(Text(f"    current args: {current}", style="dim"))
            while True:
                raw = _ask(console, "    edited args (JSON, empty keeps them): ")
                if raw is None:
                    return None
                try:
                    edited = json.loads(raw) if raw.strip() else dict(item["args"])
                except json.JSONDecodeError as exc:
                    console.print(Text(f"    not JSON: {exc.msg}", style="red"))
                    continue
                if isinstance(edited, dict):
                    break
                console.print(Text("    the args must be a JSON object", style="red"))
            decision["args"] = edited
        elif matches[0] == "reject":
            reason = _ask(console, "    reason (optional): ")
            if reason and reason.strip():
                decision["message"] = reason.strip()
        decisions.append(decision)
    return decisions


def run_chat(
    console: Console, store: MemoryStore, owner: Owner, *, thread_id: str | None = None
) -> None:
    """Run the chat loop until ``/quit`` or end of input.

    Args:
        console: the terminal.
        store: the open store.
        owner: who is chatting.
        thread_id: the thread to continue; a new one by default.
    """
    from nodes import (
        OfflineChatModel,
        chat_model_from_env,
        create_memory_agent,
        open_checkpointer,
        owner_context,
        pending_review,
        resume_review,
        structured_method_from_env,
    )

    from .extract import create_extractor

    model: Any = chat_model_from_env()
    extractor: Any = None
    if model is not None:
        method: Any = structured_method_from_env()
        extractor = create_extractor(model, method=method)
        label = f"ChatOpenAI ({getattr(model, 'model_name', '?')})"
    else:
        model = OfflineChatModel()
        label = "the offline model (set OPENAI_API_KEY for ChatOpenAI)"
    thread = thread_id or f"chat-{uuid.uuid4().hex[:12]}"
    config: Any = {"configurable": {"thread_id": thread}}
    console.print(Text(f"thread {thread}, {label}. Type /quit to leave.", style="dim"))
    with open_checkpointer(store) as saver:
        agent = create_memory_agent(model, store, checkpointer=saver, extractor=extractor)
        snapshot = agent.get_state(config)
        waiting = bool(snapshot.interrupts)
        while True:
            if waiting:
                _iid, request = pending_review(agent, thread)
                console.print(render.proposals_table(request["action_requests"], title="Review"))
                decisions = ask_decisions(console, dict(request))
                if decisions is None:
                    console.print("Review left pending; decide it later with memory-graph inbox.")
                    return
                state = resume_review(agent, owner=owner, thread_id=thread, decisions=decisions)
                console.print(render.commit_table(state.get("commit_results") or []))
                waiting = False
            text = _ask(console, Text("you> ", style="bold"))
            if text is None or text.strip() in _QUIT:
                return
            if not text.strip():
                continue
            inputs: Any = {"messages": [("user", text)]}
            state = agent.invoke(
                inputs,
                config,
                context=owner_context(owner),
                durability="sync",
            )
            console.print(Text("assistant> ", style="bold") + Text(_reply(state)))
            report = state.get("extraction") or {}
            if report.get("blocked") or report.get("proposed"):
                console.print(render.extraction_summary(report))
            waiting = bool(state.get("__interrupt__"))


def _reply(state: dict[str, Any]) -> str:
    for message in reversed(state.get("messages") or []):
        if message.type == "ai" and message.content:
            return str(message.content)
    return ""
