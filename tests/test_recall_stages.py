"""Recall's stages: its modules import in the order the data flows, and a query text is
tokenized once per recall."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest

import memory_graph.recall as recall
import memory_graph.recall.tokenize as tokenize_module
from memory_graph.recall import STAGES
from memory_graph.recall.candidates import PoolIndex
from memory_graph.recall.fuse import rank_legs
from memory_graph.recall.model import Document, Ranked
from memory_graph.recall.query import ParsedQuery, parse_query
from memory_graph.recall.rank import rank, rank_prepared
from memory_graph.recall.terms import condition_values
from memory_graph.recall.tokenize import index_tokens, tokenize

RECALL = Path(recall.__file__).parent
NOW = datetime(2024, 3, 15, 12, 0, tzinfo=timezone.utc)


def _recall_imports(path: Path) -> set[str]:
    """The recall modules a module imports (lazy imports too), by their name in recall/."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                if node.module:
                    out.add(node.module.split(".")[0])
                else:
                    out.update(alias.name for alias in node.names)
            elif node.level == 0 and node.module and node.module.startswith("memory_graph.recall"):
                rest = node.module.split(".")[2:]
                if rest:
                    out.add(rest[0])
                else:
                    out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[:2] == ["memory_graph", "recall"] and len(parts) > 2:
                    out.add(parts[2])
    return out


def test_stages_name_every_recall_module_once() -> None:
    modules = {p.stem for p in RECALL.glob("*.py") if p.stem != "__init__"}
    assert len(STAGES) == len(set(STAGES))
    assert set(STAGES) == modules


def test_each_stage_imports_only_earlier_stages() -> None:
    for i, name in enumerate(STAGES):
        imported = _recall_imports(RECALL / f"{name}.py")
        later = sorted(imported - set(STAGES[:i]))
        assert later == [], f"recall.{name} imports {later}, not earlier in STAGES"


def test_the_package_init_imports_no_stage() -> None:
    assert _recall_imports(RECALL / "__init__.py") == set()


TEXTS = [
    "我表哥今年26岁，在杭州上班，职业是翻译。",
    "我表姐特别喜欢阅读，老家是长沙的。",
    "那个活动的规模超过了900人，地点在上海。",
    "我的手机是华为的，5月份买的。",
    "Mel painted a sunrise last week.",
    "Mel's hobby is pottery; she loves it.",
    "Sam has 2 dogs and 1 cat.",
    "Sam adopted two dogs in Lisbon on 8 May, 2023.",
    "Ann works as a nurse in Boston.",
    "Ann's phone number is 555-1234.",
]
FILLER = [f"filler statement number {i} about topic {i % 7} 随便{i % 5}聊聊" for i in range(30)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the stages tokenize, in order: ``tokenize`` wrapped in each recall module
    that imports it (and in the module that defines it)."""
    calls: list[str] = []
    original = tokenize_module.tokenize

    def counting(text: str) -> list[str]:
        calls.append(text)
        return original(text)

    names = [m.name for m in pkgutil.iter_modules(recall.__path__)]
    for name in names:
        module = importlib.import_module(f"memory_graph.recall.{name}")
        if getattr(module, "tokenize", None) is original:
            monkeypatch.setattr(module, "tokenize", counting)
    yield calls


def _docs() -> list[Document]:
    return [
        Document(str(i), tuple(index_tokens(t, None)), t, time=NOW.timestamp() - 86400.0 * i)
        for i, t in enumerate([*TEXTS, *FILLER])
    ]


def _store_rank_one(index: PoolIndex) -> Callable[[ParsedQuery], Sequence[Ranked]]:
    """``rank_one`` as the store's ``rank_pool`` builds it: candidates, then the re-rank."""

    def rank_one(q: ParsedQuery) -> Sequence[Ranked]:
        chosen = index.select(q.terms, depth=20, window=q.window, when=q.when)
        prepared = [index.prepared[pos] for pos in chosen]
        return rank_prepared(q, prepared, limit=10, stats=index.stats, window=q.window)

    return rank_one


QUERIES = [
    "那个年龄是26岁的人，其职业是什么？",
    "有几个人和我一样是长沙的？",
    "我的手机是什么？另外，表哥在哪？",
    "天气真好。我真正想问的是：表姐的爱好是什么？",
    "规模九百人的活动在哪里？",
    "When did Mel paint the sunrise?",
    "How many dogs does Sam have?",
    "What did Sam do on 8 May, 2023?",
    "Where does Ann work? Also, what is her phone number?",
    "What is Ann's phone?",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_query_text_is_tokenized_once_per_recall(counted: list[str], query: str) -> None:
    index = PoolIndex(_docs())
    rank_one = _store_rank_one(index)
    counted.clear()
    parsed = parse_query(query, now=NOW)  # what search_op does: its one tokenization
    assert parsed.tokens
    ranked = rank_legs(parsed, rank_one, limit=10, stats=index.stats)
    assert ranked
    assert counted.count(query) == 1, counted
    # Every other text is tokenized once too (a leg, an expansion, a kind or hop pass); only
    # a condition's value ("26岁" of "那个年龄是26岁的人") is read again, in each text that
    # holds it (the question and its expansion).
    values = {v for t in counted for v in condition_values(t)}
    repeated = sorted({t for t in counted if counted.count(t) > 1} - values)
    assert repeated == []


def test_rank_of_a_text_tokenizes_it_once(counted: list[str]) -> None:
    docs = _docs()
    query = "What did Mel paint last week?"
    counted.clear()
    assert rank(query, docs, limit=5)
    assert counted == [query]
    counted.clear()
    parsed = parse_query(query)
    assert counted == [query]
    assert rank(parsed, docs, limit=5) == rank(query, docs, limit=5)
    assert counted == [query, query]  # the second rank got the text, not its parse


def test_a_parse_carries_the_stages_inputs() -> None:
    parsed = parse_query("那个年龄是26岁的人，其职业是什么？另外，表哥在哪？", now=NOW)
    assert parsed.tokens == tokenize(parsed.text)
    assert [leg.text for leg in parsed.legs][:2] == [
        "那个年龄是26岁的人，其职业是什么？",
        "表哥在哪？",
    ]
    assert all(leg.query is not None and leg.query.text == leg.text for leg in parsed.legs)
    assert parsed.legs[-1].query is parsed  # the whole text's leg is this parse
    assert parsed.derived(parsed.text) is parsed
    assert parsed.count is False and parsed.by_condition is True
