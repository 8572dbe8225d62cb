"""The ``memory-graph`` command line: demo, chat, inbox, show, export, import, forget, sweep
and stats.

This is the application layer: it may import the LangGraph layer (``nodes``), but only
inside the commands that need it, so ``memory-graph --help`` stays fast.

Every failure ends the command with one red line, ``error: <message>``, and exit code 2,
never a traceback (:func:`memory_graph.cli.core.run`); ``inbox decide`` exits 1 when a
decision was refused. Stored text reaches the terminal only through the rendering rule.

The database is ``--dsn``, else ``$MEMORY_GRAPH_DSN``, else the embedded PostgreSQL
server under the user's data directory (``--data-dir`` or ``$MEMORY_GRAPH_DATA_DIR`` to
move it); ``--dsn`` and ``--data-dir`` may also follow the command. Commands run the
store's idempotent ``setup()`` before they read or write.
"""

# No ``from __future__ import annotations`` here: typer reads these annotations at run time.

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from ..errors import ValidationError
from ..identity import Owner
from ..safetext import terminal_text
from . import core, render
from . import privacy as _cli_privacy
from .core import Settings, check_dsn, check_text, parse_json

if TYPE_CHECKING:
    from ..storage import MemoryStore

__all__ = ["app", "main"]

# Off a terminal (pipes, CI logs) rich would fold tables at 80 columns; 120 keeps them readable.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120
console = Console(highlight=False, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, width=_WIDTH)

app = typer.Typer(
    cls=core.CleanGroup,
    name="memory-graph",
    help="Governed long-term user memory for LangGraph agents, on PostgreSQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
inbox_app = typer.Typer(
    cls=core.CleanGroup,
    help="Pending proposals of an owner across threads, and deciding them.",
    no_args_is_help=False,
)
app.add_typer(inbox_app, name="inbox")


# -- shared options --------------------------------------------------------------------------

UserOpt = Annotated[
    str | None,
    typer.Option(
        "--user", "-u", envvar="MEMORY_GRAPH_USER", help="The user id (the memory's owner)."
    ),
]
WorkspaceOpt = Annotated[
    str | None,
    typer.Option("--workspace", "-w", help="Workspace: a project id or an absolute path."),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="Assistant preset name.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]


def fail(message: str) -> NoReturn:
    """Print ``error: <message>`` as one red line on stderr and exit with code 2.

    Args:
        message: the error text; it goes through the terminal rule and is capped.

    Raises:
        typer.Exit: always, with code 2.
    """
    core.fail(err_console, message)


def make_owner(user: str | None, workspace: str | None, agent: str | None) -> Owner:
    """Build the owner from the ``--user``/``--workspace``/``--agent`` options.

    Raises:
        ValidationError: no user was given, an id is not valid UTF-8, blank or too long.
    """
    check_text("--user", user)
    check_text("--workspace", workspace)
    check_text("--agent", agent)
    if user is None:
        hint = " (or set MEMORY_GRAPH_USER)"
        if workspace or agent:
            raise ValidationError(
                "--workspace and --agent narrow a user's memory: pass --user too" + hint
            )
        raise ValidationError("--user is required: name the user whose memory to use" + hint)
    return Owner(user, workspace=workspace, agent=agent)


def settings(ctx: typer.Context) -> Settings:
    """The global options of this invocation."""
    root = ctx.find_root()
    obj = root.obj
    return obj if isinstance(obj, Settings) else Settings(None, None)


@contextmanager
def open_store(ctx: typer.Context) -> Iterator["MemoryStore"]:
    """Open the store on the selected database and run its idempotent ``setup()``.

    Yields:
        The open ``MemoryStore``; it is closed on exit.
    """
    from ..storage import MemoryStore

    s = settings(ctx)
    with MemoryStore.from_dsn(check_dsn(s.dsn), data_dir=s.data_dir, max_size=4) as store:
        store.setup()
        yield store


@app.callback()
def root(
    ctx: typer.Context,
    dsn: Annotated[
        str | None,
        typer.Option(
            "--dsn",
            envvar="MEMORY_GRAPH_DSN",
            show_envvar=True,
            help="PostgreSQL DSN. Default: the embedded server under the user's data directory.",
        ),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            "--data-dir",
            help="Data directory of the embedded server (when no DSN is given).",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Governed long-term user memory for LangGraph agents, on PostgreSQL.

    Nothing is written unless the user said it, the sensitive-data guard let it
    through, and a human approved it.
    """
    ctx.obj = Settings(check_dsn(dsn) or None, data_dir)


# -- demo ----------------------------------------------------------------------------------


@app.command(cls=core.CleanCommand)
def demo(
    ctx: typer.Context,
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="Demo user id. Default: a new unique id per run."),
    ] = None,
) -> None:
    """Offline two-session walkthrough: extraction, guard, approval, commit, recall.

    Session 1 and session 2 run in two separate OS processes on the same database
    (the embedded server unless --dsn is given). No API key is needed.
    """
    from .demo import run_demo

    s = settings(ctx)
    check_text("--user", user)
    raise typer.Exit(run_demo(console, dsn=s.dsn, data_dir=s.data_dir, user=user))


@app.command("demo-session", hidden=True, cls=core.CleanCommand)
def demo_session(
    session: Annotated[int, typer.Argument(min=1, max=2)],
    user: Annotated[str, typer.Option("--user", "-u")],
) -> None:
    """One session of the demo (run by ``demo`` in a child process)."""
    from .demo import run_session

    raise typer.Exit(run_session(console, session, user))


# -- chat ----------------------------------------------------------------------------------


@app.command(cls=core.CleanCommand)
def chat(
    ctx: typer.Context,
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    thread: Annotated[
        str | None,
        typer.Option("--thread", "-t", help="Thread id to continue. Default: a new thread."),
    ] = None,
) -> None:
    """Chat with the memory agent; approve, edit or reject each memory write here.

    Uses ChatOpenAI when OPENAI_API_KEY is set (OPENAI_BASE_URL and MEMORY_GRAPH_MODEL
    are honoured), else the offline model. Type /quit (or Ctrl-D) to leave. A failed turn
    (model endpoint or database down) prints one error line; type /retry to run it again.
    """
    from .chat import run_chat

    owner = make_owner(user, workspace, agent)
    check_text("--thread", thread)
    with open_store(ctx) as store:
        run_chat(console, store, owner, thread_id=thread, err_console=err_console)


# -- show / export / import ---------------------------------------------------------------


@app.command(cls=core.CleanCommand)
def show(
    ctx: typer.Context,
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    memory_md: Annotated[
        bool, typer.Option("--memory-md", help="Also print the derived MEMORY.md.")
    ] = False,
    context: Annotated[
        bool, typer.Option("--context", help="Also print the context block an agent loads.")
    ] = False,
    include_removed: Annotated[
        bool, typer.Option("--all", help="Include removed and expired records.")
    ] = False,
) -> None:
    """Show a user's profile, preferences and records."""
    owner = make_owner(user, workspace, agent)
    with open_store(ctx) as store:
        profile = store.get_profile(owner)
        console.print(render.profile_table(profile, store.get_persona(owner)))
        console.print(render.preferences_table(store.get_preferences(owner)))
        records = store.list_records(
            owner, kinds=["fact", "instruction", "experience"], include_inactive=include_removed
        )
        if records:
            console.print(render.records_table(records))
        else:
            console.print("No records (facts, instructions, experiences).")
        if context:
            block = render.lines_text(store.context_block(owner))
            console.print(Panel(block, title="context block"))
        if memory_md:
            console.print(Rule("MEMORY.md"))
            console.out(render.lines_text(store.memory_md(owner)).plain, highlight=False)


@app.command(cls=core.CleanCommand)
def export(
    ctx: typer.Context,
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write the JSON to this file instead of stdout."),
    ] = None,
) -> None:
    """Export a user's active memory as versioned JSON."""
    owner = make_owner(user, workspace, agent)
    with open_store(ctx) as store:
        document = store.export(owner)
    text = render.json_text(document) + "\n"
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
    err_console.print(render.cell(f"exported memory of {owner.user_id!r} to {out}"), soft_wrap=True)


def read_document(path: str) -> Any:
    """Read and parse a JSON import document (``-`` reads stdin).

    Raises:
        ValidationError: the file cannot be read, is not UTF-8 JSON, nests too deeply or
            holds a number too long to read.
    """
    shown = terminal_text(path)
    try:
        raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise ValidationError(f"cannot read {shown}: {reason}") from None
    try:
        return parse_json(shown, raw)
    except ValidationError as exc:
        raise ValidationError(f"{exc}; pass a file written by `memory-graph export`") from None


@app.command("import", cls=core.CleanCommand)
def import_(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="An export document (JSON); '-' reads stdin.")],
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import an export document as proposals; nothing is written until approved.

    The whole document is validated first. Decide the proposals with
    `memory-graph inbox decide`.
    """
    owner = make_owner(user, workspace, agent)
    document = read_document(file)
    with open_store(ctx) as store:
        proposals = store.import_document(owner, document)
    items = [render.proposal_dict(p) for p in proposals]
    if as_json:
        render.print_json(console, items)
        return
    console.print(render.proposals_table(items, title=f"{len(items)} proposal(s) created"))
    console.print(
        "Nothing is written yet. Decide each with: "
        "memory-graph inbox decide PROPOSAL_ID --user USER --approve (or --reject / --edit JSON)",
        markup=False,
    )


# -- inbox ---------------------------------------------------------------------------------


@inbox_app.callback(invoke_without_command=True)
def inbox(
    ctx: typer.Context,
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    thread: Annotated[
        str | None, typer.Option("--thread", "-t", help="Only this thread's proposals.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """List an owner's pending proposals across threads (oldest first)."""
    if ctx.invoked_subcommand is not None:
        return
    owner = make_owner(user, workspace, agent)
    check_text("--thread", thread)
    with open_store(ctx) as store:
        pending = store.list_pending(owner, thread_id=thread)
        expired = store.list_expired(owner, thread_id=thread)
    items = [render.proposal_dict(p) for p in pending]
    if as_json:
        render.print_json(console, items)
        return
    if not items:
        console.print("No pending proposals.")
    else:
        console.print(render.proposals_table(items, title=f"Inbox: {len(items)} pending"))
    if expired:
        old = [render.proposal_dict(p) for p in expired]
        title = f"Expired undecided: {len(old)} (nothing was written; propose again to decide)"
        console.print(render.proposals_table(old, title=title))


@inbox_app.command("decide", cls=core.CleanCommand)
def inbox_decide(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(help="The proposal to decide.")],
    approve: Annotated[bool, typer.Option("--approve", help="Approve it.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Reject it.")] = False,
    edit: Annotated[
        str | None,
        typer.Option("--edit", help="Approve with edited args, a JSON object (guarded again)."),
    ] = None,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Reason, kept with a rejection.")
    ] = None,
    user: UserOpt = None,
    workspace: WorkspaceOpt = None,
    agent: AgentOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Approve, edit or reject one pending proposal.

    When the proposal waits in a graph thread's review, the thread is resumed through
    the out-of-band approval API once every proposal of that review is decided.
    """
    from .inbox import decide_one

    chosen = [name for name, on in (("approve", approve), ("reject", reject)) if on]
    if edit is not None:
        chosen.append("edit")
    if len(chosen) != 1:
        raise ValidationError("choose exactly one of --approve, --reject or --edit JSON")
    check_text("PROPOSAL_ID", proposal_id)
    check_text("--message", message)
    args: dict[str, Any] | None = None
    if edit is not None:
        parsed = parse_json("--edit", check_text("--edit", edit) or "")
        if not isinstance(parsed, dict):
            raise ValidationError("--edit must be a JSON object of the operation's args")
        args = parsed
    owner = make_owner(user, workspace, agent)
    with open_store(ctx) as store:
        # With --json, stdout carries only the JSON: progress notes go to stderr.
        notes = err_console if as_json else console
        outcome = decide_one(
            notes, store, owner, proposal_id, chosen[0], args=args, message=message
        )
    if as_json:
        render.print_json(console, outcome.results)
    else:
        console.print(render.commit_table(outcome.results))
    if outcome.refused is not None:
        err_console.print(Text(core.error_line(outcome.refused), style="bold red"), soft_wrap=True)
        raise typer.Exit(1)


# -- privacy: forget, sweep, stats (memory_graph/_cli_privacy.py) ---------------------------

_cli_privacy.register(app, open_store=open_store, make_owner=make_owner, console=console)


# -- entry point -----------------------------------------------------------------------------


def main() -> None:
    """Run the CLI: every failure is one ``error:`` line (exit 2), never a traceback."""
    sys.exit(core.run(app, err_console))


if __name__ == "__main__":
    main()
