"""Classes of false blocks found on conversational text (issue 10), and the real sensitive
data next to each that must stay blocked."""

from __future__ import annotations

import pytest

from memory_graph.guard import check

ALLOWED = [
    # a care profession as a career or field of study, not a treatment
    "Caroline: I'm keen on counseling or working in mental health - I'd love to help.",
    "Lately, I've been looking into counseling and mental health as a career.",
    "I'm still looking into counseling and mental health jobs.",
    "I want a degree in psychology and a job as a therapist one day.",
    "Last Friday I went to a counseling workshop for volunteers.",
    # real English words one edit from a lexicon word are not typos
    "She's been a great addition to my life.",
    "I just got a new addition to the family, this is Max!",
    "My sister has an artistic streak.",
    "In conclusion, the trip was great.",
    # business sponsors, not a recovery sponsor
    "It was hard work - getting sponsors, coordinating with the city.",
    "We ended up with some awesome sponsors that made the event a hit.",
    # a US state abbreviation is not a recovery group
    "Just skyped with that fan I met in CA and had a great time.",
    "We drove to GA last summer.",
    # a title that is watched or read
    'I watched "The Lord of the Rings" Trilogy last night!',
    # a date and time is not an unlabelled nine-digit id
    "年度盛典的时间是2024-04-14 9:00。",
    "The launch is at 2024-05-03 7:30.",
    # a lexicon pair across two words, a term inside a Latin word, a specialty naming an event
    "招聘会的主要内容是寻求优秀人才加入团队。",
    "交流大会的主要内容是分享侦查经验。",
    "我的邮箱是li@huaxiaconstruction.com。",
    "我刚做了Actor的配音。",
    "心内科新技术研讨会的规模是五千人。",
    "我将要参加心内科交流大会。",
    "I'm reading 'The Book of Mormon' musical script for a class.",
]

BLOCKED = [
    ("I go to counseling every week since the breakup.", "health"),
    ("I started therapy because my job is stressing me out.", "health"),
    ("My therapist says my anxiety is getting better.", "health"),
    ("I've been in counseling for my depression.", "health"),
    ("I struggled with mental health, so I looked into counseling as a career.", "health"),
    ("my addiction to painkillers got worse", "health"),
    ("I'm autistic and proud", "health"),
    ("I was diagnosed with autsim last year", "health"),
    ("I called my sponsor last night, 30 days sober", "health"),
    ("I go to CA meetings on Tuesdays", "health"),
    ("I joined CA last month to stay clean", "health"),
    ("I pray to the Lord every night", "political_religious"),
    ("my number is 123-45-6789", "gov_id"),
    ("我入团了", "political_religious"),
    ("我每周去教会查经", "political_religious"),
    ("我妈做了CT", "third_party"),
    ("我参加了肿瘤病友交流会", "health"),
    # another person's e-mail written straight after CJK text (no space before the address)
    ("我上司的邮箱地址是x@y.com", "third_party"),
    ("我妈妈的邮箱是mom123@qq.com，记一下", "third_party"),
    ("同事小王的邮箱是wang.li@corp.cn。", "third_party"),
    ("我老板的email：boss_01@corp.example", "third_party"),
    ("我得了肿瘤，下周还要去参加研讨会", "health"),
]


@pytest.mark.parametrize("text", ALLOWED)
def test_not_a_false_block(text: str) -> None:
    verdict = check(text)
    assert verdict.allowed, (verdict.category, verdict.reason)


@pytest.mark.parametrize(("text", "category"), BLOCKED)
def test_still_blocked(text: str, category: str) -> None:
    verdict = check(text)
    assert not verdict.allowed
    assert verdict.category == category
