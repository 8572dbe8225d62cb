"""Stage 2, tokenize: text -> index tokens (DESIGN §6), the same for stored text and queries.

A query text is tokenized once per recall (:func:`~.query.parse_query`); a record's index
text once per version (:func:`index_tokens`).

Rules, in order:

1. NFKC, then lower-case.
2. Split into runs of Unicode letters, digits, ``_`` and ``-``; hyphens and underscores stay
   inside a token (``e-mail``, ``api_key``). Combining marks count as letters so that scripts
   whose vowels are marks (Devanagari, Thai, ...) are not cut mid-word. A run made only of
   ``-`` / ``_`` carries no meaning and yields no token.
3. Cut each run into all-CJK and non-CJK segments (CJK = Han, Hiragana, Katakana, Hangul).
4. A non-CJK segment is one token.
5. A CJK segment yields every character, then every adjacent pair, only within that segment.

>>> tokenize("DeepSeek插件，咖啡")
['deepseek', '插', '件', '插件', '咖', '啡', '咖啡']
>>> tokenize("My e-mail API_KEY")
['my', 'e-mail', 'api_key']

Changing any rule changes the stored index, so bump :data:`TOKENIZER_VERSION` with it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from ..types import Knowledge

__all__ = ["TOKENIZER_VERSION", "index_text", "index_tokens", "is_cjk", "tokenize"]

TOKENIZER_VERSION: int = 2
"""Version of the tokenizer rules; stored next to index tokens so a change can re-index."""

_ASCII_RUN = re.compile(r"[a-z0-9_\-]+")
_SEPARATORS_ONLY = frozenset("-_")

# Code point ranges of Han, Hiragana, Katakana and Hangul (letters and the iteration /
# prolonged-sound marks that behave as letters). Sorted, inclusive.
_CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303C),  # more Han numerals / iteration marks
    (0x3041, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana (incl. ー)
    (0x3131, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7FF),  # Hangul syllables, Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana (NFKC maps these away; kept for safety)
    (0x1B000, 0x1B16F),  # Kana supplement / extended
    (0x20000, 0x3FFFF),  # CJK extensions B.. and compatibility supplement
)


@lru_cache(maxsize=65536)
def is_cjk(char: str) -> bool:
    """Whether ``char`` is a Han, Hiragana, Katakana or Hangul character.

    Args:
        char: One character.

    Returns:
        True for CJK characters.
    """
    cp = ord(char)
    if cp < 0x1100:
        return False
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


@lru_cache(maxsize=65536)
def _is_word_char(char: str) -> bool:
    if char in _SEPARATORS_ONLY:
        return True
    category = unicodedata.category(char)
    return category[0] in "LNM"


def _segment_tokens(run: str, out: list[str]) -> None:
    """Append the tokens of one run (letters, digits, ``_``, ``-``) to ``out``."""
    start = 0
    n = len(run)
    while start < n:
        cjk = is_cjk(run[start])
        end = start + 1
        while end < n and is_cjk(run[end]) == cjk:
            end += 1
        segment = run[start:end]
        if cjk:
            out.extend(segment)
            out.extend(segment[i : i + 2] for i in range(len(segment) - 1))
        elif not set(segment) <= _SEPARATORS_ONLY:
            out.append(segment)
        start = end


def tokenize(text: str) -> list[str]:
    """Split ``text`` into index tokens per DESIGN §6.

    Tokens keep their order of occurrence and repeat when the text repeats them, so callers
    can count term frequencies.

    Args:
        text: Any text (content, knowledge text or a query).

    Returns:
        The tokens; empty for blank or punctuation-only text.

    Examples:
        >>> tokenize("Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ")
        ['full-width', 'abc']
        >>> tokenize("咖啡店")
        ['咖', '啡', '店', '咖啡', '啡店']
    """
    normalized = unicodedata.normalize("NFKC", text).lower()
    if normalized.isascii():
        return [tok for tok in _ASCII_RUN.findall(normalized) if not set(tok) <= _SEPARATORS_ONLY]
    out: list[str] = []
    run_start = -1
    for i, char in enumerate(normalized):
        if _is_word_char(char):
            if run_start < 0:
                run_start = i
        elif run_start >= 0:
            _segment_tokens(normalized[run_start:i], out)
            run_start = -1
    if run_start >= 0:
        _segment_tokens(normalized[run_start:], out)
    return out


_KEY_SEPARATORS = str.maketrans("._-", "   ")


def index_text(content: str, knowledge: Knowledge | None, key: str | None = None) -> str:
    """The text a record is indexed by: its key, content and knowledge text.

    A keyed record (a preference ``editor=vim``) is found by its key as well as its value;
    the key's ``.``, ``_`` and ``-`` separate words (``reply.language`` -> ``reply
    language``). Knowledge text is the applicability notes, the counterexamples and the
    claim's key and value. Each part is on its own line so that no token or CJK pair spans
    two parts.

    Args:
        content: The record content.
        knowledge: The record's knowledge, if any.
        key: The record's key (preferences), if any.

    Returns:
        The joined text.

    Examples:
        >>> from memory_graph.types import Claim, Knowledge
        >>> k = Knowledge(applies_when=("mornings",), claim=Claim("drink", "tea"))
        >>> index_text("Likes tea", k)
        'Likes tea\\nmornings\\ndrink\\ntea'
        >>> index_text("vim", None, key="code.editor")
        'code editor\\nvim'
    """
    parts = [key.translate(_KEY_SEPARATORS), content] if key else [content]
    if knowledge is not None:
        parts.extend(knowledge.applies_when)
        parts.extend(knowledge.counterexamples)
        if knowledge.claim is not None:
            parts.append(knowledge.claim.key)
            parts.append(knowledge.claim.value)
    return "\n".join(parts)


def index_tokens(content: str, knowledge: Knowledge | None, key: str | None = None) -> list[str]:
    """Tokens of :func:`index_text` (with repeats, in order of occurrence).

    Args:
        content: The record content.
        knowledge: The record's knowledge, if any.
        key: The record's key, if any.

    Returns:
        The index tokens.
    """
    return tokenize(index_text(content, knowledge, key))
