"""The coverage check on hand-made evidence: what counts as covering each requirement."""

from __future__ import annotations

from typing import Any

import pytest

from deepagent.core.settings import Settings
from deepagent.requirements.coverage import CoverageContext, check
from deepagent.requirements.evidence import Evidence
from deepagent.requirements.model import (
    AspectReq,
    ComparisonReq,
    MeasureReq,
    OutOfScopeReq,
    PeriodReq,
    Requirement,
    Requirements,
    SelectionReq,
    SubjectReq,
)
from deepagent.tools.registry import ToolRegistry

OVERVIEW = {"category": {"id": 11}, "month": "2025-12", "gmv": 1.0, "buyers": 3}


@pytest.fixture(scope="module")
def ctx() -> CoverageContext:
    registry = ToolRegistry.load(Settings())
    loaded = frozenset(registry.tools)
    params = {"data_coverage": {"first": "2024-01", "last": "2025-12"}}
    return CoverageContext(vocabulary=registry.vocabulary(), tools_loaded=loaded, params=params)


def ev(aid: str, tool: str, args: dict[str, Any], data: Any = None, ok: bool = True) -> Evidence:
    return Evidence(action_id=aid, tool=tool, args=args, ok=ok, data=data)


def status(
    ctx: CoverageContext, reqs: list[Requirement], evidence: list[Evidence]
) -> dict[str, str]:
    coverage = check(Requirements(items=reqs), evidence, ctx)
    return {i.requirement: f"{i.status}:{i.code}" if i.code else i.status for i in coverage.items}


def subject(sid: str, ref: int, text: str) -> SubjectReq:
    return SubjectReq(id=sid, text=text, subject_type="category", ref=ref)


def test_a_comparison_is_covered_only_when_both_subjects_were_queried(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        subject("s1", 11, "空气炸锅"),
        subject("s2", 12, "破壁机"),
        ComparisonReq(id="c1", text="哪个", subjects=["s1", "s2"], measure="gmv"),
    ]
    one = [ev("a", "get_category_overview", {"category_id": 11, "month": None}, OVERVIEW)]
    assert status(ctx, reqs, one) == {
        "s1": "covered",
        "s2": "missing:not_queried",
        "c1": "missing:not_queried",
    }
    both = [*one, ev("b", "compare_categories", {"category_ids": [11, 12]}, {"categories": []})]
    assert set(status(ctx, reqs, both).values()) == {"covered"}


def test_a_subject_queried_without_data_is_not_coverable(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [SubjectReq(id="s1", text="商品 99", subject_type="product", ref=99)]
    empty = [ev("a", "get_product_profile", {"product_id": 99}, ok=False)]
    assert status(ctx, reqs, empty) == {"s1": "not_coverable:no_result"}


def test_the_month_asked_for_must_be_the_month_queried(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        PeriodReq(id="p1", text="2025年8月", start_month="2025-08", end_month="2025-08")
    ]
    latest = [ev("a", "get_category_overview", {"category_id": 11, "month": None}, OVERVIEW)]
    assert status(ctx, reqs, latest) == {"p1": "missing:not_queried"}
    asked = [ev("b", "get_category_overview", {"category_id": 11, "month": "2025-08"}, {})]
    assert status(ctx, reqs, asked) == {"p1": "covered"}


def test_a_range_needs_every_month(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        PeriodReq(id="p1", text="近3个月", start_month="2025-10", end_month="2025-12")
    ]
    series = {"months": [{"month": m} for m in ("2025-11", "2025-12")]}
    short = [ev("a", "get_category_trend", {"category_id": 11}, series)]
    assert status(ctx, reqs, short) == {"p1": "missing:not_queried"}
    args = {"category_id": 11, "start_month": "2025-10", "end_month": "2025-12"}
    assert status(ctx, reqs, [ev("b", "get_category_trend", args, series)]) == {"p1": "covered"}


def test_yoy_needs_the_base_month_or_a_yoy_figure(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        PeriodReq(
            id="p1", text="同比", start_month="2025-06", end_month="2025-06", comparison="yoy"
        )
    ]
    plain = [ev("a", "get_category_overview", {"month": "2025-06"}, {"month": "2025-06"})]
    assert status(ctx, reqs, plain) == {"p1": "missing:not_queried"}
    rate = {"month": "2025-06", "gmv_growth_yoy": 0.1}
    assert status(ctx, reqs, [ev("b", "get_category_overview", {}, rate)]) == {"p1": "covered"}
    early: list[Requirement] = [
        PeriodReq(
            id="p1", text="同比", start_month="2024-03", end_month="2024-03", comparison="yoy"
        )
    ]
    old = [ev("c", "get_category_overview", {"month": "2024-03"}, {"month": "2024-03"})]
    assert status(ctx, early, old) == {"p1": "not_coverable:no_base_period"}


def test_a_measure_is_covered_by_the_data_fields(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        MeasureReq(id="m1", text="买家数", measure="buyers"),
        MeasureReq(id="m2", text="竞争强度", measure="competition_index"),
        MeasureReq(id="m3", text="利润", measure="profit"),
    ]
    got = status(ctx, reqs, [ev("a", "get_category_overview", {}, OVERVIEW)])
    assert got == {"m1": "covered", "m2": "missing:not_queried", "m3": "not_coverable:no_source"}


def test_bottom_k_needs_ascending_order_enough_rows_and_the_metric(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        SelectionReq(
            id="k1", text="竞争强度最低的10个", rule="bottom", k=10,
            measure="competition_index", target="category",
        )
    ]  # fmt: skip
    base = {"parent_id": 1, "limit": 10, "leaf_only": True}
    by_gmv = [ev("a", "rank_categories", {**base, "metric": "gmv", "order": "desc"}, {})]
    assert status(ctx, reqs, by_gmv) == {"k1": "missing:not_queried"}
    few = [ev("b", "rank_categories", {**base, "metric": "competition_index", "order": "asc",
                                         "limit": 5}, {})]  # fmt: skip
    assert status(ctx, reqs, few) == {"k1": "missing:not_queried"}
    right = [ev("c", "rank_categories", {**base, "metric": "competition_index", "order": "asc"})]
    assert status(ctx, reqs, right) == {"k1": "covered"}


def test_top_products_need_a_product_listing(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        SelectionReq(id="k1", text="top 5", rule="top", k=5, target="product")
    ]
    categories = [ev("a", "rank_categories", {"limit": 10, "order": "desc"}, {})]
    assert status(ctx, reqs, categories) == {"k1": "missing:not_queried"}
    products = [ev("b", "get_top_products", {"category_id": 11, "top_n": 20}, {})]
    assert status(ctx, reqs, products) == {"k1": "covered"}


def test_aspects_by_their_tools_and_what_is_not_loaded(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [AspectReq(id="a1", text="差评", aspect="complaints")]
    assert status(ctx, reqs, []) == {"a1": "missing:not_queried"}
    keywords = [ev("a", "get_review_keywords", {"category_id": 11, "sentiment": "negative"}, {})]
    assert status(ctx, reqs, keywords) == {"a1": "covered"}
    narrow = CoverageContext(ctx.vocabulary, frozenset({"get_category_overview"}), ctx.params)
    assert status(narrow, reqs, []) == {"a1": "not_coverable:not_loaded"}


def test_a_subagent_covers_through_its_tools_and_arguments(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [
        subject("s1", 11, "空气炸锅"),
        AspectReq(id="a1", text="人群", aspect="audience"),
    ]
    sub = Evidence("sa", None, {"category_id": 11}, True, "conclusion", ("get_audience_profile",))
    assert set(status(ctx, reqs, [sub]).values()) == {"covered"}


def test_out_of_scope_is_never_covered(ctx: CoverageContext) -> None:
    reqs: list[Requirement] = [OutOfScopeReq(id="o1", text="京东", scope="platform")]
    anything = [ev("a", "get_category_overview", {}, OVERVIEW)]
    assert status(ctx, reqs, anything) == {"o1": "not_coverable:other_platform"}


def test_what_a_subagent_covered_in_its_own_run_covers_the_parents_ask(
    ctx: CoverageContext,
) -> None:
    """ "each one's main price band": the SubAgents chose it inside their runs; the parent
    sees only their conclusions, plus the keys of what their runs covered."""
    from deepagent.requirements.delegated import covered_keys
    from deepagent.requirements.model import CoverageItem

    band = SelectionReq(id="k3", text="main price band", rule="main_band")
    own = Requirements(items=[SelectionReq(id="k1", text="main band", rule="main_band",
                                           target="band")])  # fmt: skip
    done = [CoverageItem(requirement="k1", kind="selection", text="main band", status="covered")]
    keys = covered_keys(own, done)
    assert keys == ["selection:main_band:band"]
    told = {"conclusion": "- Main band ¥400-600", "covered": keys}
    sub = Evidence(action_id="drill", tool=None, args={}, ok=True, data=told)
    assert status(ctx, [band], [sub]) == {"k3": "covered"}
    silent = Evidence(action_id="drill", tool=None, args={}, ok=True, data={"conclusion": "-"})
    failed = Evidence(action_id="drill", tool=None, args={}, ok=False, data=told)
    assert (
        status(ctx, [band], [silent])
        == status(ctx, [band], [failed])
        == {"k3": "missing:not_queried"}
    )
    assert covered_keys(own, [done[0].model_copy(update={"status": "missing"})]) == []
