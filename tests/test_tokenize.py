"""The recall tokenizer (DESIGN §6)."""

from __future__ import annotations

import doctest

import pytest
from hypothesis import given
from hypothesis import strategies as st

import memory_graph.recall.tokenize as tokenize_module
from memory_graph.recall.tokenize import (
    TOKENIZER_VERSION,
    index_text,
    index_tokens,
    is_cjk,
    tokenize,
)
from memory_graph.types import Claim, Knowledge


def test_design_example() -> None:
    assert tokenize("DeepSeek插件，咖啡") == ["deepseek", "插", "件", "插件", "咖", "啡", "咖啡"]
    assert "件咖" not in tokenize("DeepSeek插件，咖啡")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My e-mail address", ["my", "e-mail", "address"]),
        ("set API_KEY now", ["set", "api_key", "now"]),
        ("Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ１２３", ["full-width", "abc123"]),
        ("Café naïve", ["café", "naïve"]),
        ("Cafe\u0301", ["café"]),  # NFKC composes the accent
        ("ﬁle", ["file"]),  # compatibility ligature
        ("한국어", ["한", "국", "어", "한국", "국어"]),
        ("カタカナ", ["カ", "タ", "カ", "ナ", "カタ", "タカ", "カナ"]),
        ("ｶﾀｶﾅ", ["カ", "タ", "カ", "ナ", "カタ", "タカ", "カナ"]),  # half-width Katakana
        ("咖啡店", ["咖", "啡", "店", "咖啡", "啡店"]),
        ("插件-咖啡", ["插", "件", "插件", "咖", "啡", "咖啡"]),
        ("喜欢Python编程", ["喜", "欢", "喜欢", "python", "编", "程", "编程"]),
        ("a - b -- c __ d", ["a", "b", "c", "d"]),
        ("", []),
        ("  ,.;!? ", []),
        ("HELLO hello", ["hello", "hello"]),
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),
    ],
)
def test_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_is_cjk() -> None:
    assert is_cjk("中") and is_cjk("あ") and is_cjk("ア") and is_cjk("한")
    assert not is_cjk("a") and not is_cjk("é") and not is_cjk("1") and not is_cjk("，")


def test_index_text_covers_knowledge() -> None:
    knowledge = Knowledge(
        applies_when=("weekday mornings",),
        counterexamples=("on holidays",),
        claim=Claim(key="drink.morning", value="green tea"),
    )
    tokens = index_tokens("Prefers 茶", knowledge)
    for token in ("prefers", "茶", "weekday", "mornings", "holidays", "drink", "morning", "green"):
        assert token in tokens
    assert index_text("x", None) == "x"


def test_index_text_parts_do_not_join_cjk_pairs() -> None:
    knowledge = Knowledge(applies_when=("咖",))
    assert "茶咖" not in index_tokens("茶", knowledge)


def test_version_is_int() -> None:
    assert isinstance(TOKENIZER_VERSION, int) and TOKENIZER_VERSION >= 1


def test_doctests() -> None:
    result = doctest.testmod(tokenize_module)
    assert result.failed == 0 and result.attempted > 0


_PIECES = st.sampled_from(
    [
        "咖",
        "啡",
        "插",
        "件",
        "あ",
        "カ",
        "한",
        "국",
        "a",
        "Z",
        "é",
        "1",
        "-",
        "_",
        " ",
        "，",
        ".",
        "\n",
        "!",
        "ｱ",
        "Ｂ",
        "漢",
        "字",
    ]
)


def _cjk_pairs_of(text: str) -> set[str]:
    """Adjacent CJK pairs that are legitimately contiguous in the normalised text."""
    import unicodedata

    normalized = unicodedata.normalize("NFKC", text).lower()
    return {
        normalized[i : i + 2]
        for i in range(len(normalized) - 1)
        if is_cjk(normalized[i]) and is_cjk(normalized[i + 1])
    }


@given(st.lists(_PIECES, max_size=40).map("".join))
def test_bigrams_never_span_non_cjk(text: str) -> None:
    tokens = tokenize(text)
    allowed = _cjk_pairs_of(text)
    for token in tokens:
        if any(is_cjk(c) for c in token):
            assert all(is_cjk(c) for c in token)
            assert 1 <= len(token) <= 2
            if len(token) == 2:
                assert token in allowed


@given(st.text(max_size=60))
def test_tokens_are_clean(text: str) -> None:
    for token in tokenize(text):
        assert token
        assert token == token.lower() or not token.isascii()
        assert not any(c.isspace() for c in token)
        assert set(token) - {"-", "_"}
