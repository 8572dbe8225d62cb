"""Clauses: a quote widened to its whole sentence, read clause by clause (issue 26 §1). Pure.

A verbatim quote proves that the user said *these words*, not what they meant by them: a
substring cuts a negation off (``eat meat`` of "I don't eat meat"), a mid-word quote turns
"dislike" into ``like``. So every quote is widened to the whole sentence (or sentences) of
the human message it sits in (:func:`widen`), and the content must be faithful to that text
(:func:`faithful`; a keyed value: :func:`faithful_value`):

1. **Sentences** end at ``. ! ? ; 。！？；`` and line breaks (a ``.`` only before white space,
   and not after ``Dr``/``Mr``/...): the split the offline extractor quotes. **Clauses** are
   cut at ``, ， 、 : ：`` brackets, quotes and dashes, and before ``but``, ``however``,
   ``though``, ``whereas``, ``and I``/``and my``, ``但``, ``可是``, ``不过``, ``而是``.
2. **Items.** A clause is tokenised as the support rule does (contractions expanded, NFKC,
   lower case, one CJK character a term, Latin words Snowball-stemmed); subject words,
   function words and acknowledgements are dropped, prepositions kept. An item is a
   negation (``not``, ``never``, ``hardly``, ``without``, ``不``, ``没``, ``很少`` ... but
   not in ``never mind``, ``no problem``, ``没问题``, ``非常`` or an ``A不A`` choice), a
   number, a marker of modality, attitude or time (``want``, ``might``, ``will``,
   ``think``, ``stopped``, ``used to``, ``was``, ``想``, ``要``, ``会``, ``考虑``, ``以前``,
   ``曾经`` ...), a person other than the user (``my brother``, ``he``, ``同事``; not the
   assistant asked to do something: ``you can call me Sam``) or a plain term. A Latin term
   keeps its form (``lived`` is not ``lives``, ``painting`` is not ``paint``) and its
   inflection base, so two words only match when they differ by an inflection
   (``animation`` does not match ``animals``, though both stem to ``anim``).
3. **Faithful** when the content's items occur in the text *in the same order* (so a role,
   a preposition or a number cannot change place: "my boss hired me" does not give "User
   hired their boss"; a closing prepositional phrase may move to the front whole: "User
   goes climbing on Saturdays" restates "On Saturdays I go climbing") and, for that
   occurrence:

   - **negation**: a negation governs the rest of its clause only, and each matched word
     is governed by one in the text exactly when it is in the content ("No, I prefer tea",
     "I use vim, not emacs" and "没问题，我喜欢喝茶" restate faithfully; "I don't like tea, I
     like coffee" is not "User does not like coffee"); a negation or modal of the content
     comes from the clause of the word it governs;
   - **modality and time**: a marker standing before a matched word of its clause is matched
     too ("I want to learn Rust" is not "User learns Rust");
   - **numbers**: a number between the first and last matched word, or just before the
     first, is matched too;
   - **who**: no person named before a matched word of its clause is left out ("my
     brother likes jazz" is not "User likes jazz");
   - **mood**: no matched word sits in a question (a clause ending a ``?`` sentence or in
     ``吗``, an inverted ``do I``/``am I``/``should I``, an ``A不A`` choice), a request
     (``can you``, ``please``, ``请``, ``能不能`` ...) excepted.

   A retraction's text names what the quote withdraws, so only order, who and mood apply
   to it.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from ..recall.tokenize import is_cjk
from ._lexicon import FREE, SUBJECT_PHRASE, prepare, stem

__all__ = ["ABBREVIATION", "SPLIT", "faithful", "faithful_value", "fold", "widen"]

SPLIT = re.compile(r"(?<=[!?。！？;；\n])|(?<=\.)(?=\s)")
"""Where a sentence may end (the offline extractor quotes these sentences)."""
ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mx)\.$")
"""A ``.`` after these does not end a sentence."""

_CLAUSE_CUT = re.compile(
    r"[,，、:：()（）\[\]【】\"“”「」]|\s[-–—]+\s|—+|"
    r"\s(?=(?:but|however|though|although|whereas|except|instead)\b)|"
    r"\s(?=and\s+(?:i|my|we|our)\b)|"
    r"(?=但是|可是|然而|而是|不过)|(?<![不])(?=但)",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^\W*(?:(?:and|but|so|also|ok|okay|hey|hi|oh)\W+)*"
    r"(?:(?:can|could|would|will)\s+(?:you|u)\b|please\b|would you mind\b|"
    r"请|可以|能不能|能否|可不可以|麻烦|帮我|你能|你可以|您能|您可以)",
    re.IGNORECASE,
)
_INVERTED = re.compile(
    r"^\W*(?:do|does|did|am|is|are|was|were|can|could|should|shall|will|would|have|has|"
    r"may|might|must)\s+(?:i|my|we|our)\b",
    re.IGNORECASE,
)
_ZH_QUESTION_END = re.compile(r"吗\W*$")
_CHOICE = re.compile(r"([\u4e00-\u9fff])[不没]\1")
# Spans whose negation characters do not negate ("very", "no problem", "never mind", "A不A").
_NOT_NEGATION = re.compile(
    r"非常|特别|不错|没错|不客气|不过|差不多|没问题|没关系|不管|无论|([\u4e00-\u9fff])[不没]\1|"
    r"\bnever mind\b|\bno (?:problem|worries|doubt)\b|\bnot only\b"
)
_ZH_MARK = re.compile(
    r"想(?![法象念起])|(?<![重需主只必])要(?![求是么点素])|需要|"
    r"(?<![开机社约聚体误学])会(?![议话员计场所谈])|(?<![可功性技智才本])能(?![力源量])|"
    r"可以|可能|应该|应当|必须|打算|希望|愿意|也许|或许|大概|将要|将会|准备|"
    r"以前|之前|曾经|过去|原来|从前|去年|前年|昨天|当年|将来|明年|明天|"
    r"考虑|觉得|认为|怀疑|开始|停止|放弃"
)
_ZH_NUMBER = frozenset("零〇两二三四五六七八九十百千万亿")
_NOT_ZH_NUMBER = re.compile(r"十分|千万|万一|三心二意")
_ZH_NEGATION = frozenset("不没别無无非未勿莫")
_EN_NEGATION = frozenset(
    "not no never none nothing nobody neither nor without cannot nowhere hardly rarely "
    "seldom barely scarcely".split()
)
_ZH_NEGATION_WORDS = re.compile(r"很少|极少|难得|几乎不")
_EN_MARK = frozenset(
    "can could may might must shall should will would want wants wanted need needs needed "
    "ought wish wished hope hoped plan plans planned maybe perhaps probably possibly "
    "was were had did formerly previously yesterday tomorrow think thinking thought consider "
    "considering wonder wondering guess suppose doubt stop stopped quit quitting start "
    "started begin began".split()
)
_EN_NUMBER = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million billion dozen half twice".split()
)
_PREPOSITION = frozenset(
    "to of in on at for with by from into onto about over under before after since until "
    "during between against through toward towards via per than".split()
)
_PERSON = frozenset(
    "he she they him her them you u brother brothers sister sisters mother mom mum father "
    "dad parents wife husband partner boyfriend girlfriend son sons daughter daughters kid "
    "kids child children friend friends colleague colleagues coworker coworkers boss manager "
    "teacher roommate neighbor neighbour family team everyone people someone somebody "
    "他 她 它 你 您".split()
)
_YOU = frozenset(("you", "u", "你", "您"))
_ZH_PERSON = re.compile(
    r"朋友|同事|老板|领导|妈妈|爸爸|母亲|父亲|老公|老婆|丈夫|妻子|儿子|女儿|孩子|哥哥|姐姐|弟弟|"
    r"妹妹|老师|同学|室友|男朋友|女朋友|家人|父母|别人|大家|有人"
)
_WORD = re.compile(r"[\w\-]+")
_INFLECTIONS = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))

TERM, NEGATION, NUMBER, MARK, PERSON = "term", "negation", "number", "mark", "person"
MAX_STARTS = 64
"""Clauses an occurrence of the content may start at (a bound on work for huge messages;
past it the content is not supported)."""


def fold(text: str) -> str:
    """NFKC-normalise ``text`` and fold every whitespace run into one space.

    >>> fold("call\\u00a0me   Ｓａｍ ")
    'call me Sam'
    """
    return " ".join(unicodedata.normalize("NFKC", text).split())


# --------------------------------------------------------------------------- widening


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in sorted({m.start() for m in SPLIT.finditer(text)} | {len(text)}):
        if cut <= start:
            continue
        if cut < len(text) and ABBREVIATION.search(text[start:cut].rstrip()):
            continue  # "Dr. Lee" is one sentence
        spans.append((start, cut))
        start = cut
    return spans


def widen(text: str, quote: str) -> list[str]:
    """The whole sentence(s) of ``text`` around each place ``quote`` stands in it.

    Both are compared folded (:func:`fold`); a line break ends a sentence. Each result is
    the user's own characters (NFKC is used to find it, not to store it: ``，`` stays
    ``，``) with white space folded, without repeats, in the order of the text.

    Args:
        text: a human message's text.
        quote: a candidate's quote of it.

    Returns:
        The widened quotes; empty when ``quote`` is blank or not in ``text``.

    >>> widen("Hi! I don't eat meat, sorry. Bye", "eat meat")
    ["I don't eat meat, sorry."]
    >>> widen("I dislike cats", "like cats")
    ['I dislike cats']
    >>> widen("好的。没问题，我喜欢喝茶。", "喜欢")
    ['没问题，我喜欢喝茶。']
    """
    needle = fold(quote)
    if not needle:
        return []
    raw = "\n".join(" ".join(line.split()) for line in text.splitlines())
    body = "\n".join(fold(line) for line in unicodedata.normalize("NFKC", text).splitlines())
    spans, raw_spans = _sentence_spans(body), _sentence_spans(raw)
    same = len(spans) == len(raw_spans) and all(
        fold(raw[a:b]) == fold(body[c:d]) for (a, b), (c, d) in zip(raw_spans, spans, strict=True)
    )
    pattern = re.compile(r"[ \n]".join(re.escape(part) for part in needle.split(" ")))
    source, where = (raw, raw_spans) if same else (body, spans)
    ends = [b for _, b in spans]
    out: list[str] = []
    seen: set[tuple[int, int]] = set()
    for m in pattern.finditer(body):
        first = bisect.bisect_right(ends, m.start())
        last = bisect.bisect_left(ends, m.end(), lo=first)
        if first >= len(spans) or (first, last) in seen:
            continue
        seen.add((first, last))
        widened = " ".join(source[where[first][0] : where[min(last, len(spans) - 1)][1]].split())
        if widened not in out:
            out.append(widened)
    return out


# --------------------------------------------------------------------------- items


@dataclass(frozen=True, slots=True)
class Item:
    """One meaning-bearing word of a text, with where it stands."""

    key: str
    kind: str
    form: str = ""
    """``past`` (``lived``), ``ing`` (``painting``) or empty: the form of a Latin word."""
    base: str = ""
    clause: int = 0
    governed: bool = False
    """A negation of its clause stands before it (content items only)."""


def _base(word: str) -> str:
    """``word`` without an inflectional ending (``likes`` -> ``lik``, ``cities`` -> ``city``)."""
    for suffix, repl in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def _inflections(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by an inflection only (not ``animation``/``animals``)."""
    a, b = _base(a), _base(b)
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and len(long) - len(short) <= 2


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def _inside(at: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= at < b for a, b in spans)


def _tokens(text: str) -> list[tuple[str, int]]:
    """Words (a CJK character is one) with their offsets, as the recall tokenizer cuts them."""
    out: list[tuple[str, int]] = []
    for m in _WORD.finditer(text):
        run, origin, i = m.group(), m.start(), 0
        while i < len(run):
            cjk = is_cjk(run[i])
            j = i + 1
            while j < len(run) and is_cjk(run[j]) == cjk:
                j += 1
            if cjk:
                out.extend((run[k], origin + k) for k in range(i, j))
            elif not set(run[i:j]) <= {"-", "_"}:
                out.append((run[i:j], origin + i))
            i = j
    return out


def _clause_items(
    clause: str, index: int, *, window: bool = False, request: bool = False
) -> list[Item]:
    """The items of one clause. In the user's own words (``window``), the people they name
    (``my brother``, ``he``, ``you``, ``同事``) are items too: a restatement that leaves out
    who does something before it moves the deed to the user."""
    text = prepare(clause).lower()
    people = _spans(_ZH_PERSON, text) if window else []
    quiet = _spans(_NOT_NEGATION, text)
    marks = _spans(_ZH_MARK, text)
    negations = _spans(_ZH_NEGATION_WORDS, text)
    not_numbers = _spans(_NOT_ZH_NUMBER, text)
    tokens = _tokens(text)
    out: list[Item] = []
    for n, (word, at) in enumerate(tokens):
        following = tokens[n + 1][0] if n + 1 < len(tokens) else ""
        if window and (word in _PERSON or _inside(at, people)):
            # "can you ...", "you can call me Sam", "你叫我小明": the assistant is asked.
            asked = word in _YOU and (
                request or following in _EN_MARK or following in "可能要叫就得别应"
            )
            if not asked:
                out.append(Item(word if is_cjk(word[0]) else stem(word), PERSON, clause=index))
            continue
        if is_cjk(word[0]):
            if _inside(at, quiet) or word in FREE:
                continue
            if word in _ZH_NEGATION or _inside(at, negations):
                out.append(Item(word, NEGATION, clause=index))
            elif word in _ZH_NUMBER and not _inside(at, not_numbers):
                out.append(Item(word, NUMBER, clause=index))
            else:
                out.append(Item(word, MARK if _inside(at, marks) else TERM, clause=index))
            continue
        if _inside(at, quiet):
            continue
        if word in _EN_NEGATION:
            out.append(Item(word, NEGATION, clause=index))
        elif word == "used" and following == "to":
            out.append(Item("used to", MARK, clause=index))
        elif word in _EN_MARK:
            if following not in ("you", "u"):  # "can you ..." asks, it states no modality
                out.append(Item(stem(word), MARK, form=_form(word), base=word, clause=index))
        elif any(ch.isdigit() for ch in word) or word in _EN_NUMBER:
            out.append(Item(word, NUMBER, clause=index))
        elif word in _PREPOSITION:
            out.append(Item(word, TERM, clause=index))
        elif word not in FREE:
            out.append(Item(stem(word), TERM, form=_form(word), base=word, clause=index))
    return out


def _form(word: str) -> str:
    """``past`` for a past form, ``ing`` for a gerund or participle, else empty."""
    if len(word) > 3 and word.endswith("ed") and stem(word) != word:
        return "past"
    if len(word) > 5 and word.endswith("ing") and stem(word) != word:
        return "ing"
    return ""


def _clauses(text: str) -> list[tuple[str, bool, bool]]:
    """``(clause, is_question, is_request)`` for each clause of ``text``, in order."""
    out: list[tuple[str, bool, bool]] = []
    for start, end in _sentence_spans(text):
        sentence = text[start:end].strip()
        asks = sentence.endswith(("?", "？"))
        parts = [p for p in _CLAUSE_CUT.split(sentence) if p and p.strip(" ?？!！.。;；")]
        for k, part in enumerate(parts):
            request = bool(_REQUEST.match(part))
            question = (
                (asks and k == len(parts) - 1)
                or bool(_ZH_QUESTION_END.search(part))
                or bool(_CHOICE.search(part))
                or bool(_INVERTED.match(part))
            )
            out.append((part, question and not request, request))
    return out


@dataclass(frozen=True, slots=True)
class _Window:
    """A widened quote, read: its items, which of them follow a negation of their own
    clause, where each clause's modality and time markers stand, and its question clauses."""

    items: tuple[Item, ...]
    scoped: tuple[bool, ...]
    marks: dict[int, tuple[int, ...]]
    people: dict[int, tuple[int, ...]]
    questions: frozenset[int]


@lru_cache(maxsize=1024)
def _analyse(text: str) -> _Window:
    items: list[Item] = []
    questions: set[int] = set()
    for index, (clause, question, request) in enumerate(_clauses(text)):
        items.extend(_clause_items(clause, index, window=True, request=request))
        if question:
            questions.add(index)
    scoped: list[bool] = []
    marks: dict[int, list[int]] = {}
    people: dict[int, list[int]] = {}
    current, negated = -1, False
    for n, item in enumerate(items):
        if item.clause != current:
            current, negated = item.clause, False
        scoped.append(negated)
        negated = negated or item.kind == NEGATION
        if item.kind in (MARK, PERSON):
            (marks if item.kind == MARK else people).setdefault(item.clause, []).append(n)
    return _Window(
        tuple(items),
        tuple(scoped),
        {k: tuple(v) for k, v in marks.items()},
        {k: tuple(v) for k, v in people.items()},
        frozenset(questions),
    )


def _content_items(content: str, window: tuple[Item, ...]) -> list[Item]:
    """The content's items, each marked when a negation of its own clause governs it."""
    present = {i.key for i in window}
    out: list[Item] = []
    for index, (clause, _question, _request) in enumerate(
        _clauses(SUBJECT_PHRASE.sub(" ", content))
    ):
        negated = False
        for item in _clause_items(clause, index):
            if item.key in _PREPOSITION and item.key not in present:
                continue  # a preposition the text lacks is a free word of the restatement
            out.append(replace(item, governed=negated))
            negated = negated or item.kind == NEGATION
    return out


_KIND = {PERSON: TERM}


def _same(a: Item, b: Item) -> bool:
    if a.key != b.key or _KIND.get(a.kind, a.kind) != _KIND.get(b.kind, b.kind) or a.form != b.form:
        return False
    return not (a.base and b.base) or _inflections(a.base, b.base)


def _embed(content: list[Item], window: tuple[Item, ...], start: int) -> list[int] | None:
    """The earliest places of ``content``'s items, in order, from ``window[start]`` on."""
    out: list[int] = []
    j = start
    for item in content:
        while j < len(window) and not _same(item, window[j]):
            j += 1
        if j == len(window):
            return None
        out.append(j)
        j += 1
    return out


def _agrees(content: list[Item], window: _Window, where: list[int], statement: bool) -> bool:
    items = window.items
    matched = set(where)
    for i in where:
        clause = items[i].clause
        if clause in window.questions:
            return False  # a question is not a fact
        if any(p < i and p not in matched for p in window.people.get(clause, ())):
            return False  # someone else does it: the content leaves them out
        if statement and any(m < i and m not in matched for m in window.marks.get(clause, ())):
            return False  # a modality or time the content leaves out
    if not statement:
        return True
    for k, i in enumerate(where):
        if items[i].kind != NEGATION and window.scoped[i] != content[k].governed:
            return False  # a negation governs it on one side only
        operator = content[k].kind in (NEGATION, MARK)
        if operator and k + 1 < len(where) and items[where[k + 1]].clause != items[i].clause:
            return False  # a negation or modal borrowed from another clause
    negated = any(window.scoped[i] and items[i].kind != NEGATION for i in where)
    if negated != any(i.kind == NEGATION for i in content):
        return False
    first, last = min(where), max(where)
    before = [first - 1] if first and items[first - 1].clause == items[first].clause else []
    return all(n in matched or items[n].kind != NUMBER for n in [*before, *range(first, last + 1)])


def faithful(text: str, content: str, *, statement: bool = True) -> bool:
    """Whether ``content`` restates ``text`` (a widened quote) under the module's rule.

    Args:
        text: the widened quote (see :func:`widen`).
        content: a candidate's content.
        statement: ``False`` for a retraction, whose text names what the quote withdraws:
            only order, who and mood are checked.

    Returns:
        ``True`` when some in-order occurrence of the content's words in ``text`` keeps
        their negation, modality, time, numbers and mood.

    >>> faithful("I use vim, not emacs", "User uses vim")
    True
    >>> faithful("I use vim, not emacs", "User uses emacs")
    False
    >>> faithful("My boss hired me", "User hired their boss")
    False
    """
    window = _analyse(fold(text))
    items = _content_items(fold(content), window.items)
    if not items:
        return False
    starts = [
        n
        for n, item in enumerate(window.items)
        if n == 0 or item.clause != window.items[n - 1].clause
    ]
    for order in (items, _fronted(items)):
        for start in starts[:MAX_STARTS] if order else ():
            where = _embed(order, window.items, start)
            if where is None:
                break
            if _agrees(order, window, where, statement):
                return True
    return False


def _fronted(items: list[Item]) -> list[Item]:
    """``items`` with a closing prepositional phrase moved to the front ("User goes climbing
    on Saturdays" for "On Saturdays I go climbing"), or empty when there is none. The phrase
    moves whole, so no word changes its role."""
    at = max((n for n, i in enumerate(items) if i.key in _PREPOSITION), default=0)
    tail = items[at:]
    if at == 0 or any(i.kind in (NEGATION, MARK) for i in tail) or len(tail) < 2:
        return []
    return tail + items[:at]


def faithful_value(text: str, value: str, *, statement: bool = True) -> bool:
    """Whether a keyed ``value`` stands in ``text`` (a widened quote) as the user meant it.

    The value must be words of ``text``; for one of its places, the clause holding it is
    not a question, names no one else before it (``my boss uses Emacs``) and, for a
    statement, is negated before the value's end exactly when the value itself is negated
    ("never answer in English" gives no ``English``; "No emojis please" gives ``No
    emojis``).

    >>> faithful_value("我在东八区，晚上十点以后别安排会议。", "东八区")
    True
    >>> faithful_value("I use vim, not emacs", "emacs")
    False
    """
    body, needle = fold(text), fold(value)
    if not needle:
        return False
    own = _clause_items(needle, 0, window=True)
    negated = any(i.kind == NEGATION for i in own)
    named = {i.key for i in own if i.kind == PERSON}
    spans: list[tuple[int, str, bool, bool]] = []
    offset = 0
    for clause, question, request in _clauses(body):
        found = body.find(clause, offset)
        if found >= 0:
            spans.append((found, clause, question, request))
            offset = found + len(clause)
    starts = [span[0] for span in spans]
    for n, m in enumerate(re.finditer(re.escape(needle), body, re.IGNORECASE)):
        k = bisect.bisect_right(starts, m.start()) - 1
        if n >= MAX_STARTS or k < 0:
            break
        found, clause, question, request = spans[k]
        if question or m.start() >= found + len(clause):
            continue
        prefix = _clause_items(clause[: m.end() - found], 0, window=True, request=request)
        if {i.key for i in prefix if i.kind == PERSON} - named:
            continue  # someone else's: "my boss uses Emacs"
        if not statement or any(i.kind == NEGATION for i in prefix) == negated:
            return True
    return False
