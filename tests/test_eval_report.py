"""The eval report (eval/harness/report*.py, plots.py, run_meta.py, results.py) on
hand-made eval directories, and `deepagent eval report`."""

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
from eval.harness.report_cases import METRIC_LABELS
from eval.harness.report_data import RunDirError, load_run, worst_runs
from tests.eval_run_helpers import GMV_DATA, Run, action, case, record, write_run_dir
from tests.report_page_helpers import plain, table_rows

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
    assert "<link" not in page and "<img" not in page and "<iframe" not in page
    assert re.findall(r"<script[^>]*>", page) == ["<script>"]  # the filters, inline
    hrefs = [h for h in re.findall(r'href="([^"]+)"', page) if not h.startswith("#")]
    records = [h for h in hrefs if h.startswith("records/")]
    assert records[:2] == ["records/t-clarify__0.json", "records/t-bands__0.json"]  # worst first
    runs = ("gmv", "bands", "clarify")
    assert set(records) == {f"records/t-{c}__0.json" for c in runs}
    assert set(hrefs) - set(records) == {f"runs/t-{c}__0.html" for c in runs}  # console pages


def test_report_elsewhere_links_back_to_the_records(base: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports" / "x"
    _, page_path = write_report([load_run(base)], out)
    for link in re.findall(r'href="([^"#]+)"', page_path.read_text(encoding="utf-8")):
        assert link.startswith(("../../base/records/", "../../base/runs/"))
        assert (out / link).is_file()


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


# --- every run: question, answer, expectations, metrics, status ------------------------


def case_cells(page: str, table_id: str = "cases-0") -> dict[str, dict[str, str]]:
    header = ["run", "type", "modules", "question", "answer", "expected", *METRIC_LABELS]
    out = {}
    for row in table_rows(page, table_id):
        cells = dict(zip(header, map(plain, row.cells), strict=False))
        cells["status"] = plain(row.cells[-1])
        cells["status class"] = row.classes[-1]
        cells["trajectory class"] = row.classes[header.index("trajectory")]
        cells.update({k: v for k, v in row.attrs.items() if k.startswith("data-")})
        run, _, page = cells["run"].partition(" ")
        assert page == "run page", cells["run"]  # every stored run links its console page
        out[run] = cells | {"run": run}
    return out


def test_every_run_table_shows_question_answer_expectations_metrics_and_status(
    base: Path,
) -> None:
    _, page_path = write_report([load_run(base)], base)
    rows = case_cells(page_path.read_text(encoding="utf-8"))
    assert list(rows) == ["t-gmv#0", "t-bands#0", "t-clarify#0"]
    gmv, bands, clarify = rows["t-gmv#0"], rows["t-bands#0"], rows["t-clarify#0"]
    assert gmv["question"] == GMV_Q and clarify["question"] == "帮我分析一下"
    assert gmv["answer"].startswith("连衣裙（2025-12）的GMV为 ¥6,394.5。")
    assert "status: completed" in gmv["expected"] and "modules: category_trend" in gmv["expected"]
    assert "trajectory (strict): get_price_bands" in bands["expected"]
    assert "status: needs_input" in clarify["expected"] and "tool calls: ≤ 0" in clarify["expected"]
    assert gmv["status"].startswith("PASS") and gmv["status class"] == "status pass"
    assert bands["status"].startswith("FAIL") and bands["status class"] == "status fail"
    assert "module recall 0.00" in bands["status"]  # the reasons it fails
    assert gmv["trajectory"] == "✓" and bands["trajectory"].startswith("✗")
    assert bands["trajectory class"] == "metric bad"
    assert "get_category_overview" in bands["trajectory"]  # the steps it took
    assert gmv["rounds"] == "2/3" and gmv["judge"] == "1.00" and gmv["latency ms"] == "250"
    assert bands["data-type"] == "analysis" and bands["data-modules"] == "|new_product|"
    assert clarify["data-modules"] == "|(none expected)|" and clarify["data-status"] == "fail"


def test_worst_runs_show_question_answer_and_expectations(base: Path) -> None:
    md_path, page_path = write_report([load_run(base)], base)
    worst = case_cells(page_path.read_text(encoding="utf-8"), "worst-0")
    assert list(worst) == ["t-clarify#0", "t-bands#0"]
    assert worst["t-bands#0"]["question"] == "2025年12月连衣裙的价格带表现如何？"
    assert worst["t-bands#0"]["answer"].startswith("连衣裙（2025-12）的GMV")
    assert "trajectory (strict): get_price_bands" in worst["t-bands#0"]["expected"]
    md = md_path.read_text(encoding="utf-8")
    assert "   - question: 2025年12月连衣裙的价格带表现如何？" in md
    assert "   - answer: 连衣裙（2025-12）的GMV为 ¥6,394.5。 来源：" in md
    assert "   - expected: status: completed; modules: new_product; trajectory (strict): " in md


def test_markdown_has_a_compact_table_of_every_run(base: Path) -> None:
    md = write_report([load_run(base)], base)[0].read_text(encoding="utf-8")
    assert "## Every run: base" in md
    assert "| run | type | status | question | answer | expected | judge |" in md
    line = next(x for x in md.splitlines() if x.startswith("| t-clarify#0 |"))
    assert "| clarification | FAIL | 帮我分析一下 | 连衣裙（2025-12）" in line
    assert "status: needs_input; trajectory (strict): call_human" in line


async def test_answers_are_markdown_rendered_and_everything_is_escaped(tmp_path: Path) -> None:
    q = "Dress GMV <b>Dec</b> & more?"
    answer = (
        "## 结论\n\n**GMV** 为 ¥6,394.5 <script>alert(1)</script>\n\n| 月份 | GMV |\n|---|---|\n"
        "| 2025-12 | 6394.5 |\n\n![x](http://evil.example/x.png) [more](http://evil.example)"
    )
    run = Run(case("t-html", q), record(q, [OVERVIEW], analysis=answer))
    await write_run_dir(tmp_path / "ev", [run], name="t <i>run</i>")
    _, page_path = write_report([load_run(tmp_path / "ev")], tmp_path / "ev")
    page = page_path.read_text(encoding="utf-8")
    assert page.count('<meta charset="utf-8">') == 1
    assert "<h2>结论</h2>" in page and "<strong>GMV</strong>" in page
    assert "<td>2025-12</td>" in page  # the answer's table, rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert "Dress GMV &lt;b&gt;Dec&lt;/b&gt; &amp; more?" in page and "<b>Dec</b>" not in page
    assert "evil.example" in page and 'href="http' not in page and "<img" not in page
    assert "**" not in page  # header and answers rendered, no raw markdown
    assert "<strong>ev</strong> (<code>" in page  # the intro's markdown, rendered


# --- baseline diff ---------------------------------------------------------------------


def test_baseline_diff_shows_changes_and_answers_side_by_side(base: Path, other: Path) -> None:
    _, page_path = write_report([load_run(base), load_run(other)], base.parent / "cmp")
    page = page_path.read_text(encoding="utf-8")
    rows = {r.cells[0].strip(): r for r in table_rows(page, "diff-1")}
    assert list(rows) == ["t-gmv#0", "t-bands#0", "t-clarify#0"]
    gmv = [plain(c) for c in rows["t-gmv#0"].cells]
    assert rows["t-gmv#0"].attrs["data-change"] == "newly failing"
    assert "pass → fail" in gmv and "rounds 2/3 → 5/3" in gmv and "250 → 1200" in gmv
    assert [c for c in rows["t-gmv#0"].classes if "side" in c] == ["answer-cell side"] * 2
    assert gmv[-2].startswith("连衣裙（2025-12）") and gmv[-1].startswith("连衣裙（2025-12）")
    bands = [plain(c) for c in rows["t-bands#0"].cells]
    assert rows["t-bands#0"].attrs["data-change"] == "unchanged"
    assert bands[-1] == "unchanged: same status, metrics and answer"
    assert "1 of 3 runs changed (1 newly failing, 2 unchanged)" in page
    assert 'name="change"' in page  # the filter by change


async def test_diff_puts_different_answers_side_by_side(base: Path, tmp_path: Path) -> None:
    changed = "连衣裙 2025-12 GMV 约 6394.5 元。"
    q = "2025年12月连衣裙的销售额是多少？"
    rec = record(q, [OVERVIEW], analysis=changed, planning_rounds=2)
    await write_run_dir(tmp_path / "new", [Run(case("t-gmv", q), rec), bands_run(), clarify_run()])
    md_path, page_path = write_report([load_run(base), load_run(tmp_path / "new")], tmp_path)
    rows = {r.cells[0].strip(): r for r in table_rows(page_path.read_text("utf-8"), "diff-1")}
    cells = [plain(c) for c in rows["t-gmv#0"].cells]
    assert rows["t-gmv#0"].attrs["data-change"] == "other change"
    assert cells[-2].startswith("连衣裙（2025-12）的GMV为") and cells[-1] == changed
    md = md_path.read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if x.startswith("| t-gmv#0 | lookup | other change"))
    assert line.endswith("| changed |") and "| t-bands#0 |" not in md.split("## Changed cases")[1]


def test_eval_report_takes_a_baseline(base: Path, other: Path) -> None:
    args = ["eval", "report", str(other), "--baseline", str(base)]
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.stderr
    page = (other / "report.html").read_text(encoding="utf-8")
    assert "Changes case by case: other vs base" in page and 'id="diff-1"' in page
