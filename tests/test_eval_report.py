"""The eval report (eval/harness/report.py, report_data.py, plots.py) on hand-made eval
directories, and `deepagent eval report`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app
from eval.harness import plots
from eval.harness.compare import (
    CONFIG_DIR,
    ConfigNameError,
    available_configs,
    comparison_markdown,
    comparison_rows,
    fewest_rounds,
    resolve_configs,
)
from eval.harness.report import write_report
from eval.harness.report_data import RunDirError, load_run, worst_runs
from tests.eval_run_helpers import GMV_DATA, Run, action, case, record, write_run_dir

GMV_Q = "2025年12月连衣裙的销售额是多少？"
GMV_ANSWER = (
    "连衣裙（2025-12）的GMV为 ¥6,394.5。\n\n来源：类目趋势报告 / category_metrics / 2025-12"
)
OVERVIEW = action(
    "overview", "get_category_overview", {"category_id": 504751648, "month": "2025-12"}, GMV_DATA
)


def gmv_run(rounds: int = 2, latency: float = 250.0) -> Run:
    rec = record(GMV_Q, [OVERVIEW], analysis=GMV_ANSWER, planning_rounds=rounds)
    return Run(case("t-gmv", GMV_Q), rec, latency_ms=latency)


def bands_run() -> Run:
    """Expects the price bands, calls the overview: fails on trajectory and arguments."""
    q = "2025年12月连衣裙的价格带表现如何？"
    c = case(
        "t-bands",
        q,
        question_type="analysis",
        answer_type="analysis",
        expected_modules=["new_product"],
        expected_trajectory={"tools": ["get_price_bands"], "match": "strict"},
        expected_params=[{"tool": "get_price_bands", "args": {"month": ["2025-12"]}}],
    )
    return Run(c, record(q, [OVERVIEW], analysis=GMV_ANSWER), latency_ms=900.0)


def clarify_run() -> Run:
    """A clarification question answered instead of asked: fails on status."""
    q = "帮我分析一下"
    c = case(
        "t-clarify",
        q,
        question_type="clarification",
        answer_type=None,
        expected_status="needs_input",
        expected_modules=None,
        expected_trajectory={"tools": ["call_human"], "match": "strict"},
        max_rounds=1,
        max_tool_calls=0,
    )
    return Run(c, record(q, [OVERVIEW], analysis=GMV_ANSWER), latency_ms=400.0)


@pytest.fixture
async def base(tmp_path: Path) -> Path:
    await write_run_dir(tmp_path / "base", [gmv_run(), bands_run(), clarify_run()])
    return tmp_path / "base"


@pytest.fixture
async def other(tmp_path: Path) -> Path:
    """The same cases; the GMV lookup now takes 5 planning rounds (over its budget of 3)."""
    runs = [gmv_run(rounds=5, latency=1200.0), bands_run(), clarify_run()]
    await write_run_dir(tmp_path / "other", runs)
    return tmp_path / "other"


def test_fixture_runs_score_as_intended(base: Path, other: Path) -> None:
    by = {s.case_id: s for s in load_run(base).scores}
    assert by["t-gmv"].passed, by["t-gmv"].failures
    assert not by["t-bands"].passed and not by["t-clarify"].passed
    assert not {s.case_id: s for s in load_run(other).scores}["t-gmv"].passed


def test_markdown_has_the_metric_table_breakdowns_and_worst_runs_with_links(base: Path) -> None:
    md_path, _ = write_report([load_run(base)], base)
    md = md_path.read_text(encoding="utf-8")
    assert md_path == base / "report.md"
    assert "## Metrics" in md and "| metric | base |" in md
    assert "| pass rate | 0.333 |" in md and "| module exact |" in md
    assert "| planning rounds (mean) | 2.00 |" in md
    assert "## By module" in md and "| category_trend | 1 |" in md and "| new_product | 1 |" in md
    assert "| (none expected) | 1 |" in md  # the clarification case expects no module
    assert "## By question type" in md and "| clarification |" in md
    links = re.findall(r"\[(t-[a-z]+#0)\]\(([^)]+)\)", md)
    assert [name for name, _ in links] == ["t-clarify#0", "t-bands#0"]  # lowest judge first
    for _, link in links:
        assert not link.startswith("/") and (base / link).is_file()
    assert "status completed (expected needs_input)" in md
    assert "trajectory (strict) ['get_category_overview']" in md


def test_worst_runs_put_the_lowest_score_first_and_leave_out_passing_runs(base: Path) -> None:
    worst = worst_runs(load_run(base), limit=5)
    assert [s.case_id for s in worst] == ["t-clarify", "t-bands"]
    assert worst[0].judge.overall <= worst[1].judge.overall
    assert [s.case_id for s in worst_runs(load_run(base), limit=1)] == ["t-clarify"]


def test_html_is_self_contained_with_svg_plots_and_record_links(base: Path) -> None:
    _, page_path = write_report([load_run(base)], base)
    page = page_path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<style>" in page
    assert page.count("<svg") >= 5  # metrics, rounds, latency, by module, by type
    assert "Planning rounds per run" in page and "Latency per run" in page
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page)
    assert "<script" not in page and "<link" not in page and "<img" not in page
    hrefs = re.findall(r'href="([^"]+)"', page)
    assert hrefs == ["records/t-clarify__0.json", "records/t-bands__0.json"]


def test_report_elsewhere_links_back_to_the_records(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports" / "x"
    _, page_path = write_report([load_run(base)], out)
    for link in re.findall(r'href="([^"]+)"', page_path.read_text(encoding="utf-8")):
        assert link.startswith("../../base/records/") and (out / link).is_file()


def test_comparison_shows_side_by_side_deltas_and_changed_cases(base: Path, other: Path) -> None:
    out = base.parent / "cmp"
    md_path, page_path = write_report([load_run(base), load_run(other)], out)
    md = md_path.read_text(encoding="utf-8")
    assert "| metric | base | other | Δ other |" in md
    assert "| pass rate | 0.333 | 0.000 | -0.333 |" in md
    assert "| planning rounds (mean) | 2.00 | 3.00 | +1.000 |" in md
    assert "| latency p50 ms | 400 | 900 | +500.0 |" in md
    assert "| category_trend | 1 | 1.00 | 0.00 | -1.000 |" in md  # per-module pass delta
    assert "## Side by side" in md and "| other | 0.000 |" in md
    assert "newly failing (1): t-gmv" in md and "newly passing (0): none" in md
    page = page_path.read_text(encoding="utf-8")
    assert "Δ other − base" in page and "Δ pass rate by module: other" in page
    assert '<td class="down">-0.333</td>' in page
    assert "Worst runs: base" in page and "Worst runs: other" in page


def test_eval_report_command(base: Path, other: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(build_app(), ["eval", "report", str(other), "--compare", str(base)])
    assert result.exit_code == 0, result.stderr
    assert (other / "report.md").is_file() and (other / "report.html").is_file()
    assert "| metric | base | other | Δ other |" in (other / "report.md").read_text()
    missing = runner.invoke(build_app(), ["eval", "report", str(base.parent / "nope")])
    assert missing.exit_code == 2 and "no summary.json" in missing.stderr


def test_load_run_refuses_a_directory_without_results(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match=r"no summary\.json"):
        load_run(tmp_path)


# --- plots -----------------------------------------------------------------------------


def test_histogram_uses_shared_nice_bins() -> None:
    labels, counts = plots.histogram([[10.0, 120.0, 950.0], [450.0]])
    assert labels == ["0", "100", "200", "300", "400", "500", "600", "700", "800", "900"]
    assert counts[0][0] == 1 and counts[0][1] == 1 and counts[0][9] == 1
    assert counts[1][4] == 1 and sum(counts[1]) == 1
    assert plots.integer_counts([[0, 2, 2], [1]]) == (["0", "1", "2"], [[1, 0, 2], [0, 1, 0]])


def test_delta_bars_are_green_for_improvements_and_red_for_regressions() -> None:
    svg = plots.deltas("d", ["rounds", "pass"], [-0.3, -0.1], [-1, 1])
    bars = re.findall(r'<rect [^>]*fill="(#[0-9a-f]+)"', svg)
    assert bars == [plots.GOOD, plots.BAD]
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "-0.300" in svg


def test_bars_escape_labels_and_mark_missing_values() -> None:
    svg = plots.hbars("t", ["a<b"], [plots.Series("run", [None])])
    assert "a&lt;b" in svg and "n/a" in svg


# --- compare ---------------------------------------------------------------------------


def test_config_names_resolve_to_the_yaml_files_in_order() -> None:
    named = resolve_configs("react, parallel,tree,react")
    assert [n for n, _ in named] == ["react", "parallel", "tree"]
    assert all(path.is_file() and path.parent == CONFIG_DIR for _, path in named)
    expected = {"tree", "sync-summary", "async-summary", "subagent-lite", "subagent-full"}
    assert expected <= set(available_configs())
    with pytest.raises(ConfigNameError, match=r"unknown config sideways; known: .*react"):
        resolve_configs("react,sideways")
    with pytest.raises(ConfigNameError, match="no config named"):
        resolve_configs(" , ")


def test_comparison_rows_and_fewest_rounds(base: Path, other: Path) -> None:
    views = [load_run(base), load_run(other)]
    rows = comparison_rows(views)
    assert rows[0][0] == "base" and rows[0][6] == "2.00" and rows[1][6] == "3.00"
    assert rows[1][1] == "0.000" and rows[0][7] == "400 / 900"
    assert fewest_rounds(views) == (["base"], 2.0)
    assert fewest_rounds([views[0], load_run(base, name="again")]) == (["base", "again"], 2.0)
    md = comparison_markdown(views)
    assert md.splitlines()[0].startswith("| config | pass | modules exact | trajectory |")


def test_eval_compare_refuses_unknown_configs_before_running(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        build_app(),
        ["eval", "compare", "--set", "eval/sets/ci.jsonl", "--configs", "react,nope",
         "--out", str(tmp_path / "cmp")],
    )  # fmt: skip
    assert result.exit_code == 2 and "unknown config nope" in result.stderr
    assert not (tmp_path / "cmp").exists()
