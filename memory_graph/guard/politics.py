"""Politics: the user's party membership, votes, political identity and activism.

Party and movement names, votes (``voted Leave``, ``voting no on prop 33``, ``投给``),
identities (``left wing``, ``democratic socialist``, ``自由派``, ``民族主义者``) and
activism (``organizer with``, ``rally``, ``canvassing``) are cues; a person must be bound
to them unless the phrase is itself a disclosure (a vote, a membership).
"""

from __future__ import annotations

import re

from ._cues import Sentence, alt
from ._gate import any_match
from ._types import Cue

__all__ = ["detect", "possible"]

_PARTY_EN = alt(
    "democrat|democrats|democratic party|republican|republicans|gop|labour|labor party|"
    "labour party|tory|tories|conservative party|conservatives|lib dem|lib dems|"
    "liberal democrats|liberal party|liberals|ndp|bloc|green party|greens|libertarian|"
    "libertarians|communist|communists|communist party|socialist|socialists|"
    "democratic socialist|dsa|snp|plaid|reform uk|ukip|ccp|kmt|dpp|kuomintang|maga|"
    "afd|cdu|spd|likud|bjp|congress party|ppc|independent|green|liberal|conservative|"
    "democratic|labor|progressive"
)
_IDENTITY_EN = alt(
    "left wing|left-wing|leftist|right wing|right-wing|far left|far-left|far right|"
    "far-right|progressive|liberal|conservative|centrist|moderate|libertarian|socialist|"
    "democratic socialist|communist|marxist|anarchist|nationalist|populist|feminist|"
    "pro-life|pro-choice|anti-abortion|zionist|anti-zionist|trump supporter|maga|"
    "never trumper|blue dog|tankie|woke|anti-woke|monarchist|republican|democrat|"
    "tory|labour voter|swing voter|single-issue voter"
)
_STRONG_EN = re.compile(
    rf"\b(?:voted|vote|voting|will vote|gonna vote|going to vote)\s+(?:anything but\s+|"
    r"nothing but\s+|straight\s+|only\s+)?(?:for\s+|against\s+)?"
    rf"(?:the\s+)?(?:{_PARTY_EN}|leave|remain|yes|no|brexit|[a-z]+ in the|prop(?:osition)? "
    r"\d+|measure \w+|\w+ candidate|\w+ ticket|trump|biden|harris|obama|clinton|sanders)\b"
    rf"|\b(?:member of|joined|volunteer(?:ed|ing)? (?:for|with)|campaign(?:ed|ing)? for|"
    rf"donat(?:e|ed|ing) to|canvass(?:ed|ing)? for|organizer (?:with|for)|card-carrying)\s+"
    rf"(?:the\s+|our\s+|a\s+|my\s+)?(?:local\s+)?(?:{_PARTY_EN}|campaign|union|chapter)\b"
    rf"|\b{_PARTY_EN}\s+(?:party\s+)?(?:member|membership|voter|supporter|activist|delegate)\b"
    r"|\bregistered (?:democrat|republican|independent|voter for)\b"
    r"|\b(?:proud|lifelong|life-long|loyal|die-?hard|staunch|longtime|long-time)\s+"
    r"(?:(?:[a-z-]+\s+){1,2}(?:voter|supporter|member|activist|canvasser)\b"
    rf"|(?:{_PARTY_EN}|{_IDENTITY_EN})(?![a-z]))"
    r"|\b[a-z-]+ (?:voter|supporter) here\b"
    rf"|\b(?:march(?:ed|ing)?|protest(?:ed|ing)?|rall(?:y|ied|ying)|knock(?:ed|ing)? on doors|"
    rf"door-?knock(?:ed|ing)?|phone-?bank(?:ed|ing)?|leaflet(?:ed|ing)?|"
    rf"hand(?:ed|ing)? out (?:flyers|leaflets))\s+(?:with|for|against|in)\s+(?:the\s+)?"
    rf"(?:{_PARTY_EN}|{_IDENTITY_EN}|[a-z-]+ (?:campaign|candidate|movement))\b"
    r"|\b(?:rally|protest|demonstration|picket line)\b"
)
_IDENTITY_RE = re.compile(rf"\b(?:{_IDENTITY_EN}|{_PARTY_EN})(?![a-z])")
_SELF_IDENT_EN = re.compile(
    r"\b(?:i'm|i am|im|i've been|ive been|i was|i consider myself|as a|as an|i identify as|"
    r"i lean|i'm pretty|i'm a|we're|i support|i'm voting|i vote|i always vote|i'm kinda|"
    r"i'm very|i'm quite|i'm more|i'm really)\b"
)
_ZH = re.compile(
    r"党员|团员|预备党员|入了?党|入了?团|民主党派|民盟|民建|民进|农工党|致公党|九三学社|台盟|民革|"
    r"盟员|社员|政治面貌|左派|右派|左翼|右翼|自由派|保守派|建制派|泛民|本土派|民族主义|"
    r"共产主义|社会主义者|无政府主义|女权|投给|投票给|投了|选票|深蓝|深绿|浅蓝|浅绿|蓝营|"
    r"绿营|国民党|民进党|民众党|时代力量|共和党|民主党|工党|保守党|游行|示威|集会|维权|"
    r"政治立场|比较左|比较右|偏左|偏右|很左|很右|支持.{0,8}(?:独立|统一|党|派|建国)|"
    r"反对.{0,6}党|粉红|川粉|公知|小粉红|法轮功|港独|台独|党费|入党申请|党支部|支部|组织生活|"
    r"民主生活会|预备期"
)
_ZH_WEAK = frozenset(
    "国民党|民进党|民众党|时代力量|共和党|民主党|工党|保守党|游行|示威|集会|维权|"
    "左派|右派|左翼|右翼|自由派|保守派|建制派|泛民|本土派|女权|共产主义|民族主义|"
    "粉红|公知|小粉红|法轮功|港独|台独|选票|投了|社员|支部|党支部|组织生活|预备期".split("|")
)
_PROPER_AFTER = re.compile(
    r"\s+(?!I\b)[A-Z][a-z]|\s+(?:fan|fans|music|band|day|tea|card|light|movie|film|show|songs?)\b"
)
_CAMPAIGN_FOR = re.compile(
    r"\b(?:[Cc]anvass|[Cc]ampaign|[Pp]hone-?bank|[Vv]olunteer)(?:ed|ing)?\s+for\s+[A-Z][a-z]+"
)
_ZH_VOTES = frozenset(("投给", "投票给", "投了", "选票"))
_ZH_POLITICAL = re.compile(
    r"党|选举|大选|总统|候选人|议员|立委|市长|州长|公投|初选|选区|县长|议会|国会|政府|民主|共和"
)
# Colour words that also name a camp (深蓝 / 浅绿: Taiwan's blue and green camps; 粉红: the
# "little pink" nationalists). A colour word is a camp only as a self-description ("我是深绿",
# "我算浅蓝吧", "家里人都是深蓝") or beside a political word in the same sentence; followed by
# 色 (a colour) it never is. 小粉红 is a camp word in any sentence.
_ZH_COLOUR_CAMP = frozenset(("深蓝", "深绿", "浅蓝", "浅绿", "粉红"))
_ZH_CAMP_SELF = re.compile(
    r"(?:我|我们|家里人|我家人|全家)(?:一直|从来|都|也|就|算|算是|属于|是|挺|比较|偏|"
    r"铁杆|坚定的?|标准的?|典型的?|吧|了|\s){1,6}$"
)
_ZH_CAMP_CONTEXT = re.compile(
    r"党|选举|大选|总统|候选人|议员|立委|公投|选民|投票|政治|政党|蓝营|绿营|台独|统一|独派|统派|"
    r"支持者|立场"
)
_REASON = "a political view, vote, party membership or activism"


def _colour_not_camp(text: str, m: re.Match[str]) -> bool:
    """Whether the colour word matched at ``m`` is a colour here, not a camp."""
    word = m.group(0)
    if word not in _ZH_COLOUR_CAMP:
        return False
    if text.startswith("色", m.end()):
        return True  # 深绿色, 粉红色: a colour
    if word == "粉红" and text.endswith("小", 0, m.start()):
        return False  # 小粉红
    if _ZH_CAMP_SELF.search(text, 0, m.start()):
        return False  # 我是深绿, 家里人都是深蓝
    return _ZH_CAMP_CONTEXT.search(text) is None


def detect(sent: Sentence) -> list[Cue]:
    """Political cues in one sentence."""
    text = sent.unquoted()
    low = text.lower() if len(text.lower()) == len(text) else text
    cues: list[Cue] = []
    if sent.zh:
        for m in _ZH.finditer(text):
            if m.group(0) in _ZH_VOTES and not _ZH_POLITICAL.search(text):
                continue  # a vote for the best employee is not a political vote
            if _colour_not_camp(text, m):
                continue  # 浅蓝色的墙, 深绿和咖啡色: colours
            kind = "weak" if m.group(0) in _ZH_WEAK else "strong"
            cues.append(Cue("political_religious", _REASON, m.start(), m.end(), kind))  # type: ignore[arg-type]
    for m in _STRONG_EN.finditer(low):
        weak = m.group(0) in ("rally", "protest", "demonstration", "picket line")
        cues.append(
            Cue("political_religious", _REASON, m.start(), m.end(), "weak" if weak else "strong")
        )
    for m in _CAMPAIGN_FOR.finditer(text):
        cues.append(Cue("political_religious", _REASON, m.start(), m.end(), "strong"))
    selfid = _SELF_IDENT_EN.search(low)
    if selfid:
        m2 = _IDENTITY_RE.search(low, selfid.end(), selfid.end() + 40)
        if m2 and not _PROPER_AFTER.match(text, m2.end()):
            cues.append(Cue("political_religious", _REASON, m2.start(), m2.end(), "strong"))
    return cues


# Every cue of :func:`detect` is a match of _ZH or _CAMPAIGN_FOR (on the unquoted
# sentence), of _STRONG_EN, or an identity found only after _SELF_IDENT_EN (lowered).
_GATE_LOW = any_match(_STRONG_EN, _SELF_IDENT_EN)
_GATE = any_match(_CAMPAIGN_FOR)
_GATE_ZH = any_match(_ZH, _CAMPAIGN_FOR)


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter)."""
    text, low = sent.unquoted_low
    gate = _GATE_ZH if sent.zh else _GATE
    return _GATE_LOW.search(low) is not None or gate.search(text) is not None
