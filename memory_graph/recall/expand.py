"""Stage 6, expand: a query text -> the words it does not say but its evidence does. Pure.

Takes one query text (and, for the hop pass, a hit's text with the pool statistics) and
gives extra words; :mod:`.query` parses the expanded text once, :mod:`.fuse` ranks it.

A question names an attribute ("工作地", "兴趣爱好", "phone number") where the statement that
answers it says it another way ("在杭州上班", "特别喜欢阅读", "电话号码是..."), and it writes
numbers one way ("九百人", "5月份") where the statement writes them another ("900人",
"五月"). :func:`expansion_terms` returns the extra words for one query text:

- **paraphrases** from a small fixed lexicon of question words and their everyday wordings
  (:data:`PARAPHRASES`, Chinese and English; a key must occur in the query, its wordings are
  added, never the other way round);
- **numerals** in the other script, added beside the written form: Chinese numerals before
  a measure word or unit as digits and digits as Chinese numerals (``cn2an``, offline);
- **entity hop terms** (:func:`hop_terms`): the words a first hit adds to its question, the
  "who" of "the person whose hobby is X", ranked in a second pass with what the question
  still asks once that hit is found (:func:`residual_text`).

Only the query changes: the stored index is untouched, so no re-indexing and no extra round
trip. Callers rank the expanded text as a pass beside the original and the hop pass after
it (:mod:`memory_graph.recall.fuse`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from functools import lru_cache

from .model import DEFAULT_PARAMS, CorpusStats
from .terms import is_stop_term, term_of
from .tokenize import is_cjk

__all__ = [
    "PARAPHRASES",
    "HOP_ADVERBS",
    "SAME_PERSON",
    "expanded_text",
    "expansion_terms",
    "hop_terms",
    "numeral_variants",
    "residual_text",
    "swap_numerals",
]

PARAPHRASES: Mapping[str, tuple[str, ...]] = {
    # where someone works, lives, comes from
    "工作地": ("上班", "工作"),
    "工作地点": ("上班", "工作"),
    "家乡": ("老家", "家是"),
    "老家": ("家乡",),
    "哪里人": ("老家", "家乡"),
    "单位名称": ("单位", "公司"),
    "居住": ("住", "小区"),
    # who someone is
    "姓名": ("名字", "名叫", "叫"),
    "名字": ("姓名", "名叫", "叫"),
    "教育背景": ("学历", "毕业", "念", "读"),
    "学历": ("教育背景", "毕业"),
    "职业": ("工作是", "做", "当"),
    "职位": ("当", "担任"),
    "兴趣爱好": ("爱好", "喜欢", "爱"),
    "爱好": ("喜欢", "爱"),
    "年龄": ("岁", "今年"),
    "身高": ("厘米", "cm"),
    "生日": ("出生",),
    "联系电话": ("电话", "号码", "手机号"),
    "电话号码": ("电话", "联系电话", "手机号"),
    "邮箱地址": ("邮箱",),
    # things by their category
    "家电": ("电器", "空调", "冰箱", "洗衣机", "电饭煲", "净化器", "电视", "微波炉"),
    "美妆": ("化妆品", "护肤", "润肤", "粉底", "口红", "面霜", "喷雾", "精华"),
    "运动鞋": ("鞋", "跑鞋", "球鞋"),
    # English question words
    "phone": ("number", "call", "mobile"),
    "hobby": ("love", "enjoy", "like", "into"),
    "hobbies": ("love", "enjoy", "like", "into"),
    "job": ("work", "working", "career"),
    "occupation": ("work", "job", "career"),
    "hometown": ("from", "grew"),
    "birthday": ("born", "birth"),
}
"""Question word -> everyday wordings of its answer (one direction only)."""

SAME_PERSON: Mapping[str, tuple[str, ...]] = {
    "爸爸": ("父亲",),
    "父亲": ("爸爸",),
    "妈妈": ("母亲",),
    "母亲": ("妈妈",),
    "dad": ("father",),
    "father": ("dad",),
    "mom": ("mother",),
    "mother": ("mom",),
}
"""Words that name the same someone (both directions): a hop from "我爸爸..." reaches
"我父亲的..."."""

HOP_ADVERBS = frozenset(
    term_of(w)
    for w in """刚刚 刚才 特别 非常 真的 平时 现在 一直 经常 已经 比较 最近 总是 常常 特意 专门
    其实 实在 确实 真是 really just always usually often still already also very""".split()
)
"""Adverbs: they say how or when, never who; a hop never borrows them."""
_HOP_MAX_DF = 64
"""A word in more statements than this names no one in particular (and its postings would
make the hop pass read a large share of a big pool)."""

_EN_WORD = re.compile(r"[a-z]+")
_CLAUSE_END = re.compile(r"[,.;:!?，。；：！？、]+")
# A Chinese numeral or a digit run directly before a measure word or unit.
_UNITS = "人天周月日号岁年个次位名元块米斤厘"
# A unit written in Latin letters or in Chinese ("168cm", "168厘米"): the other spelling,
# with the same digits (no one writes "一百六十八cm").
_UNIT_SPELLINGS: Mapping[str, str] = {"cm": "厘米", "厘米": "cm", "kg": "公斤", "公斤": "kg"}
_SPELLED_UNIT = re.compile(r"([0-9]+)\s*(cm|kg|厘米|公斤)(?![a-z])", re.IGNORECASE)


def _swap(match: re.Match[str]) -> str:
    import cn2an  # type: ignore[import-untyped]

    raw = match.group()
    try:
        if raw.isdigit():
            return str(cn2an.an2cn(raw.lstrip("0") or "0"))
        return str(int(cn2an.cn2an(raw, "smart")))
    except (ValueError, KeyError, IndexError):
        return raw


# "哪一个" / "这一次" / "每一天" name no quantity; digits before "厘米" / "公斤" keep them
# (:data:`_SPELLED_UNIT`).
_NUMBER = re.compile(
    rf"(?<![哪这那每某0-9])(?:[零〇一二两三四五六七八九十百千万]+|[0-9]+(?![0-9]|厘米|公斤))"
    rf"(?=[{_UNITS}])"
)


@lru_cache(maxsize=4096)
def swap_numerals(text: str) -> str:
    """``text`` with every number before a measure word or unit written in the other script
    (Chinese numerals as digits, digits as Chinese numerals; ``cn2an``, offline).

    Examples:
        >>> swap_numerals("规模超过了九百人，五月份出生，超过1000人")
        '规模超过了900人，5月份出生，超过一千人'
    """
    return _NUMBER.sub(_swap, text)


@lru_cache(maxsize=4096)
def expansion_terms(text: str) -> tuple[str, ...]:
    """The extra words of one query text: paraphrases of its question words.

    Args:
        text: One query leg.

    Returns:
        Extra words, in a fixed order, without repeats and without words already in it.

    Examples:
        >>> expansion_terms("那个兴趣爱好是集邮的人，工作地在哪？")
        ('上班', '喜欢')
        >>> expansion_terms("What is Joanna's hobby?")
        ('love', 'enjoy', 'like', 'into')
    """
    lowered = text.lower()
    words = set(_EN_WORD.findall(lowered))
    out: list[str] = []
    for key, wordings in PARAPHRASES.items():
        found = key in words if key.isascii() else key in lowered
        if found:
            out.extend(w for w in wordings if w not in lowered)
    return tuple(dict.fromkeys(out))


def numeral_variants(text: str) -> tuple[str, ...]:
    """Each number before a measure word or unit in ``text``, written in the other script,
    with its unit (:func:`swap_numerals`), and each number before a unit spelled in Latin
    letters or in Chinese with the other spelling ("168cm" and "168厘米"), in order and
    without repeats.

    Examples:
        >>> numeral_variants("规模超过了九百人，五月份出生，超过1000人")
        ('900人', '5月', '一千人')
        >>> numeral_variants("身高是168cm，体重55公斤")
        ('168厘米', '55kg')
    """
    out: list[str] = []
    for m in _NUMBER.finditer(text):
        swapped = _swap(m)
        if swapped != m.group():
            out.append(swapped + text[m.end()])
    out += [m.group(1) + _UNIT_SPELLINGS[m.group(2).lower()] for m in _SPELLED_UNIT.finditer(text)]
    return tuple(dict.fromkeys(out))


@lru_cache(maxsize=4096)
def expanded_text(text: str) -> str | None:
    """The text of a query's expansion pass: the text as written, then its numbers in the
    other script (:func:`numeral_variants`) and its paraphrases (:func:`expansion_terms`);
    ``None`` when there are none.

    The numbers are added, not swapped: which script the evidence uses is unknown, and a
    pass that dropped the written form lost the statements that write it that way.

    Examples:
        >>> expanded_text("那个规模是九百人的活动，工作地在哪？")
        '那个规模是九百人的活动，工作地在哪？ 900人 上班'
        >>> expanded_text("hello") is None
        True
    """
    extra = (*numeral_variants(text), *expansion_terms(text))
    return f"{text} {' '.join(extra)}" if extra else None


def _words(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of each word (a non-CJK token) and each CJK pair of ``text``,
    positions in its NFKC, lower-case form (:func:`_folded`)."""
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if not (char.isalnum() or char in "-_"):
            i += 1
            continue
        if is_cjk(char):
            if i + 1 < n and is_cjk(text[i + 1]):
                out.append((i, i + 2, text[i : i + 2]))
            i += 1
            continue
        end = i + 1
        while end < n and (text[end].isalnum() or text[end] in "-_") and not is_cjk(text[end]):
            end += 1
        if text[i:end].strip("-_"):
            out.append((i, end, term_of(text[i:end])))
        i = end
    return out


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _unshared(query: str, hit_text: str) -> tuple[str, list[bool]]:
    """The hit's folded text and, per character, whether no word or CJK pair of the query
    covers it."""
    asked = {term for _a, _b, term in _words(_folded(query))}
    text = _folded(hit_text)
    free = [True] * len(text)
    for a, b, term in _words(text):
        if term in asked:
            free[a:b] = [False] * (b - a)
    return text, free


def hop_terms(query: str, hit_text: str, stats: CorpusStats, *, limit: int = 2) -> tuple[str, ...]:
    """What a first hit adds to its question: its first words outside the words it shares
    with the question.

    A question that names someone by an attribute ("the person who is 36") is answered by
    the statements about that someone ("my cousin likes reading"), and the first hit
    ("my cousin is 36") says who it is. The words the hit shares with the question are its
    condition; what it adds is the rest of it ("我刚刚路过的那个商场，是大润发" asked as
    "我路过的商场" adds "大润发", not "刚路" across the shared "路过"). A statement names
    its someone first ("我表姐特别爱好美食烹饪" is about "表姐"; "爱好美食" is the condition
    in other words), so the words come in the order of the hit. Function words, adverbs
    (:data:`HOP_ADVERBS`), single CJK characters, numbers, words no other statement has
    and terms in more than a quarter of the pool (or :data:`_HOP_MAX_DF` statements) are
    left out, and so are CJK pairs with a function character (``我表`` of ``我表姐``).

    Args:
        query: The question.
        hit_text: The first hit's text.
        stats: The pool statistics.
        limit: At most this many terms.

    Returns:
        The terms in the hit's order, each followed by the words that name the same someone
        (:data:`SAME_PERSON`); none in a pool smaller than the ranking's ``hop_min_pool``.
    """
    if stats.n_docs < DEFAULT_PARAMS.hop_min_pool:
        return ()  # in a tiny pool every term is "rare"; the ranking's hop pass agrees
    text, free = _unshared(query, hit_text)
    cap = max(3, min(stats.n_docs // 4, _HOP_MAX_DF))
    found: list[str] = []
    for a, b, term in _words(text):
        if not all(free[a:b]) or is_stop_term(term) or term.isdigit() or term in HOP_ADVERBS:
            continue
        if is_cjk(term[0]) and any(is_stop_term(c) for c in term):
            continue  # a pair with a function character ("我表")
        if 1 < stats.df.get(term, 0) <= cap and term not in found:
            found.append(term)
            if len(found) >= limit:
                break
    return tuple(dict.fromkeys([*found, *(w for t in found for w in SAME_PERSON.get(t, ()))]))


def residual_text(query: str, hit_text: str) -> str:
    """What a question still asks once its first hit is found: the question without the
    part the hit satisfies.

    A conditional question names someone by one attribute and asks for another ("the one
    who likes running, where is he from?"). Its first hit satisfies the condition ("my
    cousin likes running"); the statement that answers it is about the same someone
    (:func:`hop_terms`) and the *other* attribute, and it does not repeat the condition. So
    the second pass ranks the hop terms with what is left. A clause (between punctuation
    marks) that shares a word with the hit is the condition and is blanked whole (the hit
    may word it otherwise: "年龄是26岁" / "今年26岁"), when another clause is left; when every
    clause shares a word, the one sharing the most is the condition and the others stay
    whole ("持续时间是四个周的活动，时间是什么" keeps "时间是什么"); else only the shared
    words (non-CJK words, CJK pairs) are blanked.

    Args:
        query: The question.
        hit_text: The first hit's text.

    Returns:
        The folded question with the satisfied part blanked.

    Examples:
        >>> residual_text("那个年龄是26岁的人，其职业是什么？", "我的下属今年26岁。").split()
        ['其职业是什么?']
        >>> residual_text("那个喜欢跑步的人是哪里人？", "我表哥就喜欢跑步。").split()
        ['那个', '的人是哪里人?']
        >>> residual_text("Who likes tea? Where does she work?", "Ann likes tea").split()
        ['where', 'does', 'she', 'work?']
    """
    text, free = _unshared(hit_text, query)
    words = _words(text)
    cuts = [0, *(m.end() for m in _CLAUSE_END.finditer(text)), len(text)]
    satisfied: list[tuple[int, int, int]] = []  # (words shared, start, end)
    left = False
    for a, b in zip(cuts, cuts[1:], strict=False):
        inside = [all(free[x:y]) for x, y, _t in words if a <= x and y <= b]
        if not all(inside):
            satisfied.append((inside.count(False), a, b))  # the hit shares a word of it
        elif inside:
            left = True  # a clause with words, none shared
    most = max((n for n, _a, _b in satisfied), default=0)
    if not left and any(n < most for n, _a, _b in satisfied):
        # Every clause shares a word with the hit ("持续时间是四个周的活动，时间是什么": the
        # asked "时间" is inside the condition's "持续时间"): the condition is the clause
        # sharing the most words, the others are asked and keep theirs.
        for n, a, b in satisfied:
            free[a:b] = [n < most] * (b - a)
    elif left:
        for _n, a, b in satisfied:
            free[a:b] = [False] * (b - a)
    return "".join(c if k else " " for c, k in zip(text, free, strict=True))
