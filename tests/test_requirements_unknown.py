"""Subject names the data does not hold, read in subject slots: a partial match ("火星" +
"特产") hides an unknown name and must not answer about the known part; benign words
before a known category never make it unknown."""

from __future__ import annotations

import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from context_loader.requirements.unknown import UnknownName, unknown_names
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.planning.offline.model import OfflinePlannerModel

VOCABULARY = {"complain", "gmv", "sales", "sellers", "buyers", "销售额", "卖家数"}


@pytest.mark.parametrize(
    ("question", "known", "found"),
    [
        ("火星特产类目上个月的销售额是多少？", ["特产"], [UnknownName("火星特产", "特产")]),
        ("How many sellers offer quantum socks?", ["socks"],
         [UnknownName("quantum socks", "socks")]),
        ("What do buyers of flying cars complain about most?", [],
         [UnknownName("flying cars")]),
        ("白酒类目去年的市场规模有多大？", [], [UnknownName("白酒")]),
        ("is the electric scooter category growing?", [], [UnknownName("electric scooter")]),
        ("买量子袜子的人多吗", ["袜子"], [UnknownName("量子袜子", "袜子")]),
    ],
)  # fmt: skip
def test_unknown_names_in_subject_slots(
    question: str, known: list[str], found: list[UnknownName]
) -> None:
    assert unknown_names(question, known, VOCABULARY) == found


@pytest.mark.parametrize(
    ("question", "known"),
    [
        ("2025年12月女装连衣裙类目下销售额为多少？", ["连衣裙", "女装"]),
        ("2025年12月厨房电器下买家数同比涨得最多的5个子类目", ["厨房电器"]),
        ("这些机会类目对应的Top20竞品有什么特点？", ["美容护肤"]),
        ("请汇总身体乳类目的用户评价情况", ["身体乳"]),
        ("热门防晒霜类目卖得怎么样", ["防晒霜"]),
        ("Top 20 products in the main price band of hand cream: what selling points?",
         ["hand cream"]),
        ("Which second-level categories of Menswear dropped the most?", ["menswear"]),
        ("Best seling shoes category?", ["shoes"]),
        ("what are the selling points of the 3 best-sellers in this product's category?", []),
        ("how many units did product 605 sell during Double 11 2025", []),
        ("which phone accessory categories are the least crowded", ["phone accessory"]),
        ("Who sells the most sunscreen?", ["sunscreen"]),
    ],
)  # fmt: skip
def test_benign_words_never_make_a_name_unknown(question: str, known: list[str]) -> None:
    assert unknown_names(question, known, VOCABULARY) == []


async def test_an_unknown_subject_is_stated_not_answered_with_another(
    loader: ContextLoader,
) -> None:
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question="火星特产类目上个月的销售额是多少？"))
    unknown = [c for c in record.coverage if c.code == "unknown_name"]
    assert [c.text for c in unknown] == ["火星特产"] and not record.coverage_complete
    assert record.tool_calls == 0  # not the GMV of 零食/坚果/特产, nor of the user's category
    lines = record.analysis.splitlines()
    assert lines[2] == "- 问题中的「火星特产」：数据中没有这个名称，暂无数据。"  # first: the cause
    english = await agent.run_to_end(
        ContextRequest(question="How many sellers offer quantum socks?")
    )
    assert english.tool_calls == 0 and '"quantum socks"' in english.analysis
