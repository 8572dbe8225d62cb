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

from ._cues import Sentence
from ._types import Cue, GuardCategory

__all__ = ["judge"]

_CLAUSE = re.compile(r"[,，、:：()（）]")
_BINDER_EN = re.compile(
    r"\b(?:i|i'm|im|i've|ive|i'd|i'll|my|mine|myself|we|we're|our|he|she|he's|she's|his|her|"
    r"they)\b"
)
_BINDER_ZH = re.compile(r"我|自己|本人|他|她")
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
    """True when a person reference sits in the cue's clause, before it (or right after)."""
    clause = _clause_before(sent, cue.start)
    window = clause[-12:] if sent.zh and not clause[-12:].isascii() else clause[-40:]
    binders = list(_BINDER_EN.finditer(window)) + list(_BINDER_ZH.finditer(window))
    if sent.others:
        binders += [m for m in _REL_ANY.finditer(window)]
    if binders:
        last = max(m.end() for m in binders)
        if not (sent.pet and _PET_NOUN.search(window[last:] + sent.low[cue.start : cue.end])):
            if not (sent.pet and _PET_NOUN.search(window[last : last + 12])):
                return True
    after = sent.low[cue.end : cue.end + 8]
    return bool(re.match(r"\s*(?:here|for me|of mine|myself)\b", after))


from ._cues import REL_EN, REL_ZH  # noqa: E402

_REL_ANY = re.compile(rf"\b{REL_EN}\b|{REL_ZH}")


def judge(sent: Sentence, cue: Cue) -> GuardCategory | None:
    """Apply the scoring rule to one cue; the blocking category, or ``None``."""
    person = sent.person_at(cue.start)
    if cue.category is None:
        return "third_party" if person == "other" and not sent.topic else None
    if cue.kind == "number":
        return "third_party" if person == "other" else cue.category
    tied = bound(sent, cue)
    if (sent.topic or sent.pet) and not tied:
        return None
    if cue.kind == "weak" and not tied:
        return None
    return "third_party" if person == "other" else cue.category
