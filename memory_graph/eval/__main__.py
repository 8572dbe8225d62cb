"""Command-line dispatcher for the evaluation harness.

Usage::

    python -m memory_graph.eval guard --cases ../shared/eval/guard/cases.jsonl [--json]
    python -m memory_graph.eval extraction [--cases FILE] [--json]
    python -m memory_graph.eval recall ...
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["dispatch"]

_COMMANDS = {
    "guard": "score the sensitive-data guard on a labelled JSONL file",
    "extraction": "score the offline pattern extractor on the bundled conversations",
    "recall": "score recall quality on a LoCoMo / MemDaily style suite",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memory_graph.eval",
        description="memory-graph evaluation harness",
        epilog="Run `python -m memory_graph.eval COMMAND --help` for a command's options.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in _COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def dispatch(argv: list[str] | None = None) -> int:
    """Parse the subcommand and hand the remaining arguments to its ``main``.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The exit code of the subcommand, or 2 when no valid subcommand was given.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args or args[0] not in _COMMANDS:
        if args and args[0] in ("-h", "--help"):
            parser.print_help()
            return 0
        parser.print_usage(sys.stderr)
        print(f"error: choose a command: {', '.join(_COMMANDS)}", file=sys.stderr)
        return 2
    command, rest = args[0], args[1:]
    if command == "guard":
        from ._guard import main as guard_main

        return guard_main(rest)
    if command == "extraction":
        from ._extraction import main as extraction_main

        return extraction_main(rest)
    from ._recall import main as recall_main

    return recall_main(rest)


if __name__ == "__main__":
    raise SystemExit(dispatch())
