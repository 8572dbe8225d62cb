"""The sensitive-data guard: a deterministic verdict over one piece of text (zh + en).

The guard is the second layer of extraction (DESIGN §5). It runs on every candidate,
whatever a model said, and blocks six categories:

- ``gov_id``: government ids validated by checksum (Chinese resident id: check digit plus
  birth date; US SSN via ``python-stdnum``), or an id-shaped token right after an id word
  (passport, driver's license, Medicare, 身份证, 护照, 通行证 ...).
- ``finance``: payment cards (Luhn plus card context or a known issuer range), account
  numbers (IBAN, 账号), and the user's income, debts, balances, credit score, bankruptcy.
- ``address``: a precise home address (street plus number, unit / room / 号 / 室 / 栋 /
  单元). A city, a province, a time zone or a public venue is fine.
- ``health``: conditions, diagnoses, medication, treatment, surgery, pregnancy of the user.
- ``political_religious``: beliefs, religion, party membership, votes, campaigning.
- ``third_party``: any of the above, or contact details, sexuality, immigration or criminal
  status, about another person. A third party's name with a harmless fact is fine, and so
  is the user's own phone number or e-mail.

Policy choices: topic talk ("a blog post about diabetes", "关于佛教史的书") and titles in
quotes ("a film called 'Sick'") are not disclosures; numbers labelled as orders, invoices,
tracking or loyalty cards are not cards or ids. The verdict's ``reason`` names the rule that
fired and never repeats the text.

>>> check("I use vim").allowed
True
>>> v = check("I'm on antidepressants")
>>> (v.allowed, v.category)
(False, 'health')
>>> check("我在东八区").allowed
True
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

import phonenumbers
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.us import ssn as _ssn

from .errors import ValidationError

__all__ = ["CATEGORIES", "GuardCategory", "GuardVerdict", "check"]

GuardCategory = Literal[
    "health", "finance", "gov_id", "address", "political_religious", "third_party"
]
CATEGORIES: tuple[GuardCategory, ...] = (
    "health",
    "finance",
    "gov_id",
    "address",
    "political_religious",
    "third_party",
)
"""The sensitive categories, in the order of the verdict's precedence for own data."""


@dataclass(frozen=True)
class GuardVerdict:
    """The guard's decision on one text.

    Attributes:
        allowed: ``True`` when the text may be stored.
        category: the sensitive category that blocked it, else ``None``.
        reason: the rule that fired (never the text itself), else ``None``.
    """

    allowed: bool
    category: GuardCategory | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the verdict as a plain JSON dict.

        Returns:
            ``{"allowed": bool, "category": str | None, "reason": str | None}``.
        """
        return {"allowed": self.allowed, "category": self.category, "reason": self.reason}


_ALLOWED = GuardVerdict(allowed=True)


def _alt(words: str) -> str:
    """Join a ``|``-separated word list into a regex alternation, longest first."""
    items = sorted({w.strip() for w in words.split("|") if w.strip()}, key=len, reverse=True)
    return "(?:" + "|".join(items) + ")"


# --------------------------------------------------------------------------- shared

_CJK = r"\u4e00-\u9fff"
_QUOTED = re.compile(
    r"《[^》]*》|“[^”]*”|「[^」]*」|\"[^\"]*\"|(?<![A-Za-z])'[^']{1,60}'(?![A-Za-z])"
)
_FIRST_PERSON_EN = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|we|we're|we've|our|us)\b")
_TOPIC_EN = re.compile(
    r"\b(?:about|research|article|blog|explainer|explain|essay|paper|documentary|book|novel|"
    r"film|movie|show|series|podcast|course|class|lecture|studying|software|app|startup|"
    r"definition|define|history|what is|what's|how does|how do)\b"
)
_TOPIC_ZH = re.compile(
    r"关于|综述|研究|论文|文章|纪录片|电影|电视剧|剧|科普|知识|资料|课程|讲座|英文|翻译|解释|"
    r"这个词|是什么|怎么|为什么|如何|哪些|历史|书"
)

_REL_EN = _alt(
    "mom|mum|mother|dad|father|parents|parent|sister|brother|sibling|son|daughter|kid|kids|"
    "child|children|wife|husband|spouse|partner|boyfriend|girlfriend|fiance|fiancé|fiancée|"
    "friend|roommate|flatmate|housemate|neighbor|neighbour|coworker|co-worker|colleague|boss|"
    "manager|client|customer|patient|student|tenant|landlord|teammate|classmate|uncle|aunt|"
    "cousin|nephew|niece|grandma|grandpa|grandmother|grandfather|mother-in-law|"
    "father-in-law|stepmom|stepdad|ex|assistant|employee|nanny"
)
_REL_ZH = _alt(
    "妈妈|妈|母亲|爸爸|爸|父亲|父母|老公|老婆|丈夫|妻子|爱人|先生|太太|儿子|女儿|孩子|闺女|"
    "哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|表哥|表姐|表弟|表妹|堂哥|堂姐|堂弟|堂妹|朋友|好友|闺蜜|"
    "兄弟|同事|同学|室友|舍友|邻居|客户|领导|老板|上司|经理|组长|男朋友|女朋友|男友|女友|对象|"
    "未婚夫|未婚妻|爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨|舅舅|舅妈|姑姑|姨妈|岳父|岳母|"
    "公公|婆婆|侄子|侄女|外甥|外甥女|前男友|前女友|前妻|前夫|员工|保姆|房东|租客|病人"
)
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞"
    "左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕"
    "屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧"
    "闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
_THIRD_START_EN = re.compile(
    rf"^\W*(?:(?:(?:my|our)\s+(?:[a-z-]+\s+)?{_REL_EN}(?:'s|’s)?)\b"
    r"|(?:[A-Z][a-z]+(?:\s+[A-Z][a-z'’]+){1,2})(?:'s|’s)?\s+"
    r"(?:lives|is|has|had|was|owes|earns|makes|takes|works|phone|cell|email|address|ssn))",
)
_THIRD_POSS_EN = re.compile(rf"\b(?:my|our|his|her|their)\s+(?:[a-z-]+\s+)?{_REL_EN}(?:'s|’s)\b")
_THIRD_ANY_EN = re.compile(rf"\b(?:my|our|his|her|their)\s+(?:[a-z-]+\s+)?{_REL_EN}\b")
_NAME_EN = re.compile(r"\b[A-Z][a-z]+\s+[A-Z][a-z'’]+(?:'s|’s)?")
_THIRD_START_ZH = re.compile(
    rf"^\W*(?:我的?|我们的?|我家)?(?:{_REL_ZH})|^\W*[{_SURNAMES}][{_CJK}]{{1,2}}(?:的|住|是|有|欠)"
)
_THIRD_POSS_ZH = re.compile(
    rf"(?:{_REL_ZH}|[{_SURNAMES}][{_CJK}]{{1,2}})的(?:电话|手机|手机号|邮箱|微信|身份证|证件|护照|"
    r"地址|住址|银行卡|卡号|病|工资|收入)"
)
_THIRD_ANY_ZH = re.compile(rf"{_REL_ZH}")

# --------------------------------------------------------------------------- gov_id

_RIC = re.compile(r"(?<![0-9A-Za-z])(\d{17}[\dXx])(?![0-9A-Za-z])")
_RIC_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_RIC_PROVINCES = frozenset(
    "11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 52 53 54 "
    "61 62 63 64 65 71 81 82 83 91".split()
)
_SSN_FORMATTED = re.compile(r"(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])")
_SSN_BARE = re.compile(r"(?<![\d-])\d{9}(?![\d-])")
_SSN_CONTEXT = re.compile(
    r"\b(?:ssn|social security|social|tin|itin|taxpayer)\b|社会安全号|社保号", re.IGNORECASE
)
_ID_CONTEXT = re.compile(
    r"(?:\bpassport\b|\bdriver'?s?\s+licen[cs]e\b|\bdriving\s+licen[cs]e\b|"
    r"\blicen[cs]e\s+(?:no\.?|number|#)|\bmedicare\b|\bmedicaid\b|\bnational insurance\b|"
    r"\bsocial insurance\b|\bnhs number\b|\btax id\b|\bitin\b|\bein\b|\bmy id\b|"
    r"\bid\s*(?:no\.?|number|#|card)|"
    r"\bresident (?:card|permit)|\bgreen card\b|\bvisa number\b|身份证|证件|护照|通行证|"
    r"驾驶证|驾照|社保卡|医保卡|居住证|户口|军官证|签证号)",
    re.IGNORECASE,
)
_ID_TOKEN = re.compile(r"(?<![0-9A-Za-z])[A-Z0-9][A-Z0-9-]{4,22}(?![0-9A-Za-z])")
_NON_ID_CONTEXT = re.compile(
    r"\b(?:order|invoice|ticket|tracking|transaction|confirmation|batch|shipment|build|"
    r"version|package|loyalty|reference|booking)\b|订单|发票|单号|工单|流水|批次|物流|快递|取件|"
    r"构建|版本|会员|积分|编号",
    re.IGNORECASE,
)


def _ric_valid(number: str) -> bool:
    """Check a Chinese resident id: province, birth date and ISO 7064 check digit."""
    if number[:2] not in _RIC_PROVINCES:
        return False
    try:
        born = date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    if not date(1900, 1, 1) <= born <= date.today():
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _RIC_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def _before(text: str, start: int, width: int = 24) -> str:
    return text[max(0, start - width) : start]


def _gov_id(text: str) -> str | None:
    for m in _RIC.finditer(text):
        if _ric_valid(m.group(1)):
            labelled = _NON_ID_CONTEXT.search(_before(text, m.start(), 12))
            if not labelled or _ID_CONTEXT.search(_before(text, m.start())):
                return "Chinese resident id with a valid check digit and birth date"
    for m in _SSN_FORMATTED.finditer(text):
        digits = m.group(1) + m.group(3) + m.group(4)
        if _ssn.is_valid(digits) and (m.group(2) == "-" or _SSN_CONTEXT.search(text)):
            return "US social security number with a valid structure"
    if _SSN_CONTEXT.search(text):
        for m in _SSN_BARE.finditer(text):
            if _ssn.is_valid(m.group(0)):
                return "US social security number next to an SSN word"
    for ctx in _ID_CONTEXT.finditer(text):
        window = text[ctx.end() : ctx.end() + 28]
        for tok in _ID_TOKEN.finditer(window.upper() if ctx.group(0).isascii() else window):
            if sum(c.isdigit() for c in tok.group(0)) >= 5:
                return "identity document number after an id word"
    return None


# --------------------------------------------------------------------------- cards, accounts

_CARD = re.compile(r"(?<!\d)(?<!\d[.,/-])\d(?:[ -]?\d){11,18}(?!\d)(?![.,/-]\d)")
_CARD_CONTEXT = re.compile(
    r"\b(?:card|visa|mastercard|master card|amex|american express|discover|unionpay|jcb|"
    r"maestro|diners|debit|credit|cvv|cvc|expir\w*|exp)\b|卡|银联|有效期|工行|建行|农行|中行|"
    r"招行|招商|交行|银行",
    re.IGNORECASE,
)
_CARD_STRONG = re.compile(
    r"\b(?:visa|mastercard|amex|discover|unionpay|debit|credit|cvv|cvc|bank)\b|银行|信用卡|"
    r"借记卡|储蓄卡|工资卡|银联|有效期",
    re.IGNORECASE,
)
_NOT_CARD_CONTEXT = re.compile(
    r"\b(?:loyalty|points|membership|member|gift|library|tracking|transaction|batch|"
    r"shipment|order|invoice|ticket|package|build|serial|reward|rewards)\b|积分|会员|"
    r"流水|批次|订单|单号|发票|快递|物流|工单|取件|构建|序列号",
    re.IGNORECASE,
)
_IBAN = re.compile(r"(?<![A-Z0-9])([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?)")
_ACCOUNT_CONTEXT = re.compile(
    r"\b(?:iban|account (?:number|no\.?|#)|acct|routing number|sort code|swift|bic)\b|账号|"
    r"账户|帐号|帐户|户号",
    re.IGNORECASE,
)
_LONG_DIGITS = re.compile(r"(?<![\d])\d(?:[ -]?\d){7,}(?!\d)")


def _known_issuer(digits: str) -> bool:
    """True when the number's prefix and length match a major card network."""
    n, p2, p3, p4 = len(digits), int(digits[:2]), int(digits[:3]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= p2 <= 55 or 2221 <= p4 <= 2720:
        return n == 16
    if p2 in (34, 37):
        return n == 15
    if digits.startswith("62"):
        return 16 <= n <= 19
    if digits.startswith("6011") or 644 <= p3 <= 649 or p2 == 65:
        return 16 <= n <= 19
    if 3528 <= p4 <= 3589:
        return 16 <= n <= 19
    if 300 <= p3 <= 305 or p2 in (36, 38, 39):
        return 14 <= n <= 19
    return False


def _card_or_account(text: str) -> str | None:
    negative = _NOT_CARD_CONTEXT.search(text)
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        if not 13 <= len(digits) <= 19 or not _luhn.is_valid(digits):
            continue
        if _CARD_STRONG.search(text) or (_CARD_CONTEXT.search(text) and not negative):
            return "payment card number (Luhn-valid, with card context)"
        if _known_issuer(digits) and not negative:
            return "payment card number (Luhn-valid, known issuer range)"
    for m in _IBAN.finditer(text):
        if _iban.is_valid(m.group(1)) or _ACCOUNT_CONTEXT.search(text):
            return "bank account number (IBAN)"
    if _ACCOUNT_CONTEXT.search(text) and not negative and _LONG_DIGITS.search(text):
        return "bank account number after an account word"
    return None


# --------------------------------------------------------------------------- health

_HEALTH_EN = re.compile(
    r"\b"
    + _alt(
        "cancer|tumor|tumour|leukemia|leukaemia|lymphoma|melanoma|carcinoma|diabetes|diabetic|"
        "prediabetic|hypertension|high blood pressure|low blood pressure|blood sugar|cholesterol|"
        "asthma|asthmatic|epilepsy|epileptic|seizure|seizures|dementia|alzheimer's|alzheimers|"
        "alzheimer’s|parkinson's|parkinsons|parkinson’s|autism|autistic|adhd|ocd|ptsd|bipolar|"
        "schizophrenia|schizophrenic|depression|depressive|anxiety disorder|panic attacks|"
        "panic disorder|eating disorder|anorexia|anorexic|bulimia|bulimic|hiv|aids|std|stds|"
        "herpes|hepatitis|tuberculosis|stroke|heart attack|heart disease|heart condition|"
        "arrhythmia|copd|arthritis|lupus|multiple sclerosis|crohn's|crohns|celiac|coeliac|ibs|"
        "migraine|migraines|insomnia|allergy|allergies|allergic|infertile|infertility|"
        "miscarriage|miscarried|pregnant|pregnancy|lump|biopsy|chemo|chemotherapy|radiotherapy|"
        "radiation therapy|remission|dialysis|surgery|operated on|transplant|ivf|rehab|addiction|"
        "addicted|alcoholic|alcoholism|overdose|suicidal|self-harm|therapist|psychiatrist|"
        "oncologist|disability|disabled|concussion|fractured|prescription|prescribed|medication|"
        "meds|antidepressant|antidepressants|insulin|ssri|ssris|xanax|prozac|zoloft|adderall|"
        "ritalin|metformin|statins|inhaler|painkillers|opioids|chronic pain|diagnosed|"
        "hiv positive|hiv-positive|mental illness|kidney disease|liver disease|thyroid|"
        "hypothyroidism|hyperthyroidism|anemia|anaemia|gout|sleep apnea|hearing aid|"
        "pacemaker|stent|blood clot|endometriosis|pcos|psoriasis|eczema|scoliosis|obesity|"
        "obese|hospitalized|hospitalised|in hospital|a&e|er visit"
    )
    + r"(?![a-z])"
)
_HEALTH_STRONG_EN = re.compile(
    r"\b(?:diagnosed|my doctor|the doctor (?:said|found|told)|my (?:therapist|psychiatrist|"
    r"oncologist|prescription|meds|medication|surgery|biopsy)|i(?:'m| am) (?:on|taking)|"
    r"i (?:take|have|had|got)|i've (?:had|got|been))\b"
)
_HEALTH_ZH = re.compile(
    _alt(
        "癌|肿瘤|白血病|淋巴瘤|糖尿病|高血压|低血压|高血脂|血糖|血脂|血压高|心脏病|冠心病|心梗|"
        "中风|脑梗|癫痫|哮喘|抑郁|焦虑症|躁郁|双相|精神分裂|强迫症|自闭症|孤独症|多动症|"
        "阿尔茨海默|老年痴呆|痴呆|帕金森|艾滋|HIV|乙肝|丙肝|肝炎|肺结核|结核|胃炎|肠炎|鼻炎|"
        "皮炎|湿疹|银屑病|痛风|关节炎|甲亢|甲减|甲状腺|不孕|不育|流产|怀孕|怀了|孕期|孕周|"
        "过敏|失眠|偏头痛|结石|尿毒症|透析|化疗|放疗|手术|开刀|住院|确诊|病历|病史|诊断为|"
        "诊断出|查出|复查|吃药|服药|降压药|安眠药|抗抑郁药|止痛药|胰岛素|激素|试管婴儿|"
        "心理咨询|心理医生|精神科|残疾|瘫痪|骨折|阳性|休克|疗程|肾病|肝病|贫血|厌食症|暴食症|"
        "创伤后应激|进食障碍|药物|处方|康复治疗|中风|脑瘤|肺炎|心律不齐|早产|剖腹产|月经不调|"
        "多囊|子宫|乳腺|前列腺|痔疮|近视手术|做透析|打针|输液|挂号|看病|生病|得病|病情|病了"
    )
    + r"|["
    + _CJK
    + r"](?:症|癌|瘤)(?![状])"
    + r"|(?:吃|服|用|打)[^，。,.!?！？]{0,6}药"
)
_HEALTH_STRONG_ZH = re.compile(
    r"确诊|医生说我|诊断|我(?:有|得了|得过|患|患有|在吃|吃着|在做|做了|打|对.{1,6}过敏)|查出"
)


def _health(text: str, low: str, zh: bool) -> str | None:
    if zh:
        if not _HEALTH_ZH.search(text):
            return None
        if _TOPIC_ZH.search(text) and not _HEALTH_STRONG_ZH.search(text):
            return None
        return "a health condition, diagnosis, treatment or medication"
    if not _HEALTH_EN.search(low) or not _FIRST_PERSON_EN.search(low):
        return None
    if _TOPIC_EN.search(low) and not _HEALTH_STRONG_EN.search(low):
        return None
    return "a health condition, diagnosis, treatment or medication"


# --------------------------------------------------------------------------- finance (semantic)

_MONEY_EN = re.compile(
    r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?\s?(?:k|m|million|thousand|grand)?\b"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:k|grand|dollars|bucks|usd|eur|euros|pounds|gbp|rmb|yuan)\b"
)
_FIN_EN = re.compile(
    r"\b"
    + _alt(
        "salary|income|pay|paycheck|paycheque|take-home|debt|debts|owe|owes|owed|owing|loan|"
        "loans|mortgage|balance|checking|checking account|savings|savings account|"
        "bank account|bonus|net worth|credit card|401k|401\\(k\\)|pension|overdraft|"
        "overdrawn|inheritance|inherited|wage|wages|student loans|in the red|assets|"
        "portfolio|alimony|child support|tax return"
    )
    + r"(?![a-z])"
)
_FIN_WEAK_EN = re.compile(
    r"\b(?:make|makes|made|earn|earns|earned|earning|paid|lost|lose|saved|invested|"
    r"inherited|raise)\b"
)
_BIG_OR_PERIODIC_EN = re.compile(
    r"\b(?:a|an|per|each|every) (?:year|month|week|hour)\b|\bannual(?:ly)?\b|/(?:yr|year|mo|month|"
    r"hr|hour)\b|\d[\d,]*\s?(?:k|grand|thousand|million|m)\b|\d{1,3},\d{3}|\d{4,}"
)
_FIN_STRONG_EN = re.compile(
    r"\bcredit score\b[^.]*\d|\bbankrupt(?:cy)?\b|\bin debt\b|\bbehind on (?:my |the )?"
    r"(?:rent|mortgage|payments|bills)\b|\bdefaulted\b|\bforeclos\w+|\bcollections agency\b|"
    r"\bpayday loan\b|\bevicted\b"
)
_NUM_ZH = r"(?:\d[\d,.]*|[零一二两三四五六七八九十百千万亿几半]+)"
_MONEY_ZH = re.compile(
    rf"{_NUM_ZH}\s*(?:万|千|百|k|K|w|W)\s*[零一二两三四五六七八九]?(?:块|元|美元|刀)?"
    rf"|{_NUM_ZH}\s*(?:块|元|美元|刀|欧元|英镑|人民币|块钱)"
    r"|[$¥￥]\s?\d"
)
_FIN_ZH = re.compile(
    _alt(
        "月薪|年薪|薪水|薪资|工资|收入|到手|税后|税前|存款|积蓄|余额|欠|负债|债务|贷款|房贷|车贷|"
        "网贷|花呗|借呗|白条|信用卡|年终奖|奖金|亏|赔|赚|炒股|股票|基金|理财|征信|逾期|资产|"
        "身价|借了|借钱|还款|月供|透支|存了|攒了|工资卡|分红|遗产"
    )
)
_FIN_STRONG_ZH = re.compile(
    r"征信.{0,8}(?:逾期|黑|花|差|不好)|(?:信用分|芝麻分|征信分).{0,6}\d|破产|被催收|老赖"
)


def _finance(text: str, low: str, zh: bool) -> str | None:
    if zh:
        if _FIN_STRONG_ZH.search(text):
            return "credit history, bankruptcy or collections"
        if _FIN_ZH.search(text) and _MONEY_ZH.search(text) and "我" in text:
            return "income, savings, debts or losses with an amount"
        return None
    if not _FIRST_PERSON_EN.search(low):
        return None
    if _FIN_STRONG_EN.search(low):
        return "credit history, bankruptcy or collections"
    money = _MONEY_EN.search(low)
    if money and _FIN_EN.search(low):
        return "income, savings, debts or losses with an amount"
    if money and _FIN_WEAK_EN.search(low) and _BIG_OR_PERIODIC_EN.search(low):
        return "income, savings, debts or losses with an amount"
    return None


# --------------------------------------------------------------------------- address

_STREET_SUFFIX = _alt(
    "Alley|Allee|Avenue|Ave|Av|Bayou|Beach|Bend|Bluff|Bluffs|Bottom|Boulevard|Blvd|Branch|"
    "Bridge|Brook|Brooks|Burg|Burgs|Bypass|Camp|Canyon|Cape|Causeway|Center|Centers|Circle|"
    "Circles|Cir|Cliff|Cliffs|Club|Common|Commons|Corner|Corners|Course|Court|Courts|Ct|Cove|"
    "Coves|Creek|Crescent|Crest|Crossing|Crossroad|Curve|Dale|Dam|Divide|Drive|Drives|Dr|"
    "Estate|Estates|Expressway|Extension|Extensions|Fall|Falls|Ferry|Field|Fields|Flat|Flats|"
    "Ford|Fords|Forest|Forge|Forges|Fork|Forks|Fort|Freeway|Garden|Gardens|Gateway|Glen|"
    "Glens|Green|Greens|Grove|Groves|Harbor|Harbors|Haven|Heights|Highway|Hwy|Hill|Hills|"
    "Hollow|Inlet|Island|Islands|Isle|Junction|Junctions|Key|Keys|Knoll|Knolls|Lake|Lakes|"
    "Land|Landing|Lane|Ln|Light|Lights|Loaf|Lock|Locks|Lodge|Loop|Mall|Manor|Manors|Meadow|"
    "Meadows|Mews|Mill|Mills|Mission|Motorway|Mount|Mountain|Mountains|Neck|Orchard|Oval|"
    "Overpass|Park|Parks|Parkway|Parkways|Pkwy|Pass|Passage|Path|Pike|Pine|Pines|Place|Pl|"
    "Plain|Plains|Plaza|Point|Points|Port|Ports|Prairie|Radial|Ramp|Ranch|Rapid|Rapids|Rest|"
    "Ridge|Ridges|River|Road|Roads|Rd|Route|Row|Rue|Run|Shoal|Shoals|Shore|Shores|Skyway|"
    "Spring|Springs|Spur|Spurs|Square|Squares|Sq|Station|Stravenue|Stream|Street|Streets|St|"
    "Summit|Terrace|Ter|Throughway|Trace|Track|Trafficway|Trail|Trl|Tunnel|Turnpike|"
    "Underpass|Union|Unions|Valley|Valleys|Via|Viaduct|View|Views|Village|Villages|Ville|"
    "Vista|Walk|Walks|Wall|Way|Ways|Well|Wells|Close|Gate|Gdns|Mews"
)
_STREET_EN = re.compile(
    rf"(?<![\d.,$])\b\d{{1,6}}[A-Z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z][A-Za-z'’-]*\.?\s+){{1,3}}"
    rf"{_STREET_SUFFIX}\b"
)
_UNIT_EN = re.compile(
    r"\b(?:apt|apartment|suite|ste|unit|flat)\b\.?\s*#?\s*\d+[A-Z]?\b|\bp\.?\s?o\.?\s+box\s+\d+",
    re.IGNORECASE,
)
_ZIP_EN = re.compile(r"\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b|,\s*[A-Z][a-z]+\s+\d{5}\b")
_HOME_EN = re.compile(
    r"\b(?:home|live|lives|living|moved|move|my address|my place|our place|my house|our house|"
    r"ship it to me|ship to me|deliver to me|rent|renting|gate code|door code|buzzer)\b",
    re.IGNORECASE,
)
_PUBLIC_EN = re.compile(
    r"\b(?:office|meeting|conference|venue|store|shop|restaurant|cafe|hotel|museum|"
    r"headquarters|hq|campus|clinic|gym|meet|meetup|lunch|dinner|coffee|event|party|"
    r"concert|bar|pub|cinema|theater|theatre)\b",
    re.IGNORECASE,
)
_STREET_ZH = re.compile(
    rf"(?:[路街巷弄道里村段]|胡同)(?:\d+|[一二三四五六七八九十百]+)(?:号|弄)|\d+弄\d+号|[{_CJK}]{{2,}}"
    r"(?:小区|花园|公寓|新村|家园|苑|大厦)\s*\d+\s*(?:号楼|栋|幢|座|单元|号)"
)
_UNIT_ZH = re.compile(r"\d+\s*(?:号楼|栋|幢|单元)|\d{2,5}\s*(?:室|房)(?!间)|门牌号|门禁密码")
_HOME_ZH = re.compile(r"家|住|搬|寄到|寄给我|快递|收货|收件|地址")
_PUBLIC_ZH = re.compile(r"公司|办公|会议|酒店|宾馆|餐厅|店|商场|医院|学校")


def _address(text: str, zh: bool) -> str | None:
    if zh:
        street = _STREET_ZH.search(text)
        unit = _UNIT_ZH.search(text)
        home = _HOME_ZH.search(text)
        if (street or unit) and _PUBLIC_ZH.search(text) and not home:
            return None
        if street or (unit and home):
            return "a precise address (street and number, building, unit or room)"
        return None
    street_en = _STREET_EN.search(text)
    home_en = _HOME_EN.search(text)
    if street_en and _PUBLIC_EN.search(text) and not home_en:
        return None
    if street_en or ((_UNIT_EN.search(text) or _ZIP_EN.search(text)) and home_en):
        return "a precise address (street and number, apartment or unit)"
    return None


# --------------------------------------------------------------------------- beliefs

_FAITH_EN = _alt(
    "catholic|christian|protestant|evangelical|baptist|methodist|lutheran|anglican|"
    "presbyterian|pentecostal|quaker|mormon|jehovah's witness|jehovah’s witness|muslim|"
    "moslem|jew|jewish|hindu|buddhist|sikh|jain|taoist|shinto|pagan|wiccan|scientologist|"
    "atheist|agnostic|orthodox christian|believer|born-again christian|born again christian"
)
_PARTY_EN = _alt(
    "democrat|democrats|democratic|republican|republicans|gop|labour|labor party|tory|tories|"
    "conservative party|conservatives|liberal democrats|lib dems|liberal party|green|greens|"
    "green party|libertarian|libertarians|communist|communists|socialist|socialists|snp|"
    "reform uk|ccp|kmt|dpp|maga|trump|biden|harris|independent candidate"
)
_PARTY_SELF = _alt(
    "democrat|republican|gop member|labour voter|labour member|tory|conservative voter|"
    "liberal democrat|green party member|green voter|libertarian|communist|socialist|"
    "party member|trump supporter|maga supporter"
)
_BELIEF_EN = re.compile(
    rf"\b(?:i'm|i am|im|i've been|we're|we are|as|being|became|become|raised)\s+(?:an?\s+)?"
    r"(?:devout|practicing|practising|born-again|lapsed|observant|orthodox|proud|"
    r"committed|registered|card-carrying|lifelong|strict|non-practicing)?\s*"
    rf"{_FAITH_EN}\b(?!\s+[a-z]+\s+(?:fan|fans|movie|movies|film|films)\b)"
    rf"|\bconverted to\s+\w+|\bi (?:pray|worship|fast for ramadan)\b|\bramadan\b.*\bi\b|"
    r"\b(?:go|goes|going|attend|attends|attending)\s+(?:to\s+)?(?:the\s+)?(?:church|mass|"
    r"mosque|synagogue|friday prayers|services|temple to pray)\b|\bi (?:don't|do not|no longer)"
    r" believe in god\b|\bi believe in god\b|\bbaptized\b|\bbaptised\b|\bbar mitzvah\b|"
    rf"\bi (?:voted|vote|will vote|'m voting|am voting)\s+(?:for\s+)?(?:the\s+)?{_PARTY_EN}\b|"
    r"\bi (?:voted|vote)\b.*\b(?:election|primary|ballot|referendum)\b|"
    r"\b(?:member of|joined|volunteer(?:ed|ing)? (?:for|with)|campaign(?:ed|ing)? for|"
    rf"donat(?:e|ed|ing) to|canvass(?:ed|ing)? for)\s+(?:the\s+)?{_PARTY_EN}\b|"
    rf"\b(?:i'm|i am) (?:a |an )?(?:registered )?{_PARTY_SELF}\b|"
    r"\b(?:i'm|i am) (?:pro-life|pro-choice|a feminist activist|a socialist|far-left|far-right)\b"
)
_BELIEF_ZH = re.compile(
    r"(?:信|信仰|信奉|皈依|改信|信了|信的是)(?:了)?(?:天主教|基督教|基督|耶稣|佛教|佛|道教|"
    r"伊斯兰教|伊斯兰|犹太教|东正教|印度教|摩门教|主|真主|上帝)|不信(?:任何)?宗教|无神论|"
    r"穆斯林|基督徒|佛教徒|道教徒|天主教徒|[\u4e00-\u9fff]{1,3}教徒|信徒|耶和华见证人|受洗|洗礼|"
    r"朝觐|做礼拜|做弥撒|望弥撒|去教堂|去清真寺|吃斋念佛|念经|入了?党|党员|入团|团员|"
    r"投票给|投给了?|支持.{0,6}党|反对.{0,6}党|政治立场|左派|右派|自由派|保守派|法轮功|"
    r"民主党|共和党|国民党|民进党|工党"
)


def _belief(text: str, low: str, zh: bool) -> str | None:
    if zh:
        if _BELIEF_ZH.search(text) and not (_TOPIC_ZH.search(text) and "我是" not in text):
            return "a religious belief, political view, vote or party membership"
        return None
    if _BELIEF_EN.search(low):
        return "a religious belief, political view, vote or party membership"
    return None


# --------------------------------------------------------------------------- third parties

_STATUS_EN = re.compile(
    r"\b(?:gay|lesbian|bisexual|transgender|trans|queer|not out|in the closet|closeted|"
    r"undocumented|illegal immigrant|illegal alien|immigration status|overstayed|deported|"
    r"criminal record|felony|felon|convicted|arrested|in prison|in jail|on parole|"
    r"on probation|having an affair|cheating on)\b"
)
_STATUS_ZH = re.compile(
    r"同性恋|双性恋|跨性别|出柜|gay|拉拉|非法移民|黑户|偷渡|签证过期|前科|坐过牢|坐牢|被拘留|"
    r"被抓|案底|犯罪记录|出轨|婚外情|吸毒|戒毒|赌博|欠赌债"
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CN_MOBILE = re.compile(r"(?<!\d)1[3-9]\d{9}(?!\d)")


def _contact(text: str) -> bool:
    if _EMAIL.search(text) or _CN_MOBILE.search(text):
        return True
    for region in ("US", "CN", "GB"):
        matcher = phonenumbers.PhoneNumberMatcher(
            text, region, leniency=phonenumbers.Leniency.VALID
        )
        for match in matcher:
            if len(re.sub(r"\D", "", match.raw_string)) >= 7:
                return True
    return False


def _third_party(text: str, zh: bool) -> bool:
    """True when the sentence's subject or possessor is someone other than the user."""
    if zh:
        return bool(_THIRD_START_ZH.search(text) or _THIRD_POSS_ZH.search(text))
    low_start = text.lstrip()
    starts = _THIRD_START_EN.search(low_start[:1].lower() + low_start[1:]) or (
        _THIRD_START_EN.search(low_start)
    )
    return bool(starts or _THIRD_POSS_EN.search(text.lower()) or _NAME_POSS_EN.search(text))


_NAME_POSS_EN = re.compile(
    r"\b[A-Z][a-z]+\s+[A-Z][a-z]+(?:'s|’s)\s+(?:\w+\s+)?(?:phone|cell|"
    r"email|e-mail|address|number|ssn|passport|id|salary|income|debt)"
)


def _mentions_other(text: str, zh: bool) -> bool:
    """True when any other person is named or referred to (for contact details)."""
    if zh:
        return bool(_THIRD_ANY_ZH.search(text) or _THIRD_POSS_ZH.search(text))
    if _THIRD_ANY_EN.search(text.lower()):
        return True
    return any(not _SELF_NAME_EN.search(text[: m.start()]) for m in _NAME_EN.finditer(text))


_SELF_NAME_EN = re.compile(r"(?:\bi'm|\bi am|\bmy name is|\bthis is|\bcall me|\bit's)\s*$", re.I)


# --------------------------------------------------------------------------- entry point


def check(text: str) -> GuardVerdict:
    """Decide whether ``text`` may be stored as a memory.

    Args:
        text: one candidate's text (quote plus value or content). Any language; the
            rules cover Chinese and English.

    Returns:
        A :class:`GuardVerdict`. ``allowed`` is ``False`` with a category and a reason
        when a sensitive rule fires; otherwise it is ``True`` with both ``None``.

    Raises:
        ValidationError: ``text`` is not a string.

    >>> check("我月薪两万五").category
    'finance'
    >>> check("叫我小王就行").allowed
    True
    """
    if not isinstance(text, str):
        raise ValidationError(f"guard text must be a string, got {type(text).__name__}")
    norm = unicodedata.normalize("NFKC", text).replace("’", "'")
    if not norm.strip():
        return _ALLOWED
    zh = re.search(f"[{_CJK}]", norm) is not None
    prose = _QUOTED.sub(" ", norm)
    low = prose.lower()
    own: list[tuple[GuardCategory, str]] = []
    for category, reason in (
        ("gov_id", _gov_id(norm)),
        ("finance", _card_or_account(norm)),
        ("address", _address(prose, zh)),
        ("health", _health(prose, low, zh)),
        ("finance", _finance(prose, low, zh)),
        ("political_religious", _belief(prose, low, zh)),
    ):
        if reason is not None:
            own.append((category, reason))  # type: ignore[arg-type]
    other = _third_party(prose, zh)
    if own:
        category, reason = own[0]
        if other:
            return GuardVerdict(False, "third_party", f"another person's data: {reason}")
        return GuardVerdict(False, category, reason)
    status = _STATUS_ZH.search(prose) if zh else _STATUS_EN.search(low)
    if status and other:
        return GuardVerdict(
            False, "third_party", "another person's sexuality, immigration or criminal status"
        )
    if _contact(norm) and (other or _mentions_other(prose, zh)):
        return GuardVerdict(False, "third_party", "another person's phone number or e-mail")
    return _ALLOWED
