"""The recall pipeline, pure (no I/O), in the order the data flows (:data:`STAGES`).

1. :mod:`.plan`: a recall step -> its query texts (task step, latest input, goal); at the
   end, their hit lists merged in that order, then standing guidance.
2. :mod:`.tokenize`: text -> index tokens (DESIGN §6), the same for stored text and queries.
3. :mod:`.model`: the ranking's data types and constants (a leaf every later stage reads).
4. :mod:`.terms`: tokens -> ranking terms; function words; question forms.
5. :mod:`.dates`: a question -> the time window it names (a leaf).
6. :mod:`.expand`: a query text -> its paraphrases and numerals; a hit -> its hop words.
7. :mod:`.query`: a query text -> its ``ParsedQuery``, tokenized once: terms, legs,
   expansion, window.
8. :mod:`.documents`: a document -> its prepared form; documents -> pool statistics.
9. :mod:`.candidates`: a pool -> its index (delta path in :mod:`._delta`); a query's terms
   -> its small candidate set.
10. :mod:`.rank`: a parsed query and its candidates -> the lexical ranking (BM25, coverage,
    phrase, priors, feedback, the ranking's hop and context passes).
11. :mod:`.fuse`: a query's legs and passes (expansion, kind, hop), each ranked -> one ranking.
12. :mod:`.budget`: blocks -> the frame that fits the byte and token budgets.
13. :mod:`.render`: merged hits -> the framed ``<memory_source>`` block within budget.
14. :mod:`.hybrid`: the dense leg's ranking fused with the lexical one (RRF); the model key.

Each module imports only modules before it in :data:`STAGES` (``tests/test_recall_stages.py``
checks it). The I/O side (the pool cache kept coherent by a version stamp, the SQL) lives in
:mod:`memory_graph.storage`.
"""

from __future__ import annotations

__all__ = ["STAGES"]

STAGES: tuple[str, ...] = (
    "plan",
    "tokenize",
    "model",
    "terms",
    "dates",
    "expand",
    "query",
    "documents",
    "_delta",
    "candidates",
    "rank",
    "fuse",
    "budget",
    "render",
    "hybrid",
)
"""Recall's modules in the order the data flows; each imports only earlier ones."""
