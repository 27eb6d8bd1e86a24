"""Process, performance and reliability metrics of the eval harness, on hand-made
RunRecords (eval/harness/metrics.py, scoring.py, summary.py)."""

from __future__ import annotations

from typing import Any

import pytest

from deepagent.execution.records import ActionRecord
from deepagent.record import RoundRecord, RunRecord, TokenCount
from eval.harness.cases import EvalCase, ParamExpectation
from eval.harness.facts import FactValue, ResolvedFact
from eval.harness.judge import RuleJudge
from eval.harness.metrics import (
    guard_stop,
    match_trajectory,
    module_scores,
    param_score,
    pass_hat_k,
    percentile,
    same_argument_retries,
    trajectory,
    trajectory_scores,
    value_accepted,
)
from eval.harness.scoring import score_run
from eval.harness.store import StoredRun, case_hash
from eval.harness.summary import summarize


def action(
    aid: str, tool: str, args: dict[str, Any] | None = None, status: str = "ok", **kw: Any
) -> ActionRecord:
    return ActionRecord.model_validate(
        {"id": aid, "kind": "tool", "tool": tool, "args": args or {}, "status": status, **kw}
    )


def record(*rounds: list[ActionRecord], **kw: Any) -> RunRecord:
    made = [
        RoundRecord(index=i, todo_list=[], decision="call_actions", actions=acts)
        for i, acts in enumerate(rounds, start=1)
    ]
    made.append(RoundRecord(index=len(made) + 1, todo_list=[], decision="final_analysis"))
    base: dict[str, Any] = {
        "run_id": "r1",
        "question": "2025年12月连衣裙的销售额是多少？",
        "language": "zh",
        "mode": "tree",
        "status": "completed",
        "rounds": made,
        "planning_rounds": len(made),
    }
    return RunRecord.model_validate(base | kw)


def case(**kw: Any) -> EvalCase:
    base: dict[str, Any] = {
        "id": "t-gmv",
        "question": "2025年12月连衣裙的销售额是多少？",
        "language": "zh",
        "question_type": "lookup",
        "answer_type": "lookup",
        "complexity": 1,
        "source": "constructed",
        "expected_modules": ["category_trend"],
        "expected_trajectory": {"tools": ["get_category_overview"], "match": "strict"},
        "max_rounds": 3,
    }
    return EvalCase.model_validate(base | kw)


# --- modules ---------------------------------------------------------------------------


def test_module_exact_and_recall() -> None:
    c = case(expected_modules=["category_trend", "new_product"])
    assert module_scores(c, record(modules=["category_trend", "new_product", "common"])) == (
        True,
        1.0,
    )
    assert module_scores(c, record(modules=["category_trend", "promotion", "common"])) == (
        False,
        0.5,
    )


def test_module_scores_zero_when_no_expected_module_is_loaded() -> None:
    exact, recall = module_scores(case(), record(modules=["promotion", "common"]))
    assert exact is False and recall == 0.0


def test_modules_not_scored_when_the_case_says_so() -> None:
    assert module_scores(case(expected_modules=None), record(modules=["x"])) == (None, None)


# --- trajectory ------------------------------------------------------------------------


def test_trajectory_collapses_fan_out_copies_and_drops_skipped_actions() -> None:
    rec = record(
        [
            action("leaves", "rank_categories", started_ms=1.0),
            action("bands", "get_price_bands", started_ms=5.0, item_index=0),
            action("bands", "get_price_bands", started_ms=5.5, item_index=1),
            action("top", "get_top_products", status="skipped", started_ms=9.0),
        ],
        [action("trend", "get_category_trend", started_ms=20.0)],
    )
    assert trajectory(rec) == ["rank_categories", "get_price_bands", "get_category_trend"]


def test_trajectory_orders_a_round_by_start_time() -> None:
    rec = record([action("b", "get_price_bands", started_ms=9.0), action("a", "x", started_ms=1.0)])
    assert trajectory(rec) == ["x", "get_price_bands"]


def test_a_run_waiting_for_the_user_ends_with_call_human() -> None:
    rec = RunRecord(
        run_id="r",
        question="帮我分析一下",
        language="zh",
        mode="tree",
        status="needs_input",
        pending_question="分析哪个类目？",
    )
    assert trajectory(rec) == ["call_human"]


@pytest.mark.parametrize(
    ("actual", "expected", "mode", "ok"),
    [
        (["a", "b"], ["a", "b"], "strict", True),
        (["b", "a"], ["a", "b"], "strict", False),
        (["a", "b", "b"], ["a", "b"], "strict", False),
        (["b", "a"], ["a", "b"], "unordered", True),
        (["a", "b", "b"], ["a", "b"], "unordered", False),
        (["a"], ["a", "b"], "subset", True),
        (["a", "c"], ["a", "b"], "subset", False),
        ([], ["a", "b"], "subset", False),
        (["a", "b", "c"], ["a", "b"], "superset", True),
        (["a", "c"], ["a", "b"], "superset", False),
        ([], ["a"], "superset", False),
    ],
)
def test_trajectory_match_modes(
    actual: list[str], expected: list[str], mode: Any, ok: bool
) -> None:
    assert match_trajectory(actual, expected, mode) is ok


def test_trajectory_scores_give_every_mode_and_nothing_without_expectation() -> None:
    rec = record([action("o", "get_category_overview"), action("t", "get_category_trend")])
    scores = trajectory_scores(case(), rec)
    assert scores == {"strict": False, "unordered": False, "subset": False, "superset": True}
    assert trajectory_scores(case(expected_trajectory=None), rec) == {}


# --- arguments -------------------------------------------------------------------------


def test_possible_answers_per_argument() -> None:
    assert value_accepted("2025-12", ["2025-12", None])
    assert value_accepted(None, ["2025-12", None])  # omitted is accepted when null is
    assert not value_accepted(None, ["2025-12"])
    assert value_accepted(True, [True]) and not value_accepted(1, [True])
    assert not value_accepted(True, [1])
    assert value_accepted(10, [10.0]) and value_accepted("ASC", ["asc"])
    assert value_accepted([3, 1, 2], [[1, 2, 3]]) and not value_accepted([1, 2], [[1, 2, 3]])


def test_param_score_takes_the_best_call_and_zero_for_an_uncalled_tool() -> None:
    exps = [
        ParamExpectation(tool="get_price_bands", args={"category_id": [7], "month": ["2025-12"]}),
        ParamExpectation(tool="get_top_products", args={"top_n": [10]}),
    ]
    rec = record(
        [
            action("a", "get_price_bands", {"category_id": 9, "month": "2025-12"}),
            action("b", "get_price_bands", {"category_id": 7, "month": "2025-11"}),
            action("c", "get_price_bands", {"category_id": 7, "month": "2025-12"}, item_index=1),
        ]
    )
    assert param_score(exps, rec) == (2, 3)
    assert param_score(exps, record([action("x", "rank_categories")])) == (0, 3)


# --- error policy and guards -----------------------------------------------------------


def test_same_argument_retries_count_only_repeats_of_failed_or_empty_calls() -> None:
    args = {"category_id": 1, "month": "2023-05"}
    rec = record(
        [action("a", "get_category_overview", args, status="empty")],
        [
            action("b", "get_category_overview", dict(reversed(args.items())), status="failed"),
            action("c", "get_category_overview", {"category_id": 1, "month": "2025-12"}),
        ],
        [action("d", "get_category_overview", {"category_id": 1, "month": "2025-12"})],
    )
    assert len(same_argument_retries(rec)) == 1
    assert same_argument_retries(record([action("a", "t", args, status="empty")])) == []


def test_guard_stop_names_the_guard() -> None:
    assert guard_stop(record(stop_reason="max_rounds: 8 planning rounds")) == "max_rounds"
    assert guard_stop(record(stop_reason="duplicate_calls: repeated")) == "duplicate_calls"
    assert guard_stop(record()) is None


# --- reliability and performance -------------------------------------------------------


def test_pass_hat_k_is_comb_c_k_over_comb_n_k_averaged_over_cases() -> None:
    outcomes = {"a": [True, True, False], "b": [True, True, True], "c": [False, False, False]}
    assert pass_hat_k(outcomes, 1) == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert pass_hat_k(outcomes, 2) == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert pass_hat_k(outcomes, 3) == pytest.approx((0 + 1 + 0) / 3)
    assert pass_hat_k(outcomes, 4) is None
    assert pass_hat_k({"a": [False, False]}, 2) == 0.0


def test_pass_hat_k_skips_cases_with_fewer_runs_than_k() -> None:
    assert pass_hat_k({"a": [True, True], "b": [False]}, 2) == 1.0


def test_percentile_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([], 50) == 0.0
    assert percentile([7.0], 95) == 7.0


# --- scoring one run and summarizing ---------------------------------------------------

ANSWER = (
    "连衣裙（2025-12）的GMV为 ¥63,946,238.26。\n\n来源：类目趋势报告 / category_metrics / 2025-12\n"
)
GMV = ResolvedFact(
    id="gmv", kind="number", values=[FactValue(number=63946238.26, unit="money")], need=1
)


def good_record() -> RunRecord:
    data = {"category": {"name_zh": "连衣裙"}, "month": "2025-12", "gmv": 63946238.26}
    overview = action(
        "o", "get_category_overview", {"category_id": 504751648, "month": "2025-12"}, data=data
    )
    return record(
        [overview],
        modules=["category_trend", "common"],
        analysis=ANSWER,
        timings_ms={"total": 120.0},
        llm_calls={"planner": 2},
        tokens={"planner": TokenCount(input=100, output=20)},
    )


def stored(rec: RunRecord, c: EvalCase, repeat: int = 0) -> StoredRun:
    outputs = [a.data for r in rec.rounds for a in r.actions]
    return StoredRun(
        case_id=c.id, repeat=repeat, case_hash=case_hash(c), record=rec, outputs=outputs
    )


PARAMS = [ParamExpectation(tool="get_category_overview", args={"category_id": [504751648]})]


async def test_a_good_run_passes_every_check() -> None:
    c = case()
    score = await score_run(c, stored(good_record(), c), [GMV], PARAMS, RuleJudge())
    assert score.failures == [] and score.passed
    assert score.trajectory_match is True and score.params_correct == score.params_total == 1
    assert score.judge.facts_found == 1 and score.latency_ms == 120.0


async def test_a_run_that_did_everything_wrong_scores_zero() -> None:
    c = case()
    rec = record(
        [action("x", "get_price_bands", {"category_id": 1}, status="failed")],
        [action("y", "get_price_bands", {"category_id": 1}, status="failed")],
        [action("z", "get_price_bands", {"category_id": 1}, status="failed")],
        modules=["promotion", "common"],
        analysis="The GMV was ¥12,345,678.90.",
        status="completed",
        stop_reason="max_rounds: 8",
    )
    score = await score_run(c, stored(rec, c), [GMV], PARAMS, RuleJudge())
    assert not score.passed
    assert score.module_recall == 0.0 and score.module_exact is False
    assert score.trajectory_match is False and score.params_correct == 0
    assert len(score.retries) == 2 and score.guard == "max_rounds"
    assert score.judge.invented and score.judge.safety.score == 0.0
    assert score.judge.logical_consistency.score == 0.0
    assert score.judge.facts_found == 0
    joined = " ".join(score.failures)
    for part in ("module recall", "trajectory", "arguments", "planning rounds", "retries"):
        assert part in joined, part


async def test_summary_aggregates_process_judge_performance_and_pass_hat_k() -> None:
    c = case()
    good = await score_run(c, stored(good_record(), c, 0), [GMV], PARAMS, RuleJudge())
    bad_rec = good_record().model_copy(update={"analysis": "不知道。"})
    bad = await score_run(c, stored(bad_rec, c, 1), [GMV], PARAMS, RuleJudge())
    summary = summarize("t", [good, bad], repeat=2)
    assert summary.runs == 2 and summary.cases == 1
    assert summary.reliability["pass_rate"] == 0.5
    assert summary.reliability["pass^2"] == 0.0
    assert summary.process["trajectory_match"] == 1.0
    assert summary.overall["facts_recall"] == 0.5
    assert summary.performance["latency_p95_ms"] == 120.0
    assert summary.llm_calls_per_run == {"planner": 2.0}
    assert summary.tokens_per_run["planner"] == {"input": 100.0, "output": 20.0}
    assert summary.failing == ["t-gmv"]
    assert summary.process["silent_miss_rate"] == 0.0 and summary.silent_misses == []
    assert summary.process["coverage_complete_rate"] is None  # no run had a coverage check


async def test_silent_miss_rate_is_over_completed_runs() -> None:
    c = case(expected_requirements={"subjects": [{"type": "category", "ref": 1, "text": "半身裙"}]})
    missed = await score_run(c, stored(good_record(), c, 0), [GMV], PARAMS, RuleJudge())
    asked = good_record().model_copy(update={"status": "needs_input", "analysis": ""})
    waiting = await score_run(c, stored(asked, c, 1), [GMV], PARAMS, RuleJudge())
    said = good_record().model_copy(
        update={"analysis": ANSWER + "\n## Not covered\n- 「半身裙」: no data.\n"}
    )
    stated = await score_run(c, stored(said, c, 2), [GMV], PARAMS, RuleJudge())
    assert missed.judge.silent_misses and not missed.passed
    assert not waiting.judge.silent_misses and not stated.judge.silent_misses
    summary = summarize("t", [missed, waiting, stated], repeat=3)
    assert summary.process["silent_miss_rate"] == 0.5
    assert summary.silent_misses == ["t-gmv#0"]
