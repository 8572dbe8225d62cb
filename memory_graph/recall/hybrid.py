"""Stage 14, hybrid: the dense leg's ranking and the lexical one -> their fusion (RRF); the
embedding model key. No I/O.

The optional dense leg of :meth:`memory_graph.MemoryStore.search` ranks the owner's records by
cosine similarity to the query embedding; :func:`rrf` fuses that ranking with the lexical one.
Embeddings are derived index data, never memory: they are computed outside any transaction
(``store.index_embeddings``) and are keyed by :func:`model_key`, so vectors of another model
are never compared with the query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .dates import asks_when, question_window
from .tokenize import is_cjk

__all__ = [
    "KEEP_MARGIN",
    "RRF_K",
    "dense_weight",
    "fuse_legs",
    "model_key",
    "rrf",
    "vector_literal",
]

RRF_K = 60
"""The usual reciprocal-rank constant (Cormack et al., 2009)."""

KEEP_MARGIN = 1.5
"""The lexical first place stays first only when its score is at least this many times the
lexical second place's (:func:`fuse_legs`): a clear lexical winner."""


def rrf(
    rankings: Sequence[Sequence[str]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings by reciprocal rank: ``score(d) = sum over rankings of w / (k + rank)``.

    ``rank`` starts at 1; an id repeated within one ranking counts at its first position. Ties
    break by position in the first ranking (absent ranks last), then in the next ones, then
    by id, so the result is deterministic and the first (lexical) ranking wins a tie.

    Args:
        rankings: Id lists, best first; the first one is the lexical ranking.
        k: The smoothing constant (positive).
        weights: One weight per ranking (non-negative, finite); all 1 when ``None``.

    Returns:
        ``(id, score)`` pairs, best first.

    Raises:
        ValueError: ``k`` is not a positive integer, or the weights do not fit.

    Examples:
        >>> rrf([["a", "b"], ["b", "c"]], k=1)
        [('b', 0.8333333333333333), ('a', 0.5), ('c', 0.3333333333333333)]
        >>> [i for i, _ in rrf([["x"], ["y"]])]  # equal scores: lexical order first
        ['x', 'y']
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError("k must be a positive integer")
    ws = [1.0] * len(rankings) if weights is None else [float(w) for w in weights]
    if len(ws) != len(rankings) or not all(math.isfinite(w) and w >= 0 for w in ws):
        raise ValueError("weights must be one finite, non-negative number per ranking")
    scores: dict[str, float] = {}
    positions: dict[str, list[float]] = {}
    for which, ranking in enumerate(rankings):
        seen: set[str] = set()
        for pos, item in enumerate(ranking):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + ws[which] / (k + pos + 1)
            positions.setdefault(item, [math.inf] * len(rankings))[which] = pos
    order = sorted(scores, key=lambda i: (-scores[i], *positions[i], i))
    return [(i, scores[i]) for i in order]


def fuse_legs(
    lexical: Sequence[str],
    dense: Sequence[str],
    *,
    weight: float = 1.0,
    head: int = 5,
    keep: int = 1,
    k: int = RRF_K,
    scores: Sequence[float] | None = None,
    margin: float = KEEP_MARGIN,
) -> list[tuple[str, float]]:
    """The hybrid ranking: the lexical ranking's first ``keep`` places stay first (with
    ``scores``, only when the lexical first place is a clear winner); below them the lexical
    ranking is fused (:func:`rrf`) with the dense ranking's first ``head`` places; the dense
    ranking's later places fill after every fused place, scored below all of them.

    Why this shape (dev halves and our invented suites, both local models; issue 28's closing
    note has every figure): fused whole, the dense ranking's tail of near-equal similarities
    pushed lexical hits out of the top 10 (multilingual-e5 on a Chinese suite of specific
    questions: recall@10 0.902 lexical, 0.837 fused whole, 0.892 with a head of 5); and a dense
    hit that agreed with the lexical second place overtook a correct lexical first (MRR 0.934
    lexical, 0.904 with a head of 5, 0.932 keeping the first place). On LoCoMo both models
    gain on both figures with this shape.

    Keeping the first place unconditionally cost the conversational suites part of the dense
    leg's MRR gain (a conversation's words match many turns a little, so its lexical first
    place is often a near tie). With ``scores``, the first place is kept only when it scores
    at least ``margin`` times the second: on six suites and both local models (two suites
    written after the rule it replaced) every MRR is at or above keeping it always (for
    example 0.556 -> 0.593 on a multi-session chat suite and 0.327 -> 0.347 on a
    proactive-recall suite with multilingual-e5; the Chinese suite of specific questions
    0.951 either way); recall@10 does not change. A margin of 2 lowered that Chinese suite
    (0.943) and LoCoMo with MiniLM.

    Args:
        lexical: Ids, best first.
        dense: Ids, most similar first.
        weight: The dense ranking's weight (the lexical one's is 1); at 0 the lexical order
            stands and dense ids only fill after it.
        head: How many dense places enter the fusion.
        keep: How many lexical first places stay first (when the weight is positive).
        k: The RRF constant.
        scores: The lexical scores, in ``lexical``'s order; when given, the first places are
            kept only if the first scores at least ``margin`` times the second (a lone
            lexical hit is kept).
        margin: See ``scores``.

    Returns:
        ``(id, score)`` pairs, best first, each id once.

    Examples:
        >>> lex = ["a", "b", "c"]
        >>> dense = ["x", "b", "y", "z", "w", "v"]
        >>> [i for i, _ in fuse_legs(lex, dense, head=2, keep=0, k=1)]
        ['b', 'a', 'x', 'c', 'y', 'z', 'w', 'v']
        >>> [i for i, _ in fuse_legs(lex, dense, head=2, k=1)]
        ['a', 'b', 'x', 'c', 'y', 'z', 'w', 'v']
        >>> [i for i, _ in fuse_legs(lex, dense, head=2, k=1, scores=[3.0, 2.5, 1.0])][:2]
        ['b', 'a']
    """
    if scores is not None and len(scores) > 1 and not (0 < scores[0] >= margin * scores[1]):
        keep = 0
    fused = rrf([lexical, dense[:head]], k=k, weights=(1.0, weight))
    kept = list(dict.fromkeys(lexical[:keep])) if weight > 0 else []
    if kept:
        own = dict(fused)
        rest = [(i, s) for i, s in fused if i not in kept]
        # A kept place keeps its RRF score unless a fused one scores higher: then it scores
        # just above it, so the scores stay in the order of the ranking.
        ceiling = rest[0][1] if rest else 0.0
        scored: list[tuple[str, float]] = []
        for i in reversed(kept):
            ceiling = max(own[i], ceiling + 1.0 / (k * k * 16))
            scored.append((i, ceiling))
        fused = scored[::-1] + rest
    placed = {i for i, _ in fused}
    tail = [d for d in dict.fromkeys(dense[head:]) if d not in placed]
    low = min((score for _, score in fused), default=weight / k)
    n = len(tail)
    return fused + [(d, low * (n - pos) / (n + 1)) for pos, d in enumerate(tail)]


def dense_weight(text: str, embeddings: Any) -> float:
    """The dense ranking's weight in the fusion for the query ``text``: 1, or 0 when the
    question asks for a time or names a date (:mod:`.dates`: a vector knows nothing of when a
    memory was observed, and the lexical ranking's time and window boosts are what ranks such
    a question; fusing lowered the temporal figures of two chat suites), or when the model
    declares the scripts it covers (an attribute ``scripts``, e.g. ``("latin",)`` for
    an English-only model) and the query is mostly CJK, which such a model cannot read (its
    vectors of a Chinese text are noise that would push good lexical hits down). At weight
    0 the dense hits still fill the places the lexical ranking leaves empty.

    Examples:
        >>> class English:
        ...     scripts = ("latin",)
        >>> en = English()
        >>> dense_weight("Where did I go hiking?", en), dense_weight("我去哪儿爬山了？", en)
        (1.0, 0.0)
        >>> dense_weight("我去哪儿爬山了？", object())  # no declaration: every script
        1.0
        >>> dense_weight("When did I go hiking?", object()), dense_weight("on 17.03.2023?", en)
        (0.0, 0.0)
    """
    if asks_when(text) or question_window(text) is not None:
        return 0.0
    scripts = getattr(embeddings, "scripts", None)
    if not isinstance(scripts, (tuple, list, frozenset, set)) or "cjk" in scripts:
        return 1.0
    letters = [c for c in text if c.isalnum()]
    cjk = sum(1 for c in letters if is_cjk(c))
    return 0.0 if letters and cjk * 2 > len(letters) else 1.0


def model_key(embeddings: Any) -> str:
    """The key that vectors of ``embeddings`` are stored under.

    The class's qualified name plus its ``model`` / ``model_name`` attribute when it has one,
    so switching models never mixes vector spaces.

    Args:
        embeddings: A LangChain ``Embeddings`` instance.

    Returns:
        A short, stable string.

    Examples:
        >>> class Fake:
        ...     model = "m-1"
        >>> model_key(Fake()).endswith("Fake:m-1")
        True
    """
    cls = type(embeddings)
    name = f"{cls.__module__}.{cls.__qualname__}"
    for attr in ("model", "model_name", "deployment"):
        value = getattr(embeddings, attr, None)
        if isinstance(value, str) and value:
            return f"{name}:{value}"
    return name


def vector_literal(values: Sequence[float]) -> str:
    """A pgvector text literal (``'[0.1,0.2]'``), so no pgvector Python package is needed.

    Args:
        values: The vector's components.

    Returns:
        The literal text.

    Raises:
        ValueError: the vector is empty or has a non-finite component.

    Examples:
        >>> vector_literal([0.5, -1, 2e-3])
        '[0.5,-1.0,0.002]'
    """
    out = [float(v) for v in values]
    if not out:
        raise ValueError("an embedding must have at least one component")
    if not all(math.isfinite(v) for v in out):
        raise ValueError("an embedding has a NaN or infinite component")
    return "[" + ",".join(repr(v) for v in out) + "]"
