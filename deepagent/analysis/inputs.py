"""What the Analysis node reads, and how to read it.

The analyst (offline templated or model-backed) sees the question, the context
parameters, the skills' analysis guidance, the TodoList and everything the executor
collected, one ``CollectedResult`` per action (per copy for ``for_each`` actions).
Shared by both analysts: readers of the collected data by its shape (rows, names,
metric fields, values and sources as shown); what the question asks is read in ``asked``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from pydantic import Field, model_validator

from deepagent.analysis.asked import QuestionType, asked_metrics, classify_question
from deepagent.analysis.shapes import expand_groups, pair_name
from deepagent.core.question import Language, detect_language
from deepagent.core.schema import JSON, Strict, TodoItem, ToolResult
from deepagent.core.vocab import ActionStatus
from deepagent.requirements.model import CoverageItem

ResultStatus = ActionStatus


class CollectedResult(Strict):
    """The outcome of one executed action (one copy of a ``for_each`` action)."""

    action_id: str
    tool: str
    module: str = ""
    args: dict[str, JSON] = Field(default_factory=dict)
    status: ResultStatus
    source: str = Field(default="", description="module title / table / period")
    plain_text: str = ""
    data: JSON = None
    item_index: int | None = Field(default=None, description="for_each copy number")
    depends_on: list[str] = Field(
        default_factory=list, description="the actions whose data this one's arguments read"
    )

    @classmethod
    def from_tool_result(
        cls,
        action_id: str,
        tool: str,
        result: ToolResult,
        *,
        module: str = "",
        args: dict[str, JSON] | None = None,
        item_index: int | None = None,
    ) -> CollectedResult:
        return cls(
            action_id=action_id,
            tool=tool,
            module=module,
            args=dict(args or {}),
            status=result.status,
            source=result.source,
            plain_text=result.plain_text,
            data=result.data,
            item_index=item_index,
        )


class AnalysisInput(Strict):
    """Everything the analyst reads. ``language`` defaults to the question's language and
    ``question_type`` None means "classify the question" (see ``classify_question``)."""

    question: str = Field(min_length=1)
    language: Language = "en"
    question_type: QuestionType | None = None
    params: dict[str, JSON] = Field(default_factory=dict, description="context parameters")
    skills: list[str] = Field(default_factory=list, description="skill bodies (markdown)")
    todo_list: list[TodoItem] = Field(default_factory=list)
    collected: list[CollectedResult] = Field(default_factory=list)
    stop_reason: str | None = Field(default=None, description="why a guard stopped planning")
    conversation: list[str] = Field(default_factory=list, description="earlier turns")
    subagent: bool = Field(default=False, description="conclusions and key figures only")
    coverage: list[CoverageItem] = Field(
        default_factory=list, description="every requirement with its coverage status"
    )
    measures: list[list[str]] = Field(
        default_factory=list,
        description="the data fields of each measure the question asks for, in its order",
    )
    focus: dict[str, str] = Field(
        default_factory=dict,
        description="row values the question's aspects narrow to (complaints: sentiment negative)",
    )

    @model_validator(mode="before")
    @classmethod
    def _default_language(cls, values: Any) -> Any:
        if isinstance(values, dict) and values.get("language") is None:
            values = {**values, "language": detect_language(str(values.get("question", "")))}
        return values

    @property
    def kind(self) -> QuestionType:
        """The question type: the given one, else classified from the question; a
        comparison on two or more figures ("which is bigger, and which has more sellers")
        is weighed, not looked up."""
        if self.question_type:
            return self.question_type
        compared = any(c.kind == "comparison" for c in self.coverage)
        if compared and len(self.measures) >= 2:
            return "analysis"
        return classify_question(self.question)


# --- Reading collected data by its shape (not by tool name) -----------------------------

# fmt: off
# Column and word labels (zh, en): data fields, and "@" words.
LABELS: dict[str, tuple[str, str]] = {
    "tgi": ("TGI", "TGI"), "@group": ("维度", "Dimension"),
    "total_gmv": ("总GMV", "Total GMV"), "total_units": ("总销量", "Total units"),
    "gmv": ("GMV", "GMV"), "gmv_share": ("GMV占比", "GMV share"), "share": ("占比", "Share"),
    "competition_index": ("竞争指数", "Competition index"), "price": ("价格", "Price"),
    "rating": ("评分", "Rating"), "lost_buyers": ("流失买家", "Lost buyers"),
    "mentions": ("提及次数", "Mentions"), "search_volume": ("搜索量", "Search volume"),
    "volume_share": ("搜索量占比", "Volume share"), "uplift": ("活动增幅", "Uplift"),
    "click_rate": ("点击率", "Click rate"), "conversion_rate": ("转化率", "Conversion rate"),
    "units": ("销量", "Units"), "product_count": ("商品数", "Products"),
    "avg_price": ("均价", "Avg price"), "latest_gmv": ("最近月GMV", "Latest GMV"),
    "avg_gmv": ("月均GMV", "Avg monthly GMV"), "index": ("季节指数", "Seasonal index"),
    "month_of_year": ("月份", "Month"),
    "gmv_growth_yoy": ("GMV同比", "GMV YoY"), "gmv_growth_mom": ("GMV环比", "GMV MoM"),
    "gmv_growth_3m": ("近3月增长", "3-month growth"), "pct_of_peak": ("占峰值", "% of peak"),
    "review_count": ("评价数", "Reviews"), "buyers": ("买家数", "Buyers"),
    "sellers": ("卖家数", "Sellers"), "new_product_share": ("新品占比", "New-product share"),
    "avg_discount": ("平均折扣", "Avg discount"), "baseline_gmv": ("基线GMV", "Baseline GMV"),
    "participating_seller_share": ("参与卖家占比", "Participating sellers"),
    "share_of_month_gmv": ("占当月GMV", "Share of month GMV"), "gmv_yoy": ("同比", "YoY"),
    "share_of_parent_gmv": ("占父类目GMV", "Share of parent GMV"),
    "sibling_rank_by_gmv": ("同级GMV排名", "GMV rank among siblings"),
    "total_lost_buyers": ("流失买家总数", "Total lost buyers"), "brand": ("品牌", "Brand"),
    "sentiment": ("情感", "Sentiment"), "@positive": ("正面", "positive"),
    "@negative": ("负面", "negative"), "@neutral": ("中性", "neutral"), "@yes": ("是", "yes"),
    "@no": ("否", "no"), "@sep": ("、", ", "), "@semi": ("；", "; "), "@comma": ("，", ", "),
    "@name": ("名称", "Name"), "@category": ("类目", "Category"), "@subject": ("对象", "Subject"),
    "@metric": ("指标", "Metric"), "@value": ("数值", "Value"), "@point": ("卖点", "Selling point"),
    "@count": ("出现次数", "Products with it"), "@of_products": ("占商品比例", "Share of products"),
    "@categories": ("类目", "Category"), "@bands": ("价格带", "Price band"),
    "@products": ("商品", "Product"), "@targets": ("去向商品", "Destination"),
    "@keywords": ("关键词", "Keyword"), "@months": ("月份", "Month"), "@series": ("月份", "Month"),
    "@campaigns": ("活动", "Campaign"), "month_gmv": ("当月GMV", "Month GMV"),
    "daily_gmv": ("日均GMV", "Daily GMV"), "sibling_count": ("同级类目数", "Siblings"),
    "latest_units": ("最近月销量", "Latest units"), "market_share": ("市场份额", "Market share"),
    "launch_month_gmv": ("上新当月GMV", "Launch-month GMV"),
    "min_price": ("最低价", "Min price"), "max_price": ("最高价", "Max price"),
    "min_rating": ("最低评分", "Min rating"), "max_rating": ("最高评分", "Max rating"),
    "products_selling": ("在售商品数", "Products selling"),
    "share_of_merchant_gmv": ("占店铺GMV", "Share of shop GMV"),
    "keyword_count": ("关键词数", "Keywords"), "growth_yoy": ("同比增长", "YoY growth"),
    "volume_last_year": ("去年同期搜索量", "Volume a year earlier"),
}
# fmt: on

Row = dict[str, Any]
PARENT_KEYS = ("category", "parent", "subject", "product", "merchant", "campaign")
ID_LIKE = re.compile(r"^(id|rank|level|band_index|month_index|days|year|.*_id)$")


def name_of(obj: Row, lang: Language) -> str | None:
    """The readable name of a row or object, in ``lang`` where the data has both."""
    other = "en" if lang == "zh" else "zh"
    for key in (
        *(f"{stem}_{ln}" for ln in (lang, other) for stem in ("name", "title", "keyword")),
        *("name", "title", "keyword", "label", "month", "code"),
    ):
        if isinstance(obj.get(key), str) and obj[key]:
            name = str(obj[key])
            return f"{obj['year']} {name}" if isinstance(obj.get("year"), int) else name
    nested = (name_of(obj[k], lang) for k in PARENT_KEYS if isinstance(obj.get(k), dict))
    return pair_name(obj, lang) or next((n for n in nested if n), None)


def parent_of(data: JSON, lang: Language) -> str:
    """Who a result is about (category, product, campaign ...), from its data."""
    if not isinstance(data, dict):
        return ""
    names = [name_of(data[k], lang) for k in PARENT_KEYS if isinstance(data.get(k), dict)]
    return " · ".join(dict.fromkeys(n for n in names if n))


def main_list(data: JSON) -> list[Row]:
    """The rows of a result: the largest list of objects at the top of its data."""
    return rows_key(data)[1]


def rows_key(data: JSON) -> tuple[str, list[Row]]:
    """The key of a result's rows and the rows ("" and [] when it has none)."""
    best: tuple[str, list[Row]] = ("", [])
    for key, value in data.items() if isinstance(data, dict) else ():
        if isinstance(value, list) and len(value) > len(best[1]):
            best = (key, value) if all(isinstance(v, dict) for v in value) else best
    return best


def numeric_keys(row: JSON) -> list[str]:
    """The metric fields of an object (numbers that are not ids, ranks or counts of kind)."""
    if not isinstance(row, dict):
        return []
    return [
        k
        for k, v in row.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and not ID_LIKE.match(k)
    ]


@dataclass
class Section:
    """The ``ok`` results of one action (every copy of a for_each action) as rows, each
    with the name of what its copy was about (the parent, e.g. the category)."""

    results: list[CollectedResult]
    lang: Language
    rows: list[tuple[str, Row]] = field(default_factory=list)
    grouped: bool = False  # rows expanded from group rows (a profile's dimensions)
    asked: list[tuple[str, ...]] = field(default_factory=list)  # the question's figures

    def __post_init__(self) -> None:
        for res in self.results:
            parent, rows = parent_of(res.data, self.lang), main_list(res.data)
            expanded = expand_groups(parent, rows, self.lang)
            self.grouped = self.grouped or len(expanded) != len(rows)
            self.rows.extend(expanded)

    @property
    def merged(self) -> bool:
        return len(self.results) > 1

    @property
    def data(self) -> Row:
        first = self.results[0].data
        return first if isinstance(first, dict) else {}

    @property
    def plain(self) -> list[Row]:
        return [r for _, r in self.rows]

    def has(self, key: str) -> bool:
        return any(r.get(key) is not None for _, r in self.rows)

    def groups(self) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        for parent, row in self.rows:
            out.setdefault(parent, []).append(row)
        return out

    def parents(self) -> list[str]:
        return [p for p in dict.fromkeys(parent_of(r.data, self.lang) for r in self.results) if p]


def build_sections(inp: AnalysisInput) -> list[Section]:
    """One section per action with usable data, in the order the data was collected.
    Results of the ``common`` module (recognition, time) are context, not findings,
    unless they are all there is."""
    ok = [r for r in inp.collected if r.status == "ok"]
    by_action: dict[str, list[CollectedResult]] = {}
    for res in [r for r in ok if r.module != "common"] or ok:
        by_action.setdefault(res.action_id, []).append(res)
    asked = asked_metrics(inp.question, inp.measures)
    out = [Section(rs, inp.language, asked=asked) for rs in by_action.values()]
    figures = [s for s in out if not _one_month(s)]
    return figures or out  # a one-month "series" beside other data adds no figure


def _one_month(sec: Section) -> bool:
    """A series tool's answer for a single month: a figure another section holds, never
    a change or a trend."""
    return bool(sec.rows) and all(
        len(main_list(r.data)) == 1 and "month" in main_list(r.data)[0] for r in sec.results
    )


def label(key: str, lang: Language) -> str:
    pair = LABELS.get(key)
    return (pair[0] if lang == "zh" else pair[1]) if pair else key


def fmt(key: str, value: Any, lang: Language) -> str:
    """A value as shown in the report: money ¥1,234.56, ratios as %, counts 1,234."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return label("@yes" if value else "@no", lang)
    if isinstance(value, int | float):
        if any(w in key for w in ("share", "rate", "growth", "uplift", "pct", "discount", "yoy")):
            signed = any(w in key for w in ("growth", "uplift", "yoy")) and value > 0
            return f"{'+' if signed else ''}{value * 100:.1f}%"
        if (key.endswith("gmv") and "rank" not in key) or key.split("_")[-1] == "price":
            return f"¥{value:,.2f}"
        return f"{value:,}" if isinstance(value, int) else f"{round(value, 2):,}"
    if isinstance(value, list):
        return label("@sep", lang).join(fmt(key, v, lang) for v in value if v is not None)
    if isinstance(value, dict):
        return name_of(value, lang) or "-"
    return label(f"@{value}", lang) if key == "sentiment" else str(value)


@cache
def module_titles() -> dict[str, str]:
    """English module title -> Chinese title, from the registered modules' manifests."""
    from deepagent.tools.registry import ENTRY_POINT_GROUP, RegistryError, load_module

    titles: dict[str, str] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            manifest = load_module(ep.value).manifest
        except RegistryError:
            continue
        titles[manifest.title_en] = manifest.title_zh
    return titles


def display_source(results: list[CollectedResult], lang: Language) -> str:
    """``<module title> / <table> / <period>`` of the results (each distinct one once), with
    the module title in ``lang``."""
    sources: list[str] = []
    for res in results:
        head, sep, rest = (res.source or f"{res.module or '-'} / {res.tool}").partition(" / ")
        sources.append((module_titles().get(head, head) if lang == "zh" else head) + sep + rest)
    return label("@semi", lang).join(dict.fromkeys(sources))


def subagent_bullets(results: list[CollectedResult]) -> list[str]:
    """The conclusion bullets each SubAgent returned (the first bullet list of its report)."""
    bullets: list[str] = []
    for result in results:
        text = str(result.data.get("conclusion", "")) if isinstance(result.data, dict) else ""
        first = next((part for part in text.split("\n## ") if "\n- " in f"\n{part}"), "")
        own = [line[2:] for line in first.splitlines() if line.startswith("- ")]
        bullets += own or [result.plain_text[:200]]
    return bullets


def pick(items: list[list[str]], limit: int) -> list[str]:
    """Round-robin over the sections' lists: each section's first item, then seconds..."""
    out: list[str] = []
    for i in range(max((len(x) for x in items), default=0)):
        out += [x[i] for x in items if i < len(x) and x[i] not in out]
    return out[:limit]
