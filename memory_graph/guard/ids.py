"""Government ids: validated by checksum or structure where a scheme has one, else by an
id word right before an id-shaped token.

- ``python-stdnum``: Chinese resident id (``cn.ric``: birth date and check digit), US SSN
  (``us.ssn``), Canadian SIN (``ca.sin``, Luhn).
- Schemes stdnum does not cover are checked here: Taiwan national id and resident
  certificate (letter value plus weighted check digit), HKID (mod 11 check character) and
  UK National Insurance number (allowed prefixes, six digits, suffix A-D).
- Passports, driving licences, Medicare and travel permits have no public checksum: a
  token with enough digits right after the id word counts; a date after an id word (an
  expiry or appointment date) does not.

A number labelled as something else (order, invoice, tracking, student, employee,
member, library, ticket, flight, room, serial...) is not an id. A checksummed id typed
with a wrong check digit right after an id word still blocks (most of it is disclosed),
unless the sentence marks it as test data (fake, example, 测试, 校验位...).
"""

from __future__ import annotations

import re
from datetime import date

from stdnum.ca import sin as _sin
from stdnum.cn import ric as _ric
from stdnum.us import ssn as _ssn

from ._cues import Sentence
from ._numbers import Number
from ._types import Cue

__all__ = [
    "detect",
    "hkid_valid",
    "nino_valid",
    "non_id_label",
    "possible",
    "ric_valid",
    "tw_id_valid",
]

_NON_ID = re.compile(
    r"\b(?:order|orders|invoice|receipt|ticket|tracking|transaction|confirmation|batch|"
    r"shipment|build|version|package|loyalty|reference|ref|booking|student|employee|staff|"
    r"member|membership|library|flight|room|suite|model|part|serial|sku|item|product|"
    r"course|class|badge|case|claim|pin|zip|postal|postcode|extension|ext|route|bus|"
    r"gate|seat|table|lottery|jira|issue|pr|commit|build|release|promo|coupon|code|"
    r"account|acct|routing|iban|card|phone|tel|mobile|cell|fax|whatsapp|wechat|number is "
    r"the|isbn|doi|patent|meeting|webinar|zoom|teams|passcode|dial-in|conference)\b"
    r"|订单|发票|单号|工单|流水|批次|物流|快递|运单|取件|构建|版本|会员|积分|编号|学号|工号|"
    r"员工|图书|借书|型号|序列号|邮编|房间|会议室|座位|航班|车次|车牌|工卡|账号|账户|卡号|"
    r"银行卡|电话|手机|微信|客服|热线|优惠|券码|验证码|会议号|会议id|入会|腾讯会议|钉钉会议"
)
_SSN_WORD = re.compile(
    r"\b(?:ssn|ssns|social security|social|itin|tin|taxpayer)\b|社会安全号|社安号"
)
_SIN_WORD = re.compile(r"\b(?:sin|social insurance|canad\w*|cra)\b|加拿大|社会保险号")
_ID_WORD = re.compile(
    r"\b(?:passport|passport no|driver'?s?\s*licen[cs]e|driving\s+licen[cs]e|licen[cs]e\s*"
    r"(?:no\.?|number|#)|dl|medicare|medicaid|mbi|national insurance|ni\s*(?:no\.?|number)|"
    r"nino|social insurance|nhs number|tax id|tax file number|tfn|itin|ein|my id|id\s*"
    r"(?:no\.?|number|#|card)|national id|resident (?:card|permit)|green card|a-number|"
    r"alien number|uscis|visa number|hkid|taiwan id|arc|residence permit|id)\b"
    r"|身份证|身分证|证件|护照|通行证|驾驶证|驾照|社保卡|社保号|医保卡|医保号|居住证|居留证|"
    r"户口|军官证|签证号|回乡证|台胞证|港澳|健保卡|身份号码|id号",
)
_DATE_AFTER = re.compile(
    r"\b(?:expire[sd]?|expiry|expiration|exp|valid|until|issued|renew\w*|appointment|"
    r"on|due|dated?|by|before|after|since|from)\b|到期|有效期|过期|预约|办理|签发|续签|日期"
)
_DATE = re.compile(
    r"\b\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b|\b\d{1,2}/\d{2}\b"
)
_CHECKSUMMED_SHAPE = re.compile(r"\d{17}[\dXx]|[A-Za-z][12]\d{8}|[A-Za-z]{2}\d{6}[A-Da-d]")
_FAKE = re.compile(
    r"\b(?:fake|dummy|test|testing|example|sample|placeholder|invalid|made[- ]up|format|"
    r"regex|validator|mock|fictional)\b|假的?|测试|示例|例子|格式|校验|虚构|编的|随便写"
)
_TW_LETTERS = "ABCDEFGHJKLMNPQRSTUVXYWZIO"
_NINO_BAD_PAIRS = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})


def tw_id_valid(value: str) -> bool:
    """Validate a Taiwan national id or resident certificate (``A123456789``).

    >>> tw_id_valid("A123456789")
    True
    >>> tw_id_valid("A123456788")
    False
    """
    if not re.fullmatch(r"[A-Z][1289]\d{8}", value):
        return False
    code = _TW_LETTERS.index(value[0]) + 10
    digits = [code // 10, code % 10] + [int(c) for c in value[1:]]
    weights = (1, 9, 8, 7, 6, 5, 4, 3, 2, 1, 1)
    return sum(d * w for d, w in zip(digits, weights, strict=True)) % 10 == 0


def hkid_valid(value: str) -> bool:
    """Validate a Hong Kong identity card number (``A123456(3)`` written compactly).

    >>> hkid_valid("A1234563")
    True
    >>> hkid_valid("A1234564")
    False
    """
    m = re.fullmatch(r"([A-Z]{1,2})(\d{6})([0-9A])", value)
    if not m:
        return False
    letters = m.group(1).rjust(2, " ")
    total = sum((36 if c == " " else ord(c) - 55) * w for c, w in zip(letters, (9, 8), strict=True))
    total += sum(int(d) * w for d, w in zip(m.group(2), (7, 6, 5, 4, 3, 2), strict=True))
    check = (11 - total % 11) % 11
    return m.group(3) == ("A" if check == 10 else str(check))


def nino_valid(value: str) -> bool:
    """Check the structure of a UK National Insurance number (``AB123456C``).

    >>> nino_valid("AB123456C")
    True
    >>> nino_valid("QQ123456C")
    False
    """
    m = re.fullmatch(r"([A-Z]{2})\d{6}[A-D]", value)
    if not m:
        return False
    first, second = m.group(1)[0], m.group(1)[1]
    if first in "DFIQUV" or second in "DFIOQUV" or m.group(1) in _NINO_BAD_PAIRS:
        return False
    return True


_RIC_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 "
    "61 62 63 64 65 71 81 82 83 91".split()
)


def ric_valid(value: str) -> bool:
    """Validate a Chinese resident id: province, birth date and ISO 7064 check digit.

    The check digit comes from ``stdnum.cn.ric``; the county code is not looked up
    (abolished county codes stay on ids issued before the change).

    >>> ric_valid("11010519491231002X")
    True
    >>> ric_valid("110105194912310021")
    False
    """
    value = value.upper()
    if not re.fullmatch(r"\d{17}[\dX]", value) or value[:2] not in _RIC_PROVINCES:
        return False
    try:
        born = _ric.get_birth_date(value)
    except Exception:  # noqa: BLE001 - stdnum raises its own ValidationError subclasses
        return False
    if not date(1900, 1, 1) <= born <= date.today():
        return False
    return bool(_ric.calc_check_digit(value) == value[17])


def _trivial(digits: str) -> bool:
    """A counting run or one repeated digit (``123456789``, ``999999999``)."""
    ascending, descending = "01234567890123456789", "98765432109876543210"
    return digits in ascending or digits in descending or len(set(digits)) == 1


def non_id_label(text: str, start: int, width: int = 16) -> bool:
    """True when the words right before ``start`` label the number as a non-id."""
    return _NON_ID.search(text[max(0, start - width) : start]) is not None


def _compact(n: Number) -> str:
    return n.prefix + n.digits + n.suffix


def _number_cue(sent: Sentence, n: Number, low: str) -> str | None:
    compact = _compact(n)
    labelled = non_id_label(low, n.start)
    found = _ID_WORD.search(low[max(0, n.start - 24) : n.start])
    id_word = found is not None
    if labelled and (found is None or found.group(0).strip() in ("id", "my id")):
        return None
    if len(n.digits) in (17, 18) and ric_valid(
        n.digits + n.suffix if len(n.digits) == 17 else n.digits
    ):
        return "Chinese resident id (valid check digit and birth date)"
    if n.prefix and len(n.prefix) == 1 and tw_id_valid(compact):
        return "Taiwan national id (valid check digit)"
    if n.prefix and hkid_valid(compact):
        return "Hong Kong identity card (valid check character)"
    if len(n.prefix) == 2 and len(n.digits) == 6 and nino_valid(compact):
        return "UK National Insurance number"
    if n.prefix or n.suffix or len(n.digits) != 9:
        return None
    groups = tuple(len(g) for g in n.groups)
    ssn_ok = _ssn.is_valid(n.digits)
    sin_ok = _sin.is_valid(n.digits)
    if ssn_ok and (groups == (3, 2, 4) or _SSN_WORD.search(low)):
        return "US social security number"
    if sin_ok and (groups == (3, 3, 3) or _SIN_WORD.search(low)):
        return "Canadian social insurance number (Luhn)"
    if (
        (ssn_ok or sin_ok)
        and not _trivial(n.digits)
        and (id_word or not _NON_ID.search(low))
        and not _DATE_AFTER.search(low[max(0, n.start - 12) : n.start])
        and not _DATE.match(n.raw)
    ):
        return "nine-digit national id with no other label"
    return None


def _split_ssn(sent: Sentence, nums: list[Number], low: str) -> Cue | None:
    """An SSN typed in pieces ("first 3 ... 614, middle 95, last four 7820")."""
    if not _SSN_WORD.search(low) and not _SIN_WORD.search(low):
        return None
    for i in range(len(nums)):
        joined = ""
        for j in range(i, min(i + 4, len(nums))):
            joined += nums[j].digits
            if j > i and len(joined) == 9 and (_ssn.is_valid(joined) or _sin.is_valid(joined)):
                return Cue(
                    "gov_id",
                    "a national id typed in pieces",
                    nums[i].start,
                    nums[j].end,
                    "number",
                    True,
                )
    return None


def _after_id_word(sent: Sentence, low: str) -> list[Cue]:
    cues: list[Cue] = []
    for ctx in _ID_WORD.finditer(low):
        if non_id_label(low, ctx.start()):
            continue
        window = sent.text[ctx.end() : ctx.end() + 36]
        stop = _DATE_AFTER.search(window.lower())
        if stop:
            window = window[: stop.start()]
        window = _DATE.sub(lambda m: " " * len(m.group(0)), window)
        squeezed = re.sub(
            r"(?<=[0-9])[ \-./·_](?=[0-9A-Z])|(?<=[A-Z])[ \-./·_](?=[0-9])", "", window
        )
        for tok in re.finditer(r"(?<![0-9A-Za-z])[A-Za-z0-9]{6,20}(?![0-9A-Za-z])", squeezed):
            value = tok.group(0)
            if _CHECKSUMMED_SHAPE.fullmatch(value) and _FAKE.search(low):
                continue  # a test number that fails its checksum on purpose
            if sum(c.isdigit() for c in value) >= 5 or (
                sum(c.isdigit() for c in value) >= 4 and len(value) >= 8
            ):
                cues.append(
                    Cue(
                        "gov_id",
                        "identity document number after an id word",
                        ctx.start(),
                        min(len(sent.text), ctx.end() + 36),
                        "number",
                        True,
                    )
                )
                return cues
    return cues


def detect(sent: Sentence) -> list[Cue]:
    """Government id cues in one sentence."""
    if not sent.has_digit:
        return []
    low = sent.low
    nums = sent.numbers
    cues: list[Cue] = []
    for n in nums:
        reason = _number_cue(sent, n, low)
        if reason:
            cues.append(Cue("gov_id", reason, n.start, n.end, "number", True))
    split = _split_ssn(sent, nums, low)
    if split and not cues:
        cues.append(split)
    if not cues:
        cues += _after_id_word(sent, low)
    return cues


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter).

    Every id rule needs four digits or more: a checksummed id six or more (of the number
    candidate and its check character), a nine-digit number nine, an id typed in pieces
    nine, a token after an id word four ASCII digits; each of them a ``\\d`` of the
    sentence.
    """
    return sent.digits >= 4
