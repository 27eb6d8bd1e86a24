"""The case fit binds the question's own subjects, modules follow the requirements, and the
analyst answers the asked part.

- A plan that names none of the question's categories (the merchant's new products for
  "the main band of air purifiers") does not cover the subject, and a fan-out over every
  price band is not "the main band".
- A product named by id fills plans written for "my newest product" (the context's
  ``question_product``).
- A module is added when a requirement needs it (a product ranking with no product
  listing loaded), not for a qualifier ("同价位的竞品") nor for a word another aspect
  claims ("差评关键词").
- Praise is never listed for a complaints question; a lookup that cannot show an asked
  aspect becomes a report.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest, PageContext
from deepagent.analysis import AnalysisInput, CollectedResult, offline_analysis
from deepagent.core.schema import CallActions, CallHuman, FinalAnalysis
from deepagent.core.settings import Settings
from deepagent.deps import RunDeps
from deepagent.requirements.model import CoverageItem
from deepagent.requirements.vocabulary import word_pattern
from eval.harness.plan_choice import PlanChoiceCase, decide
from tests.conftest import INDEX_CACHE


@pytest.fixture(scope="module")
def loader(full_db: Path) -> ContextLoader:
    return ContextLoader.create(Settings(data_path=full_db, cache_dir=INDEX_CACHE))


async def _plan(
    loader: ContextLoader, question: str, page: PageContext | None = None
) -> list[tuple[str, dict[str, object]]]:
    planner = RunDeps.create(loader.settings, loader, use_redis=False).planner
    case = PlanChoiceCase(id="t", question=question, language="en", structure="x",
                          expect="plan", page=page)  # fmt: skip
    decision, _ = await decide(loader, planner, case)
    assert isinstance(decision.action, CallActions)
    return [(a.tool or "", dict(a.args)) for a in decision.action.actions]


async def test_the_main_band_of_the_named_category_not_the_merchants_products(
    loader: ContextLoader,
) -> None:
    question = "In the price band where air purifiers make the most money, which 5 products lead?"
    loaded = await loader.load(ContextRequest(question=question))
    purifier = next(r.ref for r in loaded.requirements.items if r.kind == "subject")
    plan = await _plan(loader, question)
    tools = [t for t, _ in plan]
    assert "list_my_new_products" not in tools, tools
    assert ("get_price_bands", {"category_id": purifier, "month": "2025-12"}) in plan
    first = loader.library.get(loaded.cases[0].id)
    assert first is not None
    top = next(a for a in first.plan if a.tool == "get_top_products")
    assert top.for_each is None  # the main band's products, not every band's


async def test_a_product_named_by_id_fills_a_plan_written_for_the_newest_product(
    loader: ContextLoader,
) -> None:
    question = "who are the main competitors of product 1474?"
    loaded = await loader.load(ContextRequest(question=question))
    assert loaded.params["question_product"]["id"] == 1474
    assert loaded.cases[0].uncovered == []  # was a shop line-up: every other plan unfillable
    rivals = {"list_competitor_products", "get_flow_analysis"}
    plan = await _plan(loader, question)
    assert any(t in rivals and a["product_id"] == 1474 for t, a in plan), plan


async def test_this_category_on_its_page_is_looked_up_not_ranked(
    loader: ContextLoader, full_db: Path
) -> None:
    """ "这个类目" on a category page is the page's category, one subject: the plan looks
    it up (the ranking cases used to win: every plan was filled with the main category, so
    none bound the subject, and "类目" read as a listing asked for)."""
    with sqlite3.connect(full_db) as db:
        (leaf,) = db.execute("SELECT id FROM categories WHERE name_zh = '面膜'").fetchone()
    page = PageContext(type="category_report", category_id=leaf)
    plan = await _plan(loader, "这个类目上个月的新品占比是多少", page)
    assert ("get_category_overview", {"category_id": leaf, "month": "2025-12"}) in [
        (t, {k: a.get(k) for k in ("category_id", "month")}) for t, a in plan
    ], plan
    assert all(t != "rank_categories" for t, _ in plan), plan


@pytest.mark.parametrize(
    ("question", "added", "not_added"),
    [
        ("Hi, top 10 top-selling sunscreens last month?", "new_product", None),
        ("我的护手霜在同价位有哪些竞品？", None, "new_product"),
        ("身体乳类目的差评关键词有哪些？", None, "search_insight"),
        ("review keywords for 破壁机", None, "search_insight"),
        ("Which of my categories benefits most from Double 11?", None, "category_trend"),
    ],
)
async def test_modules_follow_what_the_requirements_need(
    loader: ContextLoader, question: str, added: str | None, not_added: str | None
) -> None:
    loaded = await loader.load(ContextRequest(question=question))
    if added:
        assert added in loaded.modules
        score = next(s for s in loaded.module_scores if s.name == added)
        assert any(e.startswith("needed by") for e in score.evidence)
    if not_added:
        assert not_added not in loaded.modules, loaded.modules


def test_the_same_band_is_not_in_different_bands() -> None:
    same = word_pattern("同价位")
    assert same.search("我的护手霜在同价位有哪些竞品")
    assert not same.search("不同价位的表现如何")


def _summary() -> CollectedResult:
    data = {
        "product": {"id": 7, "title_zh": "护手霜", "title_en": "Hand cream"},
        "rating": 4.5,
        "top_positive": [
            {"keyword_zh": "会回购", "keyword_en": "Will buy again", "mentions": 292},
            {"keyword_zh": "质地清爽", "keyword_en": "Light texture", "mentions": 137},
        ],
        "top_negative": [{"keyword_zh": "搓泥", "keyword_en": "Pills on skin", "mentions": 104}],
    }  # fmt: skip
    return CollectedResult(action_id="s", tool="get_review_summary", status="ok", data=data,
                           source="Consumer insight / review_keywords / product 7")  # fmt: skip


@pytest.mark.parametrize("kind", ["lookup", "analysis"])
def test_a_complaints_question_never_lists_praise(kind: str) -> None:
    inp = AnalysisInput(question="What are reviewers complaining about on product 7?",
                        question_type=kind, collected=[_summary()],
                        focus={"sentiment": "negative"})  # fmt: skip
    text = offline_analysis(inp)
    assert "Pills on skin" in text
    assert "Will buy again" not in text and "Light texture" not in text


def test_a_lookup_that_cannot_show_an_asked_aspect_becomes_a_report() -> None:
    leaves = CollectedResult(
        action_id="leaves", tool="rank_categories", status="ok",
        data={"categories": [{"id": 1, "name_zh": "眼霜", "name_en": "Eye cream", "gmv": 9.0},
                             {"id": 2, "name_zh": "面膜", "name_en": "Face mask", "gmv": 5.0}]},
    )  # fmt: skip
    words = CollectedResult(
        action_id="complaints", tool="get_review_keywords", status="ok", item_index=0,
        depends_on=["leaves"],
        data={"category": {"id": 1, "name_zh": "眼霜", "name_en": "Eye cream"},
              "keywords": [{"keyword_zh": "发货慢", "keyword_en": "Slow delivery",
                            "sentiment": "negative", "share": 0.05, "mentions": 12}]},
    )  # fmt: skip
    coverage = [
        CoverageItem(requirement="a1", kind="aspect", text="叶子类目", status="covered",
                     action_ids=["leaves"]),
        CoverageItem(requirement="a2", kind="aspect", text="差评关键词", status="covered",
                     action_ids=["complaints"]),
    ]  # fmt: skip
    text = offline_analysis(AnalysisInput(question="面部护理下面每个叶子类目的差评关键词分别是什么",
                                          question_type="lookup", collected=[leaves, words],
                                          coverage=coverage))  # fmt: skip
    assert "发货慢" in text


def test_the_biggest_one_is_taken_from_the_list_not_cut_from_it() -> None:
    """ "Which second-level categories drive GMV, and which leaves lead inside the biggest
    one?": the plan reads the first row of its ranking; a count of 1 bound there would
    leave only that row of the list the question also asks for."""
    from deepagent.core.schema import ActionSpec
    from deepagent.requirements.bindings import bind_selections

    plan = [
        ActionSpec(id="subs", tool="rank_categories", args={"parent_id": 1, "limit": 10}),
        ActionSpec(id="leaves", tool="rank_categories",
                   args={"parent_id": {"$ref": "subs", "path": "categories[0].id"}}),
    ]  # fmt: skip
    one = {"rank_categories": {"order": "desc", "limit": 1, "metric": "gmv"}}
    rows = [{"id": "k1", "kind": "selection", "args": one}]
    subs = bind_selections(plan, rows)[0]
    assert subs.args == {"parent_id": 1, "limit": 10, "order": "desc", "metric": "gmv"}
    three = {"rank_categories": {"order": "desc", "limit": 3}}
    rows = [{"id": "k1", "kind": "selection", "args": three}]
    assert bind_selections(plan, rows)[0].args["limit"] == 3  # a list of 3 is still bound


async def test_what_a_month_sells_for_is_its_gmv_not_a_price(loader: ContextLoader) -> None:
    question = "空气炸锅在京东上一个月能卖多少钱？跟咱们平台上个月比呢？"
    loaded = await loader.load(ContextRequest(question=question))
    measures = [r.measure for r in loaded.requirements.items if r.kind == "measure"]
    assert measures == ["gmv"]
    price = await loader.load(ContextRequest(question="这款护手霜卖多少钱？"))
    assert [r.measure for r in price.requirements.items if r.kind == "measure"] == ["price"]


async def test_a_product_no_loaded_tool_takes_brings_its_module(loader: ContextLoader) -> None:
    loaded = await loader.load(ContextRequest(question="monthly GMV of product #15313 over 2025"))
    assert "new_product" in loaded.modules
    plan = await _plan(loader, "monthly GMV of product #15313 over 2025")
    assert ("get_product_trend", {"product_id": 15313, "start_month": "2025-01",
                                  "end_month": "2025-12"}) in plan  # fmt: skip


async def test_rising_terms_answer_only_a_question_about_rising_terms(
    loader: ContextLoader,
) -> None:
    searched = [t for t, _ in await _plan(loader, "护手霜上个月大家都在搜什么词")]
    assert "get_search_keywords" in searched and "get_rising_keywords" not in searched
    rising = await _plan(loader, "rising search terms in sunscreen compared to the same month"
                                 " last year")  # fmt: skip
    assert any(t == "get_rising_keywords" and a.get("basis") == "yoy" for t, a in rising), rising


@pytest.mark.parametrize(
    ("question", "picks"),
    [
        ("find the biggest subcategory in the snacks category, then show me the top sellers"
         " inside it", [("top", "category"), ("top", "product")]),
        ("哪些猫咪用品的叶子类目增长快？", [("top", "category")]),
        ("which sub-categories of pet supplies are growing fast?", [("top", "category")]),
    ],
)  # fmt: skip
async def test_top_sellers_and_growing_fast_are_rankings(
    loader: ContextLoader, question: str, picks: list[tuple[str, str]]
) -> None:
    loaded = await loader.load(ContextRequest(question=question))
    found = [(r.rule, r.target) for r in loaded.requirements.items if r.kind == "selection"]
    assert found == picks


async def test_a_case_reads_a_parameter_another_module_provides(loader: ContextLoader) -> None:
    """Only competitor_flow is identified, but its cases about "my new product" read the
    merchant's recent new products (a new_product provider): it runs, the cases fill, and
    where the lost buyers went is a snapshot, not a month-by-month series."""
    question = "我那款新品的流失买家都跑去买谁家了"
    loaded = await loader.load(ContextRequest(question=question))
    assert loaded.modules == ["competitor_flow", "common"]
    assert "recent_new_products" in loaded.params
    assert loaded.cases[0].uncovered == []
    tools = [t for t, _ in await _plan(loader, question)]
    assert "get_flow_analysis" in tools and "get_flow_trend" not in tools, tools


async def test_colloquial_search_words_ask_for_search_terms(loader: ContextLoader) -> None:
    loaded = await loader.load(ContextRequest(question="身体乳上个月大家都搜啥词"))
    assert [r.aspect for r in loaded.requirements.items if r.kind == "aspect"] == ["search_terms"]


async def test_the_shop_overview_answers_the_shops_total_and_its_categories(
    loader: ContextLoader,
) -> None:
    question = "我店铺上个月一共卖了多少钱，主要靠哪几个类目撑着"
    loaded = await loader.load(ContextRequest(question=question))
    assert "competitor_flow" in loaded.modules  # the shop needs a tool that takes the merchant
    assert [t for t, _ in await _plan(loader, question)] == ["get_merchant_profile"]
    products = await _plan(loader, "Which of my shop's products bring in the most GMV?")
    assert [t for t, _ in products] == ["get_merchant_products"]  # products, not categories


def test_a_list_lookup_gives_the_whole_before_its_parts() -> None:
    data = {
        "merchant": {"id": "M1", "name_zh": "演示商家", "name_en": "Demo merchant"},
        "month": "2025-12", "gmv": 12153478.37,
        "categories": [{"id": 1, "name_zh": "护手霜", "name_en": "Hand cream", "gmv": 8577381.13},
                       {"id": 2, "name_zh": "身体乳", "name_en": "Body lotion", "gmv": 1829880.94}],
    }  # fmt: skip
    shop = CollectedResult(action_id="shop", tool="get_merchant_profile", status="ok", data=data)
    question = "我店铺上个月一共卖了多少钱，主要靠哪几个类目撑着"
    inp = AnalysisInput(question=question, question_type="lookup", collected=[shop],
                        measures=[["gmv"]])  # fmt: skip
    text = offline_analysis(inp)
    assert "¥12,153,478.37" in text and text.index("¥12,153,478.37") < text.index("护手霜")


async def test_a_question_with_nothing_to_look_at_is_asked_about(loader: ContextLoader) -> None:
    """No subject, period, figure, ranking or aspect: the closest case would answer another
    question (gibberish got an audience report)."""
    planner = RunDeps.create(loader.settings, loader, use_redis=False).planner
    case = PlanChoiceCase(id="t", question="asdfghjkl qwertyuiop zxcvbnm", language="en",
                          structure="x", expect="ask")  # fmt: skip
    decision, _ = await decide(loader, planner, case)
    assert isinstance(decision.action, CallHuman), decision.action


@pytest.mark.parametrize(
    "question", ["我最近上的那几个新品都是啥，卖的怎么样", "我今年都上了哪些新品？"]
)
async def test_the_merchants_launches_are_its_new_products(
    loader: ContextLoader, question: str
) -> None:
    loaded = await loader.load(ContextRequest(question=question))
    kinds = [r.subject_type for r in loaded.requirements.items if r.kind == "subject"]
    assert kinds == ["new_product"]
    tools = [t for t, _ in await _plan(loader, question)]
    assert "list_my_new_products" in tools, tools


async def test_every_leaf_lists_them_all(loader: ContextLoader) -> None:
    question = "面部护理下面每个叶子类目的差评关键词分别是什么"
    loaded = await loader.load(ContextRequest(question=question))
    every = {r.aspect: r.every for r in loaded.requirements.items if r.kind == "aspect"}
    assert every == {"leaves": True, "complaints": False}
    ranks = [a for t, a in await _plan(loader, question) if t == "rank_categories"]
    assert ranks and int(str(ranks[-1]["limit"])) > 10  # not the case's own first five
    top = await loader.load(ContextRequest(question="面部护理下面的叶子类目里差评最多的是哪个"))
    assert not any(r.every for r in top.requirements.items if r.kind == "aspect")


@pytest.mark.parametrize(
    ("question", "declined"),
    [
        ("拼多多上面霜上个月卖了多少", True),
        ("Predict next month's sunscreen sales", True),
        ("Sunscreen top products last month. Also give me Amazon's list.", False),
        ("面霜上个月在京东卖了多少？跟我们平台比呢", False),
        ("Forecast sunscreen GMV for the next quarter from its last six months", False),
        ("could you predict next year's 618 sales of sunscreen?", True),  # no data named
    ],
)
async def test_a_question_wholly_about_another_platform_or_a_forecast_is_declined(
    loader: ContextLoader, question: str, declined: bool
) -> None:
    """Everything asked is tied to another platform or a forecast: this marketplace's
    figures would answer another question (they were planned as if the platform word were
    not there). A sentence about this marketplace, a contrast with it, or months to base
    a forecast on are planned; the analysis states the part it cannot cover."""
    planner = RunDeps.create(loader.settings, loader, use_redis=False).planner
    case = PlanChoiceCase(id="t", question=question, language="en", structure="x",
                          expect="decline")  # fmt: skip
    decision, _ = await decide(loader, planner, case)
    assert isinstance(decision.action, FinalAnalysis) == declined, decision.action


def test_what_is_tied_to_another_platform_says_so() -> None:
    """With nothing covered and another platform asked about, each other requirement says
    it belongs to that part (not "it was not queried"), after the platform's own line."""
    items = [
        CoverageItem(requirement="s1", kind="subject", text="面霜", status="missing"),
        CoverageItem(requirement="o1", kind="out_of_scope", text="拼多多", status="not_coverable",
                     code="other_platform"),
    ]  # fmt: skip
    text = offline_analysis(AnalysisInput(question="拼多多上面霜卖了多少", question_type="lookup",
                                          collected=[], coverage=items))  # fmt: skip
    assert text.index("「拼多多」：数据只覆盖本平台") < text.index("「面霜」：它属于「拼多多」")
    assert "无法给出数字" in text and "本次没有查询它" not in text


def test_a_product_comparison_says_where_each_one_leads_with_both_figures() -> None:
    """Two products side by side: the answer names which is cheaper, rated higher and
    growing faster, with both figures, in the question's language (it used to give the
    price range and "the top products' most common selling points" of two products)."""
    rows = [
        {"id": 1, "title_zh": "甲护手霜", "title_en": "A cream", "price": 45.9, "rating": 4.87,
         "latest_gmv": 1000.0, "gmv_growth_3m": 0.4, "role": "ours"},
        {"id": 2, "title_zh": "乙护手霜", "title_en": "B cream", "price": 56.9, "rating": 4.3,
         "latest_gmv": 9000.0, "gmv_growth_3m": 0.77, "role": "competitor",
         "advantages_vs_first": [{"zh": "美白提亮", "en": "Brightening"}],
         "metric_advantages_vs_first": ["higher GMV (¥9,000.00 vs ¥1,000.00)"]},
    ]  # fmt: skip
    result = CollectedResult(action_id="compare", tool="compare_products", status="ok",
                             item_index=0, data={"products": rows})  # fmt: skip
    text = offline_analysis(AnalysisInput(question="把甲和乙放一起比比", question_type="analysis",
                                          collected=[result]))  # fmt: skip
    assert "乙护手霜对比甲护手霜：" in text
    for part in ("价格更贵（¥56.90 对 ¥45.90）", "近3月增长更快（+77.0% 对 +40.0%）",
                 "评分更低（4.3 对 4.87）", "多出的卖点：美白提亮"):  # fmt: skip
        assert part in text, part
    assert "higher GMV" not in text and "头部商品" not in text


async def test_products_named_by_bare_ids_are_compared_side_by_side(loader: ContextLoader) -> None:
    """ "我的1402" and "那款1431护手霜" name two products (the category after an id
    describes it): the plan compares exactly those, in the question's order."""
    loaded = await loader.load(ContextRequest(question="把我的1402和那款1431护手霜放一起比一比"))
    subjects = [(r.subject_type, r.ref) for r in loaded.requirements.items if r.kind == "subject"]
    assert subjects == [("product", 1402), ("product", 1431)]
    plan = await _plan(loader, "把我的1402和那款1431护手霜放一起比一比")
    assert ("compare_products", {"product_ids": [1402, 1431]}) in plan, plan


async def test_a_products_competitors_are_listed_not_read_from_its_lost_buyers(
    loader: ContextLoader,
) -> None:
    """The lost-buyer flow also names rivals, but it is made for "where did my buyers go":
    a plan built on it answers another question than "who competes with it"."""
    plan = await _plan(loader, "what products compete with item 1402?")
    tools = [t for t, _ in plan]
    assert "list_competitor_products" in tools and "get_flow_analysis" not in tools, plan


async def test_a_comma_inside_a_category_name_does_not_end_the_ranking_clause(
    loader: ContextLoader,
) -> None:
    question = "which leaf categories in Beauty, Body Care & Essential Oils had the highest GMV?"
    loaded = await loader.load(ContextRequest(question=question))
    ranked = [r for r in loaded.requirements.items if r.kind == "selection"]
    assert [(r.rule, r.measure) for r in ranked] == [("top", "gmv")]


async def test_the_biggest_child_then_its_fastest_growing_leaves_ranks_twice(
    loader: ContextLoader,
) -> None:
    """Two rankings by two measures ("卖得最多", then "环比增长最快"): one ranking action
    cannot answer both (a plan ranking once by GMV used to count for both)."""
    plan = await _plan(loader, "家居日用哪个二级类目卖得最多？再看看它下面哪些细分环比增长最快")
    metrics = [a.get("metric") for t, a in plan if t == "rank_categories"]
    assert "gmv" in metrics and "gmv_growth_mom" in metrics, plan


async def test_which_items_sell_well_lists_products(loader: ContextLoader) -> None:
    """ "哪些品" names products (品 after 些/个/的), so the plan lists the band's products."""
    plan = await _plan(loader, "面霜主力价格带里卖得好的都是哪些品")
    assert "get_top_products" in [t for t, _ in plan], plan


async def test_one_ranking_of_leaves_is_not_a_drill_down(loader: ContextLoader) -> None:
    """ "The top 3 leaves of X by GMV" ranks X's leaves once; a drill-down plan (rank the
    children, then the leaves of the biggest one) answers about one child only."""
    plan = await _plan(loader, "Top 3 leaf categories in Pet supplies by GMV please")
    ranks = [a for t, a in plan if t == "rank_categories"]
    assert len(ranks) == 1 and ranks[0].get("leaf_only") is True, plan
    assert ranks[0].get("limit") == 3, plan


async def test_a_list_of_product_ids_is_compared_as_named(loader: ContextLoader) -> None:
    """ "products 1402, 1431 and 1450": three products, compared side by side (not the
    first one's lost-buyer rivals, whose list is read from the data)."""
    plan = await _plan(loader, "put items 1402, 1431 and 1450 next to each other")
    assert ("compare_products", {"product_ids": [1402, 1431, 1450]}) in plan, plan


async def test_the_merchants_new_products_as_a_set_are_listed(loader: ContextLoader) -> None:
    """ "有哪些" right after "我去年上的新品" asks for the set, not the newest one's trend."""
    plan = await _plan(loader, "我去年上的新品有哪些")
    assert "list_my_new_products" in [t for t, _ in plan], plan


async def test_a_figure_asked_beside_the_parts_is_looked_up_whole(loader: ContextLoader) -> None:
    """ "GMV多少" in its own part of a question that also asks for the price bands: the
    category's own figure (its overview), not only the band table that carries GMV per
    band; the module that has the overview is added when identification left it out."""
    question = "面霜上个月卖了多少钱？顺便看下它的价格带分布，还有大家都搜啥词"
    plan = await _plan(loader, question)
    tools = [t for t, _ in plan]
    assert {"get_category_overview", "get_price_bands", "get_search_keywords"} <= set(tools), plan


@pytest.mark.parametrize(
    ("question", "whole"),
    [
        ("面霜上个月卖了多少钱？另外看下它的价格带", ["卖了多少钱"]),
        ("how big was the air fryer market last month, and what are its top 5 products?",
         ["how big was the air fryer market"]),
        ("compare cat food and dog food on GMV", []),  # a comparison: each subject's GMV
        ("which leaf categories drive the GMV, and how are their price bands split?", []),
        ("do face cream buyers skew high spending? and which price band sells most?", []),
    ],
)  # fmt: skip
async def test_which_measures_are_asked_of_the_whole(
    loader: ContextLoader, question: str, whole: list[str]
) -> None:
    from deepagent.requirements.wholes import whole_measures

    loaded = await loader.load(ContextRequest(question=question))
    assert [m.text for m in whole_measures(question, loaded.requirements)] == whole


@pytest.mark.parametrize(
    ("question", "aspect"),
    [
        ("面膜的主要买家是哪些人", "audience"),
        ("what does the rating distribution of green tea look like?", "rating_distribution"),
        ("how are ratings spread for green tea?", "rating_distribution"),
        ("眼霜的好评关键词有哪些", "praise"),
        ("eye cream: who's buying it?", "audience"),
    ],
)
async def test_everyday_words_for_buyers_and_rating_splits(
    loader: ContextLoader, question: str, aspect: str
) -> None:
    loaded = await loader.load(ContextRequest(question=question))
    assert aspect in [getattr(r, "aspect", None) for r in loaded.requirements.items]


async def test_best_sellers_in_a_band_are_products(loader: ContextLoader) -> None:
    """ "the best sellers in the main price band": "best" ranks the sellers (products), not
    the band named after it."""
    loaded = await loader.load(
        ContextRequest(question="For air fryers, what are the best sellers in the main price band?")
    )
    tops = [r for r in loaded.requirements.items if r.kind == "selection" and r.rule == "top"]
    assert [r.target for r in tops] == ["product"]


async def test_what_sells_best_ranks_products(loader: ContextLoader) -> None:
    loaded = await loader.load(
        ContextRequest(question="what sells best in the main price range for blenders?")
    )
    tops = [r for r in loaded.requirements.items if r.kind == "selection" and r.rule == "top"]
    assert [r.target for r in tops] == ["product"]


async def test_a_named_products_trend_is_its_own_not_its_categorys(loader: ContextLoader) -> None:
    """A product named by id and no category: the trend asked is the product's (its
    module is added although a category trend tool was loaded), with its profile."""
    plan = await _plan(loader, "show me the profile of item 1402 and its GMV trend over 2025")
    tools = [t for t, _ in plan]
    assert "get_product_profile" in tools and "get_product_trend" in tools, plan
    assert "get_category_trend" not in tools, plan


async def test_which_part_drove_a_change_ranks_by_that_change(loader: ContextLoader) -> None:
    """ "环比跌了，是哪个二级类目拖的后腿": the children ranked by the month-on-month change,
    lowest first (the superlative names no measure; the change named before it is it)."""
    plan = await _plan(loader, "家居日用上个月环比跌了，是哪个二级类目拖的后腿？")
    ranks = [a for t, a in plan if t == "rank_categories"]
    assert any(a.get("metric") == "gmv_growth_mom" and a.get("order") == "asc" for a in ranks), plan
    question = "Snacks grew a lot yoy last month. Which leaf categories drove that?"
    loaded = await loader.load(ContextRequest(question=question))
    tops = [r for r in loaded.requirements.items if r.kind == "selection"]
    assert [(r.rule, r.measure) for r in tops] == [("top", "growth")]


async def test_two_named_campaigns_are_compared_side_by_side(loader: ContextLoader) -> None:
    """Two campaigns named: the category's results in both, side by side (one campaign's
    results, or the same campaign last year, answered another question)."""
    plan = await _plan(loader, "面霜在2025年618和2025年双11的表现对比一下")
    compared = [a for t, a in plan if t == "compare_campaigns"]
    ids = compared[0].get("campaign_ids") if compared else None
    assert isinstance(ids, list) and len(ids) == 2, plan


async def test_how_the_category_did_overall_is_its_overview(loader: ContextLoader) -> None:
    """ "整体数据怎么样 / 表现咋样" beside another ask is the category's own figures."""
    plan = await _plan(loader, "我的主营类目上个月表现咋样？另外它下面哪个细分类目环比涨得最快")
    tools = [t for t, _ in plan]
    assert "get_category_overview" in tools and "rank_categories" in tools, plan


@pytest.mark.parametrize(
    ("question", "aspect", "target"),
    [
        ("零食坚果特产拆到最细的类目看看最卷的前6个", "leaves", "category"),
        ("Which snack sub-catagories have the highest new product share?", None, "category"),
    ],
)
async def test_finest_categories_and_a_misspelt_categories_are_categories(
    loader: ContextLoader, question: str, aspect: str | None, target: str
) -> None:
    loaded = await loader.load(ContextRequest(question=question))
    items = loaded.requirements.items
    assert aspect is None or aspect in [getattr(r, "aspect", None) for r in items]
    assert [getattr(r, "target", None) for r in items if r.kind == "selection"][:1] == [target]


async def test_an_added_aspect_reads_the_asked_month(loader: ContextLoader) -> None:
    """The search terms added beside a case's overview are those of the month asked, not
    the latest ("what were people searching for ... that month")."""
    question = (
        "What was face cream's GMV in October 2025, and what were people searching for in"
        " that category that month?"
    )
    plan = await _plan(loader, question)
    months = {t: a.get("month") for t, a in plan}
    assert months.get("get_search_keywords") == "2025-10", plan
    assert months.get("get_category_overview") == "2025-10", plan
