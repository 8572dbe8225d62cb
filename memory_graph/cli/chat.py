"""``memory-graph chat``: an interactive loop over the prebuilt agent, approvals at the terminal.

The chat model is ``ChatOpenAI`` when ``OPENAI_API_KEY`` is set (``nodes.chat_model_from_env``),
with the LLM extractor on the same model; otherwise the offline model and the offline
pattern extractor. Each review interrupt is decided here, proposal by proposal, and the
thread is resumed through ``nodes.resume_review``.

A failed turn does not end the session: the model endpoint unreachable, the database gone,
or a refused resume prints one ``error:`` line, and the user can go on or type ``/retry``
(the failed turn runs again from its last checkpoint; after a turn that succeeded there is
nothing to retry). A refused review decision (an edit the guard blocks, say) asks the review
again by itself. After a database error the checkpointer is reopened on the next attempt.
Commands (``/help``, ``/retry``, ``/quit``) never reach the model; an unknown ``/word`` is
refused. An edit changes one field (``content=...``) or replaces the arguments (a JSON
object). Stored and model text reaches the terminal only through the terminal rule (no raw
control character).
"""

from __future__ import annotations

import json
import uuid
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from ..errors import (
    ConfigurationError,
    MemoryGraphError,
    ScopeError,
    StorageUnavailableError,
)
from ..identity import Owner
from ..safetext import terminal_text
from . import render
from .core import error_line

if TYPE_CHECKING:
    from ..storage import MemoryStore

__all__ = ["ask_decisions", "run_chat"]

_QUIT = {"/quit", "/exit", "/q"}
_RETRY = "/retry"
_HELP = {"/help", "/?"}
HELP = (
    "commands: /retry runs a failed turn again, /help shows this, /quit leaves.\n"
    "in a review: approve, edit or reject each proposal (a prefix is enough); an edit takes\n"
    "field=value to change one field, or a JSON object with every argument."
)


def parse_edit(raw: str, args: dict[str, Any]) -> dict[str, Any] | str:
    """The edited arguments from one answer, or a message saying what is wrong.

    Empty keeps ``args``; ``{...}`` replaces them (a JSON object); ``field=value`` changes one
    existing field (the value is JSON when it parses as JSON, else the text as typed).

    >>> parse_edit("content=Uses Neovim", {"kind": "fact", "content": "Uses Vim"})
    {'kind': 'fact', 'content': 'Uses Neovim'}
    >>> parse_edit("colour=red", {"content": "x"})
    "no field 'colour': the fields are content"
    """
    text = raw.strip()
    if not text:
        return dict(args)
    if text.startswith("{"):
        try:
            edited = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"not JSON: {exc.msg}"
        return edited if isinstance(edited, dict) else "the args must be a JSON object"
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep:
        return "type field=value, a JSON object, or nothing to keep the arguments"
    if name not in args:
        return f"no field {name!r}: the fields are {', '.join(sorted(args))}"
    try:
        parsed: Any = json.loads(value)
    except json.JSONDecodeError:
        parsed = value.strip()
    if isinstance(args[name], str) and not isinstance(parsed, str):
        parsed = value.strip()  # a text field stays text ("content=42" is the text "42")
    return {**args, name: parsed}


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
        console.print(Text(f"[{index}] {terminal_text(item['diff'])}", style="bold"))
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
            current = terminal_text(json.dumps(item["args"], ensure_ascii=False))
            console.print(Text(f"    current args: {current}", style="dim"))
            while True:
                raw = _ask(console, "    edit (field=value, a JSON object, empty keeps them): ")
                if raw is None:
                    return None
                edited = parse_edit(raw, dict(item["args"]))
                if isinstance(edited, dict):
                    break
                console.print(Text(f"    {terminal_text(edited)}", style="red"))
            decision["args"] = edited
        elif matches[0] == "reject":
            reason = _ask(console, "    reason (optional): ")
            if reason and reason.strip():
                decision["message"] = reason.strip()
        decisions.append(decision)
    return decisions


def _is_database_error(exc: BaseException) -> bool:
    if isinstance(exc, StorageUnavailableError):
        return True
    return type(exc).__module__.split(".")[0] in ("psycopg", "psycopg_pool")


def _is_fatal(exc: BaseException) -> bool:
    # Errors no retry can fix: another principal's thread, a missing owner, bad configuration.
    return isinstance(exc, ScopeError | ConfigurationError) and not _is_database_error(exc)


def _describe(exc: BaseException) -> str:
    if _is_database_error(exc):
        what = "the database is unavailable"
    elif isinstance(exc, MemoryGraphError):
        what = "the turn was refused"
    elif type(exc).__module__.split(".")[0] in ("openai", "httpx", "httpcore"):
        what = "the model endpoint failed"
    else:
        what = "the turn failed"
    return f"{what} ({type(exc).__name__}): {exc}"


def run_chat(
    console: Console,
    store: MemoryStore,
    owner: Owner,
    *,
    thread_id: str | None = None,
    err_console: Console | None = None,
) -> None:
    """Run the chat loop until ``/quit`` or end of input.

    Args:
        console: the terminal.
        store: the open store.
        owner: who is chatting.
        thread_id: the thread to continue; a new one by default.
        err_console: where ``error:`` lines go (default: ``console``).

    Raises:
        ScopeError: the thread belongs to another principal.
        ConfigurationError: the model or extractor is configured wrongly.
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

    from ..extraction import create_extractor

    errors = err_console or console
    model: Any = chat_model_from_env()
    extractor: Any = None
    if model is not None:
        method: Any = structured_method_from_env()
        extractor = create_extractor(model, method=method)
        label = f"ChatOpenAI ({terminal_text(getattr(model, 'model_name', '?'))})"
    else:
        model = OfflineChatModel()
        label = "the offline model (set OPENAI_API_KEY for ChatOpenAI)"
    thread = thread_id or f"chat-{uuid.uuid4().hex[:12]}"
    config: Any = {"configurable": {"thread_id": thread}}
    console.print(
        Text(f"thread {terminal_text(thread)}, {label}. Type /quit to leave.", style="dim")
    )
    stack = ExitStack()
    agent: Any = None
    waiting = False
    last_text: str | None = None
    failed = False  # the last turn failed: /retry runs it again

    def report(exc: BaseException, *, in_review: bool = False) -> None:
        nonlocal agent, failed
        errors.print(Text(error_line(_describe(exc)), style="bold red"), soft_wrap=True)
        if _is_database_error(exc):
            stack.close()  # reopened on the next attempt
            agent = None
        if in_review and agent is not None:
            console.print(Text("    the review is asked again.", style="dim"))
            return
        failed = not in_review or agent is None
        console.print(
            Text("    the session goes on: type /retry to run the turn again.", style="dim")
        )

    def ensure() -> Any:
        nonlocal agent, waiting
        if agent is None:
            saver = stack.enter_context(open_checkpointer(store))
            agent = create_memory_agent(model, store, checkpointer=saver, extractor=extractor)
            waiting = bool(agent.get_state(config).interrupts)
        return agent

    def run_turn(text: str | None) -> None:
        nonlocal waiting, failed
        graph = ensure()
        if waiting:  # reopened on a thread whose review waits: decide it first
            return
        # /retry continues from the last checkpoint when the graph stopped mid-run;
        # otherwise the user's message is sent (again).
        resume = text is None and bool(graph.get_state(config).next)
        inputs: Any = None if resume else {"messages": [("user", last_text or "")]}
        state = graph.invoke(inputs, config, context=owner_context(owner), durability="sync")
        console.print(Text("assistant> ", style="bold") + render.lines_text(_reply(state)))
        report_ = state.get("extraction") or {}
        if report_.get("blocked") or report_.get("proposed"):
            console.print(render.extraction_summary(report_))
        waiting = bool(state.get("__interrupt__"))
        failed = False

    with stack:
        while True:
            try:
                # After a database error the checkpointer is reopened only when the user
                # acts again (a message or /retry), never in a loop.
                graph = ensure() if agent is not None or last_text is None else None
                if graph is not None and waiting:
                    _iid, request = pending_review(graph, thread, owner=owner)
                    console.print(
                        render.proposals_table(request["action_requests"], title="Review")
                    )
                    decisions = ask_decisions(console, dict(request))
                    if decisions is None:
                        console.print(
                            "Review left pending; decide it later with memory-graph inbox."
                        )
                        return
                    state = resume_review(graph, owner=owner, thread_id=thread, decisions=decisions)
                    console.print(render.commit_table(state.get("commit_results") or []))
                    waiting = False
            except Exception as exc:  # noqa: BLE001 - a failed step must not end the session
                if _is_fatal(exc):
                    raise
                report(exc, in_review=True)
                if agent is not None:
                    continue  # the database is there: ask the review again
            text = _ask(console, Text("you> ", style="bold"))
            if text is None or text.strip() in _QUIT:
                return
            command = text.strip().casefold()
            try:
                if command in _HELP:
                    console.print(Text(HELP, style="dim"))
                elif command == _RETRY:
                    if last_text is None or not failed:
                        console.print(
                            Text("    nothing to retry: the last turn did not fail", style="dim")
                        )
                    else:
                        run_turn(None)
                elif command.startswith("/") and " " not in command:
                    console.print(Text("    unknown command: type /help", style="red"))
                elif text.strip():
                    last_text = text
                    run_turn(text)
            except Exception as exc:  # noqa: BLE001 - a failed turn must not end the session
                if _is_fatal(exc):
                    raise
                report(exc)


def _reply(state: dict[str, Any]) -> str:
    for message in reversed(state.get("messages") or []):
        if message.type == "ai" and message.content:
            return str(message.content)
    return ""
