"""The offline pattern extractor: explicit self-statements in Chinese and English.

It covers what users state most often and most plainly: how to address them, their name
("I'm Alice", "我是小明"), occupation, employer ("I work at Acme", "我在阿里巴巴工作"),
time zone, reply and native language, reply length and style, interface theme ("I prefer
dark mode", "我喜欢深色模式"), tools ("I use Vim", "我用 Emacs"),
"remember that ...", and retractions ("don't call me X anymore", "别再叫我X了", "I no
longer work at X"). A stated like with no known key ("I love hiking", "我喜欢爬山") is kept
as a fact in the user's own words. Each candidate quotes the sentence it came from.

Sentences are skipped when they are hypothetical ("if I were ..."), report someone else's
words ("my friend said ..."), are questions (polite requests excepted), or sit in a
message that jokes ("just kidding", "开玩笑") or echoes a system prompt. Only human
messages are read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda

from ._clause import ABBREVIATION, SPLIT
from ._schema import CandidateModel

__all__ = ["create_pattern_extractor", "extract_patterns", "message_text"]


def message_text(message: BaseMessage) -> str:
    """Return a message's text, joining the text blocks of multi-part content."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


# --------------------------------------------------------------------------- sentence filters

# One sentence split for the quotes written here and the quotes grounding widens.
_SPLIT, _ABBREVIATION = SPLIT, ABBREVIATION
_HYPOTHETICAL = re.compile(
    r"\b(?:if|suppose|supposing|imagine|pretend|hypothetically|what if|were i|i wish|"
    r"role-?play)\b|假如|如果|要是|假设|想象|假装|万一|倘若|的话|角色扮演",
    re.IGNORECASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|told|tells|asked|asks|wrote|writes|quoted?|according to)\b|"
    r"(?:他|她|它|他们|她们|有人|别人|人家|朋友|同事|老板|妈妈|爸爸|老师|大家)"
    r"(?:都|总|常|曾|也)?(?:说|讲|告诉|问|写)|说[:：“\"]",
    re.IGNORECASE,
)
_JOKE = re.compile(
    r"\b(?:jk|j/k|just kidding|kidding|joking|lol|lmao|rofl|haha+)\b|开玩笑|开个玩笑|逗你|"
    r"哈哈|说着玩|骗你的",
    re.IGNORECASE,
)
_SYSTEM_ECHO = re.compile(
    r"^\s*(?:system\s*[:：]|\[system\]|<system>|<\|im_start\|>|###\s*system|you are (?:a|an|the)"
    r"\b|你是一个|你是一名|你是一位|系统提示|system prompt)|\b(?:system prompt|instructions above)"
    r"\b|系统提示词",
    re.IGNORECASE,
)
_TRANSCRIPT_LINE = re.compile(r"^\s*(?:assistant|ai|bot|助手|机器人)\s*[:：]", re.IGNORECASE)
_REQUEST = re.compile(
    r"^\s*(?:(?:can|could|would|will) you|please|可以|能不能|能否|可不可以|请|麻烦)", re.IGNORECASE
)
_QUESTION_END = re.compile(r"[?？]\s*$|[吗呢么]\s*[。！]?\s*$")


def _sentences(text: str) -> Iterator[str]:
    for line in text.splitlines():
        if _TRANSCRIPT_LINE.match(line):
            continue
        carry = ""
        for piece in _SPLIT.split(line):
            carry += piece
            if _ABBREVIATION.search(carry.rstrip()):
                continue  # "Dr. Lee" is one sentence
            if carry.strip():
                yield carry.strip()
            carry = ""
        if carry.strip():
            yield carry.strip()


def _usable(sentence: str) -> bool:
    if _HYPOTHETICAL.search(sentence) or _REPORTED.search(sentence):
        return False
    return not (_QUESTION_END.search(sentence) and not _REQUEST.search(sentence))


def _inside_quotes(sentence: str, start: int) -> bool:
    before = sentence[:start]
    pairs = (("“", "”"), ("「", "」"), ("‘", "’"))
    if any(before.count(a) > before.count(b) for a, b in pairs):
        return True
    return before.count('"') % 2 == 1


# --------------------------------------------------------------------------- lexicons

_NAME_EN = r"(?P<v>[A-Z][\w'’-]*\.?(?:\s+[A-Z][\w'’-]*){0,2}|[a-z][\w'-]{1,20}(?=\s*(?:[.!,;]|$)))"
_NAME_STOP = frozenset(
    "back later tomorrow tonight anytime sometime now soon again maybe crazy please whenever "
    "anything something names whatever sir madam".split()
)
_TRAILING = re.compile(
    r"(?:\s+(?:anymore|any more|again|from now on|please|instead|thanks|thank you))+$", re.I
)
_NAME_ZH = r"(?P<v>[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z0-9·]{0,9}?)"
_ZH_TAIL = r"(?=就行|就好|吧|好了|即可|哦|呀|啊|了|[，。！？,.!?\s]|$)"
_NAME_ZH_STOP = re.compile(
    r"^(?:起床|吃饭|过去|过来|回家|出来|下楼|帮忙|一声|做|去|来|了|过|的|车|外卖|什么)"
)
_OCC_EN = (
    r"(?:software engineer|engineer|developer|programmer|designer|teacher|professor|lecturer|"
    r"nurse|doctor|physician|surgeon|dentist|pharmacist|lawyer|attorney|accountant|student|"
    r"researcher|scientist|manager|writer|author|journalist|editor|artist|musician|chef|cook|"
    r"driver|pilot|architect|consultant|analyst|intern|freelancer|photographer|translator|"
    r"farmer|electrician|plumber|mechanic|marketer|entrepreneur|founder|ceo|cto|sysadmin|"
    r"barista|librarian|veterinarian|firefighter|police officer|civil servant|tutor|coach|"
    r"pediatrician|radiologist|economist|mathematician|physicist|chemist|biologist|"
    r"statistician|historian|recruiter|data scientist|product manager|project manager|"
    r"web developer|game developer|illustrator|animator|nanny|paralegal|banker|trader)"
)
_OCC_ZH = (
    r"(?:工程师|程序员|设计师|老师|教师|教授|医生|护士|律师|会计师|会计|记者|编辑|作家|"
    r"研究生|博士生|本科生|大学生|学生|研究员|产品经理|项目经理|经理|销售|司机|厨师|摄影师|"
    r"翻译|分析师|运营|架构师|科学家|公务员|警察|农民|店主|创业者|自由职业者|主播|演员|歌手|"
    r"画家|建筑师|药剂师|咨询师|顾问|实习生|(?:前端|后端|全栈|测试|运维)(?:工程师|开发)?|开发者|"
    r"数据分析师|"
    r"律师助理|会计|出纳|银行职员|导游|快递员|外卖员|保安|秘书|助理|老板)"
)
_TZ = (
    r"(?P<v>(?:UTC|GMT)\s?[+-−]\s?\d{1,2}(?::?\d{2})?|[A-Z][a-z]+/[A-Z][A-Za-z_]+|"
    r"PST|PDT|EST|EDT|CST|CDT|MST|MDT|CET|CEST|BST|JST|KST|IST|AEST|AEDT|HKT|SGT|"
    r"(?:Pacific|Eastern|Central|Mountain) [Tt]ime)"
)
_TZ_ZH = (
    r"(?P<v>东[一二三四五六七八九十]{1,2}区|西[一二三四五六七八九十]{1,2}区|北京时间|"
    r"(?:UTC|GMT)\s?[+-−]\s?\d{1,2}(?::?\d{2})?|[A-Z][a-z]+/[A-Z][A-Za-z_]+)"
)
_LANG_EN = (
    r"(?P<v>(?:simplified |traditional )?chinese|english|mandarin|cantonese|japanese|korean|"
    r"french|german|spanish|portuguese|italian|russian|arabic|hindi|vietnamese|thai|dutch|"
    r"swedish|polish|turkish|indonesian)"
)
_LANG_ZH = (
    r"(?P<v>简体中文|繁体中文|中文|英文|英语|汉语|普通话|粤语|日语|日文|韩语|法语|德语|"
    r"西班牙语|俄语)"
)
_ORG_EN = r"(?P<v>[A-Z][\w&'’.-]*(?:\s+(?:[A-Z][\w&'’.-]*|&|of|and)){0,3})"
_ORG_ZH = r"\s*(?P<v>[\u4e00-\u9fffA-Za-z0-9][\u4e00-\u9fffA-Za-z0-9&·.\- ]{1,19}?)\s*"
_ORG_EN_W = _ORG_EN.replace("?P<v>", "?P<w>")
_ORG_ZH_W = _ORG_ZH.replace("?P<v>", "?P<w>")
_ORG_STOP = frozenset(
    "家 家里 这里 那里 这儿 那儿 公司 单位 学校 外面 本地 远程 线上 办公室 the a home".split()
)
_TOOLS: dict[str, str] = {
    "tools.editor": r"neovim|nvim|vim|emacs|vs ?code|visual studio code|visual studio|"
    r"sublime text|sublime|intellij(?: idea)?|pycharm|webstorm|cursor|zed|helix|nano|xcode|"
    r"android studio|jupyter|notepad\+\+",
    "tools.shell": r"zsh|bash|fish shell|fish|powershell",
    "tools.os": r"macos|mac|linux|ubuntu|arch linux|fedora|debian|windows",
    "tools.browser": r"chrome|firefox|safari|edge|brave",
}
_TOOL_ALL = "|".join(_TOOLS.values())


def _tool_key(value: str) -> str:
    for key, pattern in _TOOLS.items():
        if re.fullmatch(pattern, value, re.IGNORECASE):
            return key
    return "tools.other"


# --------------------------------------------------------------------------- rules

Rule = tuple["re.Pattern[str]", Callable[["re.Match[str]"], "dict[str, Any] | None"]]


def _value(m: re.Match[str]) -> str:
    groups = m.groupdict()
    return groups.get("v") or groups.get("w") or ""


def _profile(field: str, action: str = "set") -> Callable[[re.Match[str]], dict[str, Any] | None]:
    def build(m: re.Match[str]) -> dict[str, Any] | None:
        value = _TRAILING.sub("", _value(m)).strip(" ,.;:!'\"“”")
        if not value or value.casefold() in _NAME_STOP or _NAME_ZH_STOP.match(value):
            return None
        return {"kind": "fact", "key": f"profile.{field}", "value": value, "action": action}

    return build


def _pref(key: str | None, action: str = "set") -> Callable[[re.Match[str]], dict[str, Any] | None]:
    def build(m: re.Match[str]) -> dict[str, Any] | None:
        value = _value(m).strip(" ,.;:!")
        if not value or value.casefold() in _ORG_STOP:
            return None
        return {
            "kind": "preference",
            "key": key or _tool_key(value),
            "value": value,
            "action": action,
        }

    return build


_NOT_A_NAME = frozenset(
    "american british english french german chinese japanese korean canadian indian italian "
    "spanish russian australian fine good great okay ok sorry sure ready done busy free happy "
    "tired hungry home here there new vegan vegetarian single married retired alone glad back "
    "afraid right wrong serious late early online offline available admin administrator "
    "root system user assistant bot developer mode god".split()
)


def _name(m: re.Match[str]) -> dict[str, Any] | None:
    """A self-introduction ("I'm Alice", "我是小明") that is not a role or a state."""
    value = _value(m).strip()
    first = value.split()[0].casefold() if value else ""
    if first in _NOT_A_NAME or first in _NAME_STOP:
        return None
    if re.search(rf"{_OCC_ZH}$|[人的了啊呀吧呢]$|^(?:谁|一个|一名|一位|这|那)", value):
        return None
    if re.fullmatch(_OCC_EN, value, _I):
        return None
    return {"kind": "fact", "key": "profile.name", "value": value, "action": "set"}


_GENERIC: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"\bi (?:really |much |strongly |usually |always )?(?:prefer|like|love|enjoy)\s+"
        r"(?!(?:it|that|this|them|you|your|what|how|when|to be|not|the idea)\b)"
        r"(?P<v>[^.!?]{2,80})",
        re.IGNORECASE,
    ),
    re.compile(
        r"我(?:很|非常|比较|更|最|特别)?(?:喜欢|偏好|爱)(?!你|它|这|那|他|她)(?P<v>[^，。！？,.!?]{1,40})"
    ),
)
"""Stated likes without a known key: kept as a fact in the user's own words."""


def _generic(sentence: str) -> dict[str, Any] | None:
    for pattern in _GENERIC:
        if pattern.search(sentence):
            content = sentence.strip(" ,.;:!。！，：")
            if len(content) >= 2:
                return {"kind": "fact", "content": content, "action": "set"}
    return None


def _remember(m: re.Match[str]) -> dict[str, Any] | None:
    content = m.group("v").strip(" ,.;:!。！，：")
    if len(content) < 2:
        return None
    return {"kind": "fact", "content": content, "action": "set"}


_I = re.IGNORECASE
_RULES: tuple[Rule, ...] = (
    # retractions first: a sentence that retracts is not also a statement
    (
        re.compile(
            r"(?i:\b(?:don't|do not|stop|quit|never|no longer)\s+(?:call(?:ing)?|address(?:ing)?)"
            rf"\s+me)\s+{_NAME_EN}",
        ),
        _profile("call_them", "retract"),
    ),
    (
        re.compile(rf"(?:别|不要|不用|不必)再?叫我{_NAME_ZH}{_ZH_TAIL}"),
        _profile("call_them", "retract"),
    ),
    (
        re.compile(rf"\bi(?:'m| am) (?:no longer|not) (?:an? )?(?P<v>(?:[a-z-]+ )?{_OCC_EN})", _I),
        _profile("occupation", "retract"),
    ),
    (
        re.compile(
            rf"我(?:已经)?(?:不再是|不是|不再做|不做|不当)(?P<v>[\u4e00-\u9fff]{{0,6}}?{_OCC_ZH})了"
        ),
        _profile("occupation", "retract"),
    ),
    (
        re.compile(
            rf"\bi (?:no longer use|stopped using|quit using) (?P<v>{_TOOL_ALL})\b|"
            rf"\bi (?:don't|do not) use (?P<w>{_TOOL_ALL}) (?:anymore|any more)\b",
            _I,
        ),
        _pref(None, "retract"),
    ),
    (
        re.compile(rf"我(?:已经)?不(?:再)?(?:用|使用)(?P<v>{_TOOL_ALL})了", _I),
        _pref(None, "retract"),
    ),
    # statements
    (re.compile(rf"(?i:\b(?:call|address)\s+me\s+(?:as\s+)?){_NAME_EN}"), _profile("call_them")),
    (
        re.compile(rf"(?:^|[，,。\s]|请|以后|你|就|可以|直接|你们)叫我{_NAME_ZH}{_ZH_TAIL}"),
        _profile("call_them"),
    ),
    (re.compile(rf"(?i:\bmy name(?: is|'s)\s+){_NAME_EN}"), _profile("name")),
    (re.compile(rf"(?:^|[，,\s])我(?:的名字)?叫{_NAME_ZH}{_ZH_TAIL}"), _profile("name")),
    (re.compile(rf"我的名字是{_NAME_ZH}{_ZH_TAIL}"), _profile("name")),
    (
        re.compile(
            r"\b(?:i work as|i'm working as|my (?:job|profession|occupation) is|i(?:'m| am))"
            rf"\s+(?:an?\s+)?(?P<v>(?:[a-z-]+\s+){{0,2}}?{_OCC_EN})\b",
            _I,
        ),
        _profile("occupation"),
    ),
    (
        re.compile(
            rf"(?:我|^我[^，,。]*[，,])(?:是一名|是一个|是一位|是|在做|当|做)"
            rf"(?P<v>[\u4e00-\u9fffA-Za-z]{{0,6}}?{_OCC_ZH})"
        ),
        _profile("occupation"),
    ),
    (re.compile(r"我的职业是(?P<v>[\u4e00-\u9fffA-Za-z]{1,10})"), _profile("occupation")),
    (
        re.compile(
            r"\b(?:my time ?zone is|i'm in|i am in|i'm on|i am on|i live in|i'm based in|"
            rf"i use)\s+(?:the\s+)?{_TZ}",
            _I,
        ),
        _profile("timezone"),
    ),
    (
        re.compile(rf"(?:我在|我的时区是|我这边是|我用的是|我处于|时区是){_TZ_ZH}"),
        _profile("timezone"),
    ),
    (
        re.compile(
            r"\b(?:reply|respond|answer|write|talk|speak|communicate|chat)"
            r"(?: to me| back| with me)?"
            rf"\s+(?:only\s+)?in\s+{_LANG_EN}\b|\bi prefer (?:replies|answers|responses) in "
            rf"{_LANG_EN.replace('?P<v>', '?P<w>')}\b",
            _I,
        ),
        _profile("language"),
    ),
    (
        re.compile(
            rf"(?:用|使用){_LANG_ZH}(?:和我|跟我|给我|与我)?(?:回答|回复|交流|沟通|说|聊|写|对话)"
        ),
        _profile("language"),
    ),
    (
        re.compile(
            r"\b(?:keep|make)\s+(?:your\s+|the\s+|my\s+)?(?:answers|replies|responses)\s+"
            r"(?P<v>short|brief|concise|detailed|shorter|longer)\b|\bi (?:prefer|like|want) "
            r"(?P<w>short|brief|concise|detailed|long|thorough|in-depth) "
            r"(?:answers|replies|responses|explanations)\b",
            _I,
        ),
        lambda m: {
            "kind": "preference",
            "key": "reply.length",
            "value": m.group("v") or m.group("w"),
        },
    ),
    (
        re.compile(
            r"(?:回答|回复|答案|解释)(?:请|尽量|要|可以|都)?(?P<v>简短|简洁|简单|详细|具体)"
            r"|我(?:喜欢|更喜欢|偏好)(?P<w>简短|简洁|详细)的(?:回答|回复|解释)"
        ),
        lambda m: {
            "kind": "preference",
            "key": "reply.length",
            "value": m.group("v") or m.group("w"),
        },
    ),
    (
        re.compile(
            r"\b(?P<v>(?:no|don't use|do not use|avoid|stop using)\s+(?:emojis?|markdown|"
            r"bullet points|tables|jargon))\b|(?P<w>(?:不要|别|不用)(?:再)?(?:用|使用|加)?"
            r"(?:表情符号|表情|emoji|markdown|列表|表格))",
            _I,
        ),
        lambda m: {
            "kind": "preference",
            "key": "reply.style",
            "value": m.group("v") or m.group("w"),
        },
    ),
    (
        re.compile(
            r"\bi (?:use|prefer|code in|work in|mostly use|always use|mainly use|switched to)\s+"
            rf"(?P<v>{_TOOL_ALL})\b|\bmy (?:editor|shell|browser|os) is (?P<w>{_TOOL_ALL})\b",
            _I,
        ),
        _pref(None),
    ),
    (
        re.compile(
            rf"我(?:一般|平时|主要|习惯|通常|一直|现在|都)?(?:用|使用)(?:的是)?\s*(?P<v>{_TOOL_ALL})"
            r"(?![A-Za-z])",
            _I,
        ),
        _pref(None),
    ),
    # "I'm Alice." / "Hi, I'm Alice Chen, ..." (a capitalised name closing the clause)
    (
        re.compile(
            r"(?:^|[,;.!]\s*|\b(?i:hi|hello|hey)[,!]?\s+)(?i:i'm|i’m|i am|this is)\s+"
            r"(?P<v>[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+)?)(?=\s*(?:[,;.!]|$))"
        ),
        _name,
    ),
    (
        re.compile(
            r"^(?:(?:你好|您好|嗨|大家好)[，,！!]?\s*)?我是(?P<v>[\u4e00-\u9fff]{2,4})[。！!.]?$"
        ),
        _name,
    ),
    # employer
    (
        re.compile(
            r"\b(?i:i (?:no longer work|don't work|do not work|stopped working|quit working))"
            rf"\s+(?i:at|for)\s+{_ORG_EN}|\b(?i:i (?:left|quit))\s+{_ORG_EN_W}"
        ),
        _pref("work.employer", "retract"),
    ),
    (
        re.compile(
            r"\b(?i:i work|i'm working|i am working|i currently work|i'm employed|i am employed)"
            rf"\s+(?i:at|for|by)\s+{_ORG_EN}|\b(?i:my (?:employer|company) is)\s+{_ORG_EN_W}"
        ),
        _pref("work.employer"),
    ),
    (
        re.compile(rf"我(?:已经)?(?:不在|离开了?){_ORG_ZH}(?:工作|上班)?了"),
        _pref("work.employer", "retract"),
    ),
    (
        re.compile(
            rf"我(?:现在|目前|一直)?(?:在{_ORG_ZH}(?:工作|上班|任职)|(?:就职|任职)于{_ORG_ZH_W})"
        ),
        _pref("work.employer"),
    ),
    # native language
    (
        re.compile(
            rf"\bmy (?:native|first|mother) (?:language|tongue) is {_LANG_EN}\b"
            rf"|\bi(?:'m| am) a native {_LANG_EN.replace('?P<v>', '?P<w>')} speaker\b",
            _I,
        ),
        _profile("language"),
    ),
    (re.compile(rf"我的母语是{_LANG_ZH}"), _profile("language")),
    # interface theme and indentation
    (
        re.compile(
            r"\bi (?:prefer|like|use|want|love|always use)\s+(?P<v>(?:dark|light) (?:mode|theme))"
            r"|\b(?P<w>(?:dark|light) (?:mode|theme)) (?:please|only)\b",
            _I,
        ),
        _pref("ui.theme"),
    ),
    (
        re.compile(
            r"我?(?:更|比较)?(?:喜欢|偏好|习惯|用|要)(?P<v>(?:深色|暗色|黑色|浅色|亮色|白色)"
            r"(?:模式|主题))"
        ),
        _pref("ui.theme"),
    ),
    (
        re.compile(r"\b(?:please\s+)?remember(?:\s+that|:)\s*(?P<v>.+)", _I),
        _remember,
    ),
    (re.compile(r"(?:请|帮我|你要)?记住[：:，,]?\s*(?P<v>.+)"), _remember),
)


def extract_patterns(messages: Sequence[BaseMessage]) -> list[CandidateModel]:
    """Find explicit self-statements in the human messages of a window.

    Args:
        messages: the window, in order. Only :class:`HumanMessage` items are read.

    Returns:
        Candidates with ``quote`` set to the source sentence and ``message_index`` to the
        message's position in ``messages``.

    >>> from langchain_core.messages import HumanMessage
    >>> [c.value for c in extract_patterns([HumanMessage("Please call me Sam.")])]
    ['Sam']
    """
    out: list[CandidateModel] = []
    for index, message in enumerate(messages):
        if not isinstance(message, HumanMessage):
            continue
        text = message_text(message)
        if _JOKE.search(text) or _SYSTEM_ECHO.search(text):
            continue
        for sentence in _sentences(text):
            if not _usable(sentence):
                continue
            seen: set[tuple[str | None, str | None]] = set()
            found = len(out)
            retracted = False
            for pattern, build in _RULES:
                for m in pattern.finditer(sentence):
                    if _inside_quotes(sentence, m.start()):
                        continue
                    fields = build(m)
                    if fields is None:
                        continue
                    slot = (fields.get("key"), fields.get("content"))
                    if slot in seen or (retracted and fields.get("action") != "retract"):
                        continue
                    seen.add(slot)
                    retracted = retracted or fields.get("action") == "retract"
                    out.append(
                        CandidateModel(
                            **fields, quote=sentence, message_index=index, confidence=0.8
                        )
                    )
            generic = _generic(sentence) if len(out) == found else None
            if generic is not None and not _inside_quotes(sentence, 0):
                out.append(
                    CandidateModel(**generic, quote=sentence, message_index=index, confidence=0.7)
                )
    return out


def create_pattern_extractor() -> Runnable[Sequence[BaseMessage], list[CandidateModel]]:
    """Return the offline pattern extractor as a ``Runnable`` (sync and async).

    Returns:
        A runnable mapping a window of messages to candidate models.
    """
    return RunnableLambda(extract_patterns, name="pattern_extractor")
