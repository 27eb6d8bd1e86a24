"""The benchmarks' latency model: CJK-aware token counts, prompt prefill with a cached
prefix, the same model in the offline roles, the deepagents replay and sim-llm."""

from __future__ import annotations

import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from deepagent.llm.pacing import (
    CACHE_STEP,
    Pace,
    PrefixCache,
    approx_tokens,
    message_tokens,
)
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.simllm.config import Latency, parse_latency
from eval.bench._paced_model import PacedScriptedModel


def test_chinese_counts_about_seven_tenths_of_a_token_a_character() -> None:
    zh = "我想研发美容护肤类的新品请帮我分析一下" * 10  # 190 characters
    assert approx_tokens(zh) == 133  # 0.7 a character, not 190 / 4 = 48
    assert approx_tokens("a" * 400) == 100
    assert approx_tokens("GMV 多少") == 3  # 2 CJK (1.4) + 4 other (1.0)
    messages = [SystemMessage("a" * 40), HumanMessage("多少")]
    assert message_tokens(messages) == 10 + 3 + 2 + 3


def test_prefill_cost_and_a_cached_prefix() -> None:
    pace = Pace(first_token_s=0.3, tokens_per_s=60, prefill_tokens_per_s=5000, cached_share=0.2)
    assert pace.first_s(5000) == pytest.approx(1.3)
    assert pace.first_s(5000, cached_tokens=5000) == pytest.approx(0.5)  # 80% saved
    assert pace.output_s("a" * 240) == pytest.approx(1.0)
    assert Pace().first_s(10_000) == 0.0  # no rates: free


def test_a_prefix_is_cached_only_for_long_prompts_in_whole_steps() -> None:
    cache = PrefixCache()
    stable = "x" * 8000  # 2,000 tokens
    assert cache.cached_tokens(stable + "first question") == 0  # nothing sent before
    again = cache.cached_tokens(stable + "second question")
    assert again % CACHE_STEP == 0 and 1900 <= again <= 2000
    assert cache.cached_tokens("short " + stable) == 0  # another start: nothing shared
    assert PrefixCache().cached_tokens("y" * 100) == 0


async def test_the_offline_planner_waits_for_its_prompt() -> None:
    """The same decision, the prompt read at 2,000 tokens a second: a long prompt waits
    longer than a short one, and the second time its prefix is cached."""
    slow = OfflinePlannerModel(pace=Pace(prefill_tokens_per_s=2000, cached_share=0.0))
    long_prompt = [SystemMessage("规则" * 1500), HumanMessage("<question>\n连衣裙GMV\n</question>")]
    started = time.perf_counter()
    await slow.ainvoke(long_prompt)
    first = time.perf_counter() - started
    started = time.perf_counter()
    await slow.ainvoke(long_prompt)
    cached = time.perf_counter() - started
    assert first >= approx_tokens("规则" * 1500) / 2000
    assert cached < first / 2


async def test_the_replayed_react_agent_is_charged_for_its_prompts() -> None:
    model = PacedScriptedModel.from_script([AIMessage("answer")], Pace())
    await model.ainvoke([HumanMessage("多少" * 100)])
    assert model.input_tokens == approx_tokens("多少" * 100)
    assert model.output_tokens == approx_tokens("answer")


async def test_the_replayed_react_agent_is_charged_for_the_tools_it_binds() -> None:
    """An agent binds its tools once; every request sends their schemas again."""

    def get_price_bands(category_id: int, month: str | None = None) -> str:
        """Price bands of a leaf category in a month (range, GMV, share, units)."""
        return ""

    model = PacedScriptedModel.from_script([AIMessage("a"), AIMessage("b")], Pace())
    bound = model.bind_tools([get_price_bands])
    await bound.ainvoke([HumanMessage("q")])
    assert model.input_tokens > approx_tokens("q") + approx_tokens("Price bands of a leaf category")
    first = model.input_tokens
    await bound.ainvoke([HumanMessage("q")])
    assert model.input_tokens == 2 * first


def test_sim_llm_takes_the_same_model() -> None:
    model, latency = parse_latency("*=300:60:5000:0.2")
    assert model == "*" and latency == Latency(
        ttft_ms=300, tokens_per_s=60, prefill_tokens_per_s=5000, cached_share=0.2
    )
    assert latency.first_s(5000, 5000) == pytest.approx(
        Pace(0.3, 60, 5000, 0.2).first_s(5000, 5000)
    )
    assert parse_latency("m=100:20")[1].first_s(10_000) == pytest.approx(0.1)


def test_a_compact_decision_parses_back_to_the_same_decision() -> None:
    from deepagent.core.schema import PlannerDecision
    from deepagent.planning.planner import parse_decision

    decision = PlannerDecision.model_validate(
        {
            "thought": "t",
            "action": {
                "type": "call_actions",
                "answers": True,
                "actions": [
                    {"id": "a", "tool": "get_price_bands", "args": {"category_id": 1}},
                    {"id": "b", "tool": "get_top_products", "depends_on": ["a"],
                     "args": {"category_id": 1, "price_band_id": {"$ref": "a", "path": "x"}}},
                ],
            },
        }
    )  # fmt: skip
    text = decision.compact_json()
    assert parse_decision(text) == decision
    full = decision.model_dump_json(by_alias=True, exclude_none=True)
    assert approx_tokens(text) < approx_tokens(full)
    assert '"kind"' not in text and '"depends_on":[]' not in text and '"covers"' not in text
    assert '"depends_on"' not in text  # b's dependency on a is implied by its $ref
