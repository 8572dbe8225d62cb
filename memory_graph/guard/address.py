"""Address: a precise home address (street and number, building, unit, room, dorm room).

A city, district, neighbourhood or time zone is fine, and so is a public venue or a
business address (a street address next to a venue or business word and no home word).
Street names may be lower case (``7877 willow creek rd``); Chinese forms cover
路/街/巷/弄/段/村/组 + 号, 号楼/栋/幢/座/单元/楼/室 and dorm rooms.
"""

from __future__ import annotations

import re

from ._cues import Sentence, alt
from ._gate import any_match
from ._types import Cue

__all__ = ["detect", "possible"]

_SUFFIX_ANY_CASE = alt(
    "street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|terrace|ter|"
    "crescent|parkway|pkwy|highway|hwy|circle|cir|trail|trl|close|mews|gardens|gdns|"
    "square|sq|place|pl|way|hollow|ridge|loop|pike|row|alley|plaza|grove|heights|crossing"
)
# A time or a distance before "drive", "walk", "way" is a journey, not a street name
# ("a three hour drive from me", "10 minutes' walk").
_MEASURE = (
    r"(?!(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|miles?|kms?|kilomet(?:er|re)s?|blocks?|"
    r"days?|weeks?|nights?|stops?|exits?|steps?)(?:'s?|s')?\s)"
)
_STREET_EN = re.compile(
    rf"(?<![\d.,$#])\b\d{{1,6}}[a-z]?,?\s+(?:[nsew]\.?\s+)?(?:{_MEASURE}[a-z0-9'.-]+\s+){{1,3}}"
    rf"{_SUFFIX_ANY_CASE}\b\.?(?!\s*(?:of|to|for|with|from|away)\b)",
    re.IGNORECASE,
)
_STREET_SUFFIX = alt(
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
_STREET_CAP = re.compile(
    rf"(?<![\d.,$#])\b\d{{1,6}}[A-Z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z][A-Za-z'-]*\.?\s+){{1,3}}"
    rf"{_STREET_SUFFIX}\b"
)
_NUMBER_WORDS = alt(
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    "fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    "eighty|ninety|hundred|oh"
)
_STREET_WORDS = re.compile(
    rf"\b{_NUMBER_WORDS}(?:[ -]{_NUMBER_WORDS}){{0,3}}\s+(?:{_MEASURE}[a-z'.-]+\s+){{1,3}}"
    rf"{_SUFFIX_ANY_CASE}\b(?!\s*(?:of|to|for|with|from|away)\b)",
    re.IGNORECASE,
)
_UNIT_EN = re.compile(
    r"\b(?:apt|apartment|suite|ste|unit|flat)\b\.?\s*#?\s*\d+[a-z]?\b|#\s?\d+[a-z]?\b"
    r"|\bp\.?\s?o\.?\s+box\s+\d+|\b(?:hall|dorm|residence|house)\s+(?:room\s+)?#?\d{2,4}[a-z]?\b",
    re.IGNORECASE,
)
_ZIP_EN = re.compile(
    r"\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b|\b[A-Z]\d[A-Z]\s?\d[A-Z]\d\b|\b[A-Z]{1,2}\d[A-Z\d]?\s+\d[A-Z]{2}\b"
)
_HOME_EN = re.compile(
    r"\b(?:home|live|lives|living|lived|moved|move|moving|address|adress|addy|my place|"
    r"our place|my house|our house|my apartment|my flat|my dorm|i'm in|im in|ship|shipping|"
    r"deliver|delivery|deliveries|mail|billing|rent|renting|gate code|door code|buzzer|"
    r"downstairs|upstairs|stay at|staying at|send it to|order me)\b",
    re.IGNORECASE,
)
_PUBLIC_EN = re.compile(
    r"\b(?:office|meeting|conference|venue|store|shop|restaurant|cafe|café|hotel|museum|"
    r"headquarters|hq|campus|clinic|gym|meet|meetup|lunch|dinner|brunch|coffee|event|party|"
    r"concert|bar|pub|cinema|theater|theatre|bakery|place at|reservations?|open|hours|"
    r"flyer|business|our bakery|our shop|our store|branch|library|church|park|stadium|"
    r"sell|sells|selling|for sale|customers|showroom|dealership|warehouse|"
    r"fictional|novel|real address|famous|landmark|embassy|consulate)\b",
    re.IGNORECASE,
)
_NUM = r"(?:\d+|[一二三四五六七八九十百]+)"
_STREET_ZH = re.compile(
    rf"(?:[路街巷弄道里村段组屯]|胡同|大道){_NUM}(?:号|弄|巷)"
    rf"|{_NUM}弄{_NUM}号"
    r"|[\u4e00-\u9fffA-Za-z]{2,}(?:小区|花园|公寓|新村|家园|苑|大厦|广场|城|园|里|楼)\s*[A-Za-z]?\s*\d+\s*"
    r"(?:号楼|栋|幢|座|单元|号|区)"
)
_UNIT_ZH = re.compile(
    r"\d+\s*(?:号楼|栋|幢|单元)|[A-Za-z]\s*(?:栋|座|区)\s*\d+|\d{1,3}\s*(?:楼|层)\s*(?:之\s*\d+|-?\s*\d+|[A-Za-z]\s*室?)"
    r"|\d{2,5}\s*(?:室|房)(?!间)|门牌号|门禁密码|\d+\s*舍\s*\d{3}|(?<!\d)\d{1,3}\s*-\s*\d{1,3}\s*-\s*\d{3,4}(?!\d)"
    r"|号\s*\d{1,3}\s*-\s*\d{1,4}(?!\d)"
)
_HOME_ZH = re.compile(r"家|(?<!记)住(?!院)|搬|宿舍|租|房东|我的地址|寄给我|送到我|收货地址")
_DELIVERY_ZH = re.compile(r"寄|快递|收货|收件|地址|外卖|送到|送货|楼下|门口")
_PUBLIC_ZH = re.compile(
    r"公司|办公|会议|酒店|宾馆|餐厅|店|商场|医院|学校|开业|铺面|咖啡|门店|营业|景点|博物馆|"
    r"海报|展览|银行|政府|大使馆|领馆|馆|订餐|营业"
)
_REASON = "a precise home address (street and number, building, unit or room)"


def detect(sent: Sentence) -> list[Cue]:
    """Address cues in one sentence."""
    text = sent.text
    cues: list[Cue] = []
    if sent.zh:
        street = _STREET_ZH.search(text)
        unit = _UNIT_ZH.search(text)
        home = _HOME_ZH.search(text)
        public = _PUBLIC_ZH.search(text) and not home
        home = home or _DELIVERY_ZH.search(text)
        if (street or (unit and home)) and not public:
            m = street or unit
            assert m is not None
            cues.append(Cue("address", _REASON, m.start(), m.end(), "strong"))
    street_en = _STREET_EN.search(text) or _STREET_CAP.search(text) or _STREET_WORDS.search(text)
    home_en = _HOME_EN.search(text)
    public_en = _PUBLIC_EN.search(text) and not home_en
    if street_en and not public_en:
        cues.append(Cue("address", _REASON, street_en.start(), street_en.end(), "strong"))
    elif home_en and not public_en:
        m = _UNIT_EN.search(text) or _ZIP_EN.search(text)
        if m:
            cues.append(Cue("address", _REASON, m.start(), m.end(), "strong"))
    return cues


# Every cue of :func:`detect` is a match of one of these on the sentence: a street, or a
# unit or postcode next to a home word.
_GATE = any_match(_STREET_EN, _STREET_CAP, _STREET_WORDS, _UNIT_EN, _ZIP_EN)
_GATE_ZH = any_match(
    _STREET_ZH, _UNIT_ZH, _STREET_EN, _STREET_CAP, _STREET_WORDS, _UNIT_EN, _ZIP_EN
)


def possible(sent: Sentence) -> bool:
    """False only when :func:`detect` finds no cue in ``sent`` (a cheap pre-filter)."""
    return (_GATE_ZH if sent.zh else _GATE).search(sent.text) is not None
