"""The guard's shortcuts change no verdict: pre-filters, the normalizer's fast path, alt().

Each detector module has ``possible(sent)``, a cheap test that is ``False`` only when
``detect(sent)`` finds nothing; :func:`memory_graph.guard.check` skips a detector whose
pre-filter says so. These tests pin that a pre-filter never skips a detector that would
fire, over inputs generated from the detectors' own patterns and word tables.
"""

from __future__ import annotations

import re
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_graph.guard import _check as guard
from memory_graph.guard import (
    address,
    check,
    finance,
    health,
    ids,
    normalize,
    politics,
    religion,
    third_party,
)
from memory_graph.guard._check import _DETECTORS
from memory_graph.guard._cues import REL_EN, REL_ZH, alt, sentences
from memory_graph.guard._gate import any_match
from memory_graph.guard._normalize import _folded_only, _normalize_all

MODULES: tuple[ModuleType, ...] = (ids, finance, address, health, religion, politics, third_party)


def _patterns(module: ModuleType) -> list[re.Pattern[str]]:
    """Every compiled pattern of a detector module (cue patterns and conditions alike)."""
    return [v for _, v in sorted(vars(module).items()) if isinstance(v, re.Pattern)]


ALL_PATTERNS = [p for m in MODULES for p in _patterns(m)]


def _words(table: str) -> list[str]:
    return [w.strip() for w in table.split("|") if w.strip()]


WORDS = sorted(
    set(
        _words(health._CONDITIONS_EN)
        + _words(health._DRUGS_EN)
        + _words(health._CONDITIONS_ZH)
        + _words(health._DRUGS_ZH)
        + list(health._WEAK_EN)
        + list(health._WEAK_ZH)
        + list(religion._WEAK_EN)
        + list(religion._ZH_WEAK)
        + list(politics._ZH_WEAK)
        + list(finance._WEAK_EN)
        + list(finance._WEAK_ZH)
        + _words("salary|mortgage|paycheck|bankruptcy|bankrupt|garnished")
    )
)
TEMPLATES = [
    "{w}",
    "I have {w}",
    "I'm on {w} since 2019",
    "my sister has {w}",
    "Alice {w} 2000 dollars a month",
    "我有{w}",
    "我妈在吃{w}",
    "他{w}了，月薪两万五",
    "my {w} is 4111 1111 1111 1111",
    "{w}: 123-45-6789",
    "i'm a {w}",
    "voted {w}",
    "my brother is {w}",
    'she said "hi" and I have {w}',
    "他说：“好”，我有{w}",
    "{W}",
]
CASES = [
    "123-45-6789",
    "11010519491231002X",
    "A123456789",
    "A123456(3)",
    "AB123456C",
    "4111 1111 1111 1111",
    "GB82 WEST 1234 5698 7654 32",
    "passport E12345678",
    "她的手机是13812345678",
    "my friend's phone is 415 555 0134",
    "my sister's email is kim@example.com",
    "7877 willow creek rd",
    "上海市长宁路100号3栋201室",
    "apt 4B, home",
    "I make 85k a year",
    "credit score 580",
    "my passport is ABCD1234",
    "send it to my place, London SW1A 1AA",
    "I'm pretty conservative",
    "I canvassed for Warren",
    "I go to AA on Sundays",
    "I'm allergic to penicillin",
    "5 years sober",
    "A1c was 7.2",
]


def _fires(text: str) -> list[tuple[str, int]]:
    """(module, sentence index) for every detector that finds a cue but whose pre-filter
    would have skipped it: must stay empty."""
    missed = []
    for n, sent in enumerate(sentences(normalize(text).text)):
        for module in MODULES:
            if module.detect(sent) and not module.possible(sent):
                missed.append((module.__name__, n))
    return missed


def test_check_runs_every_detector_through_its_prefilter() -> None:
    assert [d for _, d in _DETECTORS] == [m.detect for m in MODULES]
    assert [p for p, _ in _DETECTORS] == [m.possible for m in MODULES]


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_prefilter_skips_a_lexicon_word(template: str) -> None:
    fired = 0
    for word in WORDS:
        text = template.format(w=word, W=word.upper())
        assert _fires(text) == [], text
        fired += any(m.detect(s) for s in sentences(normalize(text).text) for m in MODULES)
    assert fired > len(WORDS) // 4  # the inputs do reach the detectors


@pytest.mark.parametrize("text", CASES)
def test_no_prefilter_skips_a_cue_of_each_kind(text: str) -> None:
    sents = sentences(normalize(text).text)
    assert any(m.detect(s) for s in sents for m in MODULES)
    assert _fires(text) == []
    assert _fires(text + "。") == []
    assert _fires("ok. " + text) == []


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(ALL_PATTERNS).flatmap(st.from_regex))
def test_no_prefilter_skips_a_match_of_any_detector_pattern(text: str) -> None:
    # from_regex draws a string holding a match of the pattern, with random text around it
    assert _fires(text) == []


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.sampled_from(WORDS + CASES + ["my", "她", "I", " ", ",", "。", "2", "$", "k"]),
        min_size=1,
        max_size=6,
    )
)
def test_no_prefilter_skips_a_mix_of_cues(parts: list[str]) -> None:
    assert _fires(" ".join(parts)) == []
    assert _fires("".join(parts)) == []


def test_prefilters_do_skip_ordinary_text() -> None:
    for text in ("concise", "dark mode", "Alice keeps bees in the garden", "用中文回答"):
        sent = sentences(normalize(text).text)[0]
        assert not any(m.possible(sent) for m in MODULES), text
        assert check(text).allowed


def test_prefilters_on_digit_counts() -> None:
    three = sentences("my id is 123")[0]
    assert not ids.possible(three) and not ids.detect(three)
    six = sentences("my passport is E12345")[0]
    assert ids.possible(six)
    seven = sentences("call her on 555 0134")[0]
    assert third_party.possible(seven)
    assert not third_party.possible(sentences("call her on 555 013")[0])
    assert finance.possible(sentences("acct 12345678")[0])


# -- the normalizer's fast path ------------------------------------------------------

_CHARS = (
    "aAlIoO01 2345-./·_*|'\"\t\n,，：。！？"
    "我有糖尿病國民黨護照號教會一二两三十百万亿〇零"
    "\u200b\u00ad\u2013\u2019\u201c\uff11\uff21\u0430\u0391\ufe0f\u3000\uf900"
)


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet=st.sampled_from(_CHARS), max_size=24) | st.text(max_size=12))
def test_fast_path_gives_the_full_normalization(text: str) -> None:
    assert normalize(text) == _normalize_all(text)


def test_fast_path_takes_one_for_one_folds_and_leaves_the_rest() -> None:
    assert _folded_only("用中文回答") == "用中文回答"
    assert _folded_only("你好，世界") == "你好,世界"
    assert _folded_only("dark mode") == "dark mode"
    for edited in ("我 有 糖 尿 病", "國民黨", "di\u200babetes", "两万三", "1O0O", "a  b"):
        assert _folded_only(edited) is None
        assert normalize(edited) == _normalize_all(edited)


# -- any_match and alt -----------------------------------------------------------------


def test_any_match_joins_patterns_with_their_flags_and_groups() -> None:
    gate = any_match(
        re.compile(r"(?P<sep>[-/])x(?P=sep)"),
        re.compile(r"(?P<sep>\s)y(?P=sep)"),
        re.compile("zz", re.IGNORECASE),
    )
    assert gate.search("a-x-b") and gate.search("a y b") and gate.search("ZZ")
    assert not gate.search("a-x/b") and not gate.search("a-y-b") and not gate.search("z z")
    with pytest.raises(ValueError):
        any_match(re.compile(r"(a)\1"))
    with pytest.raises(ValueError):
        any_match(re.compile("a", re.MULTILINE))
    with pytest.raises(ValueError):
        any_match()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab-/ yzZ\n", max_size=12))
def test_any_match_matches_exactly_where_a_part_matches(text: str) -> None:
    parts = [
        re.compile(r"(?P<s>[-/])a(?P=s)"),
        re.compile(r"(?<![a-z])b+(?!z)"),
        re.compile("^yz", re.IGNORECASE),
        re.compile(r"\s\s"),
    ]
    assert (any_match(*parts).search(text) is not None) == any(p.search(text) for p in parts)


_LEXICONS = [
    (REL_ZH, 0),
    (REL_EN, 0),
    (address._SUFFIX_ANY_CASE, re.IGNORECASE),
    (address._STREET_SUFFIX, 0),
    (address._STREET_SUFFIX, re.IGNORECASE),
]
_LEXICON_CHARS = "".join(sorted({c for lex, _ in _LEXICONS for c in lex if c.isalpha()}))


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(_LEXICONS),
    st.text(alphabet=_LEXICON_CHARS + _LEXICON_CHARS.upper() + "我的 '-\u212a\u017f", max_size=16),
)
def test_alt_lookahead_changes_no_match(lexicon: tuple[str, int], text: str) -> None:
    source, flags = lexicon
    assert source.startswith("(?:(?=[")  # its words start in many ways
    plain = re.sub(r"^\(\?:\(\?=\[[^\]]*\]\)", "(?:", source)
    assert "(?=[" not in plain[:8]
    a, b = re.compile(source, flags), re.compile(plain, flags)
    assert [m.span() for m in a.finditer(text)] == [m.span() for m in b.finditer(text)]


def test_alt_keeps_small_lexicons_plain() -> None:
    assert alt("ab|abc|b") == "(?:(?:ab(?:c)?|b))"
    many = alt("|".join(chr(0x4E00 + i) + "x" for i in range(40)))
    assert many.startswith("(?:(?=[\u4e00-\u4e27])") or many.startswith("(?:(?=[一-\u4e27])")
    assert re.fullmatch(many, "\u4e05x") and not re.search(many, "\u4e28x")


def test_sentence_properties_are_computed_once_per_sentence() -> None:
    sent = sentences("my sister has asthma")[0]
    assert "others" not in vars(sent)
    first = sent.others
    assert first and sent.others is first and vars(sent)["others"] is first
    assert sentences("I like tea")[0].others == []  # per sentence, not per class
    assert sent.unquoted_low == (sent.text, sent.low)
    quoting = sentences('she said "I have asthma" in the play')[0]
    assert quoting.unquoted_low[0] != quoting.text and "asthma" not in quoting.unquoted_low[1]


# --- clear sentences: a sentence on which nothing fired is not checked again -------------


def _fresh(text: str) -> tuple[bool, str | None, tuple[tuple[int, int], ...]]:
    """The verdict of ``text`` with nothing remembered."""
    guard._clear.clear()
    v = check(text)
    return v.allowed, v.category, v.spans


def _kept(text: str) -> tuple[bool, str | None, tuple[tuple[int, int], ...]]:
    v = check(text)
    return v.allowed, v.category, v.spans


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.sampled_from(WORDS + CASES + ["I like tea", "我", "her", "ok", "2", "1234", "\n", "。"]),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.sampled_from(CASES + ["I like tea", "dark mode", "she", "我妈"]), max_size=4),
)
def test_remembered_clear_sentences_change_no_verdict(parts: list[str], warm: list[str]) -> None:
    text = " ".join(parts)
    expected = _fresh(text)
    for other in warm:  # other texts and this one's own sentences, remembered first
        check(other)
    for sent in sentences(normalize(text).text):
        check(sent.text)
    assert _kept(text) == expected
    assert _kept(text) == expected  # and again, from what the first call remembered
    assert _kept("ok. " + text) == _fresh("ok. " + text)


def test_a_remembered_sentence_runs_no_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(possible):  # type: ignore[no-untyped-def]
        def wrapped(sent):  # type: ignore[no-untyped-def]
            calls.append(sent.text)
            return possible(sent)

        return wrapped

    monkeypatch.setattr(guard, "_DETECTORS", tuple((counting(p), d) for p, d in _DETECTORS))
    guard._clear.clear()
    assert check("theme.color\nforest green\napi").allowed
    first = len(calls)
    assert first == 3 * len(_DETECTORS)
    assert check("theme.color\nsea blue\napi").allowed  # only the changed sentence is checked
    assert calls[first:] == ["sea blue"] * len(_DETECTORS)


def test_blocked_and_dated_sentences_are_never_remembered() -> None:
    guard._clear.clear()
    blocked = ["I'm on antidepressants", "我月薪两万五", "my SSN is 123-45-6789"]
    for text in blocked:
        assert not check(text).allowed
        assert not check(text).allowed  # still blocked the second time
    # An id's birth date is checked against today: a sentence with four digits or more is
    # checked every time, allowed or not (a resident id of someone born tomorrow is no id).
    assert check("I moved here in 1998").allowed
    assert check("订单号 20260101").allowed
    assert guard._clear.keys().isdisjoint(
        {"I moved here in 1998", "订单号 20260101", *blocked, "I'm on antidepressants"}
    )
    assert check("I prefer tea").allowed
    assert "I prefer tea" in guard._clear


def test_remembered_sentences_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "_CLEAR_MAX", 8)
    guard._clear.clear()
    for i in range(50):
        assert check(f"colour {'abcdefghij'[i % 10]}{'klmnopqrst'[i // 10]}").allowed
        assert len(guard._clear) <= 8
