"""Third parties: another person's contact details and status.

Any category cue about someone else is already ``third_party`` through the scoring
rule. This module adds the facts that are sensitive *only* about another person:
phone numbers and e-mail addresses (the user's own are allowed), sexuality, immigration
status and criminal record. Phone numbers are read with ``phonenumbers`` in several
regions, or as 7-15 digits next to a phone word.
"""

from __future__ import annotations

import re

import phonenumbers

from ._cues import Sentence
from ._types import Cue
from .ids import non_id_label

__all__ = ["detect", "possible"]

# ASCII only: ``\w`` would also take the CJK text written straight before the address
# ("我上司的邮箱是x@y.com"), and the span would then swallow the person it is about.
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_PHONE_WORD = re.compile(
    r"\b(?:phone|number|num|no\.|cell|mobile|tel|call|text|whatsapp|signal|telegram|"
    r"contact|reach|line|landline|digits|#)\b|电话|手机|号码|手机号|微信|联系|致电|打给|"
    r"座机|分机|whatsapp|line"
)
_PHONE_ONLY = re.compile(r"\b(?:phone|cell|mobile|tel|whatsapp)\b|电话|手机|微信")
_PUBLIC_PHONE = re.compile(
    r"\b(?:support|customer service|hotline|helpline|front desk|reception|office|store|"
    r"shop|bakery|restaurant|clinic|hospital|pharmacy|company|business|toll-free|"
    r"airline|bank's|embassy|irs|dmv|site|website|lists)\b|客服|热线|前台|门店|商家|"
    r"官方|公司|银行|医院|酒店|餐厅|店|馆|订餐|外卖|预约|商户"
)
_STATUS = re.compile(
    r"(?<![a-z])(?:gay|lesbian|bisexual|bi|pansexual|asexual|transgender|trans|queer|nonbinary|"
    r"non-binary|not out|in the closet|closeted|came out|coming out|undocumented|"
    r"illegal immigrant|illegal alien|illegally|out of status|overstayed|overstaying|"
    r"visa (?:expired|denied|revoked)|h-1b (?:denied|revoked)|deported|deportation|"
    r"daca|asylum seeker|criminal record|record|felony|felon|convicted|conviction|"
    r"arrested|in prison|in jail|prison|jail|did time|doing time|served time|on parole|"
    r"on probation|parole|probation|sex offender|registered sex offender|dui|dwi|"
    r"assault|armed robbery|robbery|theft|fraud charges?|charged with|having an affair|"
    r"cheating on|affair)(?![a-z])"
    r"|同性恋|双性恋|跨性别|出柜|拉拉|非法移民|黑户|黑着|偷渡|签证过期|非法滞留|逾期滞留|"
    r"前科|坐过牢|坐牢|坐过监|坐监|服刑|出狱|被拘留|被抓|案底|犯罪记录|出轨|婚外情|"
    r"吸毒|赌博|被判|判了|缓刑|假释|性侵|家暴"
)
_CN_MOBILE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")
_REGIONS = ("US", "CN", "GB", "HK", "TW", "CA", "AU")


def _phone_spans(sent: Sentence) -> list[tuple[int, int]]:
    text = sent.text
    spans: list[tuple[int, int]] = [m.span() for m in _CN_MOBILE.finditer(text)]
    phone_word = _PHONE_WORD.search(sent.low) is not None
    for n in sent.numbers:
        near = sent.low[max(0, n.start - 16) : n.start]
        if non_id_label(sent.low, n.start) and not _PHONE_ONLY.search(near):
            continue
        if 7 <= len(n.digits) <= 15 and not n.prefix and (phone_word or len(n.digits) >= 10):
            spans.append((n.start, n.end))
    if not spans and phone_word and sum(c.isdigit() for c in text) >= 7:
        for region in _REGIONS:
            for match in phonenumbers.PhoneNumberMatcher(
                text, region, leniency=phonenumbers.Leniency.POSSIBLE
            ):
                if not non_id_label(sent.low, match.start):
                    spans.append((match.start, match.end))
            if spans:
                break
    return spans


def detect(sent: Sentence) -> list[Cue]:
    """Contact and status cues; they block only about someone else (see :mod:`._score`)."""
    cues: list[Cue] = []
    if not sent.others:
        return cues
    public = _PUBLIC_PHONE.search(sent.low) is not None
    for m in _EMAIL.finditer(sent.text):
        cues.append(
            Cue(None, "another person's e-mail address", m.start(), m.end(), "number", True)
        )
    if not public:
        for start, end in _phone_spans(sent):
            cues.append(Cue(None, "another person's phone number", start, end, "number", True))
    text = sent.unquoted()
    low = text.lower() if len(text.lower()) == len(text) else text
    for m in _STATUS.finditer(low):
        if (
            m.group(0) in ("bi", "trans", "record", "prison", "jail", "theft", "assault")
            and not sent.others
        ):
            continue
        cues.append(
            Cue(
                None,
                "another person's sexuality, immigration or criminal status",
                m.start(),
                m.end(),
            )
        )
    return cues


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter).

    Its cues are e-mail addresses (:data:`_EMAIL`), statuses (:data:`_STATUS` on the
    lowered unquoted sentence) and phone numbers. Every phone rule needs seven digits or
    more (a mobile number eleven, a number candidate seven, the ``phonenumbers`` pass
    seven ``isdigit`` characters), and every ``\\d`` is an ``isdigit`` character. The
    pre-filter spares computing who the sentence is about.
    """
    if _EMAIL.search(sent.text) is not None or sum(map(str.isdigit, sent.text)) >= 7:
        return True
    text, low = sent.unquoted_low
    return _STATUS.search(low) is not None
