"""Stage 4, terms: tokens -> ranking terms, function words and question forms. Pure.

Takes the tokens of :mod:`.tokenize` (or a text, for the question forms read by pattern)
and gives ranking terms. A token maps to a ranking term with :func:`term_of` (the light
English suffix stripper), identically for documents and queries (:func:`ranking_terms`);
:func:`is_stop_term` tells the function words that queries ignore; :func:`phrase_text` is
the whole-phrase form of a text's tokens. :mod:`memory_graph.recall.rank` re-exports
:func:`term_of`, :func:`doc_terms` and :func:`is_stop_term`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .tokenize import is_cjk

__all__ = [
    "answer_form_stripped",
    "asks_count",
    "condition_values",
    "doc_terms",
    "is_function_pair",
    "is_stop_term",
    "measured_numbers",
    "names_by_condition",
    "number_units",
    "phrase_text",
    "question_terms",
    "ranking_terms",
    "term_of",
]

# English function words and question words: they carry no topic, and in questions they
# dominate the token count ("what did ... do with her ...").
_EN_STOP = frozenset(
    """a about above after again all also am an and any are as at be been being but by can
    could did do does doing done during each for from had has have having he her here hers
    herself him himself his how i if in into is it its itself just me my myself no nor not of
    off on once only or other our ours out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom whose why will with would you your
    yours yourself""".split()
) | frozenset(
    # What the tokenizer leaves of contractions and the possessive: "Mel's", "don't", "I'm".
    """s t m d ll re ve don didn doesn isn wasn aren weren haven hasn hadn wouldn couldn
    shouldn""".split()
)
# Single CJK function characters (particles, pronouns, question words, copulas).
_CJK_STOP = frozenset("的了是我你他她它们在有和与及或吗呢吧啊呀么什哪谁几个这那就也都还很")
# The function characters that hardly ever sit inside a word: particles, pronouns, the copula
# and "都". A CJK pair holding one spans two words ("的家" of "我用的家电"). Not "了" (去了),
# "在" (现在), "有" (没有), "和" (和平), "个" (个子), "这" / "那" (这里), "还" (还是) ...
_BOUNDARY = frozenset("的是我你他她它们都吗呢吧啊呀么")


_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("ization", "ize"),
    ("ingly", ""),
    ("edly", ""),
    ("ments", "ment"),
    ("ness", ""),
    ("ings", ""),
    ("ies", "y"),
    ("ied", "y"),
    ("ing", ""),
    ("ed", ""),
    ("ly", ""),
    ("es", ""),
    ("s", ""),
)


@lru_cache(maxsize=200_000)
def term_of(token: str) -> str:
    """Map one token to its ranking term (light English suffix stripping).

    Args:
        token: A token from :func:`~memory_graph.recall.tokenize.tokenize`.

    Returns:
        The term. Non-ASCII tokens and short words are returned unchanged.

    Examples:
        >>> [term_of(t) for t in ("painting", "painted", "paints", "hobbies", "is", "咖啡")]
        ['paint', 'paint', 'paint', 'hobby', 'is', '咖啡']
    """
    if token.isdigit() and token.isascii():
        return token.lstrip("0") or "0"  # "08" and "8" are the same number
    if not token.isascii() or not token.isalpha() or len(token) <= 3:
        return token
    for suffix, repl in _SUFFIXES:
        if token.endswith(suffix) and len(token) - len(suffix) + len(repl) >= 3:
            if suffix == "s" and token.endswith(("ss", "us", "is")):
                return token
            stem = token[: len(token) - len(suffix)] + repl
            if suffix in ("ing", "ed", "ings", "edly", "ingly") and len(stem) >= 2:
                if stem[-1] == stem[-2] and stem[-1] not in "lsz":
                    stem = stem[:-1]  # running -> run, stopped -> stop
            return stem
    return token


_EN_STEMMED_STOP = frozenset(term_of(w) for w in _EN_STOP) - _EN_STOP
"""Function words as :func:`term_of` maps them ("doe" of "does")."""
STOP_TERMS = _EN_STOP | _CJK_STOP | _EN_STEMMED_STOP
"""Every function word and character as a ranking term (:func:`is_stop_term`)."""


def doc_terms(tokens: Iterable[str]) -> list[str]:
    """Map a document's tokens to ranking terms, keeping order and repeats."""
    return [term_of(t) for t in tokens]


def ranking_terms(tokens: Iterable[str], stem: bool = True) -> list[str]:
    """The ranking terms of tokens in order, with repeats (:func:`term_of` of each when
    ``stem``, else the tokens themselves): the same for a query's and a document's tokens.

    Examples:
        >>> ranking_terms(["painted", "sunsets"]), ranking_terms(["painted"], stem=False)
        (['paint', 'sunset'], ['painted'])
    """
    return [term_of(t) for t in tokens] if stem else list(tokens)


def phrase_text(tokens: Sequence[str]) -> str:
    """The whole-phrase form of a text from its tokens: the tokens joined by single spaces,
    CJK pairs left out (a query's phrase is found in a document's when it is inside it).

    Examples:
        >>> phrase_text(["咖", "啡", "咖啡", "shop"])
        '咖 啡 shop'
    """
    return " ".join(t for t in tokens if not (len(t) == 2 and is_cjk(t[0])))


def is_function_pair(term: str) -> bool:
    """Whether a term is a CJK pair with a particle or pronoun in it: a pair across two
    words, not a word ("的家" and "电都" of "我用的家电都是啥", not "去了" or "现在").

    Examples:
        >>> [is_function_pair(t) for t in ("的家", "电都", "我用", "家电", "去了", "的")]
        [True, True, True, False, False, False]
    """
    return len(term) == 2 and not _BOUNDARY.isdisjoint(term) and is_cjk(term[0]) and is_cjk(term[1])


def is_stop_term(term: str) -> bool:
    """Whether a ranking term is a function word (ignored in queries), also as stemmed
    ("does" is the term "doe", "having" is "hav").

    Examples:
        >>> [is_stop_term(term_of(w)) for w in ("does", "having", "during", "paint")]
        [True, True, True, False]
    """
    return term in STOP_TERMS


# Question phrases whose words carry no topic: "how many", "what kind of", "有几个", "是什么".
_HOW = frozenset({"many", "much", "often"})
_KIND = frozenset({"kind", "kinds", "type", "types", "sort", "sorts"})
_ZH_QUESTION = frozenset(
    "什么 哪里 哪儿 哪个 哪些 哪位 多少 几个 几位 几次 几天 怎么 怎样 如何 为什 是否 有没".split()
)


def question_terms(tokens: Sequence[str]) -> set[str]:
    """The tokens of a question that only ask: "many" of "how many", "kind"/"of" of "what kind
    of", Chinese question words ("什么", "哪个", "几个"). Queries ignore them like function
    words ("long" of "how long" stays: evidence says "a long time").

    Examples:
        >>> from .tokenize import tokenize
        >>> sorted(question_terms(tokenize("What kind of tea does Sam like? How many cups?")))
        ['kind', 'many', 'of']
        >>> sorted(question_terms(tokenize("我的手机是什么牌子？有几个？")))
        ['什么', '几个']
    """
    out: set[str] = set()
    for i, token in enumerate(tokens):
        prev = tokens[i - 1] if i else ""
        if token in _HOW and prev == "how":
            out.add(token)
        elif token in _KIND and prev in ("what", "which") and tokens[i + 1 : i + 2] == ["of"]:
            out.update((token, "of"))
        elif len(token) == 2 and not token.isascii():
            if token in _ZH_QUESTION:
                out.add(token)
    return out


_COUNT_ZH = re.compile(r"有几|多少(?:个|位|人|次|种|家)|几(?:个|位|次|种|家)人")
_COUNT_EN = re.compile(r"\bhow many\b|\bnumber of\b|\bhow often\b", re.IGNORECASE)


def asks_count(text: str) -> bool:
    """Whether a question asks how many ("有几个人...", "多少位", "how many times"): its
    answer is spread over many statements of the same kind, not one statement and the ones
    about the same someone.

    Examples:
        >>> [asks_count(q) for q in ("有几个活动在上海？", "How many dogs?", "他几岁？")]
        [True, True, False]
        >>> asks_count("那个年龄是26岁的人，其姓名有几个字？")
        False
    """
    text = answer_form_stripped(text)  # "其姓名有几个字" counts characters, not statements
    return bool(_COUNT_ZH.search(text) or _COUNT_EN.search(text))


# Measure words and units after a number that states a value (a quantity, or a date's
# parts: "生日是9月" states the month). A bare number ("on 16 November, 2023") is not one.
_MEASURES = frozenset("人天周岁个次位名元块米斤克厘年月日号")


def number_units(tokens: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Each number written before a measure word or unit, with that unit, as ranking terms
    (``("9", "月")`` of "9月份"): a document states that value where it writes the same.

    Examples:
        >>> from .tokenize import tokenize
        >>> number_units(tokenize("9月份，26岁，9:00"))
        (('9', '月'), ('26', '岁'))
    """
    return tuple(
        dict.fromkeys(
            (term_of(t), nxt)
            for t, nxt in zip(tokens, tokens[1:], strict=False)
            if t.isdigit() and t.isascii() and nxt in _MEASURES
        )
    )


def measured_numbers(tokens: Sequence[str]) -> set[str]:
    """The numbers of a question written before a measure word or unit ("26" of "26岁",
    "3000" of "3000人"): values its evidence states exactly.

    Examples:
        >>> from .tokenize import tokenize
        >>> sorted(measured_numbers(tokenize("那个26岁的人，生日是4月11日，3000人的活动？")))
        ['11', '26', '3000', '4']
        >>> measured_numbers(tokenize("What did Tim say on 16 November, 2023?"))
        set()
    """
    return {
        term_of(t)
        for t, nxt in zip(tokens, tokens[1:], strict=False)
        if t.isdigit() and t.isascii() and nxt in _MEASURES
    }


# How a question wants its answer picked or presented, not what it is about: a multiple-choice
# frame ("以下哪个是最可能的描述", "符合它的地点描述", "which of the following", "most likely") and
# a count of characters ("其姓名有几个字"). No statement says these words; in a query they only
# pull in statements that happen to ("这家店的描述", "最可能周六去"). Each kept form changed the
# ranking of both an invented set and a tuned one; the narrower forms once here ("后缀",
# "后4位之和", "哪个季节", "主要职责") changed neither and were removed (issue 28).
_ANSWER_FORM = re.compile(
    r"以下(?:哪个|哪一个|哪些)|最(?:有)?可能的?(?:描述)?|(?:符合|相符)(?P<kept>[^，。？?]{0,8}?)描述"
    r"|(?:有)?几个字|\bwhich of the following\b|\bmost likely\b",
    re.IGNORECASE,
)


def answer_form_stripped(text: str) -> str:
    """``text`` without the words that say how the answer is to be worked out or presented
    (:data:`_ANSWER_FORM`), each replaced by a space ("符合它的地点描述" keeps "它的地点").

    Examples:
        >>> answer_form_stripped("对于我拥有的手机，以下哪个是最可能的描述？").split()
        ['对于我拥有的手机，', '是', '？']
        >>> answer_form_stripped("那个人的姓名有几个字？邮箱的后缀是多少？").split()
        ['那个人的姓名', '？邮箱的后缀是多少？']
        >>> answer_form_stripped("哪一个符合它的活动地点描述？").split()
        ['哪一个', '它的活动地点', '？']
    """
    return _ANSWER_FORM.sub(lambda m: f" {m.group('kept') or ''} ", text)


# "那个X是Y的人" / "那位X是Y的": the someone (or something) whose X is Y. Y is the value that
# tells it apart; X is said by every statement of that kind, whatever its value.
_CONDITION = re.compile(r"那(?:个|位)[^，。？?!！,]*?是([^，。？?!！,的]{1,16})的")


def condition_values(text: str) -> tuple[str, ...]:
    """The values of a question's conditions: Y of "那个X是Y的人" (the one whose X is Y).

    Examples:
        >>> condition_values("那个教育背景是专科的人，其姓名是什么？")
        ('专科',)
        >>> condition_values("那个喜欢跑步的人是哪里人？")
        ()
    """
    return tuple(m.group(1) for m in _CONDITION.finditer(text))


# "那个喜欢跑步的人" (the one who ...), and "我去过的书店" / "我用过的相机" (the thing named by
# what I did with it: a verb phrase of up to 6 characters between "我" and "的").
_NAMED_BY_CONDITION = re.compile(
    r"那(?:个|位)[^，。？?!！,]*的|我[^的，。？?!！,]{1,6}的"
    r"|\bthe (?:one|person|man|woman|guy|people|friend|event) (?:who|whose|that|which|with)\b",
    re.IGNORECASE,
)


def names_by_condition(text: str) -> bool:
    """Whether a question names its someone by a condition ("那个喜欢跑步的人",
    "the one who runs", "我去过的书店") rather than by name: its first hits are candidates
    for that someone, and which one the condition means is for the hop to tell (a merged
    memory may hold two bookshops "I went to").

    Examples:
        >>> [names_by_condition(q) for q in ("那个当翻译的人是哪里人？", "我表哥是哪里人？")]
        [True, False]
        >>> [names_by_condition(q) for q in ("我去过的书店怎么样？", "我的相机是什么？")]
        [True, False]
        >>> names_by_condition("Where is the one who paints from?")
        True
    """
    return bool(_NAMED_BY_CONDITION.search(text))
