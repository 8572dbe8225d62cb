"""Rich renderings shared by the CLI commands (pure: values in, renderables out).

The rendering rule for the terminal: every stored or model-produced string goes through
:func:`memory_graph.safetext.terminal_text` (one line, control and format characters shown
as ``\\uXXXX`` escapes, so no raw ESC, CSI or bidi override from stored data reaches the
terminal) and is passed to rich as plain ``Text``, never as markup, so a value such as
``[bold]`` is shown as typed. JSON output escapes the same characters (``json_text``).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..safetext import terminal_text
from ..types import Persona, Preference, Profile, Proposal, Record

__all__ = [
    "cell",
    "commit_table",
    "extraction_summary",
    "json_text",
    "lines_text",
    "preferences_table",
    "print_json",
    "profile_table",
    "proposal_dict",
    "proposals_table",
    "records_table",
    "short_json",
    "utc",
]


def cell(value: object, style: str = "") -> Text:
    """One value as rich ``Text`` through the terminal rule (one line, no control characters)."""
    return Text(terminal_text("" if value is None else value), style=style)


def lines_text(value: object, style: str = "") -> Text:
    """Multi-line text (a model reply, a context block): each line through the terminal rule."""
    text = "" if value is None else str(value)
    return Text("\n".join(terminal_text(line) for line in text.splitlines()), style=style)


# Characters json.dumps(ensure_ascii=False) leaves raw but a terminal must not receive.
_JSON_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """JSON of ``value`` that is safe for a terminal and still parses to the same value.

    Non-ASCII text stays readable; control, format, separator and surrogate characters (which
    can only occur inside JSON strings) are written as ``\\uXXXX`` escapes.
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=True)
    return "".join(
        _json_escape(ch) if ord(ch) >= 0x7F and unicodedata.category(ch) in _JSON_HIDDEN else ch
        for ch in text
    )


def utc(value: datetime | None) -> str:
    """Render a timestamp as ``YYYY-MM-DDTHH:MM:SSZ`` (``-`` for ``None``)."""
    if value is None:
        return "-"
    return value.isoformat(timespec="seconds").replace("+00:00", "Z")


def short_json(value: Any, *, limit: int = 120) -> str:
    """Compact JSON of ``value``, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def proposal_dict(proposal: Proposal) -> dict[str, Any]:
    """A store proposal as the plain JSON the CLI prints (``--json``) and tabulates."""
    return {
        "proposal_id": proposal.id,
        "operation": proposal.operation,
        "level": proposal.level,
        "target_id": proposal.target_id,
        "base_version": proposal.base_version,
        "args": dict(proposal.args),
        "diff": proposal.diff,
        "evidence": dict(proposal.evidence),
        "status": proposal.status,
        "thread_id": proposal.evidence.get("thread_id"),
        "expires_at": utc(proposal.expires_at),
    }


def proposals_table(
    items: Sequence[Mapping[str, Any]], *, title: str, show_args: bool = False
) -> Table:
    """A table of proposals or interrupt action requests.

    Args:
        items: mappings with ``proposal_id``, ``operation`` (or ``name``), ``args``,
            ``diff`` (or ``description``), ``evidence`` and ``expires_at``; ``thread_id``
            is shown when present.
        title: the table title.
        show_args: show the raw args instead of the human-readable diff.

    Returns:
        The rich table, one row per item, in order.
    """
    table = Table(title=title, title_justify="left", show_lines=True, expand=False)
    table.add_column("#", justify="right", style="dim")
    table.add_column("proposal / thread / expires", no_wrap=True)
    table.add_column("operation", no_wrap=True, style="magenta")
    table.add_column("args" if show_args else "diff", overflow="fold", min_width=24)
    show_quote = any((item.get("evidence") or {}).get("quote") for item in items)
    if show_quote:
        table.add_column("evidence (quote)", overflow="fold", style="green")
    for index, item in enumerate(items, start=1):
        evidence = item.get("evidence") or {}
        ident = cell(item.get("proposal_id", ""), "cyan")
        if item.get("thread_id"):
            ident.append(f"\nthread {terminal_text(item['thread_id'])}", style="dim")
        expires = terminal_text(item.get("expires_at") or "-")
        if len(expires) > 20 and expires.endswith("Z"):
            expires = expires[:19] + "Z"  # whole seconds are enough here
        ident.append(f"\nexpires {expires}", style="dim")
        row = [Text(str(index)), ident, cell(item.get("operation") or item.get("name") or "")]
        if show_args:
            row.append(cell(short_json(item.get("args") or {}, limit=400)))
        else:
            row.append(cell(item.get("diff") or item.get("description") or ""))
        if show_quote:
            row.append(cell(evidence.get("quote") or "-"))
        table.add_row(*row)
    return table


def commit_table(results: Sequence[Mapping[str, Any]], *, title: str = "Commit results") -> Table:
    """A table of commit results (``nodes`` commit-result JSON or ``CommitResult`` fields)."""
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("proposal", no_wrap=True, style="cyan")
    table.add_column("operation", style="magenta")
    table.add_column("decision")
    table.add_column("status", style="bold")
    table.add_column("write", style="dim")
    table.add_column("version", justify="right")
    table.add_column("message", overflow="fold")
    colours = {"approved": "green", "rejected": "yellow"}
    for r in results:
        status = str(r.get("status") or "")
        table.add_row(
            cell(r.get("proposal_id") or ""),
            cell(r.get("operation") or ""),
            cell(r.get("decision") or "-"),
            cell(status, colours.get(status, "red")),
            cell(r.get("write_status") or "-"),
            cell("-" if r.get("version") is None else r.get("version")),
            cell(r.get("message") or ""),
        )
    return table


def extraction_summary(report: Mapping[str, Any]) -> RenderableType:
    """Summarise an extraction report: counts and blocked categories, never content."""
    categories: Mapping[str, int] = report.get("blocked_categories") or {}
    blocked = int(report.get("blocked") or 0)
    lines = [
        Text(
            f"human messages read: {report.get('messages', 0)}   "
            f"candidates: {report.get('candidates', 0)}   "
            f"proposals: {report.get('proposed', 0)}   "
            f"already stored: {report.get('unchanged', 0)}"
        )
    ]
    if blocked:
        detail = ", ".join(
            f"{terminal_text(name)} x{count}" for name, count in sorted(categories.items())
        )
        lines.append(
            Text(
                f"guard blocked {blocked} candidate(s): {detail} (content not kept)",
                style="bold red",
            )
        )
    else:
        lines.append(Text("guard blocked 0 candidates", style="green"))
    return Panel(Group(*lines), title="Extraction", title_align="left", expand=False)


def profile_table(profile: Profile, persona: Persona | None) -> Table:
    """The profile fields (and the persona, when one is stored)."""
    table = Table(
        title="Profile",
        title_justify="left",
        caption=f"revision {profile.revision}, updated {utc(profile.updated_at)}",
        caption_justify="left",
    )
    table.add_column("field", style="cyan")
    table.add_column("value", overflow="fold")
    for name, value in sorted(profile.fields.items()):
        table.add_row(cell(name), cell(value))
    if persona is not None:
        for label, text in (
            ("assistant values", persona.assistant_values),
            ("assistant identity", persona.assistant_identity),
            ("bootstrap", persona.bootstrap),
        ):
            if text:
                table.add_row(Text(label, style="magenta"), cell(text))
    return table


def preferences_table(preferences: Sequence[Preference]) -> Table:
    """The effective preferences; shadowed ones are marked ``overridden``."""
    table = Table(title="Preferences", title_justify="left")
    for name in ("key", "value", "scope", "source", "revision", "updated", "expires"):
        table.add_column(name, overflow="fold", style="cyan" if name == "key" else None)
    for p in preferences:
        scope = p.identity.level + (" (overridden)" if p.overridden else "")
        table.add_row(
            cell(p.key),
            cell(p.value),
            cell(scope, "dim" if p.overridden else ""),
            cell(p.source),
            Text(str(p.revision)),
            Text(utc(p.updated_at)),
            Text(utc(p.expires_at)),
        )
    return table


def records_table(records: Sequence[Record]) -> Table:
    """Memories (facts, instructions, experiences) with their trust and version."""
    table = Table(title="Records", title_justify="left")
    for name in ("id", "kind", "content", "trust", "sensitivity", "scope", "v", "status"):
        table.add_column(name, overflow="fold", style="cyan" if name == "id" else None)
    for r in records:
        table.add_row(
            cell(r.id),
            cell(r.kind),
            cell(r.content),
            cell(r.trust),
            cell(r.sensitivity, "red" if r.sensitivity == "sensitive" else ""),
            cell(r.identity.level),
            Text(str(r.version)),
            Text(r.status),
        )
    return table


def print_json(console: Console, value: Any) -> None:
    """Print ``value`` as indented JSON, unstyled, so it can be piped."""
    console.out(json_text(value), highlight=False)
