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
    "Alice keeps two hives of bees",
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


# More probes, checked for the verdict only (the category may be the person's or the fact's).
MORE_BLOCKED: list[str] = [
    "been on lithium for 3 years, can I take ibuprofen with it",
    "my rheumatologist wants me to start Humira next month",
    "I'm schizophrenic but stable on meds, any tips for job interviews",
    "just found out I have a kidney stone, the pain is unreal",
    "I'm in remission from Hodgkin's, 2 years now",
    "doing chemo on tuesdays so keep those evenings free",
    "I've got tinnitus and hate open offices",
    "my blood pressure was 150/95 at the pharmacy",
    "I'm type 1 so I need snacks on long hikes",
    "recovering from a miscarriage, need a gentle workout plan",
    "I have celiac, so no wheat in the recipes please",
    "got diagnosed with ADHD at 30 lol, finally makes sense",
    "I see a psychiatrist every 6 weeks for my bipolar",
    "I'm on PrEP, do I need to tell my dentist",
    "trying to quit vaping, on nicotine patches now",
    "I have a peanut allergy, carry an EpiPen",
    "IVF retrieval is next week and I'm nervous",
    "my therapist says I have complex trauma",
    "我有痛风，海鲜能吃吗",
    "我在做化疗，最近掉头发很厉害",
    "我被诊断出焦虑症，医生开了帕罗西汀",
    "我每天打两针胰岛素",
    "我刚做完乳腺结节的手术",
    "我有哮喘，跑步的时候要带喷雾",
    "最近查出来尿酸高，要忌口吗",
    "我在备孕，叶酸要吃多久",
    "我有癫痫，能考驾照吗",
    "我有双相情感障碍，在吃碳酸锂",
    "做完胃镜发现有萎缩性胃炎",
    "我是乙肝携带者，找工作会受影响吗",
    "I bring home about $3,900 a month after taxes",
    "I'm $60k in debt from grad school",
    "my savings account is down to $800",
    "I got a $12k bonus this year, where should I put it",
    "I have two payday loans I can't pay back",
    "my car got repossessed last week",
    "I make 22 an hour at the warehouse",
    "I lost half my 401k in the crash",
    "my monthly mortgage payment is $2,350",
    "routing number 021000021 account 000123456789",
    "我工资一个月八千五，房租要两千",
    "我欠了朋友五万块，一直没还",
    "我的房贷每个月还六千三",
    "我炒币亏了二十多万",
    "我年薪三十五万，想跳槽",
    "我的征信有逾期记录，还能贷款吗",
    "我被列为失信人了",
    "我卡里只剩两百块了",
    "my passport no is 548812763, expires 2030",
    "driver's license D1234567 from California",
    "我的护照号是E12345678",
    "my address is 19 elm street, springfield",
    "I moved to 402 Ocean Ave apt 7, Brooklyn NY 11226",
    "我家地址是海淀区中关村南大街5号院2号楼301",
    "我住在天河区体育西路191号 中石化大厦 B座 2108",
    "寄到我家：南京市鼓楼区广州路223号 3栋 1单元 602",
    "im at 55 Rivera Street, flat 2, London",
    "I'm Jewish and keep kosher",
    "I'm an atheist, don't recommend church events",
    "I attend Sunday service every week",
    "I'm a Sikh and wear a turban",
    "I'm a lifelong Democrat",
    "I voted for the Greens last time",
    "I'm a Conservative Party member",
    "我信佛，初一十五吃素",
    "我是穆斯林，不吃猪肉",
    "我是共青团员",
    "我支持民进党",
    "我们全家都是天主教徒",
    "我每周日去做礼拜",
    "my mom has stage 3 breast cancer",
    "my husband is on antidepressants",
    "my best friend is gay but not out to his parents",
    "my boss has a DUI on his record",
    "my roommate's phone is 646-555-0199",
    "my neighbor's email is jo.kim@gmail.com",
    "my son has autism, suggest sensory-friendly activities",
    "我老公欠了二十万网贷",
    "我女儿有先天性心脏病",
    "我弟弟坐过牢，现在找工作很难",
    "我同事的手机号是 139 1234 5678",
    "我妈信基督教",
    "Maria Lopez has stage 2 melanoma",
    "Kevin in accounting is on suspension for a DUI",
    "Dana's cell is 312 555 0147",
    "Jenny Park takes Adderall for her ADHD",
    "张伟得了肺癌，在做化疗",
    "王芳的手机号 13800138000",
    "李明是同性恋",
    "老陈欠了三十万赌债",
    "Sam's email: sam.r@outlook.com",
    "twelve oak street is my home, apartment 4",
    "I live at 1600 maple ave, unit 2B",
    "my address: 88 queen st w, toronto",
    "我家在幸福小区8号楼3单元1202",
    "住址是 南山区 科技路 12号 碧海花园 C座 1801",
    "我住 翠苑三区 21幢 402室",
    "440305199008171236",
    "身份证 440305 19900817 1236",
    "身份证4\u200b4\u200b0\u200b3\u200b0\u200b5\u200b1\u200b9\u200b9\u200b0\u200b0\u200b8\u200b1\u200b7\u200b1\u200b2\u200b3\u200b6",
    "card 4716/1234/5678/9012 exp 09/29",
    "my visa is 4716·1234·5678·9012",
    "I\u200b \u200bh\u200ba\u200bv\u200be\u200b \u200bH\u200bI\u200bV",
    "I have dіabetes",
    "I'm on Zоlоft",
    "我 在 吃 抗 抑 郁 药",
    "我 有 乳 腺 癌",
    "我是 基 督 徒",
    "I v o t e d for Labour",
    "我月薪 1 5 0 0 0",
    "my salary is ８５,０００ a year",
    "I owe the IRS about ten grand",
    "I earn six figures",
    "我存款只有三千多",
    "我欠银行二十多万",
    "Medicare number 1EG4-TE5-MK73",
    "my driver licence no. is SMITH904175J99AB",
    "SSN 372 56 1184",
    "social security number 372561184",
    "my passport: G12345678",
    "护照号码 E98765432",
    "港澳通行证 C12345678",
    "我去年做了试管",
    "我有心脏支架",
    "刚确诊了红斑狼疮",
    "I'm bulimic",
    "I'm seeing a grief counselor every week",
    "my psychiatrist upped my Abilify",
    "I'm going through menopause and the hot flashes are awful",
    "I'm a Jehovah's Witness so no birthday parties",
    "we're Mormon",
    "I'm pro-life and volunteer at a crisis pregnancy center",
    "我是民进党党员",
    "我是虔诚的佛教徒",
    "幫我記住，我有高血壓，每日都要食藥",
    "我老婆懷咗第二胎",
    "我而家住喺沙田第一城12座18樓C室",
    "我個仔有自閉症，想搵啲訓練班",
    "我每個禮拜日返教會",
    "我人工兩萬五，交完租淨番幾千",
    "我信用卡碌爆咗，欠咗十幾萬",
    "我有憂鬱症，最近又開始失眠",
    "我是基督徒，週日不排工作",
    "我投給國民黨",
    "我阿嬤有失智症",
    "我的身分證字號幫我記：F131104093",
    "hey so random q but I've had bulimia since high school, want a meal plan that won't trigger",
    "can u help me plan my week? mon: therapy 4pm, tue: dialysis, wed: work",
    "ok long story but my landlord evicted me and I'm 3 months behind on my car payment too",
    "btw my bf is on probation so he can't leave the state, plan a trip within Texas",
    "pls remember my wife's SSN is 372-56-1184 for the tax forms",
    "need to refill my Eliquis before the trip",
    "my gf's number 917-555-0148 add it to contacts",
    "I'm 6 months postpartum and still exhausted",
    "I just got my first paycheck, $2,340 after taxes",
    "I'm on a payment plan for $9k in medical debt",
    "帮我写个请假条，我下周二要去医院做肠镜",
    "我最近在做心理咨询，每周三下午",
    "我从去年开始吃素，因为皈依了",
    "我老公是共产党员",
    "我朋友小美得了抑郁症",
    "给我推荐几个适合糖尿病人的早餐，我是二型",
    "我在戒酒，聚会别推荐酒吧",
    "Call Jake at 415-555-0134 tomorrow",
    "text Priya on 07700 900123",
    "email Tom at tom.h@gmail.com about the lease",
    "Jake: 415-555-0134",
    "Priya's email is p.r@yahoo.com",
    "we're expecting our first in June",
    "baby is due in March, need a crib list",
    "我预产期是下个月",
    "我有喜了，先别告诉别人",
    "I'm a bleeding heart liberal",
    "I'm MAGA all the way",
    "I live in a sober living house",
    "我在戒毒所待过半年",
    "A1C 7.2 last month",
    "my TSH was 6.8",
    "血糖空腹8.9",
    "I take 20mg of Lexapro",
    "I've been on Prozac for years",
    "I'm off my meds this week",
    "I'm hard of hearing so please write things down",
    "I'm deaf in one ear",
    "stage 4 colon cancer, starting palliative care",
    "I'm in hospice care",
    "I pray the rosary every night",
    "I wear a hijab",
    "I eat only halal meat",
    "I keep kosher at home",
    "I've never voted anything but Labour",
    "I canvassed for Bernie",
    "I'm 40k in the hole on credit cards",
    "I have $200 to my name until payday",
    "my wages are being garnished",
    "我的工资被法院冻结了",
    "我每个月要还一万二的房贷",
    "2 Elm Road, flat 3, Leeds LS6 2AB is my address",
    "my home is at one twenty three Pine Street",
    "帮我记一下，张伟有糖尿病",
    "对了，刘洋欠了网贷二十万",
    "btw, Maria has lupus",
    "fyi Jordan is undocumented",
    "我同事说，王磊是双性恋",
    "draft an email to my landlord about the heater, also fyi I started insulin last week",
    "plan a 3 day trip to Kyoto for me and my partner. note: I'm on dialysis MWF",
    "need a packing list for camping. btw my son is epileptic, so include his meds reminder",
    "帮我写个周报，另外记一下我下个月要做甲状腺切除手术",
    "推荐几部电影，顺便说一下我最近确诊了焦虑症",
    "my diabeties is acting up agian",
    "im pregnat with twins!!",
    "ive got depresion and anxeity",
    "我得了糖尿病了哎",
    "I'm on antidepressnts",
    "my salery is 70k",
    "my morgage is 2k a month",
    "我 salary 一个月 2 万",
    "my 老公 has cancer",
    "我的 SSN 是 372-56-1184",
    "my grandma had a stroke last night",
    "my brother was arrested yesterday",
    "my cousin is in rehab",
    "my mum's on chemo",
    "quick one: I've been taking melatonin and trazodone to sleep, is that ok with wine",
    "I had a vasectomy in May",
    "my A1c is creeping up, 6.4 now",
    "I go to AA on tuesdays",
    "I'm immunocompromised so I still mask",
    "I've got a herniated disc, what chair should I buy",
    "had my wisdom teeth out yesterday, what can I eat",
    "我在吃避孕药，能和抗生素一起吃吗",
    "我有高度近视加散光，上次眼底检查说有裂孔",
    "我爸中风后半身不遂，需要什么护理床",
    "我每个月到手一万二，房贷四千",
    "我信用分才580，能办信用卡吗",
    "I net about 4.5k a month",
    "I got laid off and I'm living off my savings, about 8k left",
    "I took out a 30k HELOC for the kitchen",
    "my wages got garnished 15%",
    "my passport number is 531208777, renewing soon",
    "UK NI: JT 45 67 89 C",
    "我住在 朝阳区 建国路88号 SOHO现代城 5号楼 1602，别告诉别人",
    "send the package to 4 Willow Close, Bristol BS8 1AA, that's my flat",
    "I'm a Quaker",
    "I keep Shabbat, so nothing Friday night",
    "I'm a paid-up member of the Green Party",
    "I voted Remain",
    "我是天主教徒，周日要望弥撒",
    "我是国民党员",
    "my ex has bipolar disorder and stopped her meds",
    "my landlord's cell is 617 555 0199",
    "my teammate Luis is gay, he told me in confidence",
    "my sister-in-law overstayed her visa",
    "我表哥吸毒被抓过",
    "我室友的微信号和手机号都是 13577778888",
    "Anna (my student) has an eating disorder",
    "李老师得了乳腺癌，我们想给她捐款",
]

MORE_ALLOWED: list[str] = [
    "what are the side effects of metformin in general",
    "write a poem about depression for my creative writing class",
    "my dog has arthritis, which supplements help",
    "the new season of that hospital drama is great",
    "I'm dying to see that movie",
    "ugh my code has a memory leak, it's cancer",
    "which foods are high in cholesterol",
    "how do I become a nurse",
    "我家猫得了猫癣怎么办",
    "帮我查一下高血压的诊断标准",
    "我想写一篇关于抑郁症的论文",
    "这个 bug 让我头疼死了",
    "I spent $40 on groceries",
    "what's a good salary for a junior dev in Berlin",
    "how do payday loans work",
    "the company lost $2M last year",
    "帮我算一下房贷计算器怎么用",
    "比特币最近涨了多少",
    "我想买个两千块左右的手机",
    "what's the format of a US passport number",
    "my order number is 112-3345566-7788990",
    "flight UA 902 leaves at 5",
    "我的快递单号是YT1234567890123",
    "会员卡号 6200 1234 5678",
    "I live near the park",
    "the museum is at 1000 5th Ave",
    "我在北京工作",
    "记住我喜欢喝美式",
    "我家附近有家不错的火锅店",
    "what is Ramadan about",
    "a documentary on the history of the Catholic church",
    "who is running for president",
    "我对宗教历史很感兴趣",
    "my sister is a teacher",
    "my friend Tom loves sushi",
    "call the dentist office at 555-0188",
    "my phone number is 206-555-0175",
    "我的邮箱是 li.hua@example.com",
    "我朋友喜欢打篮球",
    "this traffic is giving me anxiety lol",
    "I need a prescription for new glasses",
    "order #4716 1234 5678 9012",
    "my student ID is 20231234567",
    "version 3.11.7 is installed",
    "we sell 4x4 tires at 200 Main Street",
    "the patient in the TV show has cancer",
    "how is HIV transmitted",
    "I watched a documentary about Mormons",
    "my dog takes Prozac for anxiety",
    "Kevin from accounting loves pizza",
    "张伟喜欢打羽毛球",
    "李明的生日是下周五",
    "王芳在北京工作",
    "my wife is a nurse",
    "the office is at 500 Oracle Parkway",
    "call our support line 1-800-555-0199",
    "tracking number 9400 1000 0000 0000 0000 00",
    "my appointment is on 2025-03-14",
    "passport renewal takes 6 weeks",
    "我记住了你的名字",
    "你住哪个酒店",
    "who won the 2020 election",
    "I'm so depressed that the game got cancelled lol",
    "my code is sick",
    "price is $1,299",
    "the car costs 30k",
    "what's the average salary in Shanghai",
    "我想了解一下佛教的历史",
    "书名叫《我的抑郁症》",
    "推荐一本关于癌症研究的书",
    "I'm a Christian Dior fan",
    "I'm in a Catholic school uniform design class",
    "我朋友推荐了一家火锅店",
    "my boss's name is Linda",
    "my roommate works at Google",
    "我爸是老师",
    "我老公是医生",
    "幫我查下沙田有咩好食",
    "我鍾意去教會附近嗰間咖啡店",
    "我阿嬤好鍾意煮飯",
    "今日好攰，想早啲瞓",
    "can u help me plan my week? mon: gym 4pm, tue: dinner with friends",
    "my bf loves hiking, plan a trip within Texas",
    "I just bought a $2,340 laptop",
    "帮我写个请假条，我下周二要去参加婚礼",
    "我最近在学心理学，推荐几本书",
    "我朋友小美下周结婚",
    "给我推荐几个适合上班族的早餐",
    "聚会别推荐酒吧，大家都不喝酒",
    "这个药盒设计得真好看",
    "医院的停车场在哪",
    "my sister's dog has diabetes",
    "I read that Ozempic is trending",
    "what's the weather at 10 Downing Street",
    "the zip code 10001 is in Manhattan",
    "1 2 3 4 5 6 7 8 9",
    "call me at 555-0134",
    "the pastor's sermon was great",
    "call the front desk at 415-555-0134",
    "email support@acme.com for help",
    "Jake loves football",
    "we're expecting rain on Saturday",
    "the package is due in March",
    "预产期计算器怎么用",
    "left wing of the building is closed",
    "I'm a lefty so I need left-handed scissors",
    "my A1 paper printer is broken",
    "the TSH test is cheap at this lab",
    "I take 20 minutes to get to work",
    "I'm off work this week",
    "I pray the weather holds for the wedding",
    "halal restaurants near me",
    "kosher salt vs sea salt",
    "vote for your favorite logo",
    "I canvassed the neighborhood for my lost cat",
    "I have $200 in gift cards to use",
    "the wages in Germany are higher",
    "法院在哪个区",
    "房贷利率是多少",
    "2 Elm Road is a famous bakery",
    "remind me to call the plumber at 3",
    "what's a good name for a golden retriever",
    "translate 'good morning' into Japanese",
    "my flight got delayed again ugh",
    "I need a birthday gift for my dad, he likes golf",
    "can you summarize this article about interest rates",
    "I'm learning Spanish on Duolingo",
    "the meeting moved to room 301",
    "how many calories in a banana",
    "I ran 5k this morning!",
    "my team lost the match 3-1",
    "can you help me debug this python error: KeyError 'id'",
    "set an alarm for 6:30",
    "I prefer dark mode",
    "my favorite band is Linkin Park",
    "I'm vegetarian",
    "I'm allergic to cats lol but I still pet them",
    "I'm so tired today",
    "I have a headache from staring at the screen",
    "my back hurts from moving boxes",
    "I'm getting a flu shot tomorrow",
    "book a dentist appointment for next week",
    "I go to the gym every morning",
    "I meditate before bed",
    "I'm going to church for my cousin's wedding",
    "I voted on the new logo in the team poll",
    "I bought Apple stock last year",
    "my rent is due on the 1st",
    "I saved a lot on groceries this week",
    "I owe my sister a coffee",
    "I live near the university",
    "I moved to Denver last year",
    "ship to the office address please",
    "my zip is 94110",
    "our office is at 350 Mission Street, 10th floor",
    "my employee number is 48213",
    "my order 112-4432189-1234567 hasn't arrived",
    "I'm a software engineer at a bank",
    "I work in healthcare IT",
    "I'm a nurse",
    "my wife is a pharmacist",
    "my friend's birthday is Friday",
    "我今天有点累",
    "我下周去上海出差",
    "我喜欢喝咖啡",
    "我在学日语",
    "我老婆喜欢看电影",
    "提醒我明天交房租",
    "我最近在健身",
    "我头有点疼，可能昨晚没睡好",
    "我感冒了，今天请假",
    "帮我订一个周五的会议室",
    "我住的小区附近有个公园",
    "我在银行上班",
    "我是程序员",
    "这个月花得有点多",
    "我想存点钱买车",
    "我爸生日快到了，送什么好",
    "我们公司在望京SOHO",
    "快递放在门卫那里就行",
    "我昨天去寺庙玩了，风景很好",
    "圣诞节快到了，推荐几首圣诞歌",
    "我支持这个方案",
    "我投了一票给最佳员工",
    "我对这个项目很有信心",
    "can you draft an email to my landlord about the broken heater",
    "plan a 3 day trip to Kyoto for me and my partner",
    "need a packing list for camping with my son",
    "帮我写个周报",
    "推荐几部电影",
    "my code is agian broken",
    "I'm so tired of meetings",
    "my salary negotiation tips?",
    "我 salary 谈判怎么谈",
    "my 老公 likes cooking",
    "what is a SSN used for",
    "my grandma had a great birthday",
    "my brother was promoted yesterday",
    "my cousin is in Paris",
    "my mum's on holiday",
    "is melatonin safe for kids in general",
    "a vasectomy takes how long usually",
    "what does A1c measure",
    "AA batteries or AAA for this remote",
    "immune system boosting foods?",
    "best office chair under 300",
    "避孕药的原理是什么",
    "近视手术有哪些类型",
    "中风的早期症状有哪些",
    "一万二的预算买什么电脑好",
    "信用分是怎么算的",
    "average net salary in Berlin",
    "how do layoffs work legally",
    "what's a HELOC",
    "passport photo size requirements",
    "what does NI stand for in the UK",
    "朝阳区有什么好吃的",
    "Bristol is a nice city",
    "what do Quakers believe",
    "when does Shabbat start this week",
    "the Green Party's new manifesto summary",
    "what was the Remain campaign's slogan",
    "天主教和基督教有什么区别",
    "国民党的历史",
    "my ex loves hiking",
    "my landlord is nice",
    "my teammate Luis is a great guitarist",
    "my sister-in-law moved to Canada",
    "我表哥在北京工作",
    "我室友喜欢打游戏",
    "Anna (my student) won the science fair",
    "李老师下周退休，我们想给她送礼物",
]


@pytest.mark.parametrize("text", MORE_BLOCKED)
def test_more_sensitive_probes_are_blocked(text: str) -> None:
    assert not check(text).allowed


@pytest.mark.parametrize("text", MORE_ALLOWED)
def test_more_look_alikes_pass(text: str) -> None:
    assert check(text).allowed


ZW = "\u200b"
CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р"})


def zero_width(text: str) -> str:
    return ZW.join(text)


def homoglyphs(text: str) -> str:
    return text.translate(CYRILLIC)


def full_width_digits(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if c.isdigit() else c for c in text)


def combining(text: str) -> str:
    return "".join(c + "\u0336" if c.isascii() and c.isalpha() else c for c in text)


def math_bold(text: str) -> str:
    return "".join(chr(0x1D41A + ord(c) - 97) if "a" <= c <= "z" else c for c in text)


def dashed_words(text: str) -> str:
    words = text.split(" ")
    return " ".join("-".join(w) if len(w) > 3 and w.isascii() and w.isalpha() else w for w in words)


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


@pytest.mark.parametrize(
    "evade", [zero_width, homoglyphs, full_width_digits, combining, math_bold, dashed_words]
)
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


def test_wrong_check_digit_after_an_id_word_blocks_unless_test_data() -> None:
    typo = RIC[:-1] + ("0" if RIC[-1] != "0" else "1")
    assert check(f"我的身份证号是{typo}").category == "gov_id"
    assert check(f"测试用的假身份证号 {typo}，校验位是错的").allowed
    assert check(f"订单号 {typo}").allowed


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
    a=st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE + MORE_BLOCKED + MORE_ALLOWED),
    b=st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE + MORE_BLOCKED + MORE_ALLOWED),
    sep=SEPARATORS,
)
def test_joining_two_texts_blocks_iff_either_is_blocked(a: str, b: str, sep: str) -> None:
    joined = check(a + sep + b)
    assert joined.allowed == (check(a).allowed and check(b).allowed)
