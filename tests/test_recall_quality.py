"""Recall quality classes (issue 10) on small synthetic corpora, through the real store.

Each test is one class of miss: several questions in one message, a question restated after
chatter, a question word its evidence says another way, numbers in the other script, and the
"person whose X is Y" second hop. None of these sentences come from the eval suites.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone

import pytest

from memory_graph import MemoryStore, Owner
from memory_graph.recall.dates import question_window
from memory_graph.recall.documents import corpus_stats
from memory_graph.recall.expand import (
    expanded_text,
    expansion_terms,
    hop_terms,
    numeral_variants,
    residual_text,
    swap_numerals,
)
from memory_graph.recall.fuse import Leg, fuse_legs, rank_legs
from memory_graph.recall.model import Document, Ranked
from memory_graph.recall.query import ParsedQuery, query_legs, query_terms
from memory_graph.recall.rank import rank
from memory_graph.recall.terms import asks_count
from memory_graph.recall.tokenize import tokenize

EVENTS = ["星河", "松涛", "晨曦", "云杉", "海棠", "青柠", "白鹭", "远山", "流萤", "竹影", "秋水"]

FILLER = [
    *[f"{name}音乐节的地点是江苏苏州。" for name in EVENTS],
    *[f"{name}读书会的持续时间是{n}天。" for n, name in enumerate(EVENTS[:6], start=2)],
    *[f"{name}运动会的规模是{n}百人。" for n, name in zip("三四五六七", EVENTS[:5], strict=True)],
    "我叔叔特别喜欢钓鱼。",
    "我同事特别喜欢爬山。",
    "我叔叔今年52岁了。",
    "我同事的工作地是上海。",
    "我表哥今年30岁。",
    "我表哥的身高是180cm。",
    "我表哥喜欢跑步。",
    "今天去公园散步，公园里人很多。",
    "昨天看的电影很好看，电影院人不多。",
    "周末和朋友去吃火锅，火锅店排队很久。",
]


@pytest.fixture
def search(pg_dsn: str) -> Iterator[object]:
    """``search(extra_docs, query, limit) -> texts``: a fresh owner holding FILLER plus the
    extra documents, searched through ``store.search``."""
    with MemoryStore.from_dsn(pg_dsn) as store:
        store.setup()
        count = 0

        def run(extra: Sequence[str], query: str, limit: int = 10) -> list[str]:
            nonlocal count
            count += 1
            owner = Owner(f"quality-{count}")
            items = [{"kind": "fact", "content": t} for t in [*FILLER, *extra]]
            results = store.add_many(owner, items)
            assert all(r.record_id is not None for r in results)
            return [h.record.content for h in store.search(owner, query, limit=limit)]

        yield run


def test_second_question_is_not_crowded_out(search) -> None:  # type: ignore[no-untyped-def]
    # Eleven documents answer the first question, four the second: both must show.
    heights = [
        f"我{who}的身高是17{n}cm。" for n, who in enumerate(("舅舅", "同学", "邻居", "教练"))
    ]
    texts = search(heights, "有几个音乐节的地点在江苏苏州？另外，有几个人身高超过170cm？", 10)
    assert sum(t in heights for t in texts) >= 3
    assert sum("江苏苏州" in t for t in texts) >= 4


def test_question_restated_after_chatter(search) -> None:  # type: ignore[no-untyped-def]
    birthday = "我表姐的生日是3月5日。"
    query = (
        "今天天气真好，去公园散步了，公园里的花都开了。昨天看的电影也不错，电影院人不多，"
        "晚上还想去吃火锅，火锅店排队很久吗？不对，我真正想问的是：我表姐的生日是哪天？"
    )
    assert search([birthday], query, 10)[0] == birthday


def test_question_word_paraphrased_in_evidence(search) -> None:  # type: ignore[no-untyped-def]
    # "工作地" (place of work) is said "在...上班" (works in ...) in the evidence.
    works = "我表哥在浙江杭州上班。"
    texts = search([works], "我表哥的工作地是哪里？", 10)
    assert works in texts[:5]
    assert texts.index(works) < texts.index("我表哥今年30岁。")


def test_chinese_numerals_match_digits(search) -> None:  # type: ignore[no-untyped-def]
    nine = "星光运动会的规模是900人。"
    assert search([nine], "那个规模是九百人的运动会叫什么？", 10)[0] == nine
    dates = "我妈妈的生日是05月18日。"
    assert search([dates], "谁是五月份过生日的？", 10)[0] == dates


def test_second_hop_finds_the_person(search) -> None:  # type: ignore[no-untyped-def]
    # The first hit says who is 36 (my cousin); her hobby is stated without "兴趣爱好".
    # "表姐" is in five more documents, too common for a rare-term bridge.
    age, hobby = "我表姐今年36岁了。", "我表姐特别喜欢阅读。"
    more = [
        "我表姐的身高是165cm。",
        "我表姐的生日是8月1日。",
        "我表姐的职业是老师。",
        "我表姐在北京上班。",
        "我表姐的家乡是湖南长沙。",
    ]
    texts = search([age, hobby, *more], "那个年龄是36岁的人，兴趣爱好是什么？", 10)
    assert texts[0] == age
    assert hobby in texts
    assert texts.index(hobby) < texts.index("我叔叔特别喜欢钓鱼。")


def test_legs_of_plain_questions() -> None:
    assert query_legs("When did Melanie paint a sunrise?") == [
        Leg("When did Melanie paint a sunrise?")
    ]
    # "Also" joins two questions in English too; a blank part is no leg.
    legs = query_legs("Where does Tom work? Also, what is his phone number?")
    assert [leg.text for leg in legs[:2]] == [
        "Where does Tom work?",
        "what is his phone number?",
    ]
    assert legs[2].weight < 1.0
    assert query_legs("另外，") == [Leg("另外，")]
    # A restated question wins over the chatter, which keeps a small weight.
    legs = query_legs("Nice weather. What I really want to ask is: where is my passport?")
    assert legs[0] == Leg("where is my passport?")
    assert legs[-1].weight <= 0.1


def test_one_leg_ranks_exactly_as_before() -> None:
    docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(FILLER)]
    stats = corpus_stats(docs)
    query = "我表哥多高？"

    def rank_one(text: str | ParsedQuery) -> list[Ranked]:
        return rank(text, docs, limit=10, stats=stats)

    assert rank_legs(query, rank_one, limit=10) == rank_one(query)


def test_fusion_normalises_each_leg() -> None:
    a, b, c = (Document(x, [x]) for x in "abc")
    fused = fuse_legs(
        [
            (Leg("x"), [Ranked(a, 100.0), Ranked(b, 90.0)]),
            (Leg("y"), [Ranked(c, 2.0)]),
        ],
        limit=2,
    )
    # c leads its own leg, so it is not pushed out by the other leg's larger scores.
    assert [r.doc.id for r in fused] == ["a", "c"]


def test_expansion_terms() -> None:
    assert "上班" in expansion_terms("他的工作地在哪？")
    assert expansion_terms("他在哪上班？") == ()  # one direction only
    assert swap_numerals("两个周，三千人，05月") == "2个周，3000人，五月"
    assert expanded_text("没有数字") is None
    docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(FILLER)]
    hop = hop_terms("谁今年30岁？", "我表哥今年30岁。", corpus_stats(docs))
    assert "表哥" in hop and "今年" not in hop


def test_whole_text_beside_its_questions_is_ranked_once() -> None:
    # The whole message only helps pick the fused best: no expansion or hop pass for it.
    docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(FILLER)]
    stats = corpus_stats(docs)
    query = "我表哥多高？另外，我同事的工作地是哪里？"
    asked: list[str] = []

    def rank_one(parsed: ParsedQuery) -> list[Ranked]:
        asked.append(parsed.text)
        return rank(parsed, docs, limit=10, stats=stats)

    rank_legs(query, rank_one, limit=10, stats=stats)
    assert asked.count(query) == 1
    assert not [t for t in asked if t != query and t.startswith(query)]
    assert any("上班" in t for t in asked)  # the question leg still has its expansion


@pytest.fixture
def dated_search(pg_dsn: str) -> Iterator[object]:
    """``dated_search(docs, query) -> texts``: a fresh owner holding ``(text, observed_at)``
    documents and FILLER, searched through ``store.search`` at :data:`NOW`."""
    with MemoryStore.from_dsn(pg_dsn, clock=lambda: NOW) as store:
        store.setup()
        count = 0

        def run(docs: Sequence[tuple[str, datetime]], query: str) -> list[str]:
            nonlocal count
            count += 1
            owner = Owner(f"dated-{count}-{uuid.uuid4().hex[:6]}")
            items = [
                {"kind": "fact", "content": t, "evidence": {"observed_at": at}} for t, at in docs
            ]
            old = {"observed_at": _at(2020, 1, 1)}
            items += [{"kind": "fact", "content": t, "evidence": old} for t in FILLER]
            assert all(r.record_id is not None for r in store.add_many(owner, items))
            return [h.record.content for h in store.search(owner, query, limit=5)]

        yield run


NOW = datetime(2024, 3, 20, 12, tzinfo=timezone.utc)


def _at(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, 15, tzinfo=timezone.utc)


def test_question_date_prefers_evidence_from_then(dated_search) -> None:  # type: ignore[no-untyped-def]
    # The evidence shares only the name with the question; what dates it is when it was said
    # (and a week after the date asked about still counts: people tell it afterwards).
    lines = [
        "Robin: the new job keeps me busy lately.",
        "Robin: my sister baked a cake for the party.",
        "Robin: I finally fixed the old bike.",
        "Robin: the garden is full of tomatoes now.",
        "Robin: we adopted a grey kitten.",
        "Robin: I started reading a thick novel.",
        "Robin: the concert downtown was loud.",
        "Robin: I painted the kitchen blue.",
        "Robin: my team won the quiz night.",
        "Robin: the rain flooded our street.",
        "Robin: I learned to make dumplings.",
    ]
    chatter = [(t, _at(2023, m, 12)) for m, t in enumerate(lines, start=1)]
    lisbon = ("Robin: I got back from Lisbon last week, the tiles were lovely.", _at(2022, 8, 6))
    texts = dated_search([*chatter, lisbon], "Where did Robin go in July 2022?")
    assert texts[0] == lisbon[0]
    # A month without a year matches that month of any year.
    march = ("Robin: picked up pottery, it was relaxing.", _at(2021, 3, 9))
    texts = dated_search([*chatter, march], "What did Robin pick up in March?")
    assert texts[0] == march[0]


def test_chinese_and_relative_dates(dated_search) -> None:  # type: ignore[no-untyped-def]
    decoys = [(f"我去了北京，去了好几次，第{n}回。", _at(2023, n, 3)) for n in range(1, 10)]
    hangzhou = ("我去了杭州西湖。", _at(2023, 11, 8))
    texts = dated_search([*decoys, hangzhou], "我2023年11月去了哪里？")
    assert texts[0] == hangzhou[0]
    recent = ("我去了苏州园林。", NOW - timedelta(days=6))
    texts = dated_search([*decoys, recent], "我上周去了哪里？")
    assert texts[0] == recent[0]
    texts = dated_search([*decoys, recent], "Where did I go last week? 我去了哪里")
    assert texts[0] == recent[0]


def test_question_window_forms() -> None:
    def days(query: str) -> list[tuple[str, str]]:
        window = question_window(query)
        assert window is not None
        return [
            (
                datetime.fromtimestamp(a, timezone.utc).date().isoformat(),
                datetime.fromtimestamp(b, timezone.utc).date().isoformat(),
            )
            for a, b in window.spans
        ]

    assert days("What did Sam do on 8 May, 2023?") == [("2023-05-08", "2023-05-09")]
    assert days("What did Sam do on May 8th, 2023?") == [("2023-05-08", "2023-05-09")]
    assert days("What did Sam do the week before 16 November 2023?") == [
        ("2023-10-26", "2023-11-17")
    ]
    assert days("What did Sam win at the beginning of November 2022?") == [
        ("2022-11-01", "2022-11-11")
    ]
    assert days("我2023年5月8日前去了哪里？") == [("2023-04-17", "2023-05-09")]
    assert question_window("五月份我买了什么").month == 5  # type: ignore[union-attr]
    # Verbs and unrelated words name no date; relative dates need the recall's time.
    assert question_window("You may march on, may I ask?") is None
    assert question_window("What did I buy last week?") is None
    # A birthday or an anniversary is a date asked about, not when something was said.
    assert question_window("Who was born in May 1990?") is None
    assert question_window("谁是5月份过生日的？") is None
    assert question_window("What did we do on our anniversary in June?") is None
    window = question_window("What did I buy last week?", NOW)
    assert window is not None and window.holds((NOW - timedelta(days=5)).timestamp())
    assert not window.holds((NOW - timedelta(days=40)).timestamp())


def test_a_question_of_thousands_of_dates_reads_a_bounded_few() -> None:
    # Every candidate document is tested against each date a question names: a hostile or
    # pasted text of 20,000 dates named 20,000 spans (and took half a minute to read).
    huge = question_window("May 5, 2023 " * 20_000)
    assert huge is not None and 0 < len(huge.spans) <= 16
    zh = question_window("2023年5月8日前" * 20_000)
    assert zh is not None and 0 < len(zh.spans) <= 16
    # Impossible dates name nothing; control and format characters between the parts break
    # nothing; fullwidth digits read as the same numbers.
    assert question_window("我2023年13月45日去了哪里？") is None
    assert question_window("What did I do on May \u202e5, \x1b2023?") is not None
    wide = question_window("What did I do on May ５, ２０２３?")
    assert wide is not None and (wide.month, wide.day) == (5, 5)


def test_when_question_prefers_evidence_that_says_a_time(search) -> None:  # type: ignore[no-untyped-def]
    # A "when" question is answered by a statement that says a time, not by the one that
    # repeats its words most.
    about = "Robin: the kitten we adopted is playful, the kitten chases yarn all day."
    dated = "Robin: we adopted a kitten last Saturday."
    texts = search([about, dated], "When did Robin adopt the kitten?", 10)
    assert texts[0] == dated
    assert texts.index(about) > 0  # still found
    about_zh = "我的自行车是蓝色的，这辆自行车很轻。"
    dated_zh = "我上周买了一辆自行车。"
    texts = search([about_zh, dated_zh], "我什么时候买的自行车？", 10)
    assert texts[0] == dated_zh


def test_answer_two_turns_after_the_hit(pg_dsn: str) -> None:
    # The hit says what the topic is, the next turn asks about it, the turn after answers
    # without repeating a word of the question: the question in between links them.
    def thread(middle: str) -> list[str]:
        with MemoryStore.from_dsn(pg_dsn) as store:
            store.setup()
            owner = Owner(f"answer-{uuid.uuid4().hex[:8]}")
            turns = [
                "I finally finished my first novel last month!",
                middle,
                "It follows a lighthouse keeper through one long storm.",
                "Anyway, the weather here has been grey all week.",
            ]
            items = [
                {
                    "kind": "fact",
                    "content": t,
                    "evidence": {"thread_id": "chat-1", "observed_at": _at(2023, 5, 1 + i)},
                }
                for i, t in enumerate(turns)
            ]
            items += [{"kind": "fact", "content": t} for t in FILLER]
            assert all(r.record_id is not None for r in store.add_many(owner, items))
            return [h.record.content for h in store.search(owner, "What is my first novel about?")]

    answer = "It follows a lighthouse keeper through one long storm."
    assert answer in thread("Wow, congratulations! What is the story?")
    # A neighbour that asks nothing links nothing two turns away.
    assert answer not in thread("Wow, congratulations, that is huge.")


def test_dates_doctests() -> None:
    import doctest

    from memory_graph.recall import dates

    result = doctest.testmod(dates)
    assert result.failed == 0 and result.attempted > 0


def test_question_phrases_carry_no_topic(search) -> None:  # type: ignore[no-untyped-def]
    # "kind" and "many" only ask; a statement that repeats them is not the answer.
    plays = "Robin plays jazz piano in a trio."
    kind = "Robin is a kind person, so kind to many neighbours, many of them."
    texts = search([plays, kind], "What kind of music does Robin play?", 10)
    assert texts[0] == plays
    texts = search([plays, kind], "How many instruments does Robin play?", 10)
    assert texts[0] == plays
    assert sorted(query_terms("What kind of music does Robin play?").weights) == [
        "music",
        "play",
        "robin",
    ]
    assert "几个" not in query_terms("我表哥有几个孩子？").weights


def test_contraction_fragments_carry_no_topic(search) -> None:  # type: ignore[no-untyped-def]
    # The tokenizer leaves "s" of "Robin's" and "it's", "t" of "don't": they match nothing.
    studio = "The studio is downtown, near the river."
    chatter = "Robin: it's late, that's fine, let's see what's next, don't worry."
    texts = search([studio, chatter], "Where is Robin's studio?", 10)
    assert texts[0] == studio
    assert "s" not in query_terms("Where is Robin's studio? I don't know").weights


def test_numbers_are_added_in_the_other_script_not_swapped(search) -> None:  # type: ignore[no-untyped-def]
    # The expansion pass keeps "三千人" as written and adds "3000人": a statement in either
    # script matches it (swapping dropped the statements that write it as the question does).
    q = "规模是三千人的那个运动会，持续几天？"
    assert expanded_text(q) is not None and "三千人" in expanded_text(q)  # type: ignore[operator]
    assert "3000人" in expanded_text(q)  # type: ignore[operator]
    assert numeral_variants("哪一个？这一次？每一天？") == ()  # no quantity in these
    assert numeral_variants("") == () and expanded_text("") is None
    chinese, digits = "霜叶运动会的规模是三千人。", "雪松运动会的规模是3000人。"
    texts = search([chinese, digits], q, 10)
    assert set(texts[:2]) == {chinese, digits}


def test_a_number_in_the_question_outweighs_the_attribute(search) -> None:  # type: ignore[no-untyped-def]
    # "年龄是26岁": the statement with 26 answers, not the ones repeating "年龄是".
    ages = [
        f"{n}是我的{r}，其年龄是{a}岁。" for n, r, a in (("李梅", "舅妈", 53), ("王强", "上司", 38))
    ]
    young = "我的下属今年26岁。"
    texts = search([*ages, young], "那个年龄是26岁的人，职业是什么？", 10)
    assert texts[0] == young
    assert query_terms("26岁的人").weights["26"] > query_terms("26岁的人").weights["的人"]
    # A bare number (an English date's day and year) is not a stated value: weight 1.
    weights = query_terms("What did Tim say on 16 November, 2023?").weights
    assert weights["16"] == weights["2023"] == weights["tim"] == 1.0


def test_hop_borrows_what_the_hit_adds_not_its_wording(search) -> None:  # type: ignore[no-untyped-def]
    # The hit shares "路过的商场" with the question; what it adds is the mall's name, and the
    # statement about the mall (its review) is the second hop, not another "刚刚路过" place.
    seen = "我刚刚路过的那个商场是万象城。"
    review = "万象城的东西真挺全，买东西方便，就是周末人太多，有点吵。"
    others = [
        "我刚刚路过的公园是中山公园。",
        "我刚刚路过的医院是协和医院。",
        "我刚刚路过一家书店。",
    ]
    docs = [
        Document(str(i), tokenize(t), t) for i, t in enumerate([*FILLER, seen, review, *others])
    ]
    hop = hop_terms("我路过的商场怎么样？", seen, corpus_stats(docs))
    assert "万象" in hop and "刚路" not in hop and "刚刚" not in hop
    texts = search([seen, review, *others], "我路过的商场怎么样？", 10)
    assert texts[0] == seen
    assert texts.index(review) <= 2  # the hop pass takes every other place after the hit


def test_second_hop_asks_what_the_condition_leaves(search) -> None:  # type: ignore[no-untyped-def]
    # "在浙江杭州上班的人" is my aunt; the answer is her hometown, stated without the
    # condition's words, among other people's hometowns and the aunt's other facts.
    works, home = "我舅妈在浙江杭州上班。", "我舅妈的老家是福建厦门。"
    more = ["我舅妈在浙江杭州买了房。", "我舅妈常去浙江杭州西湖散步。", "我舅妈喜欢养花。"]
    more += [
        f"我{who}的家乡是{where}。"
        for who, where in (("同事", "江苏南京"), ("邻居", "四川成都"), ("同学", "湖北武汉"))
    ]
    texts = search([works, home, *more], "那个在浙江杭州上班的人，家乡是哪里？", 10)
    assert texts[0] == works
    assert texts.index(home) <= 2


def test_residual_of_a_question() -> None:
    # The clause the hit satisfies goes whole (the hit words it "今年", the question "年龄是").
    assert residual_text("那个年龄是26岁的人，职业是什么？", "我的下属今年26岁。").split() == [
        "职业是什么?"
    ]
    # One clause only: only the shared words go.
    assert residual_text("那个喜欢跑步的人是哪里人？", "我表哥喜欢跑步。").split() == [
        "那个",
        "的人是哪里人?",
    ]
    # Hostile: empty, punctuation only, nothing shared, a hit that shares everything.
    assert residual_text("", "") == ""
    assert residual_text("？！，", "。。").strip() == "?!,"
    assert residual_text("天气如何？", "我表哥喜欢跑步。") == "天气如何?"
    assert residual_text("喜欢跑步", "我表哥喜欢跑步。").strip() == ""
    docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(FILLER)]
    stats = corpus_stats(docs)
    assert hop_terms("", "", stats) == () and hop_terms("？", "。", stats) == ()


def test_a_long_question_and_hit_are_read_in_linear_time() -> None:
    import time

    docs = [Document(str(i), tokenize(t), t) for i, t in enumerate(FILLER)]
    stats = corpus_stats(docs)
    question, hit = "那个喜欢跑步的人，" * 227, "我表哥喜欢跑步，" * 512  # 2048 / 4096 chars
    started = time.perf_counter()
    rest = residual_text(question, hit)
    hop_terms(question, hit, stats)
    assert time.perf_counter() - started < 1.0
    assert len(rest) == len(question)


def test_how_many_questions_take_no_hop(search) -> None:  # type: ignore[no-untyped-def]
    # Every climber is evidence of "how many"; the first climber's other facts are not.
    climbers = [f"我{who}特别喜欢爬山。" for who in ("舅舅", "同学", "邻居", "教练")]
    uncle = ["我舅舅今年60岁。", "我舅舅的家乡是江西南昌。", "我舅舅在北京上班。"]
    texts = search([*climbers, *uncle], "有几个人喜欢爬山？", 5)
    assert sum(t in climbers for t in texts) >= 4
    assert [asks_count(q) for q in ("有几个人喜欢爬山？", "How many dogs?", "他几岁？")] == [
        True,
        True,
        False,
    ]


def test_expand_and_plan_doctests() -> None:
    import doctest

    from memory_graph.recall import expand, fuse, plan, query

    for module in (expand, plan, query, fuse):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0
