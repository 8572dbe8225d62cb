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

_CLAUSE = re.compile(r"[,，、:：()（）]")
_BINDER_EN = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|my|mine|myself|we|we're|our|he|she|he's|she's|his|her|"
    r"they|as an?)\b"
)
_BINDER_ZH = re.compile(r"(?<![帮给让教告诉提醒问跟和替陪叫])我|自己|本人|(?<![其吉])[他她]")
_REL_ANY = re.compile(rf"\b{REL_EN}\b|{REL_ZH}")
_CREATIVE = re.compile(
    r"\b(?:writing|write|wrote|reading|read|researching|research|studying|study|making|"
    r"building|build|builds|develops|developing|designing|working on|translating|summari[sz]\w*|looking up|find|"
    r"found|learning|learn|teaching|curious|wondering)\b|写|读|看|研究|整理|找|查|总结|翻译|"
    r"设计|了解|科普|学习|准备|好奇|问问|角色|人物|主角|扮演"
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


def bound(sent: Sentence, cue: Cue) -> bool:
    """True when a person is bound to the cue: a reference in the cue's clause, right
    before it, with no writing/research verb and no pet noun in between."""
    clause = _clause_before(sent, cue.start)
    reach = 14 if sent.zh and not clause[-14:].isascii() else 40
    binders = list(_BINDER_EN.finditer(clause)) + list(_BINDER_ZH.finditer(clause))
    if sent.others:
        binders += list(_REL_ANY.finditer(clause))
    binders = [m for m in binders if m.start() >= len(clause) - reach]
    if not binders:
        return False
    last = max(m.end() for m in binders)
    between = clause[last:]
    if _CREATIVE.search(between):
        return False
    return not (sent.pet and _PET_NOUN.search(between + sent.low[cue.start : cue.end]))


def judge(sent: Sentence, cue: Cue) -> GuardCategory | None:
    """Apply the scoring rule to one cue; the blocking category, or ``None``."""
    person = sent.person_at(cue.start)
    if cue.category is None:
        if cue.kind == "number":
            return "third_party" if person == "other" else None
        return "third_party" if person == "other" and not (sent.topic or sent.hypothetical) else None
    if cue.kind == "number":
        return "third_party" if person == "other" else cue.category
    tied = bound(sent, cue)
    if (sent.topic or (sent.pet and cue.category == "health")) and not tied:
        return None
    if sent.hypothetical and not (tied and person == "self"):
        return None
    if cue.kind == "weak" and not tied:
        return None
    return "third_party" if person == "other" else cue.category
