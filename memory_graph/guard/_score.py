"""The scoring rule: combine a detector cue with who it is about and the sentence markers.

For one cue in one sentence:

1. **Numbers** (a checksum-valid id, a card, an account, an id after an id word) block
   on their own; the detector has already rejected labelled look-alikes (order, tracking,
   invoice, employee, student numbers, public test cards).
2. **Someone else's contact details and status** (phone, e-mail, sexuality, immigration,
   criminal record) block only when the nearest person reference is someone else.
3. **Category terms** block when

   - the sentence is not topic talk, a hypothetical, fiction or about a pet, **or** a
     person reference is bound to the term (same clause, right before it: ``I'm on``,
     ``my``, ``我在吃``, ``我妈有``) and the pet is not the subject; and
   - the term is *strong* (a diagnosis, a drug, bankruptcy, a faith) or a person is
     bound to it (a *weak* term: ``surgery``, ``medication``, ``住院``).

The category is ``third_party`` whenever the nearest person reference is someone else.
"""

from __future__ import annotations

import re

from ._cues import REL_EN, REL_ZH, Sentence
from ._types import Cue, GuardCategory

__all__ = ["judge"]

_CLAUSE = re.compile(r"[,，、：()（）]|(?<!\d):(?!\d)")
"""Clause breaks; a colon between digits is a time (``the 9:30 Mass``), not a break."""
_BINDER_EN = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|my|mine|myself|we|we're|our|he|she|he's|she's|his|her|"
    r"they|as an?)\b"
)
_BINDER_ZH = re.compile(
    r"(?<![帮给让教告诉提醒问跟和替陪叫])我|自己|本人|(?<![其吉])[他她]"
    r"|(?:医生|大夫|医师|护士|药师)[^，。,]{0,3}(?:给|帮|让|替)我"
)
_IMPLICIT_ZH = re.compile(
    r"(?:做了|做过|刚做|要做|在做|做完|在吃|吃了|吃着|开了|打了|得了|得过|确诊|查出|住了|正在|一直|"
    r"又|每天|天天|从小|刚|被诊断|诊断出|患有|患了|戴着|戴了|用了|用着|装了)$"
)
_ACT_ZH = re.compile(
    r"在吃|吃了|吃着|要吃|都吃|靠|服用|在用|用了|打了|做了|做过|做完|刚做|要做|去做|查出|确诊|诊断|得了|"
    r"患了|住了|住院|开了|换成|装了|戴了|欠了|还了|借了|信了|入了|受了|去了|每天|每晚|每周|每个月|"
    r"一直|正在|刚|又|还去|也去|常去|都去|每次"
)
_SELF_LEAD_ZH = re.compile(r"^\W*(?:我|我们|俺|本人)(?!的?(?:" + REL_ZH + "))")
"""An act or a habit in a clause with nobody named: a Chinese statement drops its subject
(``一直在吃降压药``, ``去年做了心脏搭桥``), and the subject is the speaker."""
_IMPLICIT_EN = re.compile(
    r"^\W*(?:just |finally |recently |still )?(?:got|had|have|started|starting|stopped|"
    r"finished|getting|been|went|going|switched|switching|tested|testing|on|off|back on|"
    r"taking|took|dealing|diagnosed|recovering|post|day|week|month|year)\b"
)
_REL_ANY = re.compile(rf"\b(?:my|our|his|her|their)\s+(?:[a-z-]+\s+)?{REL_EN}\b|{REL_ZH}")
_CREATIVE = re.compile(
    r"\b(?:writing|write|wrote|reading|read|researching|research|studying|study|making|"
    r"building|build|builds|develops|developing|designing|working on|translating|"
    r"summari[sz]\w*|looking up|find|"
    r"found|learning|learn|teaching|curious|wondering)\b|写|读|看|研究|整理|找|查|总结|翻译|"
    r"设计|了解|科普|学习|准备|好奇|问问|角色|人物|主角|扮演|小说|故事|剧本|游戏|"
    r"\b(?:novel|story|book|script|screenplay|character|protagonist|hero|heroine|villain|"
    r"fic|fanfic|game|campaign setting|plot)\b"
)
_PET_NOUN = re.compile(
    r"\b(?:dog|dogs|pup|puppy|cat|cats|kitten|pet|corgi|parrot|hamster|rabbit|bunny|bird|"
    r"fish|horse|husky)\b|猫|狗|宠物|鹦鹉|仓鼠|兔|主子|毛孩子"
)


def _clause_before(sent: Sentence, pos: int) -> str:
    """The text from the last clause break before ``pos`` up to ``pos``."""
    head = sent.low[:pos]
    breaks = [m.end() for m in _CLAUSE.finditer(head)]
    return head[breaks[-1] if breaks else 0 :]


def bound(sent: Sentence, cue: Cue) -> str | None:
    """True when a person is bound to the cue: a reference in the cue's clause, right
    before it, with no writing/research verb and no pet noun in between."""
    clause = _clause_before(sent, cue.start)
    reach = 14 if sent.zh and not clause[-14:].isascii() else 40
    binders = list(_BINDER_EN.finditer(clause)) + list(_BINDER_ZH.finditer(clause))
    if sent.others:
        binders += list(_REL_ANY.finditer(clause))
    binders = [m for m in binders if m.start() >= len(clause) - reach]
    if not binders:
        head = sent.low[: cue.start]
        implicit = (
            (sent.zh and _IMPLICIT_ZH.search(head.rstrip()[-4:] if head else ""))
            or (
                # no subject, or the speaker as the subject of an earlier clause (a
                # Chinese topic chain: 我初一十五吃素，还去庙里烧香)
                sent.zh
                and not sent.others
                and (not sent.selves or _SELF_LEAD_ZH.match(sent.text) is not None)
                and _ACT_ZH.search(clause[-10:]) is not None
            )
            or (_IMPLICIT_EN.match(sent.low) and len(head) <= 60 and not sent.others)
        )
        return "implicit" if implicit else None
    last = max(m.end() for m in binders)
    between = clause[last:]
    if _CREATIVE.search(between):
        return None
    if sent.pet and _PET_NOUN.search(between + sent.low[cue.start : cue.end]):
        return None
    return "explicit"


def judge(sent: Sentence, cue: Cue) -> GuardCategory | None:
    """Apply the scoring rule to one cue; the blocking category, or ``None``."""
    person = sent.person_at(cue.start, cue.end)
    if cue.category is None:
        if cue.kind == "number":
            return "third_party" if person == "other" else None
        return (
            "third_party" if person == "other" and not (sent.topic or sent.hypothetical) else None
        )
    if cue.kind == "number":
        return "third_party" if person == "other" else cue.category
    binding = bound(sent, cue)
    tied = binding is not None
    if (sent.topic or (sent.pet and cue.category == "health")) and binding != "explicit":
        return None
    if sent.hypothetical and not (binding == "explicit" and person == "self"):
        return None
    if cue.kind == "weak" and not tied:
        return None
    return "third_party" if person == "other" else cue.category
