"""The guard's normalizer: one canonical view of a text, with a map back to the original.

Detectors never see the raw text. They see :class:`Normalized.text`, where typing
variation and deliberate evasion have been undone:

- format characters (zero-width space/joiner, word joiner, soft hyphen, BOM) and variation
  selectors are removed;
- every character goes through Unicode NFKC (full-width digits and letters, ideographic
  space, compatibility forms); dash variants become ``-``, curly quotes straight ones, and
  bullets and middle dots ``·``;
- Cyrillic and Greek letters that look like Latin ones become those Latin letters
  (``confusable-homoglyphs``);
- Traditional Chinese becomes Simplified (``opencc``, ``t2s``);
- characters spaced out or dotted apart are joined (``我 有 糖 尿 病``, ``p a n i c``,
  ``f.e.l.o.n.y``, ``國/民/黨``); single digits spaced apart are joined;
- ``O``/``o`` and ``l``/``I`` inside a run of digits become ``0`` and ``1``;
- Chinese digit strings (``四三〇一…``) become ASCII digits and Chinese amounts with units
  (``两万三``, ``一百二十七万``) become numbers (``cn2an``);
- English numbers in words become digits: three or more digit words in a row
  (``four one five, five five five``) digit by digit, keeping a break between groups as
  one space, and compound amounts (``sixty-eight thousand``, ``two hundred and forty``)
  through ``word2number``; a lone ``three`` or ``one`` stays a word;
- leetspeak inside a word (``d1abetes``, ``s@lary``, ``th3rapist``) becomes letters: a
  ``0 1 3 4 5 7 @ $`` between two letters, or opening a word, in a word with a run of
  three letters (ids and postcodes such as ``G3002704`` or ``K1A 0B1`` have none; an
  e-mail address and terms of art such as ``HbA1c`` or ``H1N1`` are left alone).

Separators inside numbers (spaces, dashes, dots, slashes) are kept: amounts need their
decimal point, and the number detectors read digit groups themselves.

Every character of the normalized text remembers the original range it came from, so a
span found on the normalized view maps back with :meth:`Normalized.original_span`.

>>> n = normalize("我 有 糖 尿 病")
>>> n.text
'我有糖尿病'
>>> n.original_span(2, 5)
(4, 9)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ._gate import any_match

__all__ = ["Normalized", "normalize"]

_CJK_RANGE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_RANGE}]")
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
_SINGLE_QUOTES = frozenset("\u2018\u2019\u201a\u201b\u2032")
_DOUBLE_QUOTES = frozenset("\u201c\u201d\u201e\u201f\u2033")
_DOTS = frozenset("\u00b7\u2022\u2027\u2219\u30fb\u22c5\u2024")


@dataclass(frozen=True)
class Normalized:
    """A normalized text and, per character, the original range it came from.

    Attributes:
        original: the text as given.
        text: the normalized view the detectors read.
        starts: for each character of ``text``, the start offset in ``original``.
        ends: for each character of ``text``, the end offset in ``original``.
    """

    original: str
    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map ``text[start:end]`` back to ``(start, end)`` offsets in ``original``.

        Args:
            start: start offset in the normalized text.
            end: end offset (exclusive) in the normalized text.

        Returns:
            The smallest original range that covers every character of the span.
        """
        if not self.text:
            return (0, len(self.original))
        start = min(max(start, 0), len(self.text) - 1)
        end = min(max(end, start + 1), len(self.text))
        return (self.starts[start], self.ends[end - 1])


# One working character: (text, original start, original end). Text may be empty
# (deleted) or longer than one character (an NFKC expansion or a converted number).
_Piece = list[Any]


def _is_cjk(ch: str) -> bool:
    return bool(ch) and _CJK.match(ch) is not None


@lru_cache(maxsize=4096)
def _latin_lookalike(ch: str) -> str:
    """The Latin letter a Cyrillic or Greek letter imitates, else the letter itself."""
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(ch, greedy=True, preferred_aliases=["latin"])
    for entry in found or ():
        for glyph in entry.get("homoglyphs", ()):
            c = glyph.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalpha():
                return str(c)
    return ch


@lru_cache(maxsize=8192)
def _fold(ch: str) -> str:
    """Fold one character: format characters out, NFKC, dashes, quotes, homoglyphs."""
    if ch in _DASHES:
        return "-"
    if ch in _SINGLE_QUOTES:
        return "'"
    if ch in _DOUBLE_QUOTES:
        return '"'
    if ch in _DOTS:
        return "·"
    cat = unicodedata.category(ch)
    if cat in ("Cf", "Mn", "Me") or "\ufe00" <= ch <= "\ufe0f":
        return ""
    if cat == "Zs":
        return " "
    out = unicodedata.normalize("NFKC", ch)
    if out in _DASHES:
        return "-"
    if len(out) == 1 and "\u0370" <= out <= "\u052f" and out.isalpha():
        return _latin_lookalike(out)
    return out


@lru_cache(maxsize=1)
def _t2s() -> Any:
    import opencc

    return opencc.OpenCC("t2s")


def _simplify(pieces: list[_Piece], text: str) -> None:
    """Traditional -> Simplified, in place, one character for one character."""
    if _CJK.search(text) is None:
        return
    owner = _owners(pieces)
    idx = [owner[m.start()] for m in _CJK.finditer(text) if len(pieces[owner[m.start()]][0]) == 1]
    converter = _t2s()
    joined = "".join(pieces[i][0] for i in idx)
    converted = str(converter.convert(joined))
    if converted == joined:
        return
    if len(converted) == len(joined):
        for i, ch in zip(idx, converted, strict=True):
            pieces[i][0] = ch
        return
    for i in idx:  # a phrase conversion changed the length: fall back to characters
        one = str(converter.convert(pieces[i][0]))
        if len(one) == 1:
            pieces[i][0] = one


def _text(pieces: list[_Piece]) -> str:
    return "".join(p[0] for p in pieces)


def _rebuild(pieces: list[_Piece]) -> tuple[str, list[int], list[int]]:
    """Flatten pieces to (text, original start per character, original end per character)."""
    starts = [p[1] for p in pieces for _ in p[0]]
    ends = [p[2] for p in pieces for _ in p[0]]
    return _text(pieces), starts, ends


def _owners(pieces: list[_Piece]) -> list[int]:
    """The piece index of every character of the current text."""
    return [n for n, p in enumerate(pieces) for _ in p[0]]


_SPACED_CJK = re.compile(rf"(?<=[{_CJK_RANGE}])(?:[ \t]+|[ ]?[·/*_\-|][ ]?|\.)(?=[{_CJK_RANGE}])")
_SPACED_SYMBOL = re.compile(
    r"(?<![A-Za-z0-9'])[A-Za-z](?P<sep>[.·/_*+|-])[A-Za-z](?:(?P=sep)[A-Za-z])*\.?(?![A-Za-z0-9])"
)
_SPACED_LATIN = re.compile(
    r"(?<![A-Za-z0-9'])[A-Za-z0-9](?P<sep> )[A-Za-z0-9](?:(?P=sep)[A-Za-z0-9])*(?![A-Za-z0-9])"
)
_TWO_LETTER_WORDS = frozenset(
    "am an as at be by do go he if in is it me my no of on or so to up us we ok".split()
)
_SPLIT_WORD = re.compile(r"(?<=[a-z])[·/](?=[a-z])", re.IGNORECASE)
_SPACED_DIGITS = re.compile(r"(?<![0-9])[0-9](?: [0-9])+(?![0-9])")
_EXTRA_SPACES = re.compile(r"(?<= ) +")
_DIGIT_LOOKALIKE = re.compile(
    r"(?<![A-Za-z])(?=[0-9OolI]*[0-9][0-9OolI]*[0-9])[0-9OolI]{4,}(?![A-Za-z])"
)
_CN_DIGITS = re.compile("[〇零一二三四五六七八九]{5,}")
_CN_AMOUNT = re.compile(
    "(?<![零一二两三四五六七八九十百千万亿])[一二两三四五六七八九十][零一二两三四五六七八九十百千万亿]+"
)
_CN_DIGIT_VALUE = {c: str(i) for i, c in enumerate("零一二三四五六七八九")} | {"〇": "0"}

_EN_DIGIT_VALUE = {
    w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine".split())
} | {"oh": "0", "nought": "0"}
_EN_DIGIT = r"(?:zero|oh|nought|one|two|three|four|five|six|seven|eight|nine)"
_EN_DIGITS = re.compile(
    rf"(?<![A-Za-z'-])(?i:{_EN_DIGIT}(?:(?:[ ]?[,-][ ]?|[ ]){_EN_DIGIT}){{2,}})(?![A-Za-z'-])"
)
_EN_UNIT = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_EN_SMALL = (
    r"(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[ -]" + _EN_UNIT + r")?|"
    r"ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|"
    + _EN_UNIT
    + ")"
)
_EN_HUNDREDS = rf"(?:(?:{_EN_SMALL}|a) hundred(?: (?:and )?{_EN_SMALL})?)"
_EN_AMOUNT = re.compile(
    r"(?<![A-Za-z'-])(?i:"
    rf"(?:{_EN_HUNDREDS}|{_EN_SMALL}|a) (?:thousand|million|billion)"
    rf"(?:,? (?:and )?(?:{_EN_HUNDREDS}|{_EN_SMALL}))?"
    rf"|{_EN_HUNDREDS}"
    r"|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[ -]" + _EN_UNIT + r")"
    r"(?![A-Za-z'-])"
)
_LEET = re.compile(
    r"(?<=[a-z])[013457@$](?=[a-z])|(?<![A-Za-z0-9@$.])[0@$4](?=[a-z]{2})", re.IGNORECASE
)
_EN_WORD = (
    r"(?:zero|oh|nought|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|a)"
)
_EN_GATE = re.compile(rf"(?<![a-z]){_EN_WORD}(?:[ ]?[,-][ ]?|[ ]){_EN_WORD}(?![a-z])")
"""On the lowered text: two number words side by side, which every match of
:data:`_EN_DIGITS` and :data:`_EN_AMOUNT` has (a cheap test before those two)."""
_LEET_GATE = re.compile(r"[a-z][013457@$][a-z]|(?<![a-z0-9@$.])[0@$4][a-z]{2}")
"""On the lowered text: every match of :data:`_LEET` is a match of this."""
_LEET_VALUE = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
_LEET_WORD = re.compile(r"[^\s。！？；，、：!?;,:()\"“”]+")
"""A word for leetspeak: punctuation that ends a sentence or a clause ends it too, so a
word's reading does not depend on the sentence before it ("lunch。A1C" is two words)."""
_LETTER_RUN = re.compile(r"[A-Za-z]{3}")
_TERM_OF_ART = re.compile(
    r"(?i)\W*(?:(?:hb)?a1c|[bdk]\d{1,2}|h\dn\d|cd\d+|her2|brca\d|apoe\d|il-?\d+|t[12]d|"
    r"covid-?19|sars-cov-2|ca-?\d+|mp[34]|ipv[46]|[a-z]\d[a-z]\d?)(?:'?s)?\W*"
)
"""Letters and digits that are a name as written (lab values, genes, viruses, vitamins)."""


def _delete_matches(pieces: list[_Piece], pattern: re.Pattern[str], text: str) -> str:
    """Delete the separators inside each match of ``pattern``; return the new text."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    owner = _owners(pieces)
    for m in matches:
        for i in range(m.start(), m.end()):
            ch = text[i]
            if not ch.isalnum() and not _is_cjk(ch):
                pieces[owner[i]][0] = ""
    return _text(pieces)


def _join_spaced_latin(pieces: list[_Piece], text: str, pattern: re.Pattern[str]) -> str:
    """Join spaced-out letters, keeping a pronoun ``I`` at either end as its own word."""
    matches = list(pattern.finditer(text))
    if not matches:
        return text
    owner = _owners(pieces)
    for m in matches:
        start, end = m.start(), m.end()
        run = m.group(0)
        if run.startswith("I ") and run[2:3].islower():
            start += 2
        if run.endswith(" I") and run[-3:-2].islower():
            end -= 2
        chars = [c for c in text[start:end] if c.isalnum()]
        word = "".join(chars).lower()
        if not any(c.isalpha() for c in chars):
            continue  # digits alone are joined by the number rules
        if len(chars) == 2 and (word not in _TWO_LETTER_WORDS or m.group("sep") != " "):
            continue
        if len(chars) == 3 and any(c.isdigit() for c in chars):
            continue
        for i in range(start, end):
            if not text[i].isalnum():
                pieces[owner[i]][0] = ""
    return _text(pieces)


def _cn2an(run: str) -> str | None:
    from cn2an import cn2an

    try:
        value = cn2an(run, "smart")
    except (ValueError, KeyError, IndexError):
        return None
    return str(int(value)) if float(value).is_integer() else str(value)


def _word2num(run: str) -> str | None:
    from word2number import w2n

    try:
        value = w2n.word_to_num(run.lower().replace("-", " ").replace(",", ""))
    except ValueError:
        return None
    return str(value)


def _replace_runs(pieces: list[_Piece], text: str, runs: list[tuple[int, int, str]]) -> str:
    """Replace ``text[start:end]`` by ``value`` for each run (the value takes the first
    character's piece and the run's whole original range; the rest is deleted)."""
    if not runs:
        return text
    owner = _owners(pieces)
    for start, end, value in runs:
        first, last = owner[start], owner[end - 1]
        pieces[first] = [value, pieces[first][1], pieces[last][2]]
        for i in range(start + 1, end):
            if owner[i] != first:
                pieces[owner[i]][0] = ""
    return _text(pieces)


def _english_numbers(pieces: list[_Piece], text: str) -> str:
    """English digit words and amounts in words to ASCII digits."""
    if _EN_GATE.search(text.lower()) is None:
        return text
    runs: list[tuple[int, int, str]] = []
    for m in _EN_DIGITS.finditer(text):
        pos = m.start()
        for word in re.finditer(r"[A-Za-z]+|[^A-Za-z]+", m.group(0)):
            chunk = word.group(0)
            if chunk[0].isalpha():
                value = _EN_DIGIT_VALUE[chunk.lower()]
            else:
                value = " " if ("," in chunk or "-" in chunk) else ""
            runs.append((pos + word.start(), pos + word.end(), value))
    taken = [(a, b) for a, b, _ in runs]
    for m in _EN_AMOUNT.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        amount = _word2num(m.group(0))
        if amount is not None:
            runs.append((m.start(), m.end(), amount))
    return _replace_runs(pieces, text, sorted(runs))


def _leet(pieces: list[_Piece], text: str) -> str:
    """Leetspeak characters inside words to the letters they stand for."""
    if _LEET_GATE.search(text.lower()) is None:
        return text
    owner: list[int] | None = None
    for word in _LEET_WORD.finditer(text):
        chunk = word.group(0)
        if not _LETTER_RUN.search(chunk) or ("@" in chunk and "." in chunk.split("@", 1)[1]):
            continue
        if "://" in chunk or _TERM_OF_ART.fullmatch(chunk):
            continue
        for m in _LEET.finditer(chunk):
            owner = owner or _owners(pieces)
            pieces[owner[word.start() + m.start()]][0] = _LEET_VALUE[m.group(0)]
    return _text(pieces) if owner else text


def _numbers(pieces: list[_Piece], text: str) -> str:
    """Look-alike digits, Chinese digit strings and Chinese amounts to ASCII numbers."""
    matches = list(_DIGIT_LOOKALIKE.finditer(text))
    if matches:
        owner = _owners(pieces)
        for m in matches:
            for i in range(m.start(), m.end()):
                if text[i] in "Oo":
                    pieces[owner[i]][0] = "0"
                elif text[i] in "lI":
                    pieces[owner[i]][0] = "1"
        text = _text(pieces)
    matches = list(_CN_DIGITS.finditer(text))
    if matches:
        owner = _owners(pieces)
        for m in matches:
            for i in range(m.start(), m.end()):
                pieces[owner[i]][0] = _CN_DIGIT_VALUE[text[i]]
        text = _text(pieces)
    matches = list(_CN_AMOUNT.finditer(text))
    if matches:
        owner = _owners(pieces)
        for m in matches:
            run = m.group(0).rstrip("亿")
            value = _cn2an(run) if len(run) >= 2 else None
            if value is None:
                continue
            first = owner[m.start()]
            last = owner[m.start() + len(run) - 1]
            pieces[first] = [value, pieces[first][1], pieces[last][2]]
            for i in range(m.start() + 1, m.start() + len(run)):
                if owner[i] != first:
                    pieces[owner[i]][0] = ""
        text = _text(pieces)
    return text


_STEPS = any_match(
    _SPACED_CJK,
    _SPACED_SYMBOL,
    _SPACED_LATIN,
    _SPLIT_WORD,
    _SPACED_DIGITS,
    _EXTRA_SPACES,
    _DIGIT_LOOKALIKE,
    _CN_DIGITS,
    _CN_AMOUNT,
)
"""Every pattern a step after folding and simplification edits the text at, with
:data:`_EN_GATE` and :data:`_LEET_GATE` (tested on the lowered text)."""


class _OneForOneFolds(dict[int, str | None]):
    """A ``str.translate`` table: a character to its fold when the fold is one character,
    else to ``None`` (deleted), so a translated text keeps its length exactly when every
    character folds one for one. Filled on first use, at most ``_MAX`` characters."""

    _MAX = 65536

    def __missing__(self, code: int) -> str | None:
        folded = _fold(chr(code))
        value = folded if len(folded) == 1 else None
        if len(self) < self._MAX:
            self[code] = value
        return value


_ONE_FOR_ONE = _OneForOneFolds()


def _folded_only(text: str) -> str | None:
    """The normalized text when :func:`normalize` only folds characters one for one.

    That is the case when every character folds to exactly one character, Traditional ->
    Simplified changes none of the Chinese characters, and no later step finds anything
    to edit (a step with no match is a no-op, so the text stays the folded text
    throughout). Every character then maps back to itself; otherwise ``None``.
    """
    if text.isascii() and text.isprintable():
        folded = text
    else:
        folded = text.translate(_ONE_FOR_ONE)
        if len(folded) != len(text):
            return None  # a character folded to none or to several
    if _CJK.search(folded) is not None:
        joined = "".join(_CJK.findall(folded))
        if str(_t2s().convert(joined)) != joined:
            return None
    if _STEPS.search(folded) is not None:
        return None
    low = folded.lower()
    if _EN_GATE.search(low) is not None or _LEET_GATE.search(low) is not None:
        return None
    return folded


def normalize(text: str) -> Normalized:
    """Normalize ``text`` for detection (see the module docstring for the steps).

    Args:
        text: any string.

    Returns:
        The :class:`Normalized` view with its offset map.

    >>> normalize("ＩＤ：１２３").text
    'ID:123'
    >>> normalize("di\\u200babetes").text
    'diabetes'
    """
    folded = _folded_only(text)
    if folded is not None:
        return Normalized(text, folded, tuple(range(len(text))), tuple(range(1, len(text) + 1)))
    return _normalize_all(text)


def _normalize_all(text: str) -> Normalized:
    """:func:`normalize` step by step, whatever the text."""
    if text.isascii() and text.isprintable():
        pieces: list[_Piece] = [[ch, i, i + 1] for i, ch in enumerate(text)]
    else:
        pieces = [[_fold(ch), i, i + 1] for i, ch in enumerate(text)]
    current = _text(pieces)
    _simplify(pieces, current)
    current = _text(pieces)
    current = _delete_matches(pieces, _SPACED_CJK, current)
    current = _join_spaced_latin(pieces, current, _SPACED_SYMBOL)
    current = _join_spaced_latin(pieces, current, _SPACED_LATIN)
    for pattern in (_SPLIT_WORD, _SPACED_DIGITS, _EXTRA_SPACES):
        current = _delete_matches(pieces, pattern, current)
    current = _leet(pieces, current)
    current = _english_numbers(pieces, current)
    _numbers(pieces, current)
    out, starts, ends = _rebuild(pieces)
    return Normalized(text, out, tuple(starts), tuple(ends))
