"""Cues shared by every detector: sentences, who a sentence is about, and benign markers.

A text is cut into sentences; each :class:`Sentence` carries the references to the user
(``I``, ``my``, ``我``) and to other people (``my sister``, ``her``, ``我妈``, ``小陈``, a
capitalised name before a verb), whether a disclosure verb binds a reference to a cue
(``I have``, ``I'm on``, ``my <term>``, ``我有``, ``在吃``), and the markers that make a
sensitive word harmless: topic talk, hypotheticals, fiction, pets, quotations of titles.
All cues are sentence-local, so joining two texts never changes either one's verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from ._numbers import Number, numbers

__all__ = ["Sentence", "alt", "sentences"]


def alt(words: str) -> str:
    """Compile a ``|``-separated list of literal words into one prefix-factored regex group.

    The words are escaped and merged into a trie, so the regex engine tries one branch
    per distinct next character instead of every word at every position. When the words
    start with many distinct characters (a Chinese lexicon), the group opens with a
    lookahead for that set of first characters: every match starts with one of them, so
    the lookahead changes no match, but it rejects most positions in one step instead of
    one step per branch.

    >>> alt("ab|abc|b")
    '(?:(?:ab(?:c)?|b))'
    >>> alt("|".join("abcdefghijklmnopqrstuvwxyz0123456789")).startswith("(?:(?=[0-9a-z])")
    True
    """
    trie: dict[str, Any] = {}
    for word in {w.strip() for w in words.split("|") if w.strip()}:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    if len(trie) > _MANY_FIRSTS:
        return "(?:" + _first_chars(trie) + _trie_regex(trie) + ")"
    return "(?:" + _trie_regex(trie) + ")"


_MANY_FIRSTS = 12
"""Above this many distinct first characters :func:`alt` adds the first-character lookahead
(below it, the engine's own check of each branch's first character is as fast)."""


def _first_chars(trie: dict[str, Any]) -> str:
    """A lookahead for the first characters of a trie, runs written as ranges."""
    codes = sorted(ord(ch) for ch in trie)
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    parts = [
        re.escape(chr(a))
        + ("-" + re.escape(chr(b)) if b > a + 1 else "" if a == b else re.escape(chr(b)))
        for a, b in runs
    ]
    return "(?=[" + "".join(parts) + "])"


COMMON_WORDS = frozenset(
    "artistic addition additions disables conclusion conclusions concession scalar scalars".split()
)
"""Common English words one edit away from a lexicon word (``addition`` / ``addiction``):
never typos. Found by running the typo finders over generic English text (Python's and
Debian's documentation)."""


COMMON_WORDS_ZH = frozenset(
    "加入 侦查 检查 调查 审查 排查 经验 经历 经济 经过 经常 团队 团体 团购 团建".split()
)
"""Common two-character words whose characters, next to a lexicon pair, make it straddle two
words (``加入团队`` holds ``入团``, ``侦查经验`` holds ``查经``)."""


def straddles(text: str, start: int, end: int) -> bool:
    """True when the two CJK characters ``text[start:end]`` belong to two different words:
    the character before the pair forms a common word with its first one, or the character
    after it with its last one (:data:`COMMON_WORDS_ZH`).

    >>> straddles("寻求人才加入团队", 5, 7), straddles("我入团了", 1, 3)
    (True, False)
    """
    if end - start != 2:
        return False
    before = text[start - 1 : start + 1] if start > 0 else ""
    after = text[end - 1 : end + 1] if end < len(text) else ""
    return before in COMMON_WORDS_ZH or after in COMMON_WORDS_ZH


class Typos:
    """Find words one edit away from a lexicon word (a deletion index, SymSpell style).

    Only words of six letters or more are matched, the first letter must agree, and a
    word that is itself in ``exact`` or in :data:`COMMON_WORDS` is never a typo.

    >>> Typos(["diabetes", "mortgage"]).find("my diabeties and morgage")
    [(3, 12, 'diabetes'), (17, 24, 'mortgage')]
    """

    _WORD = re.compile(r"(?<![a-z])[a-z]{6,}(?![a-z])")
    _SUFFIX = re.compile(r"(?:ing|ed|er|ly|ness|ment|ive|ous|ful|able|ist|ism)$")
    _SEEN_MAX = 8192

    def __init__(self, words: list[str], exact: frozenset[str] = frozenset()) -> None:
        self.exact = exact | frozenset(words) | COMMON_WORDS
        self.index: dict[str, str] = {}
        self._seen: dict[str, str | None] = {}
        for word in words:
            if len(word) < 6 or not word.isalpha():
                continue
            for variant in self._variants(word):
                self.index.setdefault(variant, word)

    @staticmethod
    def _variants(word: str) -> set[str]:
        return {word} | {word[:i] + word[i + 1 :] for i in range(1, len(word))}

    def find(self, low: str) -> list[tuple[int, int, str]]:
        """``(start, end, lexicon word)`` for every typo of a lexicon word in ``low``."""
        out: list[tuple[int, int, str]] = []
        for m in self._WORD.finditer(low):
            token = m.group(0)
            if token in self.exact:
                continue
            hit = self._seen[token] if token in self._seen else self._remember(token)
            if hit is not None:
                out.append((m.start(), m.end(), hit))
        return out

    def _remember(self, token: str) -> str | None:
        """The lexicon word ``token`` is a typo of, else ``None``; memoized per token (the
        answer depends on the token alone), at most :attr:`_SEEN_MAX` tokens at a time."""
        if len(self._seen) >= self._SEEN_MAX:
            self._seen.clear()
        found = self._lookup(token)
        self._seen[token] = found
        return found

    def _lookup(self, token: str) -> str | None:
        for variant in self._variants(token):
            hit = self.index.get(variant)
            if hit is None or hit[0] != token[0]:
                continue
            if hit.startswith(token) or token.startswith(hit):
                continue  # "concert" / "concerta": a different word, not a typo
            if self._SUFFIX.search(token) and token[:-3] == hit[: len(token) - 3]:
                continue  # "depressing" / "depression": an inflection
            return hit
        return None


def _trie_regex(node: dict[str, Any]) -> str:
    ends = "" in node
    branches = [re.escape(ch) + _trie_regex(child) for ch, child in sorted(node.items()) if ch]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    if ends:
        return "(?:" + body + ")?"
    return body


CJK = "\u4e00-\u9fff"
_SPLIT = re.compile(r"[。！？!?；;\n]+|(?<=\S)\.(?:\s+|$)|\s(?:—|--|-(?=\s+\D))\s|…+")

REL_EN = alt(
    "mom|mum|mother|mama|dad|father|papa|parents|parent|sister|sis|brother|bro|sibling|"
    "siblings|son|daughter|kid|kids|child|children|baby|toddler|wife|husband|hubby|spouse|"
    "partner|boyfriend|girlfriend|bf|gf|fiance|fiancé|fiancée|friend|bestie|best friend|"
    "roommate|flatmate|housemate|neighbor|neighbour|coworker|co-worker|colleague|boss|"
    "manager|supervisor|client|customer|patient|student|tenant|landlord|teammate|classmate|"
    "uncle|aunt|auntie|cousin|nephew|niece|grandma|grandpa|grandmother|grandfather|granny|"
    "in-laws|mother-in-law|father-in-law|brother-in-law|sister-in-law|son-in-law|"
    "daughter-in-law|stepmom|stepdad|stepson|stepdaughter|ex|ex-wife|ex-husband|"
    "ex-boyfriend|ex-girlfriend|assistant|employee|nanny|babysitter|mentor|advisor|"
    "professor|prof|teacher|tutor|coach|pastor|doctor's patient|family|fam|relative|"
    "godmother|godfather|twin|stepbrother|stepsister|buddy|pal|mate|crush|date|lodger|"
    "caregiver|carer|report|direct report|intern|subordinate|grandson|granddaughter|"
    "sponsor|sponsee|dm|partner's|kiddo|old man|old lady"
)
REL_ZH = alt(
    "妈妈|妈|母亲|老妈|老爸|阿妈|阿爸|爸爸|爸|父亲|父母|爸妈|老公|老婆|丈夫|妻子|爱人|先生|太太|"
    "媳妇|儿子|女儿|孩子|小孩|宝宝|闺女|哥哥|姐姐|弟弟|妹妹|细佬|家姐|哥|姐|弟|妹|表哥|表姐|表弟|"
    "表妹|堂哥|堂姐|堂弟|堂妹|朋友|好友|闺蜜|兄弟|同事|同学|室友|舍友|邻居|客户|领导|老板|上司|"
    "经理|组长|主管|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|爷爷|奶奶|外公|外婆|姥姥|姥爷|"
    "叔叔|阿姨|舅舅|舅妈|姑姑|姨妈|小姨|岳父|岳母|丈人|公公|婆婆|侄子|侄女|外甥|外甥女|前男友|"
    "前女友|前妻|前夫|前任|员工|下属|保姆|房东|租客|病人|导师|老师|学生|教授|师兄|师姐|师弟|"
    "师妹|学长|学姐|学弟|学妹|家人|亲戚|嫂子|姐夫|妹夫|弟媳|儿媳|女婿|继母|继父|干妈|干爹|"
    "发小|死党|搭档|合伙人|队友|partner|friend|roommate|boss"
)
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞"
    "左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕"
    "屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧"
    "闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)

_OTHER_EN = re.compile(
    rf"\b(?:(?:my|our|his|her|their|a|the)\s+(?:[a-z-]+\s+)?{REL_EN}(?:'s)?"
    r"|(?:he|she|him|his|hers|he's|she's|he'd|she'd)"
    r"|(?:[A-Z][a-z]+(?:\s+[A-Z]\.?)?|[A-Z][a-z]+\s+[A-Z][a-z]+)(?:'s|\s+(?:is|has|had|was|"
    r"got|gets|takes|took|lives|lived|owes|earns|makes|did|does|just|still|'s|wrote|said|"
    r"told|came|tested|relapsed|voted|goes|went)\b))(?![a-z])"
)
_NOT_NAMES = frozenset(
    "i it its this that there here what who when where why how my our the a an and but so "
    "also btw fyi oh hey hi ok okay yes no please pls thanks monday tuesday wednesday "
    "thursday friday saturday sunday january february march april may june july august "
    "september october november december god jesus christ allah english chinese google apple "
    "python excel chatgpt everyone everything nothing someone something today tomorrow "
    "tonight life work he she they we you".split()
)
_OTHER_ZH = re.compile(
    rf"(?:我的?|我们的?|我家|我们家|你|他的?|她的?)?(?:{REL_ZH})|(?<![其吉])[他她](?!们的?事)"
    rf"|(?:小|老|阿)[{SURNAMES}](?![{CJK}]?(?:师|板|家|公|婆|乡|百姓|样子))"
    rf"|[{SURNAMES}](?:总|经理|老师|医生|阿姨|叔叔|先生|女士|小姐|同学|主任|工)"
    rf"|[{SURNAMES}][{CJK}]{{1,2}}(?=的(?:电话|手机|号码|邮箱|微信|身份证|证件|护照|地址|住址|"
    r"银行卡|卡号|病|工资|收入))"
    rf"|(?:^|(?<=[，,：:、]))\W*[{SURNAMES}][{CJK}]{{1,2}}(?=是|有|得了|在吃|欠|被|坐过|出轨|吸毒|信|住在)"
)
_FIRST_NAME = re.compile(
    r"^\W*([A-Z][a-z]{2,})(?:'s)?\s+(?:[a-z]+\s+){0,3}(?:is|has|had|was|got|takes|owes|did)\b"
)
_CONTACT_NAME = re.compile(
    r"(?:\b(?:[Cc]all|[Tt]ext|[Ee]-?mail|[Mm]essage|[Rr]ing|[Pp]hone|[Rr]each|[Cc]ontact|[Pp]ing|"
    r"WhatsApp|[Dd]m)\s+|^\W*)([A-Z][a-z]{2,})(?=\s+(?:at|on|via)\s|\s*:\s*[+(\d\w])"
)
_SELF_EN = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|i'll|me|my|mine|myself|we|we're|our|us)\b")
_SELF_ZH = re.compile(r"我(?!们?的?家?(?:" + REL_ZH + "))|本人|自己|俺")
_SELF_STRONG = re.compile(r"\bmyself\b|自己|本人|\bmy own\b")

_TOPIC_EN = re.compile(
    r"\b(?:(?:article|post|book|paper|essay|documentary|video|talk|podcast|story|blog|thread|"
    r"piece) (?:about|on)|research(?:ing)?|translate|translation|how do you say|in english|"
    r"in chinese|"
    r"software|app|startup|tool|product|article|blog|explainer|explain|essay|paper|papers|"
    r"documentary|book|books|novel|story|stories|character|characters|plot|villain|"
    r"protagonist|film|movie|show|series|podcast|course|lecture|studying|study|studies|"
    r"definition|define|history|historical|what is|what's a|what are|difference between|"
    r"how does|how (?:do|does) (?:\w+ ){1,4}work|meta-analys\w*|lit review|literature|"
    r"statistics|stats|trivia|"
    r"quiz|homework|assignment|fiction|fictional|screenplay|script for a|poem|hypothetical|"
    r"hypothetically|suppose|supposing|imagine|thought experiment|if i (?:had|were|was|won)|"
    r"if (?:someone|somebody|a person|one|you) |what if|example|examples|sample|fake|dummy|"
    r"placeholder|test data|test card|test mode|format of|regex|validator|mock|in general|"
    r"generally|typically|usually|normally|common|symptoms of|signs of|causes of|"
    r"treatment for|theory|"
    r"debate|debating|policy|policies|news|headline|survey|class on|museum|exhibit|"
    r"tourist|history of|origin of|why do people|people who|someone who|a friend who asked|"
    r"read that|heard that|trending|hype|in the news|differ|differs)\b"
)
_WHICH_ZH = re.compile(r"[和与跟还是或][^，。,]{1,10}?哪(?:个|种|一个|一种|类)|区别")
_ASKING_EN = re.compile(r"^\W*(?:is|are|was|were|does|do|did|what|what's|which|how|why)\b")
_QUESTION_EN = re.compile(
    r"^\W*(?:how (?:is|are|does|do|did|can|long does)|what's the|what (?:is|are|causes|happens)|"
    r"where(?:'s| is)|when (?:does|do|is|are)|why (?:do|does|"
    r"is|are|did)|is it true|are there|do people|can you explain)\b"
)
_TOPIC_ZH = re.compile(
    r"关于|综述|研究|论文|文章|纪录片|电影|电视剧|小说|剧本|剧情|角色|主角|主人公|男主|女主|男二|"
    r"女二|人设|科普|课程|讲座|什么是|是什么意思|什么意思|有什么区别|区别|为什么会|原理|历史|作业|例子|"
    r"举例|假设|如果|假如|要是|万一|好奇|测试|示例|样例|格式|写一个故事|故事|新闻|一般来说|"
    r"通常|常见|症状有哪些|有哪些症状|怎么预防|起源|由来|政策|辩论|调查|问卷|博物馆|景点|"
    r"参观|游客|别人|有人|有些人|很多人|虚构|游戏里|翻译|英文|这个词|怎么说|资料|综述|公众号|"
    r"患者|病人|人群|剧本杀|软件|产品|诊断标准|标准是|指南|百科|计算器|怎么算|是什么药|是什么病|"
    r"有什么不同|有何不同|这个名字|名字叫"
)
_HYPOTHETICAL = re.compile(
    r"\b(?:suppose|supposing|imagine|hypothetical(?:ly)?|what if|if someone|if somebody|"
    r"if a person|thought experiment|let's say)\b|假设|假如|要是|如果有|如果一个|纯假设|"
    r"有个朋友|有个同事|有个人|某人|某个"
)
_PET = re.compile(
    r"\b(?:dog|dogs|doggo|pup|puppy|cat|cats|kitty|kitten|pet|pets|vet|corgi|parrot|hamster|"
    r"rabbit|bunny|bird|fish|horse|guinea pig|ferret|lizard|turtle|tortoise|golden "
    r"retriever|labrador|poodle|bulldog|husky)\b|猫|狗|宠物|兽医|鹦鹉|仓鼠|兔子|主子|毛孩子|"
    r"柯基|金毛|泰迪|布偶|英短|狗狗|猫咪|喵"
)
_QUOTE_OTHER = re.compile(
    r"\b(?:says?|said|quote|quoted|lyric|lyrics|line from|tweeted|wrote|titled|called|named)"
    r"\s*[:,]?\s*[\"']|\b(?:watch(?:ed|ing)?|saw|seen|read(?:ing)?|finished|"
    r"listen(?:ed|ing)? to|play(?:ed|ing)?)\s+(?:the\s+)?[\"']"
    r"|说[:：]?\s*[“\"「]|(?:书|歌|电影|剧)名?[叫是]?\s*[《“\"「]"
)
_TITLE = re.compile(r"《[^》]*》|「[^」]*」|\"[^\"]{1,60}\"|(?<![A-Za-z])'[^']{1,60}'(?![A-Za-z])")


_T = TypeVar("_T")


class _once(Generic[_T]):  # noqa: N801 - used as a decorator, like cached_property
    """``functools.cached_property`` without its per-access lock (Python 3.11 takes one on
    every first access; a :class:`Sentence` is never shared between threads): the value is
    computed on first access and stored in the instance, which then answers directly."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _once[_T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object, owner: type | None = None) -> _T | _once[_T]:
        if obj is None:
            return self
        value = self.func(obj)
        obj.__dict__[self.name] = value
        return value


@dataclass
class Sentence:
    """One sentence of the normalized text, with its reference and marker cues.

    Attributes:
        text: the sentence (a slice of the normalized text).
        start: its offset in the normalized text.
        zh: whether it contains Chinese characters.
    """

    text: str
    start: int
    zh: bool
    low: str = field(init=False)
    has_digit: bool = field(init=False)

    def __post_init__(self) -> None:
        low = self.text.lower()
        self.low = low if len(low) == len(self.text) else self.text
        if " i " in self.low:  # "bipolar I and bipolar II": a numeral, not the user
            self.low = _ROMAN_I.sub(" 1", self.low)
        self.has_digit = _DIGIT.search(self.text) is not None

    @_once
    def digits(self) -> int:
        """How many ``\\d`` characters the sentence has."""
        return len(_DIGIT.findall(self.text)) if self.has_digit else 0

    @_once
    def numbers(self) -> list[Number]:
        """The number candidates of the sentence (see :mod:`._numbers`)."""
        return numbers(self.text)

    @_once
    def others(self) -> list[tuple[int, int]]:
        """Spans (sentence offsets) that refer to another person."""
        spans = [m.span() for m in _OTHER_ZH.finditer(self.text)]
        for m in _OTHER_EN.finditer(self.text):
            word = m.group(0).split()[0].lower().rstrip("'s")
            if m.group(0)[0].isupper() and word in _NOT_NAMES:
                continue
            spans.append(m.span())
        first = _FIRST_NAME.match(self.text)
        if first and first.group(1).lower() not in _NOT_NAMES:
            spans.append(first.span(1))
        for m in _CONTACT_NAME.finditer(self.text):
            if m.group(1).lower() not in _NOT_NAMES:
                spans.append(m.span(1))
        lowered = [m.span() for m in _OTHER_EN.finditer(self.low) if m.group(0)[:2] != "i "]
        for span in lowered:
            word = self.low[span[0] : span[1]].split()[0]
            if word in ("my", "our", "his", "her", "their", "a", "the", "he", "she", "him"):
                spans.append(span)
        return sorted(set(spans))

    @_once
    def selves(self) -> list[tuple[int, int]]:
        """Spans that refer to the user, minus those inside a reference to someone else."""
        others = self.others
        found = [m.span() for m in _SELF_EN.finditer(self.low)]
        found += [m.span() for m in _SELF_ZH.finditer(self.text)]
        return [s for s in found if not any(a <= s[0] < b for a, b in others)]

    def person_at(self, pos: int, end: int | None = None) -> str:
        """Who the cue at sentence offset ``pos`` is about: ``"self"``, ``"other"``, ``"none"``.

        The nearest reference before the cue wins; without one, the nearest after it.
        An explicit ``myself``/``自己`` anywhere makes it the user's.
        """
        if _SELF_STRONG.search(self.low):
            return "self"
        stop = pos if end is None else end
        refs = [(s[0], "self") for s in self.selves] + [
            (s[0], "other") for s in self.others if not (s[0] < stop and s[1] > pos)
        ]
        before = [r for r in refs if r[0] <= pos]
        if before:
            return max(before)[1]
        after = [r for r in refs if r[0] > pos]
        return min(after)[1] if after else "none"

    @_once
    def topic(self) -> bool:
        """Topic talk, research, fiction, hypotheticals, examples; a question with nobody
        in it (``is X an antipsychotic``, ``X和Y哪个好``); subtypes named side by side
        (``bipolar I and bipolar II``)."""
        return (
            bool(_TOPIC_ZH.search(self.text) if self.zh else False)
            or bool(_TOPIC_EN.search(self.low))
            or bool(_QUESTION_EN.match(self.low))
            or (" 1 " in self.low and _ROMAN_I.search(self.low.replace(" 1 ", " i ")) is not None)
            or (
                self.zh
                and not self.selves
                and not self.others
                and _WHICH_ZH.search(self.text) is not None
            )
            or (
                _ASKING_EN.match(self.low) is not None
                and not self.selves
                and not [s for s in self.others if self.text[s[0] : s[0] + 1].islower()]
            )
        )

    @_once
    def hypothetical(self) -> bool:
        """A hypothetical or someone unspecified (``suppose``, ``假设有个朋友``)."""
        return _HYPOTHETICAL.search(self.low) is not None

    @_once
    def pet(self) -> bool:
        """The sentence is about an animal."""
        return _PET.search(self.low) is not None

    @_once
    def quoting_other(self) -> bool:
        """The sentence quotes a title or someone else's words."""
        return _QUOTE_OTHER.search(self.low) is not None

    def unquoted(self) -> str:
        """The sentence with titles blanked when it quotes a title or another person."""
        if not self.quoting_other:
            return self.text
        return _TITLE.sub(lambda m: " " * len(m.group(0)), self.text)

    @_once
    def unquoted_low(self) -> tuple[str, str]:
        """:meth:`unquoted` and its lowered form, as the detectors lower it (the text
        itself when lowering would change its length)."""
        text = self.unquoted()
        if text is self.text:
            return text, self.low
        low = text.lower()
        return text, low if len(low) == len(text) else text


_DIGIT = re.compile(r"\d")
_ROMAN_I = re.compile(
    r"(?<=[a-z]{3}) i\b(?= ?(?:and|or|vs\.?|versus|/|,|to) (?:[a-z]+ )?(?:ii|2)\b)"
)
_ABBREVIATIONS = frozenset(
    "no nr dr mr mrs ms st apt vs eg ie etc jr sr ave rd acc acct tel ph ext inc ltd co "
    "dept approx est fig mt ft jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


def _is_abbreviation(text: str, dot: int) -> bool:
    """True when the ``.`` at ``dot`` ends an abbreviation or an initial (``no.``, ``R.``):
    a word of its own (not the end of ``1st``, ``30k`` or ``是X``)."""
    m = re.search(r"(?:^|(?<=[\s(\[\"'“‘]))([A-Za-z.]+)$", text[:dot])
    if not m:
        return False
    word = m.group(1).replace(".", "").lower()
    return word in _ABBREVIATIONS or len(word) == 1


_LABEL_END = re.compile(
    r"(?:[:：#=]|\b(?:is|are|was|number|no|num|nr|id|ssn|sin|passport|licen[cs]e|phone|cell|"
    r"mobile|tel|address|card|account|iban|below|here)|号码|号|是|为|地址|住址|电话|手机|账号|"
    r"卡号|如下)[ \t]*$",
    re.IGNORECASE,
)
"""A line that ends with a label (``passport number:``, ``SSN``, ``手机号``): the value it
announces is on the next line, so the line break does not end the sentence."""


_VALUE_START = re.compile(r"[0-9@]")
"""What a label's value line holds near its start: a digit (a number, an id, a house number)
or ``@`` (an e-mail address)."""


def _continues(text: str, pos: int, split: re.Match[str]) -> bool:
    """True when the split is one line break after a label line (see :data:`_LABEL_END`)
    and the next line starts like a value (a digit or ``@`` in its first 40 characters:
    a number, an id, an e-mail address, a house number)."""
    if split.group(0) != "\n":
        return False
    line_start = text.rfind("\n", 0, split.start()) + 1
    line = text[max(line_start, pos, split.start() - 40) : split.start()]
    if _LABEL_END.search(line) is None:
        return False
    following = text[split.end() : split.end() + 40].split("\n", 1)[0]
    return _VALUE_START.search(following) is not None


def sentences(text: str) -> list[Sentence]:
    r"""Cut a normalized text into sentences (Chinese and English punctuation, newlines).

    A line break right after a label (``my passport number:``) continues the sentence,
    so the value on the next line is read with its label; it is read as a space. A dot
    after an abbreviation or an initial (``St.``, ``R.``) does not end the sentence either.
    Each part of a sentence so joined is also a sentence of its own: joining can add a
    block (the label with its value), never hide one (a first part's question or topic
    talk is not lent to a disclosure after "passport number" + line break, "5th Ave. " or
    "是X. ").

    >>> [s.text for s in sentences("I like tea. 我有糖尿病。ok")]
    ['I like tea', '我有糖尿病', 'ok']
    >>> [s.text for s in sentences("SSN:\n536-22-8147\nthanks")]
    ['SSN: 536-22-8147', 'SSN:', '536-22-8147', 'thanks']
    >>> [s.text for s in sentences("Dr. Li is kind")]
    ['Dr. Li is kind', 'Dr', 'Li is kind']
    """
    out: list[Sentence] = []
    pos = 0
    soft: list[tuple[int, int]] = []
    for m in _SPLIT.finditer(text):
        if (m.group(0).startswith(".") and _is_abbreviation(text, m.start())) or _continues(
            text, pos, m
        ):
            soft.append((m.start(), m.end()))
            continue
        if m.start() > pos:
            _append(out, text, pos, m.start(), soft)
        pos = m.end()
        soft = []
    if pos < len(text):
        _append(out, text, pos, len(text), soft)
    return [s for s in out if s.text.strip()]


def _append(
    out: list[Sentence], text: str, start: int, end: int, soft: list[tuple[int, int]]
) -> None:
    """Append the sentence ``text[start:end]`` and, when it was joined across ``soft``
    breaks, what comes before and after each of them (so a text joined to another at a soft
    break keeps its own reading); past :data:`_MAX_SOFT` breaks, the pieces between them."""
    out.append(_make(text[start:end], start))
    if len(soft) > _MAX_SOFT:
        at = start
        for b_start, b_end in soft:
            out.append(_make(text[at:b_start], at))
            at = b_end
        out.append(_make(text[at:end], at))
        return
    for b_start, b_end in soft:
        out.append(_make(text[start:b_start], start))
        out.append(_make(text[b_end:end], b_end))


_MAX_SOFT = 8
"""Soft breaks in one sentence beyond which only the pieces between them are added (the
prefixes and suffixes would cost the square of the sentence's length)."""


_HAS_CJK = re.compile(f"[{CJK}]")


def _make(chunk: str, start: int) -> Sentence:
    if "\n" in chunk:
        chunk = chunk.replace("\n", " ")  # a label's line break (same length: offsets hold)
    return Sentence(chunk, start, _HAS_CJK.search(chunk) is not None)
