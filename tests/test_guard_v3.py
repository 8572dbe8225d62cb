"""Guard v3: text nobody tuned the guard to, and ordinary life that must pass.

The sentences here are written for these tests, one or two per class; the larger fresh
batches live in ``tests/guard_probes/*.jsonl`` and are scored as a whole below (per
language, against floors), so no single sentence pins a rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_graph.eval._guard import run_guard_eval
from memory_graph.guard import check, check_many, normalize
from memory_graph.guard._drugs import drug_names, find_drugs

PROBES = Path(__file__).parent / "guard_probes"

# ---------------------------------------------------------------- numbers in words


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("my dad's cell is three one two, five five five, zero one four six", "third_party"),
        ("SSN six four one nine oh five five three two", "gov_id"),
        ("my social: six four one, nine oh, five five three two", "gov_id"),
        ("I make seventy-four thousand a year before tax", "finance"),
        ("I owe about thirty-one thousand on student loans", "finance"),
        ("我的身份证号码是三一〇一一五一九九二〇七〇四二六三二", "gov_id"),
    ],
)
def test_numbers_written_in_words_are_read(text: str, category: str) -> None:
    assert check(text).category == category


@pytest.mark.parametrize(
    "text",
    [
        "one of my friends has two kids and a dog",
        "we lost three to one, what a game",
        "a three hour drive and then a ten minute walk",
        "twenty-six miles is a marathon",
        "my number is four one five five five five zero one seven four",  # own phone
    ],
)
def test_numbers_in_words_alone_are_not_sensitive(text: str) -> None:
    assert check(text).allowed


def test_number_words_keep_their_original_span() -> None:
    text = "SSN is six four one nine oh five five three two ok"
    verdict = check(text)
    ((start, end),) = verdict.spans
    assert text[start:end] == "six four one nine oh five five three two"
    assert normalize("sixty-eight thousand").text == "68000"


# ---------------------------------------------------------------- phones, line breaks


@pytest.mark.parametrize(
    "text",
    [
        "my brother's number is (646) 555-0117",
        "my brother's number is (646)555-0117",
        "my brother's number is +1 (646) 555 0117",
        "我表哥电话（021）5678-1234",
    ],
)
def test_bracketed_area_codes_are_read(text: str) -> None:
    assert check(text).category == "third_party"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("my passport number:\nK38104927", "gov_id"),
        ("SSN\n641-90-5532", "gov_id"),
        ("护照号码：\nE27104938", "gov_id"),
        ("my mum's mobile is\n(646) 555-0117", "third_party"),
    ],
)
def test_a_label_line_break_continues_the_sentence(text: str, category: str) -> None:
    assert check(text).category == category


@pytest.mark.parametrize(
    "text",
    [
        "I love tea\n641905532 is the ticket",  # no label: two sentences
        "Flight number:\nUA857",
        "Meeting ID:\n845 2291 0376",
        "order no.\n88123344102",
    ],
)
def test_a_line_break_without_an_id_label_joins_nothing_sensitive(text: str) -> None:
    assert check(text).allowed


def test_a_label_line_break_reads_the_next_line_only() -> None:
    assert check("my passport number:").allowed and check("K38104927").allowed
    # the texts of one turn are one message: the label reads the next line
    assert check_many(["my passport number:", "K38104927"]).category == "gov_id"
    # only the next line: a value two lines down is not announced by the label
    assert check("my passport number:\nI will send it later\nK38104927").allowed


# ---------------------------------------------------------------- vocabulary


def test_the_drug_dictionary_is_maintained_data() -> None:
    names = drug_names()
    assert len(names) > 5000
    assert {"brexpiprazole", "rexulti", "cariprazine", "vraylar"} <= names
    # over-the-counter remedies and generic English words are not drugs here
    assert not {"tylenol", "advil", "melatonin", "claritin", "diamonds", "buffers"} & names
    assert find_drugs("started vraylar") == [(8, 15)]
    assert find_drugs("vraylarx vraylar-") == []


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I've been on Vraylar since the summer", "health"),
        ("my psychiatrist added Rexulti to my meds", "health"),
        ("I took Tylenol for a headache", None),
        ("Vraylar's commercials are so catchy", None),
        ("is Vraylar an antipsychotic?", None),
        ("my shrink thinks I should sleep more", "health"),
        ("I had an appendectomy at nine", "health"),
        ("she had a total hip replacement", "third_party"),
        ("what does a hip replacement recovery look like?", None),
        ("my d3pr3ssion is back", "health"),
        ("my HbA1c came back at 7.2", "health"),
        ("I go to the 7:30 Mass on Saturdays", "political_religious"),
        ("proud Labour voter, always will be", "political_religious"),
        ("我每周五都去做主麻", "political_religious"),
        ("做了膝关节置换，还在康复", "health"),
        ("一直在吃降压药", "health"),
        ("参观完医院，我自己也去做了个胃镜", "health"),
        ("信用卡遲繳了兩次，被記在聯徵", "finance"),
        ("my credit score is five ninety", "finance"),
    ],
)
def test_vocabulary_classes(text: str, category: str | None) -> None:
    assert check(text).category == category


# ---------------------------------------------------------------- ordinary life


@pytest.mark.parametrize(
    "text",
    [
        "booked a silent meditation retreat for March",
        "our offsite retreat is in the mountains",
        "be patient, the bread needs another hour",
        "woodworking is my own form of therapy",
        "the lake is a two hour drive from me",
        "we were losing 4-1 at the break",
        "Bipolar I and bipolar II are both mood disorders",
        "walked past the church on the way to the market",
        "my church friends and I went bowling",
        "Nadia loves jazz and bakes great bread",
        "pay with test card 4111 1111 1111 1111 in the sandbox",
        "the meeting ID is 845 2291 0376",
        "I spent the day at the National Library",
        "type the address block first",
        "Yes Man! is such a silly film",
        "周末在国家图书馆看书",
        "实习期满，下周转正",
        "这一关搭桥太难了",
        "肿瘤医院门口的咖啡店很好喝",
        "我们去参观了一家肿瘤医院，设备很先进",
    ],
)
def test_ordinary_life_passes(text: str) -> None:
    assert check(text).allowed


# ---------------------------------------------------------------- the fresh batches


@pytest.mark.parametrize(
    "name",
    [
        "vocabulary.jsonl",
        "structure.jsonl",
        "ordinary.jsonl",
        "validation.jsonl",
        "validation2.jsonl",
    ],
)
def test_fresh_batches_hold_per_language(name: str) -> None:
    report = run_guard_eval(PROBES / name)
    assert len(report["errors"]) <= 0.12 * report["overall"]["n"]
    for lang in ("en", "zh"):
        scores = report["by_lang"][lang]
        assert scores["n"] >= 40
        assert scores["fpr"] is not None and scores["fpr"] <= 0.05
        assert scores["f1"] is not None and scores["f1"] >= 0.85


# ---------------------------------------------------------------- colours that name camps


def test_colour_words_are_colours_unless_a_camp_is_meant() -> None:
    """深蓝 / 浅绿 / 粉红 name Taiwan's camps and China's "little pinks", and colours far more
    often (a recall suite's "我最喜欢深绿色" was refused as politics). The batch
    ``colours.jsonl`` was written and scored before the rule (fpr 0.75 then)."""
    report = run_guard_eval(PROBES / "colours.jsonl")
    assert report["overall"]["fpr"] <= 0.15
    assert report["overall"]["recall"] == 1.0
    for text in ("我把书房刷成了浅绿色", "他送了我一条深蓝的围巾", "粉红色的杯子是我的"):
        assert check(text).allowed, text
    for text in ("我是深绿，不会投给国民党", "我们全家都是深蓝", "我就是个小粉红"):
        assert check(text).category == "political_religious", text


# ---------------------------------------------------------------- idioms that look sensitive


def test_race_distances_admissions_and_food_dislikes_are_not_disclosures() -> None:
    """A race distance written like money ("a 10k", "21k in two hours"), "lost my mind",
    "Confession:" as an admission, and not eating beef or pork with no religion named were
    blocked. ``idioms.jsonl`` was written and scored before the rules (fpr 0.32, recall
    0.90 then); ``idioms_heldout.jsonl`` was written after them, to check they generalise."""
    report = run_guard_eval(PROBES / "idioms.jsonl")
    assert report["overall"]["fpr"] <= 0.05
    assert report["overall"]["recall"] == 1.0
    heldout = run_guard_eval(PROBES / "idioms_heldout.jsonl")
    assert heldout["overall"]["fpr"] <= 0.1
    assert heldout["overall"]["recall"] >= 0.9
    for text in (
        "Did a 15k trail run, lost my water bottle at the 9k mark.",
        "Small confession: I never learned to whistle.",
        "我不吃猪肉，吃了会长痘。",
    ):
        assert check(text).allowed, text
    for text, category in (
        ("I lost 7k on sports bets last year", "finance"),
        ("ran 10k, then paid off the last 3k of my car loan", "finance"),
        ("I go to confession every other Saturday", "political_religious"),
        ("我信真主，不吃猪肉", "political_religious"),
        ("我婆婆信佛，不吃牛肉", "third_party"),
    ):
        assert check(text).category == category, text


# ------------------------------------------- a label line does not hide the next line


@pytest.mark.parametrize(
    "label",
    [
        "what's the format of a US passport number",
        "how long is a phone number",
        "Is the address",
        "请问护照号码",
    ],
)
@pytest.mark.parametrize(
    "disclosure",
    [
        "started lamotrigine last month, the rash scare was nothing",
        "I was diagnosed with type 2 diabetes in March",
        "我去年确诊了抑郁症",
    ],
)
def test_a_label_line_does_not_lend_its_question_to_the_next_line(
    label: str, disclosure: str
) -> None:
    # A line ending in a label word continues onto the next line (the value it announces);
    # its question or topic talk must not make the next line's own disclosure harmless.
    assert not check(disclosure).allowed
    joined = check(f"{label}\n{disclosure}")
    assert not joined.allowed and joined.category == check(disclosure).category


# ---------------------------- a sentence joined at a soft break keeps each part's reading

_SOFT_PREFIXES = [
    "身份证最后一位为什么会是X",  # ". " after a single letter reads as an initial
    "the museum is at 1000 5th Ave",  # ". " after an abbreviation
    "my rent is due on the 1st",
    "the car costs 30k",
    "what's the format of a US passport number",  # a label line
    "I paid $12 for lunch",
]
_BLOCKED = [
    "started lamotrigine last month, the rash scare was nothing",
    "Kevin in accounting is on suspension for a DUI",
    "ship it to my place: 77 Halden Avenue, Unit 12",
    "A1C 7.2 last month",
    "my driver licence no. is SMITH904175J99AB",
    "我同事小刘是同性恋，还没出柜",
]


@pytest.mark.parametrize("sep", ["\n", "。", ". ", "! ", "；", "? "])
def test_no_prefix_and_separator_hides_a_blocked_text(sep: str) -> None:
    # A text the guard blocks stays blocked whatever harmless text comes before it: an
    # abbreviation dot, an initial, a label's line break or a leetspeak reading that spans
    # the join must not lend the prefix's question or topic talk to it.
    for text in _BLOCKED:
        category = check(text).category
        assert category is not None, text
        for prefix in _SOFT_PREFIXES:
            assert check(prefix).allowed, prefix
            joined = check(prefix + sep + text)
            assert not joined.allowed, (prefix, sep, text)
    # A blocked first part stays blocked whatever follows.
    assert not check("my salery is 70k. our company's revenue hit $3M this quarter").allowed


def test_soft_breaks_do_not_cost_the_square_of_a_long_text() -> None:
    from memory_graph.guard._cues import sentences

    text = "I met Dr. Li. " * 2 + "St. " * 2000 + "the end"
    parts = sentences(text)
    assert sum(len(s.text) for s in parts) < 4 * len(text)


@pytest.mark.parametrize(
    "prefix", ["my rent is due on the 1st", "the car costs 30k", "身份证最后一位为什么会是X"]
)
@pytest.mark.parametrize("text", ["I paid $12 for lunch", "how do payday loans work", "I like tea"])
def test_an_ordinal_or_a_letter_after_a_number_does_not_run_on(prefix: str, text: str) -> None:
    # "1st." / "30k." / "是X." end a sentence: they are not "St." or an initial, so two
    # harmless sentences are not read as one (which blocked them as a disclosure).
    assert check(prefix).allowed and check(text).allowed
    assert check(f"{prefix}. {text}").allowed
