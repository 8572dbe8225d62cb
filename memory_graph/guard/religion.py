"""Religion: the user's faith, religious practice (prayer, services, dietary law, fasts,
dress), conversion or leaving a faith.

Affiliations (``Catholic``, ``Muslim``, ``基督徒``) and practices (``Shabbat``,
``Ramadan``, ``念经``, ``做礼拜``) are cues; a person must be bound to generic ones
(``church``, ``temple``, ``halal``). Topic talk about religions passes, and so do
everyday idioms (``Confession:`` opening an admission, ``praying it doesn't rain``,
``honest to God``) and, in Chinese, not eating beef or pork when no religion is named.
"""

from __future__ import annotations

import re

from ._cues import Sentence, alt
from ._gate import any_match
from ._types import Cue

__all__ = ["detect", "possible"]

_FAITH_EN = alt(
    "catholic|catholics|christian|christians|protestant|evangelical|baptist|methodist|"
    "lutheran|anglican|episcopalian|presbyterian|pentecostal|adventist|seventh-day adventist|"
    "quaker|mormon|lds|latter-day saint|jehovah's witness|jehovah's witnesses|muslim|moslem|"
    "shia|shiite|sunni|sufi|ismaili|ahmadi|jew|jewish|orthodox jewish|hasidic|hindu|"
    "buddhist|sikh|jain|taoist|shinto|pagan|wiccan|druid|scientologist|baha'i|bahai|"
    "zoroastrian|rastafarian|unitarian|atheist|agnostic|greek orthodox|russian orthodox|"
    "coptic|orthodox christian|born-again|born again|devout|religious|believer|"
    "non-believer|ex-muslim|ex-mormon|ex-christian|christ follower|follower of christ"
)
_PRACTICE_STRONG_EN = alt(
    "pray|prayed|praying|prayers|salah|salat|namaz|daily prayers|five times a day|"
    "confession|communion|rosary|mass|sunday service|bible study|tithe|tithing|"
    "ramadan|iftar|suhoor|sehri|fasting for|eid|lent|ash wednesday|shabbat|sabbath|"
    "kosher|halal|hijab|headscarf|niqab|turban|kippah|yarmulke|tzitzit|modest dress|"
    "confess my sins|confessed my sins|confessing my sins|confess our sins|confessed our sins|"
    "baptized|baptised|baptism|confirmed|bar mitzvah|bat mitzvah|missionary|mission trip|"
    "puja|diwali puja|temple|mosque|synagogue|gurdwara|church|parish|congregation|"
    "my faith|my religion|god|jesus|allah|the lord|scripture|quran|koran|torah|bible|"
    "pastor|imam|rabbi|priest|monk|nun|converted|convert|left the church|left the faith|"
    "deconverted|deconstructing|excommunicated|disfellowshipped|shunned|church retreat|"
    "prayer retreat|spiritual retreat|bible camp|vegetarian for religious|no pork|no beef|"
    "word of wisdom|jumu'ah|jummah|friday prayers|sunday school|youth group at church"
)
_WEAK_EN = frozenset(
    "temple|mosque|synagogue|gurdwara|church|parish|congregation|god|jesus|allah|the lord|"
    "scripture|quran|koran|torah|bible|pastor|imam|rabbi|priest|monk|nun|mass|"
    "halal|kosher|convert|confirmed|eid|no pork|no beef|devout|religious|"
    "believer|prayers|pray|prayed|praying|hijab|turban".split("|")
)
_TERM_EN = re.compile(rf"(?<![a-z])(?:{_FAITH_EN}|{_PRACTICE_STRONG_EN})(?![a-z])")
_FAITH_RE = re.compile(rf"\b{_FAITH_EN}(?![a-z])")
_NOT_FAITH = re.compile(
    r"\b(?:catholic|christian|orthodox) (?:school|university|college|church history)\b|"
    r"\bmass (?:email|effect|market|transit|production|layoffs?)\b|\bgod(?:s)? of war\b|"
    r"\bpray(?:ing)? (?:that|the weather|it works|it doesn't|it won't|it holds|it stays|we|"
    r"you|this)\b|\boh my god\b|\bomg\b|"
    r"\bthank god\b|\bgod knows\b|\bholy\b|\bjesus christ\b(?= [a-z]+ing)|"
    r"\b(?:honest|swear|hand) to god\b|\bfor god'?s sake\b|"
    # "Confession:", "confession time", "I have a confession (to make)": an admission that
    # opens what follows. Going to, making or hearing confession is the sacrament (a cue).
    r"(?:^|[:;.!?\"(]\s*|\b(?:ok|okay|so|alright|honest|small|quick|full|true|little|big|"
    r"minor|one|another|my|slight)\s+)confessions?(?:\s+time)?\s*(?::|,(?=\s*i\b)|!|-|\u2014|\u2013|\.\.\.)|"
    r"\bconfession time\b|"
    r"\b(?:have|got) (?:a|one|another|an?(?: \w+)?) confession(?: to make)?\b|"
    r"\bconvert (?:\d|this|that|it|to celsius|to fahrenheit|to pdf|the)\b|"
    r"\bconfirmed (?:the|my|it|that|booking)\b|"
    r"\blent (?:me|him|her|them|it|my|you)\b|\bretreat (?:center|venue)? ?for (?:the|our) team\b"
    # a congregation as the people one knows, or a building: who, not what one believes;
    # a group of believers one met is nobody's disclosure
    r"|\b(?:group|bunch|crowd|lot|couple|handful|busload) of (?:[a-z-]+ )?(?:religious|devout|"
    r"christians?|muslims?|catholics?|evangelicals?|jews|hindus|buddhists|mormons|pilgrims)\b"
    r"|\b(?:friends?|people|folks|someone|guys|ladies|members?) (?:from|at) "
    r"(?:the |my |our )?church\b"
    r"|\bchurch\s+(?:friends?|folks|people|ladies|guys|parking lot|building|hall|sale|fair|"
    r"potluck|bake sale|basement|steps)\b"
)
_ZH = re.compile(
    r"(?:信|信仰|信奉|皈依|改信|信了|信的是|归信)(?:了)?[\u4e00-\u9fff]{0,4}(?:教|佛|主|真主|上帝|"
    r"耶稣|道)|无神论|穆斯林|基督徒|佛教徒|道教徒|天主教徒|[\u4e00-\u9fff]{1,3}教徒|信徒|教友|"
    r"耶和华见证人|受洗|洗礼|朝觐|礼拜|弥撒|去教堂|教会|团契|查经|去清真寺|清真|吃斋|念佛|"
    r"早斋|斋戒|斋月|封斋|开斋|念经|诵经|祷告|祈祷|守安息日|安息日|四旬期|大斋期|佛堂|居士|"
    r"皈依|头巾|戴头巾|盖头|一贯道|藏传佛教|摩门|天主教|基督教|伊斯兰|"
    r"犹太教|印度教|锡克|巴哈伊|佛教|道教|受戒|出家|上香|拜佛|抄经|灵修|主日|主麻|聚礼|烧香|"
    r"唱诗班|五戒|受了.{0,2}戒|领圣餐|圣餐|告解|做弥撒|望弥撒|守斋|念珠|[晨晚]祷|灵修"
)
_ZH_WEAK = frozenset(
    "清真|礼拜|教会|头巾|上香|拜佛|天主教|基督教|伊斯兰|犹太教|印度教|佛教|"
    "道教|摩门|锡克|巴哈伊|藏传佛教|一贯道|念佛|诵经|抄经|出家|灵修|主日|烧香|唱诗班|"
    "念珠".split("|")
)
# Not eating beef or pork is a dietary law only when the sentence names a religion or a
# reason of faith (我信佛，不吃牛肉 / 因为宗教信仰不吃猪肉 / 我们家是回民，不吃猪肉); alone it
# is a taste or a diet (我不吃牛肉，从小就不吃).
_ZH_DIET = re.compile(r"(?:不吃|不碰|不沾|忌)(?:牛|猪|大肉|荤)")
_ZH_DIET_WHY = re.compile(
    r"宗教|信仰|教规|教义|戒律|回民|回族|穆斯林|清真|斋|佛(?!系)|真主|安拉|菩萨|上帝|印度教|"
    r"伊斯兰|犹太|初1?[、和 ]?15|忌讳.{0,2}(?:教|信)"
)
_BARE_SELF = re.compile(
    rf"^\W*(?:{_FAITH_EN})\s*(?:here|btw|fyi|by the way|if that matters|so\b|and\b|,|$)"
)
_PROPER_AFTER = re.compile(
    r"\s+(?!I\b)[A-Z][a-z]|\s+(?:fan|fans|music|band|rock|metal|movie|film|show|songs?)\b"
)
_LANDMARK = re.compile(
    r"(?:教会|教堂|寺庙|寺|清真寺|庙)\s*(?:附近|旁边|对面|门口|那边|隔壁|楼下)|"
    r"\b(?:near|next to|across from|behind|opposite|by) the (?:church|mosque|temple|synagogue|"
    r"cathedral|chapel)\b"
)
_EVENT = re.compile(
    r"\b(?:wedding|funeral|memorial|christening of|concert|tour|sightseeing|field trip|visit|"
    r"visiting|photos?|architecture|volunteering at the|polling place|"
    r"(?:walk|walked|walking|drive|drove|driving|ran|run|running|cycled|biked) (?:past|by)|"
    r"on (?:my|our|the) way)\b|婚礼|葬礼|参观|旅游|玩了|路过|经过|"
    r"拍照|风景|景点|建筑"
)
_PLACES_EN = frozenset("church|temple|mosque|synagogue|gurdwara|parish|mass|cathedral".split("|"))
_PLACES_ZH = frozenset("礼拜|教会|去教堂|上香|拜佛|去清真寺|清真".split("|"))
_REASON = "a religious belief, practice or affiliation"


def detect(sent: Sentence) -> list[Cue]:
    """Religion cues in one sentence."""
    text = sent.unquoted()
    low = text.lower() if len(text.lower()) == len(text) else text
    cues: list[Cue] = []
    if sent.zh:
        text = _LANDMARK.sub(lambda m: " " * len(m.group(0)), text)
        for m in _ZH.finditer(text):
            kind = "weak" if m.group(0) in _ZH_WEAK else "strong"
            cues.append(Cue("political_religious", _REASON, m.start(), m.end(), kind))  # type: ignore[arg-type]
        if _ZH_DIET_WHY.search(text):
            for m in _ZH_DIET.finditer(text):
                cues.append(Cue("political_religious", _REASON, m.start(), m.end(), "strong"))  # type: ignore[arg-type]
    if _LANDMARK.search(low):
        low = _LANDMARK.sub(lambda m: " " * len(m.group(0)), low)
        text = _LANDMARK.sub(lambda m: " " * len(m.group(0)), text)
    if _NOT_FAITH.search(low):
        low = _NOT_FAITH.sub(lambda m: " " * len(m.group(0)), low)
    bare = _BARE_SELF.match(low)
    if _EVENT.search(low):  # someone else's ceremony, a visit: places are not practice
        cues = [c for c in cues if text[c.start : c.end] not in _PLACES_ZH]
    for m in _TERM_EN.finditer(low):
        word = m.group(0)
        if _PROPER_AFTER.match(text, m.end()):
            continue
        kind = "weak" if word in _WEAK_EN or _FAITH_RE.fullmatch(word) else "strong"
        if bare and m.start() < bare.end():
            kind = "strong"  # "muslim btw": a bare self-description
        if word in _PLACES_EN and _EVENT.search(low):
            continue
        cues.append(Cue("political_religious", _REASON, m.start(), m.end(), kind))  # type: ignore[arg-type]
    return cues


# Every cue of :func:`detect` is a match of _ZH or _ZH_DIET (on the unquoted sentence) or _TERM_EN
# (lowered), found after _LANDMARK and _NOT_FAITH blank their matches: when none of
# them matches, nothing is blanked and nothing is found.
_GATE_LOW = any_match(_TERM_EN, _LANDMARK, _NOT_FAITH)
_GATE_ZH = any_match(_ZH, _LANDMARK, _ZH_DIET)


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter)."""
    text, low = sent.unquoted_low
    return _GATE_LOW.search(low) is not None or (sent.zh and _GATE_ZH.search(text) is not None)
