"""The sensitive-data guard: checksummed ids, cards, semantic categories, hard negatives."""

from __future__ import annotations

import pytest
from stdnum import luhn

from memory_graph.errors import ValidationError
from memory_graph.guard import CATEGORIES, GuardVerdict, check

_RIC_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def ric(first17: str) -> str:
    """Build a Chinese resident id with a computed ISO 7064 check digit."""
    total = sum(int(d) * w for d, w in zip(first17, _RIC_WEIGHTS, strict=True))
    return first17 + "10X98765432"[total % 11]


def wrong_check(number: str) -> str:
    return number[:-1] + ("0" if number[-1] != "0" else "1")


def card(prefix: str, length: int = 16) -> str:
    """Build a Luhn-valid number with the given prefix."""
    body = (prefix + "3" * length)[: length - 1]
    return body + luhn.calc_check_digit(body)


def not_luhn(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1) % 10)


def blocked(text: str) -> str | None:
    verdict = check(text)
    return None if verdict.allowed else verdict.category


def test_verdict_shape_and_json() -> None:
    verdict = check("I'm on antidepressants")
    assert verdict == GuardVerdict(False, "health", verdict.reason, ((0, 22),))
    assert verdict.to_json() == {"allowed": False, "category": "health", "reason": verdict.reason}
    assert check("I like tea").to_json() == {"allowed": True, "category": None, "reason": None}
    assert set(CATEGORIES) == {
        "health",
        "finance",
        "gov_id",
        "address",
        "political_religious",
        "third_party",
    }


def test_reason_never_echoes_the_text() -> None:
    number = ric("32010219880515123")
    verdict = check(f"身份证 {number}")
    assert verdict.reason is not None and number not in verdict.reason


def test_non_string_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        check(123)  # type: ignore[arg-type]


@pytest.mark.parametrize("first17", ["11010519900307123", "44030619851212456", "51010719700101002"])
def test_cn_resident_id_with_valid_check_digit(first17: str) -> None:
    number = ric(first17)
    assert blocked(f"我的身份证号是{number}") == "gov_id"
    assert blocked(f"{number} 帮我记一下") == "gov_id"
    assert blocked(f"{number[:6]}{number[6:]}") == "gov_id"


def test_cn_resident_id_needs_check_digit_and_real_birth_date() -> None:
    good = ric("11010519900307123")
    assert blocked(f"订单号{wrong_check(good)}") is None
    assert blocked(f"invoice {wrong_check(good)}") is None
    bad_date = ric("11010519901332123")  # month 13
    assert blocked(f"reference {bad_date}") is None


def test_us_ssn() -> None:
    assert blocked("my social security number is 123-45-6789") == "gov_id"
    assert blocked("SSN 123456789 for taxes") == "gov_id"
    assert blocked("ssn: 123 45 6789") == "gov_id"
    assert blocked("ssn 000-12-3456") is None  # area 000 is never issued
    assert blocked("build 123456789") is None  # nine digits without an SSN word


def test_id_documents_after_an_id_word() -> None:
    assert blocked("My passport no. is E12345678") == "gov_id"
    assert blocked("我的护照号码是E87654321") == "gov_id"
    assert blocked("driving licence number K1234567") == "gov_id"
    assert blocked("I need to renew my passport next month") is None
    assert blocked("身份证丢了要去哪里补办") is None


@pytest.mark.parametrize("prefix", ["4111", "5500", "6011", "6222", "3530"])
def test_luhn_card_with_context_is_finance(prefix: str) -> None:
    number = card(prefix)
    assert blocked(f"my card number is {number}") == "finance"
    assert blocked(f"信用卡 {number[:4]} {number[4:8]} {number[8:12]} {number[12:]}") == "finance"


def test_luhn_alone_is_not_enough() -> None:
    unknown_issuer = card("1234")
    assert blocked(f"package {unknown_issuer} arrived") is None
    assert blocked(f"reference {unknown_issuer}") is None
    assert blocked(f"tracking {card('4111')}") is None  # labelled as something else
    assert blocked(f"{card('4111')} is the debit card") == "finance"  # known issuer


def test_card_context_without_luhn_passes() -> None:
    assert blocked(f"my loyalty card is {not_luhn(card('6011'))}") is None
    assert blocked(f"会员卡号{not_luhn(card('6222'))}") is None


@pytest.mark.parametrize(
    "text",
    [
        "I make $95k a year",
        "I still owe $30,000 in student loans",
        "My savings account has $3,400 in it",
        "I filed for bankruptcy last year",
        "我年薪三十万",
        "我每个月房贷要还八千",
        "我欠了信用卡两万块",
        "我的芝麻分只有550",
    ],
)
def test_income_and_debts(text: str) -> None:
    assert blocked(text) == "finance"


@pytest.mark.parametrize(
    "text",
    [
        "I have type 1 diabetes",
        "I was diagnosed with ADHD last year",
        "I'm taking Zoloft for my anxiety",
        "I had knee surgery in March",
        "I'm allergic to penicillin",
        "我有哮喘，要随身带喷雾",
        "我下周要做阑尾手术",
        "我怀孕五个月了",
        "我最近在吃抗焦虑的药",
    ],
)
def test_health(text: str) -> None:
    assert blocked(text) == "health"


@pytest.mark.parametrize(
    "text",
    [
        "I live at 42 Maple Street, Apt 3B",
        "my home address is 1200 Oak Avenue, Springfield, IL 62704",
        "我住在上海市浦东新区张杨路500号3号楼1202室",
        "我家在和平小区5栋2单元301",
    ],
)
def test_precise_address(text: str) -> None:
    assert blocked(text) == "address"


@pytest.mark.parametrize(
    "text",
    [
        "I'm a practicing Muslim",
        "I'm a registered Republican",
        "I go to synagogue every Saturday",
        "我信基督教，每周日去教堂",
        "我是佛教徒，吃素",
        "我大学时入了党",
    ],
)
def test_beliefs(text: str) -> None:
    assert blocked(text) == "political_religious"


@pytest.mark.parametrize(
    "text",
    [
        "My brother has schizophrenia",
        "My wife's SSN is 123-45-6789",
        "我爸爸得了肺癌",
        "我姐姐欠了五万块网贷",
        "我同事张伟的手机是13812345678",
        "My boss John Smith's email is john.smith@example.com",
        "My neighbor is an illegal immigrant",
        "My friend Mark lives at 12 Baker Street",
        "我表哥坐过牢",
        "我弟弟在戒毒所",
        "My husband is an alcoholic",
        "My neighbor's SSN is 123-45-6789",
    ],
)
def test_third_party_data(text: str) -> None:
    assert blocked(text) == "third_party"


@pytest.mark.parametrize(
    "text",
    [
        # the user's own contact details are fine
        "My phone number is 415-555-0123",
        "我的手机号是13812345678",
        "my email is me@example.com",
        # coarse places and public venues
        "I live in Berlin",
        "我住在北京",
        "我是广东人",
        "我在东八区",
        "The meeting room is 4B on the 3rd floor",
        # occupations and topics
        "I work at a bank",
        "I'm a doctor at a hospital",
        "I'm reading a book about cancer research",
        "What are the symptoms of diabetes?",
        "I watched the film 'Sick' yesterday",
        "我在写一篇关于高血压的科普文章",
        "I'm interested in the history of religion",
        "下个礼拜我要出差",
        "我信任你",
        # prices and versions
        "This laptop costs $1,200",
        "我想买一台5000块的电脑",
        "Python 3.11.4 is installed",
        "firmware 2.1.4000.8754",
        # third parties with harmless facts
        "My sister likes hiking",
        "我哥哥是程序员",
        "My friend Alice is a teacher",
        "叫我老张",
        # everyday money, social plans, fandoms
        "I paid $5 for coffee",
        "I earn points on every purchase",
        "Let's meet at 350 Fifth Avenue for lunch",
        "I'm a Christian Bale fan",
        "I'm a big Green Day fan",
        "I'm John Smith, my phone is 415-555-0123",
    ],
)
def test_hard_negatives_pass(text: str) -> None:
    assert blocked(text) is None
