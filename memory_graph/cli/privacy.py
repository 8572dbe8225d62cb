"""``memory-graph forget``, ``sweep``, ``stats`` and ``reencrypt``: the privacy commands.

Registered on the main app by :func:`register`, with the helpers of :mod:`memory_graph.cli`
passed in (so this module never imports the CLI module, which may be ``__main__``).
"""

# No ``from __future__ import annotations`` here: typer reads these annotations at run time.

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import asdict
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ..errors import ValidationError
from ..identity import Owner
from .core import CleanCommand

if TYPE_CHECKING:
    from ..storage import MemoryStore

__all__ = ["register", "stats_rows"]

UserOpt = Annotated[
    str | None,
    typer.Option(
        "--user", "-u", envvar="MEMORY_GRAPH_USER", help="The user id (the memory's owner)."
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
DaysOpt = Annotated[
    int | None,
    typer.Option(help="Keep audit content this many days (default: 365)."),
]
IdleOpt = Annotated[
    int | None,
    typer.Option(help="Delete graph threads idle this many days (default: keep them)."),
]


MAX_DAYS = 36_600
"""The longest period a command takes (about a century)."""


def _days(name: str, value: int | None) -> timedelta | None:
    """A retention period in days as a ``timedelta``: 1..36600, or ``None`` when not given.

    0 is refused: a period of 0 days would delete everything of its kind, every user's, at once.
    """
    if value is None:
        return None
    if value < 1 or value > MAX_DAYS:
        raise ValidationError(f"{name} must be in 1..{MAX_DAYS} days")
    return timedelta(days=value)


def stats_rows(store: "MemoryStore", owner: Owner, *, days: int, by: str) -> list[dict[str, Any]]:
    """The user's audit trail counted per period, target kind and action (no content).

    Also the per-turn counters kept by :meth:`~memory_graph.MemoryStore.record_turn_metrics`
    (blocks by category, drops, recall hits), as ``target_kind = "turn"`` rows.
    """
    if by not in ("day", "week", "month"):
        raise ValidationError("--by must be day, week or month")
    if days < 1 or days > 36_600:
        raise ValidationError("--days must be in 1..36600")
    since = store.clock() - timedelta(days=days)
    return store.audit_summary(owner, since=since, by=by)


def register(
    app: typer.Typer,
    *,
    open_store: Callable[[typer.Context], AbstractContextManager["MemoryStore"]],
    make_owner: Callable[[str | None, str | None, str | None], Owner],
    console: Console,
) -> None:
    """Add the ``forget``, ``sweep``, ``stats`` and ``reencrypt`` commands to ``app``."""

    @app.command(cls=CleanCommand)
    def forget(
        ctx: typer.Context,
        user: UserOpt = None,
        yes: YesOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Erase a user everywhere: memory, proposals, audit content and their graph threads."""
        owner = make_owner(user, None, None)
        if not yes and not typer.confirm(
            f"Erase every memory, proposal, audit entry and thread of user {owner.user_id!r}"
            " (all workspaces and agents)? This cannot be undone",
            default=False,
        ):
            console.print("Nothing was erased.")
            raise typer.Exit(1)
        with open_store(ctx) as store:
            report = store.forget_user(owner)
        out = {**asdict(report), "total": report.total}
        if as_json:
            console.out(json.dumps(out, sort_keys=True), highlight=False)
            return
        console.print(
            f"Erased user scope {report.scope_id}: {report.total} rows, "
            f"{report.threads} threads ({report.checkpoint_rows} checkpoint rows)."
        )
        for table, n in sorted(report.rows.items()):
            console.print(f"  {table}: {n}")

    @app.command(cls=CleanCommand)
    def sweep(
        ctx: typer.Context,
        proposal_days: Annotated[
            int, typer.Option(help="Keep decided proposals this many days.")
        ] = 30,
        record_days: Annotated[
            int, typer.Option(help="Keep removed or expired records this many days.")
        ] = 30,
        audit_days: DaysOpt = 365,
        thread_idle_days: IdleOpt = None,
        batch_size: Annotated[int, typer.Option(help="Rows per transaction.")] = 1000,
        yes: YesOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Apply retention to every user: expire, delete old proposals, records and threads.

        It deletes data of every user, so it asks first; pass --yes in scheduled jobs.
        """
        kwargs: dict[str, Any] = {
            "proposal_retention": _days("--proposal-days", proposal_days),
            "record_retention": _days("--record-days", record_days),
            "audit_retention": _days("--audit-days", audit_days),
            "thread_idle": _days("--thread-idle-days", thread_idle_days),
            "batch_size": batch_size,
        }
        threads = (
            f", graph threads idle for {thread_idle_days} days"
            if thread_idle_days is not None
            else ""
        )
        if not yes and not typer.confirm(
            f"Delete, for every user, decided proposals older than {proposal_days} days, removed"
            f" records older than {record_days} days{threads}, and trim audit content older"
            f" than {audit_days} days? This cannot be undone",
            default=False,
            err=True,  # the question never mixes with --json output
        ):
            console.print("Nothing was deleted.")
            raise typer.Exit(1)
        with open_store(ctx) as store:
            report = store.sweep(**kwargs)
        if as_json:
            console.out(json.dumps(asdict(report), sort_keys=True), highlight=False)
            return
        for name, n in asdict(report).items():
            console.print(f"{name.replace('_', ' ')}: {n}")

    @app.command(cls=CleanCommand)
    def stats(
        ctx: typer.Context,
        user: UserOpt = None,
        days: Annotated[int, typer.Option(help="How far back, in days.")] = 30,
        by: Annotated[str, typer.Option(help="Period: day, week or month.")] = "day",
        as_json: JsonOpt = False,
    ) -> None:
        """Summarise a user's audit trail: writes, rejections, expiries, blocks by category."""
        owner = make_owner(user, None, None)
        with open_store(ctx) as store:
            rows = stats_rows(store, owner, days=days, by=by)
        if as_json:
            console.out(json.dumps(rows, sort_keys=True, default=str), highlight=False)
            return
        table = Table("period", "kind", "action", "count", title=f"audit trail, last {days} days")
        for r in rows:
            table.add_row(str(r["period"]), r["target_kind"], r["action"], str(r["n"]))
        console.print(table if rows else "No audit entries in this period.")

    @app.command(cls=CleanCommand)
    def reencrypt(
        ctx: typer.Context,
        thread: Annotated[
            str | None, typer.Option("--thread", help="Only this thread (default: all).")
        ] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Encrypt checkpoints written before the key ($MEMORY_GRAPH_CHECKPOINT_KEY)."""
        from nodes import open_checkpointer, reencrypt_checkpoints
        from nodes._encryption import checkpoint_key

        from ..errors import ConfigurationError

        if checkpoint_key() is None:
            raise ConfigurationError(
                "set MEMORY_GRAPH_CHECKPOINT_KEY to the key the checkpoints are encrypted with"
            )
        with open_store(ctx) as store, open_checkpointer(store) as saver:
            report = reencrypt_checkpoints(saver, thread_id=thread)
        if as_json:
            console.out(json.dumps(asdict(report), sort_keys=True), highlight=False)
            return
        for name, n in asdict(report).items():
            console.print(f"{name}: {n}")
