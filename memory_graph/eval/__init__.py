"""The evaluation harness: ``python -m memory_graph.eval {guard,extraction,recall} ...``.

Evaluation data from outside the project is passed by path and never copied into the
repository. Subcommands import their modules lazily so one suite's dependencies never
slow down another.
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Dispatch an evaluation subcommand.

    Args:
        argv: the command line after the program name; ``sys.argv[1:]`` when ``None``.

    Returns:
        The subcommand's exit code.
    """
    from .__main__ import dispatch

    return dispatch(argv)
