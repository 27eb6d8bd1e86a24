"""Run metadata in summary.json and the report (eval/harness/run_meta.py), and that an
eval into a directory with results keeps the earlier ones (eval/harness/results.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from deepagent.core.settings import Settings
from eval.harness.report import write_report
from eval.harness.report_data import load_run
from eval.harness.results import ResultsError, merge_scores, read_results
from eval.harness.run_meta import RunMeta, collect_meta, git_commit, role_models, settings_digest
from eval.harness.summary import Summary
from tests.eval_run_helpers import write_run_dir
from tests.test_eval_report import bands_run, clarify_run, gmv_run


@pytest.fixture
async def base(tmp_path: Path) -> Path:
    await write_run_dir(tmp_path / "base", [gmv_run(), bands_run(), clarify_run()])
    return tmp_path / "base"


# --- metadata --------------------------------------------------------------------------


def with_meta(run_dir: Path, meta: RunMeta) -> None:
    path = run_dir / "summary.json"
    summary = Summary.model_validate_json(path.read_text(encoding="utf-8"))
    path.write_text(summary.model_copy(update={"meta": meta}).model_dump_json(), "utf-8")


def test_report_shows_commit_date_settings_digest_and_models(base: Path, tmp_path: Path) -> None:
    endpoint = {"kind": "openai", "model": "gpt-x", "base_url": "http://u:s3cret@llm.local/v1"}
    settings = Settings(data_path=tmp_path / "x.db", models={"planner": endpoint})
    meta = collect_meta(settings, "rules", earlier_cases=2, root=tmp_path)  # not a repository
    with_meta(base, meta)
    md_path, page_path = write_report([load_run(base)], base)
    md, page = md_path.read_text(encoding="utf-8"), page_path.read_text(encoding="utf-8")
    assert "| commit | unknown (no git) |" in md
    assert f"| date (UTC) | {meta.date} |" in md and meta.date.endswith("Z")
    assert f"| settings digest | {meta.settings_digest} |" in md
    assert "| models | planner: openai:gpt-x; others offline |" in md
    assert "| earlier cases kept | 2 |" in md
    assert meta.settings_digest in page and "planner: openai:gpt-x; others offline" in page
    assert "s3cret" not in (base / "summary.json").read_text(encoding="utf-8") + md + page


def test_settings_digest_masks_secrets_and_ignores_local_paths(tmp_path: Path) -> None:
    plain_settings = Settings(data_path=tmp_path / "x.db", redis_url="redis://:one@h:6379/0")
    digest = settings_digest(plain_settings)
    assert len(digest) == 12
    other_password = plain_settings.model_copy(update={"redis_url": "redis://:two@h:6379/0"})
    assert settings_digest(other_password) == digest
    assert settings_digest(plain_settings.model_copy(update={"cache_dir": tmp_path})) == digest
    assert settings_digest(plain_settings.model_copy(update={"mode": "react"})) != digest
    assert role_models(plain_settings)["judge"] == "offline"


def test_git_commit_short_hash_dirty_flag_and_no_git(tmp_path: Path) -> None:
    assert git_commit(tmp_path) == (None, False)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("a", encoding="utf-8")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "a"], check=True)
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    assert git_commit(repo) == (head.stdout.strip(), False)
    (repo / "a.txt").write_text("b", encoding="utf-8")
    assert git_commit(repo) == (head.stdout.strip(), True)
    meta = collect_meta(Settings(data_path=tmp_path / "x.db"), "rules", root=repo)
    assert meta.commit_label == f"{head.stdout.strip()} (dirty)"


# --- no earlier result is lost ---------------------------------------------------------


def test_merge_replaces_the_cases_run_again_and_keeps_the_others(base: Path) -> None:
    earlier = load_run(base).scores
    again = [s.model_copy(update={"planning_rounds": 9}) for s in earlier if s.case_id == "t-bands"]
    new_case = earlier[0].model_copy(update={"case_id": "t-new"})
    merged, kept = merge_scores(earlier, [*again, new_case], ["t-bands", "t-new"])
    assert [s.case_id for s in merged] == ["t-gmv", "t-bands", "t-clarify", "t-new"]
    assert merged[1].planning_rounds == 9 and merged[0] == earlier[0] and kept == 2
    assert read_results(base) == earlier and read_results(base / "nope") == []
    (base / "results.jsonl").write_text('{"case_id": 1}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match="unreadable"):
        read_results(base)
