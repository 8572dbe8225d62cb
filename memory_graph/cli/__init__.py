"""The ``memory-graph`` command: the application layer, above the core and ``nodes``.

Nothing in the core imports this package. ``main`` is the console-script entry point;
``python -m memory_graph.cli`` runs it too.
"""

from __future__ import annotations

from .main import app, main

__all__ = ["app", "main"]
