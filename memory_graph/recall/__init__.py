"""The recall pipeline, pure (no I/O): plan -> candidates -> rank -> render within budget.

- :mod:`.tokenize`: the index tokenizer (DESIGN §6), the same for stored text and queries.
- :mod:`.plan`: which texts one recall step searches (task step, latest input, goal), then
  standing guidance; how their hits merge.
- :mod:`.candidates`: an in-process index of one owner's pool (postings and statistics) and
  the small candidate set of a query.
- :mod:`.rank`: the deterministic lexical ranking of candidates (BM25, coverage, phrase,
  priors, feedback); :mod:`.terms` maps tokens to ranking terms.
- :mod:`.budget`: byte and token budgets of the rendered frame (the rendering itself is
  :mod:`memory_graph.recall.render`).
- :mod:`.hybrid`: reciprocal-rank fusion and the embedding model key of the optional dense leg.

The old top-level modules (``memory_graph.recall.tokenize``, ``rank``, ``query``, ``budget``,
``hybrid``) re-export the same public names. The I/O side (the pool cache kept coherent by
a version stamp, the SQL) lives in :mod:`memory_graph.storage`.
"""

from __future__ import annotations

__all__: list[str] = []
