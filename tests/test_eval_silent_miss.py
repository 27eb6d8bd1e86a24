"""Silent misses (eval/harness/silent_miss.py): a completed answer that leaves a
requirement of the question uncovered without saying so, on hand-made RunRecords; how the
judge, the scorer, the summary and the report show them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from deepagent.execution.records import ActionRecord
from deepagent.record import RoundRecord, RunRecord
from deepagent.requirements.model import CoverageItem, CoverageStatus, Requirements
from deepagent.requirements.vocabulary import Term, Vocabulary
from eval.harness.cases import EvalCase
from eval.harness.judge import RuleJudge
from eval.harness.reference import Reference
from eval.harness.report import write_report
from eval.harness.report_data import load_run
from eval.harness.runner import write_results
from eval.harness.scoring import score_run
from eval.harness.silent_miss import (
    ExpectedItem,
    not_covered_section,
    resolve_expected,
    silent_misses,
    states,
)
from eval.harness.store import StoredRun, case_hash, load_finished, save
from eval.harness.summary import summarize

DRESS = 504751648
SKIRT = 504751700
QUESTION = "2025年12月连衣裙和半身裙的销售额是多少？"
ANSWER = "连衣裙（2025-12）的GMV为 ¥6,394.50。\n\n来源：类目趋势报告 / category_metrics / 2025-12\n"
STATED = "## 未能覆盖的部分\n- 问题中的「半身裙」：数据里没有这个类目的结果。\n\n" + ANSWER
EXPECTED = {
    "subjects": [
        {"type": "category", "ref": DRESS, "text": "连衣裙"},
        {"type": "category", "ref": SKIRT, "text": "半身裙"},
    ],
    "periods": [{"start_month": "2025-12", "end_month": "2025-12", "text": "2025年12月"}],
    "measures": ["gmv"],
}


def action(args: dict[str, Any], status: str = "ok", aid: str = "a") -> ActionRecord:
    made = ActionRecord(id=aid, kind="tool", tool="get_category_overview", args=args, status=status)
    made.data = {"category": {"name_zh": "连衣裙"}, "month": "2025-12", "gmv": 6394.5}
    return made


def record(answer: str = ANSWER, *actions: ActionRecord, **kw: Any) -> RunRecord:
    acts = list(actions) or [action({"category_id": DRESS, "month": "2025-12"})]
    base: dict[str, Any] = {
        "run_id": "r",
        "question": QUESTION,
        "language": "zh",
        "mode": "tree",
        "status": "completed",
        "rounds": [RoundRecord(index=1, todo_list=[], decision="call_actions", actions=acts)],
        "analysis": answer,
    }
    return RunRecord.model_validate(base | kw)


def case(expected: dict[str, Any] | None = EXPECTED, **kw: Any) -> EvalCase:
    base: dict[str, Any] = {
        "id": "t-silent",
        "question": QUESTION,
        "language": "zh",
        "question_type": "lookup",
        "answer_type": "lookup",
        "complexity": 1,
        "source": "constructed",
        "max_rounds": 3,
        "expected_requirements": expected,
    }
    return EvalCase.model_validate(base | kw)


def covered_measure(status: CoverageStatus = "covered", text: str = "销售额") -> dict[str, Any]:
    """A record whose requirements hold the GMV measure with that coverage status."""
    reqs = Requirements.model_validate(
        {"items": [{"kind": "measure", "id": "m1", "text": text, "measure": "gmv"}]}
    )
    cov = [CoverageItem(requirement="m1", kind="measure", text=text, status=status)]
    return {"requirements": reqs, "coverage": cov}


def verdict(c: EvalCase, rec: RunRecord) -> Any:
    return RuleJudge().verdict(c, rec, [], resolve_expected(c)[0])


# --- the judge -------------------------------------------------------------------------


def test_an_expected_subject_missed_and_not_stated_is_a_silent_miss() -> None:
    v = verdict(case(), record(**covered_measure()))
    assert v.silent_misses == ['subject "半身裙" (expected)']
    assert not v.outcome_ok and v.outcome == 'silent miss: subject "半身裙" (expected)'
    assert v.relevance.score == 0.0 and v.relevance.reasons[0].startswith("silent miss")


def test_naming_the_subject_in_a_not_covered_section_states_it() -> None:
    v = verdict(case(), record(STATED, **covered_measure()))
    assert v.silent_misses == [] and v.outcome_ok and v.relevance.score > 0.0


def test_a_name_outside_the_not_covered_section_does_not_state_it() -> None:
    elsewhere = "## 结论\n- 半身裙暂无结果。\n\n## Not covered\n- 无\n\n## 来源\n半身裙\n" + ANSWER
    assert verdict(case(), record(elsewhere, **covered_measure())).silent_misses == [
        'subject "半身裙" (expected)'
    ]
    section = not_covered_section(elsewhere)
    assert section is not None and "半身裙" not in section


def test_a_record_coverage_item_left_open_must_be_stated() -> None:
    rec = record(**covered_measure("missing"))
    assert silent_misses(rec) == ['measure "销售额" (missing)']
    said = "## Not covered\n-  「 销售额 」：no figure for it.\n\n" + ANSWER
    assert silent_misses(record(said, **covered_measure("missing"))) == []
    # the expected measure matches the open coverage item: reported once, not twice
    c = case({"measures": ["gmv"]})
    assert verdict(c, rec).silent_misses == ['measure "销售额" (missing)']


def test_stating_tolerates_case_and_surrounding_quotes() -> None:
    section = not_covered_section(
        '# Not Covered\n- "on Amazon": other platforms cannot be answered.'
    )
    assert states(section, '"On Amazon" ') and not states(section, "on eBay")
    assert not states(None, "on Amazon")


def test_a_covered_expected_period_via_action_args_is_not_a_miss() -> None:
    c = case({"periods": [{"start_month": "2025-10", "end_month": "2025-12"}]})
    one_month = record(ANSWER, action({"category_id": DRESS, "month": "2025-12"}))
    assert verdict(c, one_month).silent_misses == ["period 2025-10..2025-12 (expected)"]
    ranged = record(ANSWER, action({"start_month": "2025-09", "end_month": "2025-12"}))
    assert verdict(c, ranged).silent_misses == []
    fan_out = [action({"month": m}, aid=m) for m in ("2025-10", "2025-11", "2025-12")]
    assert verdict(c, record(ANSWER, *fan_out)).silent_misses == []
    failed = record(ANSWER, action({"start_month": "2025-09", "end_month": "2025-12"}, "failed"))
    assert verdict(c, failed).silent_misses == ["period 2025-10..2025-12 (expected)"]
    # an unnamed period is stated by naming its month in the section
    said = "## 未能覆盖\n- 2025年10月 没有数据。\n" + ANSWER
    assert verdict(c, record(said, action({"month": "2025-12"}))).silent_misses == []


def test_a_subject_is_covered_by_an_id_list_argument_or_its_coverage_item() -> None:
    both = action({"category_ids": [DRESS, SKIRT], "month": "2025-12"})
    assert verdict(case(), record(ANSWER, both, **covered_measure())).silent_misses == []
    reqs = Requirements.model_validate(
        {
            "items": [
                {"kind": "measure", "id": "m1", "text": "销售额", "measure": "gmv"},
                {"kind": "subject", "id": "s2", "text": "半身裙", "subject_type": "category",
                 "ref": SKIRT},
            ]
        }
    )  # fmt: skip
    cov = [
        CoverageItem(requirement="m1", kind="measure", text="销售额", status="covered"),
        CoverageItem(requirement="s2", kind="subject", text="半身裙", status="covered"),
    ]
    assert verdict(case(), record(requirements=reqs, coverage=cov)).silent_misses == []


def test_an_out_of_scope_expectation_must_be_stated_even_if_marked_covered() -> None:
    c = case({"out_of_scope": ["platform"]})
    reqs = Requirements.model_validate(
        {"items": [{"kind": "out_of_scope", "id": "o1", "text": "京东", "scope": "platform"}]}
    )
    claimed = [CoverageItem(requirement="o1", kind="out_of_scope", text="京东", status="covered")]
    rec = record(requirements=reqs, coverage=claimed)
    assert verdict(c, rec).silent_misses == ["out_of_scope platform (expected)"]
    said = "## 未能覆盖的部分\n- 问题中的「京东」：数据只包含本平台。\n\n" + ANSWER
    assert verdict(c, record(said, requirements=reqs, coverage=claimed)).silent_misses == []
    # with no record item, the scope's words (the vocabulary) name it
    vocab = Vocabulary(scope=[Term(name="platform", zh=["京东", "拼多多"])])
    expected, _ = resolve_expected(c, None, vocab)
    assert silent_misses(record(said), expected) == []
    assert silent_misses(record(ANSWER), expected) == ["out_of_scope platform (expected)"]


def test_runs_that_did_not_complete_have_no_silent_miss() -> None:
    for status in ("needs_input", "failed"):
        rec = record("", status=status, pending_question="哪个类目？", **covered_measure("missing"))
        assert silent_misses(rec, resolve_expected(case())[0]) == []
        assert verdict(case(), rec).silent_misses == []


def test_no_expectation_and_no_coverage_means_no_silent_miss() -> None:
    assert verdict(case(None), record()).silent_misses == []


# --- resolving expectations ------------------------------------------------------------


def test_symbols_resolve_with_the_dataset_and_name_the_subject(sample_db: Path) -> None:
    c = case({"subjects": [{"type": "category", "ref": {"$category": "连衣裙"}}]})
    items, errors = resolve_expected(c)
    assert items == [] and errors and "needs the dataset" in errors[0]
    ref = Reference(sample_db)
    try:
        (item,), errors = resolve_expected(c, ref)
        dress = ref.category("连衣裙")
    finally:
        ref.close()
    assert errors == [] and item.ref == dress["id"] and {"连衣裙", "Dresses"} <= set(item.names)
    said = "## Not covered\n- Dresses: no rows.\n" + ANSWER
    assert silent_misses(record(said, action({"month": "2025-12"})), [item]) == []
    assert silent_misses(record(ANSWER, action({"month": "2025-12"})), [item]) == [
        "subject category 连衣裙 (expected)"
    ]


def test_an_expected_item_label_prefers_the_question_words() -> None:
    item = ExpectedItem(kind="subject", subject_type="brand", ref="Nike", text=" 耐克 ")
    assert item.label() == 'subject "耐克"'


# --- scoring, summary, store, report ---------------------------------------------------


def stored(rec: RunRecord, c: EvalCase, repeat: int) -> StoredRun:
    outputs = [a.data for r in rec.rounds for a in r.actions]
    return StoredRun(
        case_id=c.id, repeat=repeat, case_hash=case_hash(c), record=rec, outputs=outputs
    )


async def _scores() -> list[Any]:
    c = case()
    runs = [
        record(**covered_measure(), coverage_complete=False),  # silent miss
        record(STATED, **covered_measure(), coverage_complete=True),
        record("", status="needs_input", pending_question="哪个类目？"),
    ]
    expected, _ = resolve_expected(c)
    return [
        await score_run(c, stored(r, c, k), [], [], RuleJudge(), None, expected)
        for k, r in enumerate(runs)
    ]


async def test_a_silent_miss_fails_the_run_and_the_rate_counts_completed_runs() -> None:
    miss, stated, asked = await _scores()
    assert not miss.passed and 'outcome: silent miss: subject "半身裙" (expected)' in miss.failures
    assert not any("silent miss" in f for f in stated.failures)
    assert asked.judge.silent_misses == []
    summary = summarize("t", [miss, stated, asked], repeat=1)
    assert summary.process["silent_miss_rate"] == 0.5  # 1 of 2 completed runs
    assert summary.process["coverage_complete_rate"] == 0.5
    assert summary.silent_misses == ["t-silent#0"]
    only_asked = summarize("t", [asked], repeat=1)
    assert only_asked.process["silent_miss_rate"] == 0.0
    assert only_asked.process["coverage_complete_rate"] is None


def test_coverage_survives_a_store_round_trip(tmp_path: Path) -> None:
    c = case()
    rec = record(**covered_measure("missing"), coverage_complete=False)
    save(tmp_path, stored(rec, c, 0))
    back = load_finished(tmp_path, c, 0)
    assert back is not None
    assert back.record.coverage == rec.coverage and back.record.requirements == rec.requirements
    assert back.record.coverage_complete is False
    assert back.hydrated().coverage[0].status == "missing"


async def test_the_report_shows_the_rate_and_lists_the_silent_misses(tmp_path: Path) -> None:
    scores = await _scores()
    c = case()
    for k in range(len(scores)):
        save(tmp_path, stored(record(), c, k))
    write_results(tmp_path, scores, summarize("ev", scores, 1))
    md_path, page_path = write_report([load_run(tmp_path)], tmp_path)
    md = md_path.read_text(encoding="utf-8")
    assert "silent-miss rate 0.500 (1 of 2 completed runs)" in md
    assert "| silent misses | 0.500 |" in md and "| coverage complete | 0.500 |" in md
    assert "### Silent misses: " in md
    assert '1. [t-silent#0](records/t-silent__0.json) (lookup): subject "半身裙" (expected)' in md
    page = page_path.read_text(encoding="utf-8")
    assert "<h3>Silent misses: " in page and 'href="records/t-silent__0.json"' in page


@pytest.mark.parametrize(
    "answer",
    ["", ANSWER, "## 未能覆盖\n", "## Not covered: nothing\n## 结论\n- x"],
)
def test_not_covered_section_bounds(answer: str) -> None:
    section = not_covered_section(answer)
    if "未能覆盖" in answer or "Not covered" in answer:
        assert section is not None and "结论" not in section and "- x" not in section
    else:
        assert section is None


def test_an_expected_aspect_is_covered_by_a_call_of_one_of_its_tools() -> None:
    vocabulary = Vocabulary(aspects=[Term(name="trend", zh=["走势"], tools=["get_category_trend"])])
    expected = {"aspects": ["trend"]}
    items, _ = resolve_expected(case(expected), vocabulary=vocabulary)
    overview = record()
    trend = ActionRecord(id="t", kind="tool", tool="get_category_trend", args={}, status="ok")
    with_trend = record(ANSWER, trend)
    assert silent_misses(overview, items) == ["aspect trend (expected)"]
    assert silent_misses(with_trend, items) == []
