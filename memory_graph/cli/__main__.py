"""``python -m memory_graph.cli``: the ``memory-graph`` command."""

from __future__ import annotations

from .main import main

if __name__ == "__main__":
    main()
