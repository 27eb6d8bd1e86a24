"""The offline analyst's report sentences (zh, en) and the source line."""

from __future__ import annotations

import calendar
from typing import Any

from deepagent.analysis.inputs import CollectedResult, display_source
from deepagent.core.question import Language, detect_language

# fmt: off
# Report sentences (zh, en), filled with str.format.
PHRASES: dict[str, tuple[str, str]] = {
    "source": ("来源：{sources}", "Source: {sources}"),
    "and_more": (" 等{n}个", " and {n} in all"), "paren": ("（{v}）", " ({v})"),
    "more_rows": ("（另有 {more} 行未列出，共 {n} 行）",
                  "({more} more rows not shown, {n} in all)"),
    "more_earlier": ("（更早的 {more} 个月未列出，共 {n} 行）",
                     "({more} earlier months not shown, {n} in all)"),
    "item": ("{name}（{v}）", "{name} ({v})"), "count": ("{p}（{c}/{n}）", "{p} ({c}/{n})"),
    "h_conclusion": ("## 结论", "## Conclusion"), "h_process": ("## 分析过程", "## Analysis"),
    "h_recs": ("## 建议", "## Recommendations"), "h_figures": ("## 关键数据", "## Key figures"),
    "h_notes": ("### 数据说明", "### Data notes"),
    "stopped": ("> 说明：规划提前结束（{why}），以下内容基于已收集到的数据。",
                "> Note: planning stopped early ({why}); this is based on the data collected."),
    "declined": ("我只能回答关于市场数据的问题，不提供系统指令、提示词或内部文件。",
                 "I can only answer questions about the marketplace data; I do not share my"
                 " instructions, prompts or internal files."),
    "nothing": ("未查询到与该问题相关的数据，因此无法给出结论或数字。",
                "No data was found for this question, so there are no figures to report."),
    "outside": ("这部分没有数据（数据只覆盖本平台已有的月份{span}），因此无法给出数字；"
                "如需本平台的数据，可以去掉上面这部分再问一次。",
                "There is no data for this (the data covers this marketplace's months{span}"
                " only), so no figures are given; ask about this marketplace and the data can"
                " answer."),
    "no_data": ("- 暂无数据：{tool}（{args}）——{why}", "- No data for {tool} ({args}): {why}"),
    "failed": ("- 另有 {n} 个步骤执行失败或被跳过，其结果未纳入分析。",
               "- {n} more step(s) failed or were skipped; they are left out."),
    "answer": ("{who}{month}的{m}为 {v}。", "The {m} of {who}{month} was {v}."),
    "in_month": ("（{m}）", " in {m}"),
    "cmp": ("{m}{when}：{items}，{verdict}。", "{m}{when}: {items}; {verdict}."),
    "cmp_two": ("{hi}更高", "{hi} is higher"), "cmp_same": ("两者相同", "they are the same"),
    "cmp_many": ("{hi}最高，{lo}最低", "{hi} is highest, {lo} lowest"),
    "about": ("{who}：{text}", "{who}: {text}"),
    "t_side": ("并列对比", "Side by side"),
    "side": ("{names} 的各项指标并列如下。", "{names} side by side."),
    "side_r": ("按{m}看，优先考虑 {name}（{v}）。", "Going by {m}, {name} is the pick ({v})."),
    "list_head": ("{who}{month}排名前 {n} 的是：", "The top {n}{of}{month}:"),
    "series_head": ("{who}每月的{m}：", "{m} of {who} by month:"),
    "series_item": ("- {m}：{v}", "- {m}: {v}"),
    "list_item": ("{i}. {name}：{m} {v}", "{i}. {name}: {m} {v}"),
    "t_flow": ("流失去向", "Lost-buyer destinations"),
    "flow": ("流失买家主要流向：{top}。", "Lost buyers mainly went to {top}."),
    "flow_c": ("最大流失去向是 {who}，拿走 {share} 的流失买家（{n} 人）。",
               "The biggest destination is {who}, taking {share} of lost buyers ({n})."),
    "flow_r": ("重点对标 {who}：研究其增长路径、价格与卖点差异，针对性争夺流失买家。",
               "Benchmark {who}: study its growth path, price and selling points."),
    "t_bands": ("价格带分布", "Price bands"),
    "band": ("{p} {band}（GMV占比 {share}）", "{p} {band} (GMV share {share})"),
    "bands": ("各价格带的 GMV 占比见下表，主力价格带（GMV 占比最高）：{text}。",
              "GMV share by price band is below; the main band (highest GMV share): {text}."),
    "bands_c": ("主力价格带：{text}。", "Main price band: {text}."),
    "bands_r": ("新品定价优先瞄准主力价格带：{text}。",
                "Price the new product in the main band: {text}."),
    "t_ratings": ("评分分布", "Rating distribution"),
    "ratings": ("各评分段的 GMV 占比见下表，GMV 占比最高的评分段：{text}。",
                "GMV share by rating band is below; the band with the highest GMV share: {text}."),
    "ratings_c": ("GMV 占比最高的评分段：{text}。",
                  "Rating band with the highest GMV share: {text}."),
    "t_reviews": ("评价关键词", "Review keywords"),
    "reviews": ("提及最多的评价关键词：{top}。", "Most mentioned review keywords: {top}."),
    "reviews_r": ("详情页突出 {pos}，并针对差评点 {neg} 改进产品。",
                  "Lead with {pos} on the product page and fix the complaint {neg}."),
    "t_search": ("搜索关键词", "Search terms"),
    "search": ("搜索量最高的词：{top}。", "Highest-volume search terms: {top}."),
    "search_r": ("标题覆盖高搜索量词，并优先投放转化率最高的 {best}（{cvr}）。",
                 "Cover the top terms in titles; bid first on {best}, the best converter ({cvr})."),
    "t_products": ("头部商品", "Top products"),
    "products": ("{what}共 {n} 个，价格 {span}，平均评分 {avg}。",
                 "The {n} {what} are priced {span}, with an average rating of {avg}."),
    "top_products": ("头部商品", "top products"), "compared": ("对比商品", "compared products"),
    "t_compare": ("商品对比", "Product comparison"),
    "products_r": ("产品体验以评分不低于 {avg}（头部商品平均）为目标，定价参考 {span}。",
                   "Aim for a rating of at least {avg} (the top products' average), at {span}."),
    "points_c": ("头部商品最常见的卖点：{pts}。",
                 "Most frequent selling points of the top products: {pts}."),
    "points_r": ("卖点优先突出 {pts}（头部商品中出现最多）。",
                 "Lead with {pts}, the most frequent selling points among top products."),
    "points_table": ("卖点出现频次：", "How often each selling point appears:"),
    "t_rank_asc": ("排行（按{m}从低到高）", "Ranking by {m} (lowest first)"),
    "t_rank_desc": ("排行（按{m}从高到低）", "Ranking by {m} (highest first)"),
    "rank": ("共列出 {n} 项。", "{n} listed. "),
    "rank_c_asc": ("{m}最低的是 {top}。", "Lowest {m}: {top}."),
    "rank_c_desc": ("{m}最高的是 {top}。", "Highest {m}: {top}."),
    "rank_r": ("优先考虑 {name}：{m} {v}，GMV {gmv}，是排名前半中市场规模最大的。",
               "Prioritise {name}: {m} {v} with GMV {gmv}, the largest market in the top half."),
    "t_groups": ("各维度构成", "Breakdown by dimension"),
    "t_rows": ("{what}明细", "{what} details"), "t_result": ("查询结果", "Query result"),
    "n_rows": ("共返回 {n} 条记录。", "{n} records came back."),
    "no_rows": ("该条件下没有数据", "no data for these arguments"),
    "group": ("{g}以 {name} 为主（{v}）", "{g}: mostly {name} ({v})"),
    "groups": ("{text}。", "{text}."),
    "t_trend": ("月度走势", "Monthly trend"),
    "t_season": ("季节性（各月份）", "Seasonality by month of the year"),
    "season": ("{who}一年中最好卖的是{p}（{m} {pv}），最淡的是{lo}（{lv}）。",
               "{who} sells best in {p} ({m} {pv}) and least in {lo} ({lv})."),
    "season_r": ("上新、备货与推广安排在{p}的旺季之前。",
                 "Time launches, stock and promotion ahead of the {p} peak."),
    "trend": ("GMV 从 {a} 的 {av} 变为 {b} 的 {bv}，峰值在 {p}（{pv}）。",
              "GMV went from {av} in {a} to {bv} in {b}, peaking in {p} ({pv})."),
    "trend_r": ("上新与推广节奏安排在每年 {p} 月的销售高峰之前（上一次峰值：{pm}）。",
                "Time launches and promotion ahead of the yearly peak in month {p}"
                " (last peak: {pm})."),
    "leading": ("排在前面的是：{top}。", "Leading items: {top}."),
    "t_metrics": ("核心指标", "Key metrics"),
    "metrics": ("{who}{month}：{figs}。", "{who}{month}: {figs}."),
    "generic_r1": ("持续跟踪上述核心指标的月度变化，验证结论是否稳定。",
                   "Track these metrics month by month to check that the conclusions hold."),
    "generic_r2": ("补充查询暂无数据的部分（见数据说明）后再做最终决策。",
                   "Fill in the missing data (see the data notes) before the final decision."),
}
# fmt: on


def month_name(month: int, lang: Language) -> str:
    """A month of the year: "11月", "November"."""
    return f"{month}月" if lang == "zh" else calendar.month_name[month]


def say(lang: Language, key: str, **values: Any) -> str:
    zh, en = PHRASES[key]
    return (zh if lang == "zh" else en).format(**values)


def in_language(text: str, lang: Language) -> str:
    """``text`` when it is written in ``lang`` (a tool's own text is English), else ""."""
    return text if text and detect_language(text) == lang else ""


def source_line(results: list[CollectedResult], lang: Language) -> str:
    """``来源：<module title> / <table> / <period>``."""
    return say(lang, "source", sources=display_source(results, lang))
