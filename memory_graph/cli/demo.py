"""``memory-graph demo``: the offline two-session walkthrough, in two OS processes.

The parent opens the database once (starting the embedded server when no DSN is given),
runs its migrations, and then runs ``memory-graph demo-session 1`` and ``... 2`` as child
processes with ``MEMORY_GRAPH_DSN`` set, so the second session shares nothing with the
first but the database: its memory and its LangGraph checkpoints.

Both sessions use the real prebuilt graph (``nodes.create_memory_agent``) with the
offline chat model and the Postgres checkpointer, with ``durability="sync"``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from ..identity import Owner
from . import render

__all__ = ["SESSION_1", "SESSION_2", "run_demo", "run_session", "scripted_decisions"]

SESSION_1 = (
    "Hi! Call me Mei. Please reply in Chinese. Keep your answers short. I use Neovim. "
    "My shell is zsh. Remember that I have diabetes. "
    "Remember that my card number is 4111 1111 1111 1111."
)
"""What the demo user says in session 1: a name, preferences, and two sensitive facts."""

SESSION_2 = "Good morning! Can you help me plan my day?"
"""What the demo user says in session 2, in a new process and a new thread."""

_EDIT = {"tools.editor": "Neovim (LazyVim)"}
_REJECT = {"tools.shell": "not needed by this assistant"}


def _thread(user: str, session: int) -> str:
    return f"{user}-session-{session}"


def run_demo(console: Console, *, dsn: str | None, data_dir: Path | None, user: str | None) -> int:
    """Run both sessions as child processes and return the exit code.

    Args:
        console: where the walkthrough is printed.
        dsn: the database, or ``None`` for ``$MEMORY_GRAPH_DSN`` / the embedded server.
        data_dir: the embedded server's data directory (``None`` for the default).
        user: the demo user id; a new unique id by default, so re-runs start afresh.

    Returns:
        0 when both sessions succeed, else the first failing session's exit code.
    """
    from ..storage import MemoryStore

    started = time.monotonic()
    user = user or f"demo-{uuid.uuid4().hex[:10]}"
    where = "the server given by --dsn / MEMORY_GRAPH_DSN"
    if not (dsn or os.environ.get("MEMORY_GRAPH_DSN")):
        from ..storage.server.embedded import default_data_dir

        where = f"the embedded server in {data_dir or default_data_dir()}"
    console.print(Rule("memory-graph demo (offline)"))
    console.print(Text(f"user id: {user}   database: {where}"))
    # The parent keeps the store (and so an embedded server) open while the children run.
    with MemoryStore.from_dsn(dsn, data_dir=data_dir, max_size=1) as store:
        store.setup()
        env = {
            **os.environ,
            "MEMORY_GRAPH_DSN": store.dsn,
            "COLUMNS": str(console.width if console.is_terminal else 120),
        }
        for session in (1, 2):
            command = [sys.executable, "-m", "memory_graph.cli", "demo-session", str(session)]
            done = subprocess.run([*command, "--user", user], env=env, check=False)
            if done.returncode != 0:
                console.print(Text(f"session {session} failed", style="bold red"))
                return done.returncode
    console.print(Rule())
    console.print(
        Text(
            f"demo finished in {time.monotonic() - started:.1f}s. Inspect the stored memory "
            f"with: memory-graph show --user {user} --memory-md",
            style="bold green",
        )
    )
    return 0


def scripted_decisions(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo's decisions: edit the editor, reject the shell, approve the rest.

    Args:
        request: the review interrupt's value.

    Returns:
        One decision per action request, in order.
    """
    decisions: list[dict[str, Any]] = []
    for item in request["action_requests"]:
        key = str(item["args"].get("key") or "")
        decision: dict[str, Any] = {"type": "approve", "proposal_id": item["proposal_id"]}
        if item["operation"] == "set_preference" and key in _EDIT:
            decision = {
                "type": "edit",
                "proposal_id": item["proposal_id"],
                "args": {**item["args"], "value": _EDIT[key]},
            }
        elif item["operation"] == "set_preference" and key in _REJECT:
            decision = {**decision, "type": "reject", "message": _REJECT[key]}
        decisions.append(decision)
    return decisions


def _decisions_table(decisions: list[dict[str, Any]]) -> Table:
    table = Table(title="Decisions (scripted)", title_justify="left")
    for name in ("proposal", "decision", "edited args / message"):
        table.add_column(name, overflow="fold")
    for d in decisions:
        detail = render.short_json(d["args"]) if "args" in d else str(d.get("message") or "")
        table.add_row(Text(d["proposal_id"]), Text(d["type"], style="bold"), Text(detail))
    return table


def run_session(console: Console, session: int, user: str) -> int:
    """Run one demo session in this process and return its exit code.

    Args:
        console: where the session is printed.
        session: 1 (state preferences, approve) or 2 (a new process that knows the user).
        user: the demo user id.

    Returns:
        0 on success; 1 when session 2 does not show the remembered name.
    """
    from nodes import OfflineChatModel, create_memory_agent, open_checkpointer, owner_context

    from ..storage import MemoryStore

    owner = Owner(user)
    thread = _thread(user, session)
    config: Any = {"configurable": {"thread_id": thread}}
    with MemoryStore.from_dsn(max_size=2) as store, open_checkpointer(store) as saver:
        agent = create_memory_agent(OfflineChatModel(), store, checkpointer=saver)
        title = f"Session {session}: process {os.getpid()}, thread {thread}"
        console.print(Rule(title, style="cyan"))
        text = SESSION_1 if session == 1 else SESSION_2
        console.print(Text("user> ", style="bold") + Text(text))
        inputs: Any = {"messages": [("user", text)]}
        state = agent.invoke(inputs, config, context=owner_context(owner), durability="sync")
        reply = str(state["messages"][-1].content)
        if session == 1:
            console.print(Text("assistant> ", style="bold") + Text(reply))
            return _approve(console, agent, store, owner, thread, state)
        return _recall(console, agent, user, state, reply)


def _approve(
    console: Console, agent: Any, store: Any, owner: Owner, thread: str, state: dict[str, Any]
) -> int:
    from nodes import pending_review, resume_review

    console.print(render.extraction_summary(state.get("extraction") or {}))
    if not state.get("__interrupt__"):
        console.print("Nothing to approve: all of it is already stored for this user.")
        return 0
    interrupt_id, request = pending_review(agent, thread, owner=owner)
    console.print(
        Text(
            f"Approval interrupt {interrupt_id}: the graph paused in review_memories; "
            "nothing is written yet.",
            style="bold yellow",
        )
    )
    console.print(
        render.proposals_table(
            request["action_requests"], title="interrupt: action_requests", show_args=True
        )
    )
    configs = ", ".join(
        f"{c['action_name']}: {'/'.join(c['allowed_decisions'])}" for c in request["review_configs"]
    )
    console.print(Text(f"review_configs: {configs}", style="dim"))
    decisions = scripted_decisions(dict(request))
    console.print(_decisions_table(decisions))
    result = resume_review(agent, owner=owner, thread_id=thread, decisions=decisions)
    console.print(render.commit_table(result.get("commit_results") or []))
    console.print(render.preferences_table(store.get_preferences(owner)))
    profile = store.get_profile(owner)
    fields = ", ".join(f"{k}={v}" for k, v in sorted(profile.fields.items()))
    console.print(Text(f"profile (revision {profile.revision}): {fields}"))
    return 0


def _recall(console: Console, agent: Any, user: str, state: dict[str, Any], reply: str) -> int:
    earlier = agent.get_state({"configurable": {"thread_id": _thread(user, 1)}})
    count = len(earlier.values.get("messages") or [])
    console.print(
        Text(
            f"A fresh process: session 1's thread is read back from the Postgres checkpointer "
            f"({count} messages); the memory below was loaded by load_user_context.",
            style="dim",
        )
    )
    console.print(Panel(Text(state.get("user_context") or ""), title="user_context", expand=False))
    console.print(Text("assistant> ", style="bold") + Text(reply))
    if "Mei" not in reply:
        console.print(Text("the agent did not use the remembered name", style="bold red"))
        return 1
    checks = ["addressed the user by the remembered name (Mei)"]
    if any("\u4e00" <= ch <= "\u9fff" for ch in reply):
        checks.append("replied in Chinese, as the stored language preference asks")
    for check in checks:
        console.print(Text(f"ok: {check}", style="bold green"))
    return 0
