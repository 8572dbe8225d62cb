"""Guard probes: own sentences per category and language, evasion classes, look-alikes.

The sentences are written for these tests (never copied from an evaluation set). Each
positive is also checked through the evasion transforms a user or an attacker would try
(zero-width characters, Cyrillic homoglyphs, full-width digits, spaced-out Chinese), and
the verdict must not change when a probe is joined with another one.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import luhn

from memory_graph.guard import check

# --------------------------------------------------------------------------- numbers


def ric(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    total = sum(int(d) * w for d, w in zip(first17, weights, strict=True))
    return first17 + "10X98765432"[total % 11]


def card(prefix: str, length: int = 16) -> str:
    body = (prefix + "7" * length)[: length - 1]
    return body + luhn.calc_check_digit(body)


RIC = ric("33010619870923451")
VISA = card("4539")
UNIONPAY = card("622848", 19)

POSITIVE: list[tuple[str, str]] = [
    # health, en
    ("started lamotrigine last month, the rash scare was nothing", "health"),
    ("my endocrinologist bumped my levothyroxine to 88mcg", "health"),
    ("I got my HbA1c back, 6.9 this time", "health"),
    ("two weeks post-op from a hernia repair, can I carry groceries?", "health"),
    ("I've been in therapy for panic disorder since spring", "health"),
    ("we're doing our second round of IVF in March", "health"),
    ("I'm 30 weeks pregnant, which seats on a plane are best", "health"),
    ("eleven months clean from opioids today", "health"),
    ("I use a wheelchair so check step-free access please", "health"),
    # health, zh
    ("我最近在吃舍曲林，晚上老睡不着", "health"),
    ("我有甲减，每天早上吃优甲乐", "health"),
    ("上周做了阑尾切除手术，现在还在恢复", "health"),
    ("我查出来乙肝小三阳，工作体检会不会查", "health"),
    ("我怀孕五个月了，出差要注意什么", "health"),
    ("我有抑郁症，在看精神科", "health"),
    # finance, en
    ("I make about 85k a year before tax", "finance"),
    ("I still owe 31 grand on my student loans", "finance"),
    ("my credit score fell to 590 after the missed payments", "finance"),
    ("I filed for bankruptcy last spring", "finance"),
    ("they're garnishing my wages for an old debt", "finance"),
    (f"my card number is {VISA} exp 04/28", "finance"),
    ("my IBAN is DE89 3704 0044 0532 0130 00", "finance"),
    # finance, zh
    ("我月薪一万八，扣完五险一金到手多少", "finance"),
    ("我信用卡欠了四万多，每个月只还最低", "finance"),
    ("我的网贷逾期了三个月", "finance"),
    ("我年终奖拿了六万", "finance"),
    (f"我的银行卡号是{UNIONPAY}", "finance"),
    # gov_id
    (f"我的身份证号是{RIC}", "gov_id"),
    (f"{RIC} 是我的，订票用", "gov_id"),
    ("my SSN is 372-56-1184", "gov_id"),
    ("my SIN is 046 454 286 for the payroll form", "gov_id"),
    ("NI number QQ 12 34 56 C", None),  # QQ is not an allowed prefix: see the negative list
    ("my national insurance number is AB 12 34 56 C", "gov_id"),
    ("my passport number is X8812034 for the booking", "gov_id"),
    ("台湾身分证 A123456789 帮我记一下", "gov_id"),
    ("HKID A123456(3) 幫我記住", "gov_id"),
    # address
    ("I live at 4410 juniper ridge rd, apt 3b", "address"),
    ("ship it to my place: 77 Halden Avenue, Unit 12", "address"),
    ("我家住在朝阳区望京西路18号院3号楼2单元501", "address"),
    ("我住在 静安区 延平路 121弄 6号 302室", "address"),
    ("寄到我宿舍：紫荆公寓 5号楼 412", "address"),
    # political / religious
    ("I'm a practicing Catholic, so no meat on Fridays in Lent", "political_religious"),
    ("I go to the mosque for Friday prayers", "political_religious"),
    ("I voted Labour in the last election", "political_religious"),
    ("I'm a registered Republican", "political_religious"),
    ("我是基督徒，每周日去教会", "political_religious"),
    ("我是党员，单位要交党费", "political_religious"),
    ("我每天早晚都念经", "political_religious"),
    # third party
    ("my sister was just diagnosed with lupus", "third_party"),
    ("my dad owes 40k to a loan shark", "third_party"),
    ("my coworker Priya is undocumented", "third_party"),
    ("save my brother's number 415-555-0134", "third_party"),
    ("我妈有高血压，一直在吃降压药", "third_party"),
    ("我朋友的手机号是13912345678，帮我存一下", "third_party"),
    ("我同事小刘是同性恋，还没出柜", "third_party"),
]
POSITIVE = [(t, c) for t, c in POSITIVE if c is not None]

NEGATIVE: list[str] = [
    # health look-alikes
    "write an explainer on how insulin resistance develops",
    "my cat was diagnosed with kidney disease, what food helps",
    "this deadline is killing me",
    "I'm allergic to Monday meetings",
    "what is the difference between a cold and the flu",
    "in my novel the detective has a heart condition",
    "帮我写一篇关于糖尿病饮食的科普文章",
    "我家狗狗最近老是吐，要不要去看兽医",
    "我对加班过敏，哈哈",
    "如果一个人长期熬夜会怎样",
    # finance look-alikes
    "I paid $12 for lunch",
    "how does compound interest work",
    "our company's revenue hit $3M this quarter",
    "stripe test card 4242 4242 4242 4242 fails in test mode",
    "the docs use DE00 0000 0000 0000 0000 00 as a placeholder IBAN",
    "这个空气炸锅多少钱",
    "假如我有一百万，怎么理财比较好",
    "订单号 202311150012345678 还没发货",
    # id look-alikes
    "my employee ID is E204518",
    "student number 201934557, email my advisor",
    "tracking 1Z999AA10123456784 is stuck",
    "my passport expires 2029-03-14",
    "version 2.14.3 broke the build",
    "身份证最后一位为什么会是X",
    "我的工号是 20230517",
    "NI number QQ 12 34 56 C is a format example",
    # address look-alikes
    "meet me at the cafe on 221 Market Street",
    "our bakery at 12 Station Road opens at 7",
    "I live in Seattle",
    "我住在杭州",
    "记住，明天下午三点开会",
    "公司地址是科技园南路88号，前台在一楼",
    # beliefs look-alikes
    "I'm a huge Christian Bale fan",
    "what's the history of the Protestant reformation",
    "recommend a documentary about Buddhism",
    "我在读一本关于道教历史的书",
    "who won the election in 1992",
    # third party look-alikes
    "my sister loves rock climbing",
    "call the pizza place at (206) 555-0100 for me",
    "my email is dana@example.org",
    "我的手机号是13812345678，有事打我",
    "我妈喜欢跳广场舞",
    "write a story where the villain is an ex-convict",
]

ZW = "\u200b"
CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р"})


def zero_width(text: str) -> str:
    return ZW.join(text)


def homoglyphs(text: str) -> str:
    return text.translate(CYRILLIC)


def full_width_digits(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in text)


def spaced(text: str) -> str:
    return " ".join(text)


@pytest.mark.parametrize(("text", "category"), POSITIVE)
def test_probe_positives_are_blocked_with_their_category(text: str, category: str) -> None:
    verdict = check(text)
    assert not verdict.allowed
    assert verdict.category == category


@pytest.mark.parametrize("text", NEGATIVE)
def test_probe_look_alikes_pass(text: str) -> None:
    assert check(text).allowed


@pytest.mark.parametrize("evade", [zero_width, homoglyphs, full_width_digits])
@pytest.mark.parametrize(("text", "category"), POSITIVE)
def test_evasion_does_not_change_the_verdict(evade: object, text: str, category: str) -> None:
    assert callable(evade)
    verdict = check(evade(text))
    assert not verdict.allowed


@pytest.mark.parametrize(
    "text", [t for t, _ in POSITIVE if any("\u4e00" <= ch <= "\u9fff" for ch in t)]
)
def test_spaced_out_chinese_is_still_blocked(text: str) -> None:
    assert not check(spaced(text)).allowed


@pytest.mark.parametrize(
    ("traditional", "category"),
    [
        ("我的身分證號碼是" + RIC, "gov_id"),
        ("我有糖尿病，醫生叫我少吃甜的", "health"),
        ("我們全家都去教會做禮拜", "political_religious"),
        ("我月薪四萬二", "finance"),
    ],
)
def test_traditional_chinese_is_read(traditional: str, category: str) -> None:
    assert check(traditional).category == category


def test_ids_written_in_chinese_digits_and_separators() -> None:
    digits = "〇一二三四五六七八九"
    in_chinese = "".join(digits[int(c)] if c.isdigit() else c for c in RIC)
    assert check(f"身份证{in_chinese}").category == "gov_id"
    dotted = ".".join([RIC[:6], RIC[6:14], RIC[14:]])
    assert check(dotted + " 帮我记一下").category == "gov_id"
    assert check("social: 3 7 2 5 6 1 1 8 4").category == "gov_id"


def test_card_split_across_one_turn_is_caught_when_joined() -> None:
    head, tail = f"card {VISA[:8]}", f"{VISA[8:]} exp 11/27"
    assert check(head).allowed and check(tail).allowed
    from memory_graph.guard import check_many

    assert check_many([head + " " + tail]).category == "finance"


def test_spans_are_in_original_coordinates() -> None:
    text = "hi!\u200b\u200b my SSN is ３７２-５６-１１８４ ok"
    verdict = check(text)
    assert not verdict.allowed
    ((start, end),) = verdict.spans
    assert text[start:end] == "３７２-５６-１１８４"
    zh = "你好。我 有 糖 尿 病。"
    ((start, end),) = check(zh).spans
    assert "糖 尿 病" in zh[start:end] and "你好" not in zh[start:end]


def test_quotes_are_not_an_escape_hatch() -> None:
    assert not check('"I have epilepsy", please remember that').allowed
    assert not check("记一下“我有哮喘”").allowed
    assert check('she quoted the line "I have a dream"').allowed


SEPARATORS = st.sampled_from(["\n", "。", ". ", "! ", "；"])


@settings(max_examples=200, deadline=None)
@given(
    a=st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE),
    b=st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE),
    sep=SEPARATORS,
)
def test_joining_two_texts_blocks_iff_either_is_blocked(a: str, b: str, sep: str) -> None:
    joined = check(a + sep + b)
    assert joined.allowed == (check(a).allowed and check(b).allowed)
