"""The words of selections, bilingual: counts, superlatives, orderings, the main price
band, thresholds and the nouns of what is ranked (read by ``selection.py``)."""

from __future__ import annotations

import re

I = re.I | re.A  # noqa: E741 - ASCII word boundaries: CJK characters are not word characters

CN_NUM = "一二两三四五六七八九十"
NUM = rf"(\d+|[{CN_NUM}]+)"
# a count: not a date, not 双11, not the 一 of 一般
COUNT = (
    rf"(?<![\d年.双])(\d+|[{CN_NUM}]+)"
    r"(?![\d月年日号%.般样些直定起下点级线块元天周句字段行]|\s*个?(?:月|星期|礼拜))"
)
EN_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20,
    "half a dozen": 6, "a dozen": 12, "dozen": 12,
}  # fmt: skip
EN_COUNT = r"((?!(?:19|20)\d\d\b)\d+(?![.,]\d)|" + "|".join(EN_WORDS) + r")"  # a count, not a year
WRITTEN_COUNT = re.compile(rf"\d|[{CN_NUM}]|\b(?:{'|'.join(EN_WORDS)})\b", re.I)
"""A selection's words say its count ("top 5", "前三"; not "the least competitive one")."""
HIGH_ZH = (
    "最高|最多|最大|最快|最好|最强|最热|最贵|最火|最畅销|卖得最好|最猛|最受欢迎|最热门|最深"
    "|最能打|最赚钱|最明显|最显著|最突出|最厉害|最激烈|最卷|最拥挤|最饱和|排在前面|排前面|名列前茅|前几名|前几|卖爆|最能卖|头部|领先|从高到低|从多到少|由高到低|降序"
    "|增长快|增速快|涨得快|增长较快|增长迅速|贡献最大|贡献最多|拉动最大|带动最多"
)
LOW_ZH = (
    "最低|最少|最小|最慢|最便宜|最弱|最差|最冷门|最冷|最不卷|垫底|最好进|最容易进|最好做|最容易做"
    "|竞争最小|最不受欢迎|最不火|卖得最差|下滑最|下滑得最|降得最|掉得最|萎缩最|缩水最|跌得最|降幅最大|下降最多|跌幅最大|跌最多"
    "|卖不动|不好卖|最不能卖|尾部|落后|排在最后|最后面|末位|拉胯|排名靠后|排在后面|靠后"
    "|拖后腿|拖的后腿|拖了后腿|扯后腿|拖累"
)  # checked before the high words: 降幅最大 is a bottom, 最好进 the least competition
_ZH_LOW_CHARS = "低少小慢弱差冷短轻薄窄次难"
GENERIC_LOW_ZH = rf"最(?:[{_ZH_LOW_CHARS}]|不[\u4e00-\u9fff])"
GENERIC_HIGH_ZH = (
    rf"最(?!近|新|后|终|初|早|起码|主要|常|大限度|高可能|好是|好能|好还是|[{_ZH_LOW_CHARS}]|不)"
    r"[\u4e00-\u9fff]"
)
"""Any 最 + adjective is a superlative (最抢手, 最激烈): low when the adjective is; never
最近, 最新, 最后, 最主要."""
HIGH_ZH += "|" + GENERIC_HIGH_ZH
LOW_ZH += "|" + GENERIC_LOW_ZH
_NOT_EST = (
    "interest|test|request|suggest|honest|latest|earliest|harvest|invest|protest|contest"
    "|manifest|digest|chest|nest|pest|quest|vest|(?:south|north|mid)?west|rest|modest|forest"
    "|guest|priest|arrest|attest|conquest|inquest|unrest|lest|jest|zest|crest|behest|newest"
    "|oldest|fastest-growing|shallowest|mildest"
)
GENERIC_HIGH_EN = rf"(?!(?:{_NOT_EST})\b)[a-z]{{2,}}est"
"""Any English -est adjective is a superlative (busiest, healthiest); never latest, newest
(the newest product is a subject), interest, request."""
HIGH_EN = (
    r"highest|most|largest|biggest|fastest|best|strongest|hottest|top-selling|best-selling"
    r"|fastest-growing|most popular|priciest|most expensive|deepest|leaders|leading|led"
    r"|leads?(?!\s+(?:to|shoppers|buyers|customers|people|them)\b)"
    r"|best performers|top performers|topped|runners-up|runner-up|argmax|outperforming|top selling"
    r"|most sell|highest first|high to low|from most|growing fast|growing quickly|fast-growing"
    r"|top(?=\s+(?!level\b|tier\b)(?:[a-z-]+\s+)?(?:brands?|products?|sellers?|categories|keywords?"
    r"|items?|skus?|leaves|campaigns?|search terms?|queries)\b)"
    r"|top-rated|best-rated|most-reviewed|best-reviewed"
    r"|drove (?:that|it|this|the (?:growth|rise|increase))|driving (?:that|the) (?:growth|rise)"
    rf"|{GENERIC_HIGH_EN}"
)
LOW_EN = (
    r"lowest|(?<!at )least|fewest|smallest|slowest|cheapest|weakest|worst|least crowded"
    r"|declined the most|dropped the most|fell the most|shr[ua]nk the most|biggest drop"
    r"|easiest to enter"
    r"|least popular|steepest(?:\s+[\w-]+){0,3}\s+(?:decline|drop|fall)|laggards"
    r"|worst performers|at the bottom|bottom of|last place|argmin|most bad|lagging|weakest"
    r"|bottom quartile|in the tail|searched least|tail end|poorest|thinnest|shortest"
    r"|lightest|narrowest|quietest|slimmest|lowest-rated|worst-rated|worst-selling|shallowest|mildest"
    r"|near the bottom|worst[- ]sellers?"
    r"|(?:dragged|dragging|pulled|held|holding) (?:it |them |that )?(?:down|back)"
)
IMPLIED = {"cheapest": "price", "priciest": "price", "most expensive": "price", "最便宜": "price",
           "最贵": "price"}  # fmt: skip
"""Superlatives that name their measure."""
NOT_WANTED = re.compile(r"(?:无需|不需要|不用|不要|没必要|\bno need (?:for|to)|\bwithout)\s*$", I)
LOW = re.compile(rf"{LOW_ZH}|\b(?:{LOW_EN})\b", I)
ASCENDING = re.compile(
    r"从低到高|由低到高|从小到大|由小到大|从便宜到贵|由便宜到贵|从少到多|升序"
    r"|\bascending\b|\b(?:from )?low to high\b|\b(?:from )?cheap(?:est)? to (?:most )?expensive\b"
    r"|\b(?:from )?(?:the )?(?:lowest|least|smallest|fewest|cheapest|worst)[\s-]+to[\s-]+(?:the )?"
    r"(?:highest|most|largest|biggest|best)\b|\bworst first\b"
    r"|\b(?:lowest|least|smallest|fewest|cheapest|weakest|worst)(?:[\s-]+[a-z]+)?\s+first\b",
    I,
)
K_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("top", re.compile(rf"\b(?:{HIGH_EN})\s+{EN_COUNT}\b|\b{EN_COUNT}\s+(?:{HIGH_EN})\b", I)),
    ("bottom", re.compile(rf"\b(?:{LOW_EN})\s+{EN_COUNT}\b|\b{EN_COUNT}\s+(?:{LOW_EN})\b", I)),
    ("top", re.compile(rf"(?:{HIGH_ZH})(?:[^，,。？?；;\d{CN_NUM}]{{0,3}}的)?\s*{COUNT}")),
    ("bottom", re.compile(rf"(?:{LOW_ZH})(?:[^，,。？?；;\d{CN_NUM}]{{0,3}}的)?\s*{COUNT}")),
    ("top", re.compile(rf"{COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{HIGH_ZH})")),
    ("bottom", re.compile(rf"{COUNT}\s*个?[^，,。？?；;]{{0,12}}?(?:{LOW_ZH})")),
    ("bottom", re.compile(rf"(?:\bbottom|倒数第?|末尾|(?<=[和与、])\s*后)[\s-]*{NUM}", I)),
    ("bottom", re.compile(rf"(?:(?<![之以最])后|排名后|排在后)\s*{COUNT}\s*(?:名|位)")),
    ("bottom", re.compile(rf"\bbottom[\s-]*{EN_COUNT}\b", I)),
    ("top", re.compile(
        rf"\b(?:which|what|the)\s+{EN_COUNT}\s+(?:[\w-]+\s+){{0,3}}?"
        r"(?:lead|leading|sell best|sell the most|top the list)\b", I)),
]  # fmt: skip
PLAIN_COUNTS = [
    re.compile(
        rf"(?:\btop|排名前|前)[\s-]*{NUM}(?![\d{CN_NUM}]|\s*(?:天|周|年|个?月|日|星期|礼拜))", I
    ),
    re.compile(rf"\btop[\s-]*{EN_COUNT}\b", I),
    re.compile(rf"头部\s*{COUNT}|(?<![{CN_NUM}\d])(十|五|三|二十|百)大(?!小)"),
    re.compile(rf"(?:列|给我列|给我|来|挑|选|找)\s*{COUNT}\s*(?:个|款|家|名|条|种)(?!月)"),
    re.compile(rf"\b(?:first|only|just)\s+{EN_COUNT}\b(?!\s*(?:months?|years?|days?|weeks?))", I),
    re.compile(
        rf"\b(?:give(?: me)?|show me|list|pick|name)\s+(?:the\s+)?{EN_COUNT}\b"
        r"(?!\s*(?:months?|years?))"
        rf"|\b{EN_COUNT}\s+of them\b|\bas many as\s+{EN_COUNT}\b",
        I,
    ),
]
"""Counts that say how many, not which way: "前3个", "top 5", "give me ten" rank the way
the clause's superlative does (down by default)."""
ORDER_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("top", re.compile(
        rf"{HIGH_ZH}|爆款|爆品|大单品|热销|卖得好的|好卖的|亚军|第二名|\b(?:{HIGH_EN})\b"
        r"|\b(?:best|biggest|top)[- ]?sellers?\b", I)),
    ("bottom", LOW),
    ("bottom", ASCENDING),  # "list them from cheap to expensive"
    # an ordering without a superlative: "按竞争强度从低到高排一下", "rank them by buyers"
    ("top", re.compile(
        r"排(?:一下|个序|序|名|列|下)|来排|排的话|排(?=\s*(?:[。？?！!，,；;]|$))|\brank(?:ed|ing)?\b"
        r"|\bsort(?:ed)?\b|\border(?:ed)? by\b|\barrange(?:d)?\b"
        r"|\bdescending\b|\bin (?:the )?order of\b", I)),
]  # fmt: skip
SALES = re.compile(
    r"爆款|爆品|大单品|热销|卖[得的](?:最)?好|卖[得的]最少|卖爆|卖不动|好卖|畅销"
    r"|best[- ]?sell|top[- ]?sell|most sell"
    r"|\bsold the (?:most|least)\b|\bsells? (?:the )?(?:most|least|best|worst)\b"
    r"|卖[得的]最火|\bhottest\b|\bmost popular\b",
    re.I,
)
"""Superlatives of selling: they rank products even where the question names none."""
PRICE_ASKED = re.compile(r"(?:多少钱|什么价位?|啥价位?|什么价格?|哪个价位|哪种价位)\s*的\s*$")
"""A price asked right before a superlative ("卖多少钱的最好卖"): prices are ranked."""
ORDERING = re.compile(r"排|rank|sort", re.I)
FIRST = re.compile(
    r"(?<!季)第一(?!季|次|个月|周|天|批|步|要务|优先)|冠军|销冠"
    r"|(?<!\bour )(?<!\bmy )(?:\bnumber one\b|\bno\.\s*1\b|#1\b)"
    r"(?!\s+(?:priority|concern|goal|question|problem|issue|reason|thing|rule|tip|brand|focus|fan))"
    r"|\branks? first\b|\bfirst place\b",
    I,
)
LAST = re.compile(r"倒数第一|\branks? last\b|\bdead last\b", I)
CLAUSE_K = re.compile(
    rf"\b(?:which|what|the|list|name|give me)\s+{EN_COUNT}\b"
    rf"|(?:哪|前)\s*{COUNT}\s*(?:个|款|家|类|名)?",
    I,
)
TIME_TARGET = re.compile(
    r"(?<![\d一二三四五六七八九十])月份|哪个月|哪几个月|几月|什么时候|何时|\b(?:which|what)\s+(?:months?|time|season)\b"
    r"|\btime of year\b|\bwhen\b",
    I,
)  # a question about *when* ranks months, not things
ONE = re.compile(
    r"哪个|哪一个|哪款|哪一款|哪一类|哪家|那款|那一款|那个"
    r"|(?:\bthe|'s|\bmy|\bour|\byour|\btheir)\s+(?:single\s+)?best[- ]seller\b(?!s)"
    r"|\bthe\s+(?:[a-z]+est|(?:most|least)\s+[a-z]+)(?:[\s-]+[a-z]+ing)?\s+one\b"
    r"|\bwhich one\b|\bwhich is the\b|\bwhich of\b|\bsingle\b|\bonly one\b|\bjust one\b"
    r"|只要一个|一个就行|那一个|那一款|\bargmax\b|\bargmin\b|是谁|"
    r"\bwho (?:sold|sells|has|had|is|was|leads|led|grew|got|made|earned|took)\b|"
    r"\b(?:is|was) the (?:\w+est|most|least|best|worst)\b",
    I,
)
WHICH = re.compile(r"\bwhich\b", I)
SECOND = re.compile(r"\brunner-up\b|\bsecond[- ]place\b|亚军|第二名", I)
"""The one right after the leader: a top 2."""
ZH_RANKED_NOUN = re.compile(
    r"[\u4e00-\u9fff]{0,2}?的(?:那)?(?:型号|款|单品|商品|产品|品牌|牌子|类目|子类目|叶子类目|细分类目"
    r"|宝贝|关键词|搜索词|词|店|店铺|卖家|商家|价格带|价位段|活动|[一二三]级类目|小类|子类)"
)
ZH_PLURAL = re.compile(
    r"哪些|几个|几款|几家|几类|那些|这些|有哪|都有|前几|们|[\d一二两三四五六七八九十]+\s*[个款家类名]"
)
"""A noun of ranked things right after a Chinese superlative, and the words that make it several."""
WH_ANY = re.compile(r"\b(?:which|what|who|whose)\b|哪|谁", I)
THOSE = re.compile(r"那几个|那几款|那几家|那些|\bthose\b|\bthe ones\b", I)
"""Words that point at the ranked things themselves ("尾部那几个")."""
ORDERED = re.compile(
    r"从高到低|从多到少|由高到低|降序|排|\brank|\bsort|\border(?:ed)? by\b|\bhighest first\b"
    r"|\bdescending\b"
    r"|\bfrom most\b|\bhigh to low\b",
    I,
)
ORDER_BY = re.compile(r"按|\bby\b|\bsort|\brank|\blist\b|\border of\b|\bordered\b", I)
NOT_A_RANKING = re.compile(
    r"最(?:好的|佳的?)[\u4e00-\u9fff]{0,2}?(?:办法|方法|方式|时机|时间|时候|月份|策略|节奏)"
    r"|\bbest (?:way|time|month|practice|approach)\b|\bmost of\b"
    r"|(?<!\bthe )\bmost (?:people|shoppers|buyers|customers|consumers)\b|大部分人|大多数人|多数人"
    r"|(?:最大|最主要|最常见|最核心|最多)的?(?:卖点|痛点|槽点)"
    r"|\b(?:biggest|main|top|most common|key)\s+(?:selling|pain) points?\b"
    r"|\b(?:selling|pain) points?\s+(?:\w+\s+){0,2}(?:work|works|worked|land|lands) best\b"
    r"|\bcomplain\w*\s+about\s+(?:\w+\s+)?most\b|\bmost often\b"
    r"|最(?:高|严|优)的?(?:标准|要求|水平|优先级|级别|规格|品质)|最多\s*[\d一二两三四五六七八九十]+\s*(?:句|字|段|行|点)"
    r"|\b(?:top|highest|best|premium)[- ](?:quality|standards?|priority|priorities|tier quality)\b"
    r"|\bat (?:the )?most\b|\bat (?:the )?best\b"
    r"|\bhow (?:does|did|do|is|are|was)\s+(?:\S+\s+){1,3}?rank(?:ed|ing)?\b"
    r"|排(?:名)?第几|排在第几|排名(?:如何|怎么样|怎样)",
    I,
)
PAIR = re.compile(
    rf"前\s*{NUM}\s*(?:个|名|款)?\s*(?:和|与|、|及)\s*后\s*{NUM}"
    rf"|\btop\s*{EN_COUNT}\s+and\s+(?:the\s+)?bottom\s*{EN_COUNT}\b",
    I,
)
PAIRED = re.compile(r"和|与|跟|及|、|\band\b|\bvs\.?|\bversus\b", I)
"""Words joining two rankings of one clause ("最便宜的三款和最贵的三款")."""
AND_WHICH = re.compile(r"^\W*(?:and\s+|以及|还有|和)?\s*(?:which|what|哪个|哪一个|哪款|哪些|最)", I)
"""A clause that asks a second ranking of the same things ("…, and which are the laggards")."""
WH = re.compile(r"\b(?:which|what)\b", I)
MAIN_BAND = re.compile(
    r"主力价格带|主要价格带|主价格带|主力价位|主流价格带|卖得最好的价格带|主要卖(?:在)?哪个?(?:价位|价格带)|"
    r"哪个(?:价格带|价位段|价格区间|价格段|价位)(?:卖得?最(?:好|多)|最(?:好卖|畅销|受欢迎|能卖))|"
    r"\b(?:which|what) price (?:band|range|tier|point|bracket)s? (?:do |does |did )?most\b|"
    r"\bsweet[- ]spot\b(?:\s+price(?:\s+(?:band|range|tier|point))?)?|"
    r"\bthe (?:price )?(?:band|range|tier) where most\b(?:\s+[\w-]+){0,4}?"
    r"\s+(?:sales|buyers|gmv|revenue)\b"
    r"(?:\s+(?:happen|come|fall|are))?|"
    r"\bwhich price (?:band|range|tier)(?:\s+(?:of|for|in)\s+(?:[\w'-]+\s+){1,3}?)?\s*"
    r"(?:sells|sold) (?:the )?(?:most|best)|"
    r"(?:卖得?最(?:好|多)|最畅销|销售额最高|销量最高|GMV最高)的(?:那个|那一?档)?"
    r"(?:价位段|价格带|价格区间|价格段|价位)|"
    r"\bprice (?:band|range|tier) (?:where|in which|that)\b[^,.?;]{0,40}?\b(?:most|best|highest)\b"
    r"(?:\s+(?:money|gmv|sales|revenue))?|"
    r"\bmain price band\b|\bmain band\b|\bdominant price (?:band|tier|range)\b"
    r"|\bcore price band\b|"
    r"主流价位|价位.{0,4}最多人买|"
    r"\bprice (?:band|range|tier) most (?:people|shoppers|buyers) buy\b|"
    r"\bcarries most of the (?:volume|sales|gmv)\b|"
    r"\bbest-selling price band\b|\bmain price range\b|"
    r"\bmost popular price (?:band|range|tier|point)\b|最受欢迎的(?:价格带|价位|价格区间)|"
    r"(?:大部分|大多数|多数)人(?:买|选)的?是?(?:哪个|什么)(?:价位|价格带|价格区间|价格段|价钱)|"
    r"\bwhat price (?:do |does )?most (?:people|shoppers|buyers|customers) (?:buy|pay|choose)\b",
    I,
)
ROUND = re.compile(
    r"(?:过|破|上|超)(十|百|千)?(万|亿)(?![\u4e00-\u9fff]?倍)"
    r"|(?:过|破|超)()(百|千)(?![万亿倍])|上()(百|千)(?=的)"
)
"""A round threshold without a number: "月销过万" (over ten thousand), "破百万", "评论过千",
"月销上千的" (上千 alone is "about a thousand": a threshold only as a modifier)."""
ROUND_TIMES = {"十": 10.0, "百": 100.0, "千": 1e3}
AMOUNT = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
"""A number as written in a threshold: 4.5, 2000, 2,000."""
COUNTED = {
    "review_count": r"条?(?:评论|评价)|reviews?|ratings",
    "buyers": r"(?:个|位)?(?:买家|人买)|buyers?|shoppers|customers",
    "units": r"件|单|units?|pieces|orders",
    "sellers": r"家(?:店|商家|卖家)?|(?:个)?(?:卖家|商家|店铺)|sellers?|shops|stores",
    "rating": r"星|stars?",
}
"""The count nouns after a threshold's number, and the measures they count."""
_COUNT_NOUN = "|".join(COUNTED.values())
COUNT_NOUN = re.compile(rf"\s*((?:{_COUNT_NOUN})(?![A-Za-z]))", re.I)
NOUN_BEFORE = re.compile(
    "(" + "|".join(p for m, p in COUNTED.items() if m != "units") + r"|\bshares?)"
    r"\s*(?:数|量)?\s*(?:was|is|are|were|of|之)?\s*$",
    re.I,
)
"""A count noun (or "share") written right before a threshold: "评论过千", "a share above
20%" (not 件 / 单: "每单满300")."""
STARS = {"分", "星", "stars", "star"}


def count_measure(noun: str) -> str | None:
    return next((m for m, p in COUNTED.items() if re.fullmatch(p, noun, re.I)), None)


AT_LEAST = re.compile(
    rf"{AMOUNT}\s*(万|亿|千|分|元|块|%|k\b|stars?\b)?\s*(?:((?:{_COUNT_NOUN})(?![A-Za-z]))\s*)?"
    r"((?:及|或)?以上|(?:及|或)?以下|之上|之下|\+"
    r"|or (?:higher|more|above|better|less|lower|fewer)|and (?:above|up|below|over))",
    re.I,
)
THRESHOLD = re.compile(
    r"(破了?|突破|超过|超出|高于|大于|多于|不超过|不高于|不多于|不低于|至少|低于|少于|不足|不到|过(?=\s*\d)"
    r"|\bpricier than\b|\bcheaper than\b|\bgreater than\b|\bhigher than\b|\blower than\b"
    r"|>=?|<=?|≥|≤|\babove\b|\bover\b|\bexceeds?\b|\bexceeding\b|\bnot more than\b"
    r"|\bno more than\b|\bnot over\b|\bunder\b|\bbeneath\b"
    r"|\bmore than\b|\bat least\b|\bbelow\b|\bless than\b|\bfewer than\b)\s*([¥$])?\s*"
    rf"({AMOUNT[1:-1]}|[{CN_NUM}]+)\s*(万|亿|千|倍|元|块|分|k\b|m\b|million\b|billion\b|yuan\b"
    r"|rmb\b|%|stars?\b)?",
    I,
)
_RANGE_SCALE = r"万|亿|[km]\b|million\b|billion\b"
RANGE = re.compile(
    rf"(?:在|\bbetween\s+)(?P<cur>[¥$])?(?P<lo>{AMOUNT[1:-1]})\s*(?P<lo_scale>{_RANGE_SCALE})?"
    r"\s*(?:元|块)?\s*(?:到|至|-|~|\band\b|\bto\b)\s*(?P<cur2>[¥$])?"
    rf"(?P<hi>{AMOUNT[1:-1]})(?!\d|[,.]\d|\s*(?:个?月|年|号|日|点|周|天|months?|years?|days?|weeks?))"
    rf"\s*(?P<hi_scale>{_RANGE_SCALE})?\s*(?:元|块|yuan\b|rmb\b)?",
    I,
)
"""A range of values ("价位在200到500之间", "between ¥100 and ¥300")."""
PRICE_BEFORE = re.compile(r"(?:价位|价格|售价|价钱|\bpriced?|\bcosts?|\bcosting)\s*$", I)
CURRENCY = {"¥", "$", "元", "块", "yuan", "rmb"}
"""A threshold in money is a price threshold (the question names no other measure)."""
SCALE = {"万": 1e4, "亿": 1e8, "千": 1e3, "百": 100.0, "k": 1e3, "m": 1e6, "million": 1e6,
         "billion": 1e9}  # fmt: skip
SELLERS = re.compile(
    r"\b(?:best|biggest|top)[- ]?sellers?\b|\bbest-selling\b"
    r"|\btop\s+(?:\d+|three|five|ten|twenty)\s+sellers?\b",  # "top 5 sellers": products
    I,
)
TARGETS: list[tuple[str, re.Pattern[str]]] = [
    ("band", re.compile(
        r"价格带|价位段|价格段|价格区间|\bprice (?:bands?|ranges?|tiers?)\b|\bbands?\b|\btiers?\b"
        r"|\branges?\b", I)),
    ("keyword", re.compile(
        r"关键词|搜索词|热搜词|热词|(?<=[个的])词|\bkeywords?\b|\bsearch terms?\b|\bqueries\b", I)),
    ("product", re.compile(
        r"商品|产品|单品|爆款|爆品|宝贝|竞品|款|(?<=[些个的])品(?![类牌质])"
        r"|\bproducts?\b|\bitems?\b|\bskus?\b"
        r"|\b(?:best|top)[- ]?sellers?\b|\blistings?\b"
        r"|\btop\s+(?:\d+|three|five|ten|twenty)\s+sellers?\b", I)),
    ("category", re.compile(
        r"类目|品类|小类|细分|分类|\bcat[ae]gor(?:y|ies)\b|\bleaf\b|\bleaves\b|\bniches?\b"
        r"|\bsub-?cat[ae]gor(?:y|ies)\b|\bsegments?\b", I)),
    ("campaign", re.compile(r"活动|大促|\bcampaigns?\b|\bpromotions?\b", I)),
    ("brand", re.compile(r"品牌|牌子|\bbrands?\b", I)),
]  # fmt: skip

WHAT_SELLS = re.compile(
    r"(?:\bwhat(?:'s| is| are)?\s+(?:sells?|sold|selling)|(?:什么|啥)(?:东西)?卖得?)\s*$", re.I
)
"""A selling superlative asked of "what" ("what sells best", "啥卖得最好"): products."""

JOINED = re.compile(r"(?:但|但是|而且|并且|同时|却|又|\bbut\b|\byet\b|\bwhile\b|\band also\b)", I)
"""Words that join a second superlative to the first in one clause ("竞争最不激烈、但均价最高")."""

ZH_STOPS = "，,。？?；;！!"
"""Punctuation that ends a Chinese clause."""
BARE_COUNT = re.compile(r"[\d一二两三四五六七八九十]+\s*[个款家类名](?![\u4e00-\u9fff])")
"""A count with no noun after it, anywhere: it counts what the superlative ranks."""

STOP = {"of", "in", "by", "order", "for", "with", "the", "a", "an", "to", "and", "or", "on",
         "at", "from", "than", "is", "are", "was", "were"}  # fmt: skip
AFTER_NOUN = {"under", "over", "below", "above", "among", "during", "between", "within",
               "this", "last", "per", "each", "across", "around", "like", "that", "which",
               "right", "now", "so", "far", "overall", "ever", "here", "there", "these",
               "those", "it", "them", "please", "pls", "vs", "versus"}  # fmt: skip
"""Words after a selling superlative's noun that end the noun phrase."""
SINGULAR_VERBS = {"is", "was", "has", "does", "sells", "grows", "gets", "makes"}
PLURAL_VERBS = {"are", "were", "have", "do", "sell", "grow", "get", "make"}
