"""Selection forms of round six (tuned on blind9..12): two rankings joined in one clause,
an ordering that only orders a ranking already asked for, ascending wordings, Chinese
singular superlatives, a follow-up pointing back at the main band, what a threshold
bounds when its noun stands before it, range scales, and words that rank nothing."""

from __future__ import annotations

import pytest

from context_loader.requirements import OfflineExtractor, inherit
from deepagent.requirements.model import SelectionReq
from tests.test_requirements_ranking import BODY, HAND_CREAM, chosen, extract
from tests.test_requirements_ranking import extractor as extractor  # the fixture


def test_two_rankings_joined_in_one_clause_are_both_asked(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "护手霜里最便宜的两款和最贵的四款各是什么", (HAND_CREAM, "护手霜"))
    assert sorted(chosen(req), key=str) == [("bottom", 2, "price"), ("top", 4, "price")]


def test_an_ordering_of_a_ranking_already_asked_is_the_same_request(
    extractor: OfflineExtractor,
) -> None:
    req = extract(extractor, "护手霜里销量最低的8个商品，按销量升序排列", (HAND_CREAM, "护手霜"))
    assert chosen(req) == [("bottom", 8, "units")]
    sort_then_pick = extract(
        extractor,
        "Sort the sub-categories of Body care from least to most competitive. "
        "For the least competitive one, how many sellers are there?",
        (BODY, "Body care"),
    )
    assert ("bottom", None, "competition_index") in chosen(sort_then_pick)
    assert ("bottom", 1, "competition_index") in chosen(sort_then_pick)


@pytest.mark.parametrize(
    "question",
    ["List hand cream products by price from cheap to expensive",
     "Rank hand cream brands by rating, worst first"],
)  # fmt: skip
def test_ascending_wordings_rank_from_the_bottom(
    extractor: OfflineExtractor, question: str
) -> None:
    assert [
        rule for rule, _k, _m in chosen(extract(extractor, question, (HAND_CREAM, "hand cream")))
    ] == ["bottom"]


def test_a_chinese_superlative_before_a_singular_noun_asks_for_one(
    extractor: OfflineExtractor,
) -> None:
    one = extract(extractor, "告诉我去年护手霜卖得最好的型号", (HAND_CREAM, "护手霜"))
    several = extract(extractor, "去年护手霜卖得最好的型号有哪些", (HAND_CREAM, "护手霜"))
    assert [k for _r, k, _m in chosen(one)] == [1]
    assert [k for _r, k, _m in chosen(several)] == [None]


def test_a_follow_up_pointing_back_at_the_band_keeps_the_main_band(
    extractor: OfflineExtractor,
) -> None:
    first = extract(extractor, "护手霜的主力价格带是哪个", (HAND_CREAM, "护手霜"))
    follow = inherit(
        extract(extractor, "这个价位段里评分最高的两款"), first, "这个价位段里评分最高的两款"
    )
    assert sorted(chosen(follow), key=str) == [("main_band", None, None), ("top", 2, "rating")]
    ids = [s.id for s in follow.items if isinstance(s, SelectionReq)]
    assert len(ids) == len(set(ids))
    alone = inherit(extract(extractor, "评分最高的两款"), first, "评分最高的两款")
    assert ("main_band", None, None) not in chosen(alone)


@pytest.mark.parametrize(
    ("question", "measure"),
    [("护手霜里评论破千的商品有哪些", "review_count"),
     ("Which hand cream brands have a share above 15%?", "share"),
     ("Hand cream brands with more than ¥5 million in GMV", "gmv")],
)  # fmt: skip
def test_what_a_threshold_bounds_is_the_noun_before_it_or_the_measure_it_is_in(
    extractor: OfflineExtractor, question: str, measure: str
) -> None:
    assert ("threshold", None, measure) in chosen(
        extract(extractor, question, (HAND_CREAM, "hand cream"))
    )


def test_a_range_carries_its_scale(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "Body care leaf categories with GMV between ¥20M and ¥80M",
                  (BODY, "Body care"))  # fmt: skip
    bounds = [s for s in req.items if isinstance(s, SelectionReq) and s.rule == "threshold"]
    assert [(s.measure, s.threshold) for s in bounds] == [("gmv", 20e6)]


@pytest.mark.parametrize(
    "question",
    ["My no.1 priority is fewer returns: what do buyers complain about in hand cream?",
     "How does Lumière rank in hand cream?",
     "前两天听说护手霜竞争很激烈，是真的吗",
     "最多三句话，说说护手霜的差评"],
)  # fmt: skip
def test_words_that_rank_nothing(extractor: OfflineExtractor, question: str) -> None:
    assert chosen(extract(extractor, question, (HAND_CREAM, "hand cream"))) == []


def test_the_runner_up_is_a_top_two(extractor: OfflineExtractor) -> None:
    req = extract(extractor, "Who is the runner-up brand in hand cream by GMV?",
                  (HAND_CREAM, "hand cream"))  # fmt: skip
    assert chosen(req) == [("top", 2, "gmv")]


@pytest.mark.parametrize(
    ("question", "text", "target"),
    [
        ("Top 5 best-selling hand creams in November?", "hand creams", "product"),
        ("Which 2 hand creams sell the best?", "hand creams", "product"),
        ("the three hottest hand creams right now", "hand creams", "product"),
        ("护手霜卖多少钱的卖得最好？", "护手霜", "band"),
        ("护手霜什么价位的最好卖", "护手霜", "band"),
    ],
)  # fmt: skip
def test_what_a_selling_superlative_ranks(
    extractor: OfflineExtractor, question: str, text: str, target: str
) -> None:
    """Products when a superlative of selling stands by the category's name (beside the
    counted words or not), price bands when the price is what is asked."""
    req = extract(extractor, question, (HAND_CREAM, text))
    ranked = [s.target for s in req.items if isinstance(s, SelectionReq) and s.rule == "top"]
    assert ranked == [target]
