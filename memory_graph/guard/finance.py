"""Finance: payment cards, bank accounts, and the user's money situation.

- Cards: Luhn-valid (``python-stdnum``) 13-19 digits, with card context or a known
  issuer range; a card typed in pieces within one sentence is joined. Public test cards
  (Stripe, processor docs) and numbers labelled as orders, loyalty or gift cards are not
  cards.
- Accounts: IBAN validated by ``stdnum.iban`` (mod 97), a US routing number
  (``stdnum.us.rtn``) or a long number after an account word.
- Status: income, salary, debts, loans, balances, savings, losses with an amount in any
  form (``$6k``, ``28k``, ``six grand``, ``两万三``); credit score, bankruptcy,
  garnishment, collections, overdue debt with or without an amount. A race or training
  distance (``ran 10k``, ``a 21k trail race``) is not an amount, and ``lost`` is a loss
  only with an amount or money after it (not ``lost my mind``).
"""

from __future__ import annotations

import re

from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.us import rtn as _rtn

from ._cues import Sentence, Typos, alt
from ._gate import any_match
from ._types import Cue

__all__ = ["detect", "possible"]

_CARD_CONTEXT = re.compile(
    r"\b(?:card|cards|visa|mastercard|master card|amex|american express|discover|unionpay|"
    r"jcb|maestro|diners|debit|credit|cvv|cvc|expir\w*|exp|bank|payment|pay with|"
    r"billing)\b|卡|银联|有效期|工行|建行|农行|中行|招行|招商|交行|银行|支付|付款"
)
_NOT_CARD = re.compile(
    r"\b(?:loyalty|points|membership|member|gift card|library|tracking|transaction|batch|"
    r"shipment|order|invoice|ticket|package|build|serial|reward|rewards|test card|test mode|"
    r"test data|sandbox|fake|dummy|example|sample|qa|unit test|fails? the luhn|invalid)\b"
    r"|积分|会员|流水|批次|订单|单号|发票|快递|物流|工单|取件|构建|序列号|测试|假的|示例|校验.{0,4}(?:不|没)"
)
_PUBLIC_TEST_CARDS = frozenset(
    {  # Stripe's documented test numbers: published, never a person's card
        "4242424242424242",
        "4000056655665556",
        "5555555555554444",
        "2223003122003222",
        "5200828282828210",
        "5105105105105100",
        "378282246310005",
        "371449635398431",
        "6011111111111117",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        "6200000000000005",
    }
)
_ACCOUNT_WORD = re.compile(
    r"\b(?:iban|account|acct|a/c|routing|aba|sort code|swift|bic|direct deposit|"
    r"bsb|transit)\b|账号|账户|帐号|帐户|户号|开户|收款"
)
_IBAN = re.compile(r"(?<![A-Z0-9])[A-Z]{2} ?\d{2}(?:[ /\-.·]?[A-Z0-9]){11,32}(?![A-Z0-9])")


def _known_issuer(digits: str) -> bool:
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


def _is_card(digits: str) -> bool:
    return 13 <= len(digits) <= 19 and digits not in _PUBLIC_TEST_CARDS and _luhn.is_valid(digits)


def _cards_and_accounts(sent: Sentence) -> list[Cue]:
    low, text = sent.low, sent.text
    cues: list[Cue] = []
    negative = _NOT_CARD.search(low) is not None
    context = _CARD_CONTEXT.search(low) is not None
    nums = sent.numbers
    for n in nums:
        if negative:
            break
        if _is_card(n.digits) and (context or _known_issuer(n.digits)):
            cues.append(
                Cue("finance", "payment card number (Luhn-valid)", n.start, n.end, "number", True)
            )
            continue
        for i in range(len(n.groups)):  # a card followed by an expiry or a code
            joined = ""
            for group in n.groups[i:]:
                joined += group
                if len(joined) > 19:
                    break
                if _is_card(joined) and _known_issuer(joined):
                    cues.append(
                        Cue(
                            "finance",
                            "payment card number (Luhn-valid)",
                            n.start,
                            n.end,
                            "number",
                            True,
                        )
                    )
                    break
    if not cues and context and not negative:
        for i in range(len(nums)):
            joined = ""
            for j in range(i, len(nums)):
                joined += nums[j].digits
                if len(joined) > 19:
                    break
                if j > i and _is_card(joined) and _known_issuer(joined):
                    cues.append(
                        Cue(
                            "finance",
                            "payment card number typed in pieces",
                            nums[i].start,
                            nums[j].end,
                            "number",
                            True,
                        )
                    )
                    break
    for m in _IBAN.finditer(text.upper()):
        compact = re.sub(r"[^A-Z0-9]", "", m.group(0))
        placeholder = re.match(r"[A-Z]{2}00", compact) is not None
        if _iban.is_valid(compact) or (
            _ACCOUNT_WORD.search(low) and not placeholder and not negative
        ):
            cues.append(
                Cue("finance", "bank account number (IBAN)", m.start(), m.end(), "number", True)
            )
    if _ACCOUNT_WORD.search(low) and not negative:
        for n in nums:
            if len(n.digits) == 9 and _rtn.is_valid(n.digits) and re.search(r"routing|aba", low):
                cues.append(Cue("finance", "bank routing number", n.start, n.end, "number", True))
            elif 8 <= len(n.digits) <= 34 and not n.prefix:
                cues.append(
                    Cue(
                        "finance",
                        "bank account number after an account word",
                        n.start,
                        n.end,
                        "number",
                        True,
                    )
                )
    return cues


_NUM_WORD = alt(
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    "forty|fifty|sixty|seventy|eighty|ninety|a hundred|hundred|a couple|a few|several|"
    "half a|a"
)
_AMOUNT_EN = re.compile(
    r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?\s?(?:k|m|mm|million|thousand|grand)?(?![a-z])"
    r"|\b\d[\d,]*(?:\.\d+)?\s?(?:k|m|grand|thousand|million|bucks|dollars|usd|eur|euros|"
    r"pounds|gbp|rmb|yuan|cad|aud|hkd|nt|twd|quid)(?![a-z])"
    r"|\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d{4,7}(?:\.\d+)?\b"
    r"|\b\d+(?:\.\d+)?\s?(?:an?|per|/|each)\s?(?:hour|hr|month|mo|year|yr|week|wk)\b"
    rf"|\b{_NUM_WORD}(?:[ -]{_NUM_WORD})?[ -](?:grand|thousand|k|million|hundred grand)\b"
    r"|\b(?:five|six|seven|eight|5|6|7|8)[ -]figures?\b"
)
_AMOUNT_ZH = re.compile(
    r"\d[\d,]*(?:\.\d+)?\s*(?:万|千|百|k|w|元|块|蚊|美元|美金|刀|欧元|英镑|人民币|rmb|港币|台币|"
    r"多万|来万|几万|多|来|几)|[$¥￥]\s?\d|\d{3,}|\d+\s*成|(?:几|十几|几十|上百)万"
    r"|[一二两三四五六七八九十百千]+[来多几]?万"
)
_INCOME_EN = re.compile(
    r"\b(?:salary|salaries|income|paycheck|paycheque|take-home|take home|bring home|"
    r"brings home|net pay|gross|"
    r"comp|compensation|base|base pay|tc|hourly|per hour|an hour|/hr|/hour|wage|wages|"
    r"debt|debts|owe|owes|owed|owing|loan|loans|mortgage|heloc|balance|savings|saved|"
    r"net worth|bonus|401k|401\(k\)|ira|roth|pension|retirement|agi|magi|portfolio|"
    r"stocks|crypto|inheritance|inherited|alimony|child support|tax return|refund|"
    r"credit card|cc debt|student loans?|car loan|car payment|rent|budget|in the red|"
    r"overdraft|paid|make|makes|made|earn|earns|earned|earning|lost|losing|down|"
    r"checking account|my checking|in checking|severance|raise|offer|signing|rsus?|equity|"
    r"emergency fund|nest egg|"
    r"in savings|savings account|brokerage|collections?|interest|net|netting|clear|clearing|"
    r"pay (?:it|them|this|that) (?:off|down)|paying (?:it |them )?(?:off|down)|"
    r"store cards?|credit cards|medical bills|on (?:a|my|two|three|four|several) "
    r"(?:\w+ )?cards?)\b"
)
# A person's earnings: a subject, an earning verb, then a big or periodic amount
# ("I earn 68k", "he brings in 3k", "I take home about 5,200 a month"). A purchase word
# elsewhere in the sentence ("how should we split the bills") does not make it a price.
_EARNS_EN = re.compile(
    r"\b(?:i|we|he|she|they|my \w+|(?:my|our) \w+ (?:and i|and me))\s+(?:\w+ly\s+)?"
    r"(?:earn|earns|make|makes|made|take home|takes home|bring in|brings in|bring home|"
    r"brings home|gross|grosses|net|nets|clear|clears|pull in|pulls in)\s+"
    r"(?:about |around |roughly |almost |nearly |over |under |just |like |maybe )?"
    r"[$€£¥]?\d[\d,]*(?:\.\d+)?\s?(?:k|grand|thousand|million|m|(?:a|an|per|/) ?"
    r"(?:year|yr|month|mo|week|wk|hour|hr))?\b"
)
_WEAK_EN = frozenset(
    "paid|make|makes|made|earn|earns|earned|earning|losing|down|offer|raise|rent|budget|"
    "refund|gross|signing|equity|rsu|rsus|stocks|crypto|portfolio|interest|net|netting|clear|"
    "clearing".split("|")
)
_BIG_OR_PERIODIC = re.compile(
    r"\b(?:a|an|per|each|every) (?:year|month|week|hour)\b|\bannual(?:ly)?\b|/(?:yr|year|mo|"
    r"month|hr|hour)\b|\d[\d,.]*\s?(?:k|grand|thousand|million|m)\b|\d{1,3},\d{3}|\d{4,}|"
    r"\b(?:grand|thousand|million|figures?)\b"
)
_STATUS_EN = re.compile(
    r"\b(?:bankrupt|bankruptcy|chapter (?:7|11|13)|garnish\w*|foreclos\w*|repossess\w*|"
    r"in debt|debt collectors?|collections agency|in collections|sent to collections|"
    r"behind (?:\w+ ){0,3}on (?:my |the )?(?:rent|mortgage|payments|bills|car payment|loans?)|"
    r"collections? account|"
    r"defaulted|default(?:ed)? on|overdrawn|payday loans?|evicted|eviction notice|"
    r"(?:credit score|fico)\D{0,24}\d{3}|\d{3}\s*(?:credit score|fico)|"
    r"(?:credit score|fico)\D{0,24}?\b(?:three|four|five|six|seven|eight) (?:hundred )?"
    r"(?:and )?(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)|"
    r"maxed out|underwater on|owe the irs|tax debt|living paycheck to paycheck|"
    r"broke until payday|can't make rent|cant make rent|debt consolidation|consolidate|"
    r"in the hole|to my name|until payday|till payday|before payday|upside down on)\b"
)
_BUSINESS_EN = re.compile(
    r"\b(?:company|company's|startup|firm|revenue|revenues|listed|public company|earnings "
    r"call|valuation|raised|arr|mrr|gdp|budget for the team|our team's|market cap|"
    r"costs?|price|priced|bought|buy|buying|purchase|spent|spend|worth it|gift|tip|fare|"
    r"ticket|subscription|expense report|reimburse\w*|split|each|per person|afford a|"
    r"how much is|how much does|convert|exchange rate)\b"
)
_INCOME_ZH = re.compile(
    alt(
        "月薪|年薪|薪水|薪资|薪酬|工资|收入|所得|到手|税后|税前|底薪|base|月入|年入|存款|积蓄|"
        "余额|欠|负债|债|贷|房贷|车贷|网贷|花呗|借呗|白条|信用卡|年终奖|奖金|亏|赔|赚|本金|"
        "公积金|月供|透支|存了|攒了|分红|遗产|副业|私活|剩|楼按|按揭|供楼|出粮|人工|月光|借了|借|"
        "分期|利息|欠款|炒股|亏损|亏了|赔了|salary|income|paycheck|debt|loan|mortgage|"
        "股票|基金|理财|定期|offer|涨薪|跳槽|工资卡|补税|退税|个税|社保基数|分期|还剩"
    )
)
_STATUS_ZH = re.compile(
    r"逾期|催收|失信|被执行|老赖|冻结|划扣|征信.{0,6}(?:花|黑|差|不好|有问题|有记录|逾期)|"
    r"破产|卡债|债务协商|前置协商|以贷养贷|赌债|负债累累|被起诉|强制执行|被限高|限制高消费|"
    r"(?:信用分|芝麻分|征信分|fico).{0,6}\d|还不上|还不起|欠了.{0,8}(?:钱|债)|月光|"
    r"(?:信用卡|卡费|卡债|贷款|房贷|车贷|账单|分期)[^，。,.!?！？]{0,8}(?:迟缴|迟交|晚缴|晚交|缓缴)|"
    r"(?:迟缴|迟交|晚缴)(?:了|过)?[^，。,.!?！？]{0,6}(?:被记|记录|违约金|滞纳金|征信)"
)
_BUSINESS_ZH = re.compile(
    r"公司|营收|财报|上市|融资|估值|多少钱|价格|价钱|买了|买的|买个|刚买|报销|AA|随份子|红包|"
    r"优惠|打折|团购|换成|汇率|一共|每人|门票|车费|打车|酒店|机票|花了"
)


_WEAK_ZH = frozenset("剩|还剩|借|分期|理财|基金|股票|定期|offer".split("|"))
_PACKAGE = re.compile(
    r"\d+(?:\.\d+)?\s?k\s?[*x×]\s?1[2-9]\b|\d+(?:\.\d+)?\s?k\s?[*x×]\s?1[2-9](?!\d)"
)


_TYPOS = Typos(["salary", "mortgage", "paycheck", "bankruptcy", "bankrupt", "garnished"])

# A race or a training distance written like an amount ("ran 10k", "a 21k trail race",
# "10k in 52 minutes", "the 7k mark"): blanked before amounts are looked for, so "an hour"
# or "lost my voice" next to it is not read as a wage or a loss. Only the number itself
# is judged: "ran a 10k, then paid off the last 8k of my loans" keeps the 8k.
_SPORT_VERB = (
    r"ran|run|runs|running|raced|race|racing|jog|jogged|jogging|swam|swim|swimming|"
    r"cycled|cycle|cycling|biked|bike|biking|rode|ride|riding|hiked|hike|hiking|walked|"
    r"walk|walking|rowed|row|rowing|paddled|skied|trained for|training for"
)
_DISTANCE_EN = re.compile(
    r"(?:\b(?:" + _SPORT_VERB + r")(?:\s+(?:a|an|the|my|another|first|an easy|easy|"
    r"slow|fast|hilly|quick|full|whole|extra|another))?"
    r"|\b(?:signed up for|sign up for|registered for|register for|entered|enter|did|do|"
    r"doing|done|finished|finish|completed|complete|won)\s+(?:a|an|the|my|another)"
    r"(?:\s+(?:first|next|charity|fun|virtual|trail|local))?"
    r"|\b(?:first|next|charity|fun|virtual|trail|parkrun))"
    r"\s*(?P<d>\d{1,3}(?:\.\d)?\s?k)\b(?!\s*(?:of|in debt|bonus|salary|loans?|debt|"
    r"a year|a month|per|/|on (?:crypto|stocks|shares|bets?)))"
    r"|(?P<e>\b\d{1,3}(?:\.\d)?\s?k)(?=\s*(?:race|races|run|runs|runners?|fun run|trail|"
    r"walk|swim|ride|route|loop|course|event|parkrun|mark|finish|split|splits|pb|pr|"
    r"personal best|training|pace|relay|ultra)\b"
    r"|\s+in\s+(?:just\s+|about\s+|around\s+|under\s+|over\s+|less than\s+)*"
    r"(?:\d+|an?|one|two|half an?)\s*(?:minutes?|mins?|hours?|hrs?|seconds?|secs?)\b)"
)
# "lost" / "losing" is a loss only with an amount or money after it ("lost 10k on crypto",
# "lost it all"), not "lost my mind / voice / keys".
_LOSS_OBJECT = re.compile(
    r"\s+(?:(?:about|around|over|nearly|almost|like|roughly|maybe|another|close to|"
    r"more than|at least|a whopping|over)\s+)*(?:[$€£¥]|\d|half|a third|a quarter|most|"
    r"it all|all of it|everything|money|cash|big|a fortune|a lot|a ton|thousands|"
    r"(?:my|our) (?:shirt|savings|life savings|investment|retirement|pension|deposit|"
    r"house|home|nest egg|stake|money))"
)


def _blank_distances(low: str) -> str:
    """``low`` with every race or training distance blanked (same length)."""

    def blank(m: re.Match[str]) -> str:
        group = "d" if m.group("d") else "e"
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        text = m.group(0)
        return text[:start] + " " * (end - start) + text[end:]

    return _DISTANCE_EN.sub(blank, low) if "k" in low else low


def _status(sent: Sentence) -> list[Cue]:
    text, low = sent.unquoted(), sent.low
    reason_status = "credit history, bankruptcy, garnishment, collections or overdue debt"
    reason_amount = "income, savings, debts, loans or losses with an amount"
    cues: list[Cue] = []
    if sent.zh:
        m = _STATUS_ZH.search(text)
        if m:
            cues.append(Cue("finance", reason_status, m.start(), m.end(), "strong"))
        terms = list(_INCOME_ZH.finditer(text)) if _AMOUNT_ZH.search(text) else []
        if terms:
            strong = [t for t in terms if t.group(0) not in _WEAK_ZH]
            term = (strong or terms)[0]
            weak = not strong or _BUSINESS_ZH.search(text) is not None
            cues.append(
                Cue(
                    "finance", reason_amount, term.start(), term.end(), "weak" if weak else "strong"
                )
            )
        for m in _PACKAGE.finditer(low):
            cues.append(Cue("finance", reason_amount, m.start(), m.end(), "strong"))
    m = _STATUS_EN.search(low)
    if m:
        cues.append(Cue("finance", reason_status, m.start(), m.end(), "strong"))
    low = _blank_distances(low)
    amount = _AMOUNT_EN.search(low)
    if amount and not _BUSINESS_EN.search(low):
        for start, end, _ in _TYPOS.find(low):
            cues.append(Cue("finance", reason_amount, start, end, "strong"))
    earns = _EARNS_EN.search(low) if sent.has_digit else None
    if earns and _BIG_OR_PERIODIC.search(earns.group(0)):
        cues.append(Cue("finance", reason_amount, earns.start(), earns.end(), "strong"))
    if amount:
        # the first term, and a strong one after a weak one ("then paid off the last 8k of
        # my student loans": "paid" needs a person bound to it, "student loans" does not)
        had_weak = False
        for term in _INCOME_EN.finditer(low):
            weak = term.group(0) in _WEAK_EN or _BUSINESS_EN.search(low) is not None
            if weak and had_weak:
                continue
            if weak and _BUSINESS_EN.search(low) and term.group(0) in _WEAK_EN:
                continue
            if term.group(0) in _WEAK_EN and not _BIG_OR_PERIODIC.search(low):
                continue
            if term.group(0) in ("lost", "losing") and not _LOSS_OBJECT.match(low, term.end()):
                continue
            cues.append(
                Cue(
                    "finance", reason_amount, term.start(), term.end(), "weak" if weak else "strong"
                )
            )
            if not weak:
                break
            had_weak = True
    return cues


def detect(sent: Sentence) -> list[Cue]:
    """Finance cues in one sentence."""
    return (_cards_and_accounts(sent) if sent.has_digit else []) + _status(sent)


# Every status cue is a match of _STATUS_EN or _EARNS_EN, or a term or typo looked for only after
# _AMOUNT_EN matches (on the lowered sentence); in Chinese also _STATUS_ZH, a term
# looked for only after _AMOUNT_ZH matches (on the unquoted sentence) and _PACKAGE.
_GATE_LOW = any_match(_STATUS_EN, _AMOUNT_EN)
_GATE_LOW_ZH = any_match(_STATUS_EN, _AMOUNT_EN, _PACKAGE)
_GATE_ZH = any_match(_STATUS_ZH, _AMOUNT_ZH)


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter).

    A card or an account is a number candidate of 8 digits or more (cards 13-19, routing
    numbers 9, account numbers 8-34: every digit a ``\\d`` of the sentence) or an
    :data:`_IBAN` match.
    """
    if sent.digits >= 8 or (sent.has_digit and _IBAN.search(sent.text.upper())):
        return True
    if sent.has_digit and _EARNS_EN.search(sent.low) is not None:
        return True  # every match of _EARNS_EN holds a digit
    if sent.zh:
        return (
            _GATE_LOW_ZH.search(sent.low) is not None
            or _GATE_ZH.search(sent.unquoted()) is not None
        )
    return _GATE_LOW.search(sent.low) is not None
