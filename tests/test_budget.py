"""Context budgets per role (``llm.tokens``, ``prompts.budget``): the token estimate, the
fitting by priority, and the skin-care question on simulated endpoints whose window is
enforced like a real server's (``SimConfig.context_window``: HTTP 400 when over)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.analysis.inputs import AnalysisInput, CollectedResult
from deepagent.analysis.prompt import fitted_analyst_messages, read_analyst_prompt
from deepagent.deps import RunDeps
from deepagent.llm import ModelConfig
from deepagent.llm.tokens import count_tokens, prompt_budget
from deepagent.planning.context import ActionView, CaseView, PlannerContext, RoundView
from deepagent.planning.render import fitted_planner_messages, planner_messages
from deepagent.prompts.budget import (
    CASES,
    HISTORY,
    PREVIEWS,
    SKILL_EXAMPLES,
    Part,
    PromptTooLong,
    fit,
    skill_steps,
)
from deepagent.record import RunRecord
from deepagent.simllm import SimConfig
from deepagent.simllm.server import Running, serve_in_thread
from tests.questions import SKINCARE

# cl100k_base / o200k_base counts of these texts (js-tiktoken 1.0.21, counted offline)
ZH = "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目）"
ZH_REAL = (52, 33)
EN = "Which leaf categories of skincare have the lowest competition, and what are the top 20?"
EN_REAL = (19, 19)
JSON_SAMPLE = json.dumps(
    [
        {
            "id": "P1029",
            "title": "玻尿酸保湿面霜 50ml",
            "price": 129.9,
            "gmv": 1834500,
            "share": 0.123,
        }
    ],
    ensure_ascii=False,
)
JSON_REAL = (44, 40)


@pytest.mark.parametrize(("text", "real"), [(ZH, ZH_REAL), (EN, EN_REAL), (JSON_SAMPLE, JSON_REAL)])
def test_the_estimate_is_at_or_above_real_tokenizers_and_not_far(
    text: str, real: tuple[int, int]
) -> None:
    estimate = count_tokens(text)
    assert max(real) <= estimate <= 1.35 * max(real)


def test_chinese_is_counted_per_character_not_per_four() -> None:
    assert count_tokens("护肤" * 100) >= 200  # four characters a token would say 50


def test_an_offline_role_has_no_budget_and_an_endpoint_its_window_less_reply_and_margin() -> None:
    assert prompt_budget(ModelConfig(), "planner") is None
    endpoint = ModelConfig(kind="openai", model="m", context_window=32768)
    assert prompt_budget(endpoint, "planner") == 32768 - 2048 - 1639
    assert prompt_budget(endpoint, "analyst") == 32768 - 4096 - 1639


def _steps(name: str, level: int, n: int) -> Part:
    def shrink(done: Mapping[int, int]) -> tuple[str, str]:
        k = done[level]
        return "x " * (100 * (n - k)), f"{name}: {k} steps"

    return Part(name, "x " * (100 * n), {level: n}, shrink)


def test_fit_drops_by_priority_and_records_it() -> None:
    parts = [
        Part("rules", "r " * 100),
        _steps("previews", PREVIEWS, 3),
        _steps("skills", SKILL_EXAMPLES, 3),
        _steps("history", HISTORY, 3),
        _steps("cases", CASES, 3),
    ]
    whole = sum(count_tokens(p.text) for p in parts)
    fitted, fitting = fit(parts, whole - 650)
    # history and cases go whole before any skill example; previews are left alone
    assert fitting.dropped == ["history: 3 steps", "cases: 3 steps", "skills: 1 steps"]
    assert fitting.tokens_before == whole >= fitting.tokens_after + 650
    assert fitted[3].text == fitted[4].text == "" and fitted[1].text == parts[1].text
    assert fit(parts, whole)[1].dropped == []  # it fits: nothing is dropped


def test_a_skill_loses_its_examples_then_all_but_its_rules() -> None:
    skill = "# T\n\n## What this module answers\nA\n## Product language\nex\n## Rules\n- R\n"
    assert "## Product language" not in skill_steps(skill, 1) and "## Rules" in skill_steps(
        skill, 1
    )
    skill += "## Pitfalls\np\n"
    assert "## Pitfalls" not in skill_steps(skill, 2) and "- R" in skill_steps(skill, 2)


def _history_context() -> PlannerContext:
    preview = json.dumps([{"name": f"类目{i}", "gmv": i * 1000} for i in range(300)])
    action = {"tool": "rank_categories", "args": {}, "status": "ok", "output_preview": preview}
    rounds = [
        RoundView(index=i, decision="call_actions", actions=[ActionView(id=f"a{i}", **action)])
        for i in range(1, 5)
    ]
    case = CaseView(id="c1", question="类目趋势", modules=["m"], approach=["x" * 2000], plan=[])
    return PlannerContext(question=SKINCARE, language="zh", history=rounds, cases=[case] * 3)


def test_the_planner_prompt_is_fitted_history_first_and_recorded() -> None:
    ctx = _history_context()
    whole = planner_messages(ctx)
    messages, fitting = fitted_planner_messages(ctx, 12_000)
    assert fitting is not None and fitting.tokens_before > 12_000 >= fitting.tokens_after
    assert fitting.dropped[0].startswith("execution_history: rounds 1-3 summarized")
    assert len(str(messages[1].content)) < len(str(whole[1].content))
    assert fitted_planner_messages(ctx, None) == (whole, None)  # offline: unchanged
    with pytest.raises(PromptTooLong, match="planner prompt too long"):
        fitted_planner_messages(ctx, 1_000)  # rules and tools cannot go


def test_the_analyst_reads_rows_that_fit_and_where_the_rest_is() -> None:
    rows = [{"title": f"商品{i}", "price": 99.0 + i, "gmv": 1000 * i} for i in range(400)]
    note = "[full result in results/top.json (51234 bytes): read_result] 400 products"
    big = CollectedResult(
        action_id="top", tool="get_top_products", status="ok", data={"products": rows},
        plain_text=note,
    )  # fmt: skip
    inp = AnalysisInput(question=SKINCARE, collected=[big])
    (_system, user), fitting = fitted_analyst_messages(inp, None, 6_000)
    assert fitting is not None and fitting.tokens_after <= 6_000 < fitting.tokens_before
    assert "rows shown (the full result: results/top.json)" in user
    read = read_analyst_prompt(user).collected[0]
    assert isinstance(read.data, dict) and 0 < len(read.data["products"]) < 400  # still JSON


# --- the skin-care question on simulated endpoints ----------------------------------------


@pytest.fixture(scope="module")
def window_sim() -> Iterator[Running]:
    with serve_in_thread(SimConfig(context_window=32768)) as running:
        yield running


def _models(sim: Running, window: int) -> dict[str, ModelConfig]:
    def endpoint(model: str) -> ModelConfig:
        return ModelConfig(
            kind="openai", model=model, base_url=sim.base_url, timeout_s=30.0,
            context_window=window,
        )  # fmt: skip

    return {"planner": endpoint("offline-planner"), "analyst": endpoint("offline-analyst")}


async def _run(loader: ContextLoader, models: dict[str, Any], **settings: Any) -> RunRecord:
    merged = loader.settings.model_copy(update={"models": models, **settings})
    agent = Agent(RunDeps.create(merged, loader))
    run_id = ""
    async for event in agent.start(ContextRequest(question=SKINCARE), mode="parallel"):
        run_id = event.run_id
    return await agent.record(run_id)


def _sent(sim: Running) -> list[dict[str, Any]]:
    base = sim.base_url.removesuffix("/v1")
    response = httpx.get(f"{base}/sim/requests")
    response.raise_for_status()
    sent: list[dict[str, Any]] = response.json()
    httpx.post(f"{base}/sim/reset").raise_for_status()
    return sent


async def test_skincare_on_32k_endpoints_sends_no_prompt_over_the_window(
    window_sim: Running, full_loader: ContextLoader
) -> None:
    _sent(window_sim)
    record = await _run(full_loader, _models(window_sim, 32768))
    sent = _sent(window_sim)
    assert record.status == "completed" and record.analysis_fallback is None
    assert sent and all(r["prompt_estimate"] + r["max_tokens"] <= 32768 for r in sent)
    fittings = [r.fitting for r in record.rounds if r.fitting] + [record.analysis_fitting]
    figures = {
        f.role + str(i): (f.tokens_before, f.tokens_after, f.budget, f.dropped)
        for i, f in enumerate(fittings)
        if f is not None
    }
    print("\nskin-care, 32k window (before, after, budget, dropped):", figures)
    analysis = record.analysis_fitting
    assert analysis is not None and analysis.tokens_before > 32768  # it had to be fitted
    assert analysis.tokens_after <= analysis.budget and analysis.dropped
    assert all(f.tokens_after <= f.budget for f in fittings if f is not None)


async def test_a_tiny_window_fails_clearly_and_sends_nothing_over_it(
    window_sim: Running, full_loader: ContextLoader
) -> None:
    _sent(window_sim)
    record = await _run(full_loader, _models(window_sim, 4096))
    assert _sent(window_sim) == []  # not one request: each would have been refused
    assert record.status == "failed" and "planner prompt too long" in (record.error or "")
    fitting = record.rounds[0].fitting
    assert fitting is not None and fitting.dropped and fitting.tokens_after > fitting.budget
