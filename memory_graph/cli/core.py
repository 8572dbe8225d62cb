"""The plumbing of the ``memory-graph`` command line: help, global options, input, errors.

- **Clean help.** typer 0.29 prints a type column (``<str>``, ``<bool>``) and wraps required
  arguments in braces (``{file}``). :class:`CleanCommand` and :class:`CleanGroup` show the
  conventional forms instead: ``TEXT``/``PATH``/``INTEGER`` for options that take a value,
  nothing for flags, ``FILE`` for an argument.
- **Global options anywhere.** ``--dsn`` and ``--data-dir`` are accepted before the command
  (``memory-graph --dsn X show``) and after it (``memory-graph show --dsn X``).
- **One error line.** :func:`run` turns every refusal into ``error: <message>`` on stderr and
  exit code 2, never a traceback: a :class:`~memory_graph.errors.MemoryGraphError`, a usage
  error, a database error, invalid UTF-8 in an argument, too deep or too large JSON. Messages
  go through the terminal rule and are capped (:func:`memory_graph.safetext.truncate`), so
  they never echo unbounded or control input. ``MEMORY_GRAPH_DEBUG=1`` re-raises unexpected
  exceptions with their traceback.
"""

# No ``from __future__ import annotations``: typer reads the annotations below at run time.

import inspect
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from ..errors import ConfigurationError, MemoryGraphError, ValidationError
from ..safetext import terminal_text, truncate

__all__ = [
    "MAX_ERROR_CHARS",
    "MAX_JSON_DEPTH",
    "CleanCommand",
    "CleanGroup",
    "Settings",
    "check_dsn",
    "check_text",
    "fail",
    "parse_json",
    "run",
]

MAX_ERROR_CHARS = 400
"""An error line quotes at most this many characters."""
MAX_JSON_DEPTH = 32
"""JSON read by the CLI (``import``, ``--edit``) nests at most this deep."""

_LABELS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "int range": "INTEGER"}


@dataclass(frozen=True)
class Settings:
    """Global options, shared by every command through the root context's ``obj``."""

    dsn: str | None
    data_dir: Path | None


def error_line(message: object) -> str:
    """``error: <message>`` on one line, through the terminal rule, capped."""
    return "error: " + truncate(terminal_text(message), MAX_ERROR_CHARS)


def fail(console: Console, message: object) -> NoReturn:
    """Print ``error: <message>`` as one red line and exit with code 2.

    Raises:
        typer.Exit: always, with code 2.
    """
    console.print(Text(error_line(message), style="bold red"), soft_wrap=True)
    raise typer.Exit(2)


def check_text(name: str, value: str | None) -> str | None:
    """Refuse an argument that is not valid UTF-8 (a lone surrogate from the OS's argv).

    Raises:
        ValidationError: ``value`` holds a surrogate.
    """
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError(
            f"{name} is not valid UTF-8: {truncate(terminal_text(value), 60)}"
        ) from None
    return value


_DSN_HINT = "use postgresql://USER@HOST:PORT/DBNAME or key=value pairs ('host=... dbname=...')"


def check_dsn(dsn: str | None) -> str | None:
    """Refuse a DSN that is not a PostgreSQL connection string (without echoing it: it may
    hold a password).

    Raises:
        ConfigurationError: another scheme, invalid UTF-8, or unparseable key=value pairs.
    """
    if dsn is None or not dsn.strip():
        return None
    if "://" in dsn:
        scheme = dsn.split("://", 1)[0]
        if scheme.lower() not in ("postgresql", "postgres"):
            raise ConfigurationError(
                f"--dsn: {truncate(terminal_text(scheme), 24)!r} is not a PostgreSQL URI scheme; "
                + _DSN_HINT
            )
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(dsn)
    except (psycopg.Error, UnicodeError, ValueError):
        raise ConfigurationError(
            "--dsn is not a PostgreSQL connection string; " + _DSN_HINT
        ) from None
    return dsn


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                return depth
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(name: str, raw: str) -> Any:
    """Parse JSON given on the command line or in a file, within the CLI's limits.

    Raises:
        ValidationError: not JSON, nested deeper than :data:`MAX_JSON_DEPTH`, or a number
            too long to convert.
    """
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise ValidationError(f"{name} nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError:  # an integer beyond Python's digit limit
        raise ValidationError(f"{name} holds a number too long to read") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise ValidationError(f"{name} nests deeper than {MAX_JSON_DEPTH} levels")
    return value


# -- clean help and late global options --------------------------------------------------------


def _tidy(param: Any, ctx: Any) -> None:
    if getattr(param, "_mg_tidy", False):
        return
    param._mg_tidy = True
    if isinstance(param, TyperOption):
        if param.is_flag or param.count:
            param.metavar = ""
        elif param.metavar is None:
            label = param.display_type(ctx).strip("<>")
            param.metavar = _LABELS.get(label, label.upper())
    elif isinstance(param, TyperArgument):
        label = param.display_type(ctx).strip("<>")
        shown = _LABELS.get(label, label.upper())
        param.metavar = param.metavar or (param.name or "arg").upper()
        param.display_type_rich = lambda ctx: shown  # type: ignore[method-assign,assignment]


_LateDsn = Annotated[
    str | None, typer.Option("--dsn", help="PostgreSQL DSN (may also come before the command).")
]
_LateDataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory of the embedded server.", file_okay=False),
]


def _set_global(name: str) -> Callable[[Any, Any, Any], Any]:
    def callback(ctx: Any, _param: Any, value: Any) -> Any:
        if value is None:
            return None
        if name == "dsn":
            value = check_dsn(value)
        root = ctx.find_root()
        current = root.obj if isinstance(root.obj, Settings) else Settings(None, None)
        root.obj = replace(current, **{name: value})
        return None

    return callback


def _late_globals() -> list[Any]:
    # Built by typer from a signature, so they are ordinary TyperOptions; not passed to the
    # command (expose_value=False), they update the root Settings while parsing.
    helper = typer.Typer()

    @helper.command()
    def _globals(dsn: _LateDsn = None, data_dir: _LateDataDir = None) -> None:  # pragma: no cover
        return None

    params = [p for p in typer.main.get_command(helper).params if p.name in ("dsn", "data_dir")]
    for p in params:
        p.expose_value = False
        p.callback = _set_global(str(p.name))
    return params


def reflow(text: str) -> str:
    r"""Join each paragraph of a docstring into one line, so help wraps at the terminal's width.

    Paragraphs are separated by blank lines; a line starting with ``-`` or ``*`` (a list item)
    or indented (an example) keeps its own line.

    >>> reflow("Approve one proposal.\n\nWhen it waits, the thread\nis resumed.\n- a\n- b")
    'Approve one proposal.\n\nWhen it waits, the thread is resumed.\n- a\n- b'
    """
    paragraphs = []
    for block in inspect.cleandoc(text).split("\n\n"):
        lines: list[str] = []
        for line in block.splitlines():
            keep = line.startswith((" ", "-", "*")) or not lines
            if keep or lines[-1].startswith(" "):
                lines.append(line)
            else:
                lines[-1] = f"{lines[-1]} {line.strip()}"
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


class _Clean:
    """Mixin: tidy help labels, reflowed help text, global options after the command too."""

    _mg_late: list[Any] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        help_text = getattr(self, "help", None)
        if isinstance(help_text, str) and help_text:
            setattr(self, "help", reflow(help_text))  # noqa: B010 - the mixin declares no help

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        if ctx.parent is not None:
            if self._mg_late is None:
                self._mg_late = _late_globals()
            params = [*params[:-1], *self._mg_late, params[-1]] if params else self._mg_late
        for param in params:
            _tidy(param, ctx)
        return params

    def _argument_pieces(self, ctx: Any) -> list[str]:
        options = getattr(self, "options_metavar", None)
        pieces = [options] if options else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = str(param.metavar)
                pieces.append(name if param.required else f"[{name}]")
        return pieces


class CleanCommand(_Clean, TyperCommand):
    """A typer command with conventional help labels and late global options."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return self._argument_pieces(ctx)


class CleanGroup(_Clean, TyperGroup):
    """A typer group with conventional help labels (and late global options when nested)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*self._argument_pieces(ctx), self.subcommand_metavar]


# -- the entry point ---------------------------------------------------------------------------


def _usage_message(exc: Any) -> str:
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or "memory-graph"
    return f"{message} (see '{path} --help')"


def run(app: typer.Typer, console: Console, argv: Sequence[str] | None = None) -> int:
    """Run ``app`` and return its exit code; every failure is one ``error:`` line.

    Exit codes: 0 success, 1 a refused decision (reported by the command), 2 bad input or
    any error, 130 interrupted.
    """
    import typer.main

    command = typer.main.get_command(app)
    # The pool logs each dropped connection; the CLI reports failures as its one error line.
    logging.getLogger("psycopg.pool").setLevel(logging.CRITICAL)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = command.main(args=args, prog_name="memory-graph", standalone_mode=False)
    except typer.Exit as done:
        return int(done.exit_code or 0)
    except typer.Abort:
        console.print(Text("interrupted", style="red"))
        return 130
    except KeyboardInterrupt:
        console.print(Text("interrupted", style="red"))
        return 130
    except typer.TyperException as exc:  # usage errors: missing option, bad value ...
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stdout.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
            return 0
        return _report(console, _usage_message(exc))
    except MemoryGraphError as exc:
        return _report(console, exc)
    except UnicodeError:
        return _report(console, "an argument or input is not valid UTF-8")
    except RecursionError:
        return _report(console, "input nests too deeply")
    except Exception as exc:  # noqa: BLE001 - the CLI promises one line, never a traceback
        if os.environ.get("MEMORY_GRAPH_DEBUG"):
            raise
        return _report(console, _unexpected(exc))
    return int(result) if isinstance(result, int) and not isinstance(result, bool) else 0


def _unexpected(exc: Exception) -> str:
    module = type(exc).__module__.split(".")[0]
    if module == "psycopg":
        return f"database error ({type(exc).__name__}): {exc}"
    return f"unexpected {type(exc).__name__}: {exc} (set MEMORY_GRAPH_DEBUG=1 for the traceback)"


def _report(console: Console, message: object) -> int:
    try:
        fail(console, message)
    except typer.Exit as done:
        return int(done.exit_code or 2)
