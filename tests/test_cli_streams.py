"""`deepagent ask` like a shell tool: the answer alone on stdout, the progress on stderr in
the question's language and the user's terms (tool titles, TodoList items; no case ids,
action ids or planner thoughts), lines never hard-wrapped in a pipe, choices as choices,
renamed options still taking their old names, default paths under the project home."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from context_loader.loader import ContextLoader
from deepagent import events as ev
from deepagent.cli.app import build_app
from deepagent.cli.progress import Progress
from deepagent.cli.waiting import Waiting
from deepagent.core.question import Language, detect_language

ROOT = Path(__file__).resolve().parents[1]
EN = "What was the GMV of air fryers in Oct 2025?"  # eval/sets/core.jsonl, lib-air-fryer-gmv
ZH = "2025年12月女装连衣裙类目下销售额为多少？"  # lib-dress-gmv
MARKS = ("→", "✓", "▶", "·", "✗", "○")


@dataclass(frozen=True)
class Ask:
    code: int
    stdout: str
    stderr: str
    record: dict[str, Any]


def _ask(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deepagent", "ask", *args],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=180,
    )  # fmt: skip


@pytest.fixture(scope="module")
def env(
    sample_db: Path, loader: ContextLoader, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The sample database, a private copy of the warm index cache, runs and checkpoints
    in a directory of their own; no DEEPAGENT_* variable of the caller's."""
    base = tmp_path_factory.mktemp("ask")
    assert loader.settings.cache_dir is not None
    cache = shutil.copytree(loader.settings.cache_dir, base / "cache")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DEEPAGENT_")}
    return clean | {
        "DEEPAGENT_DATA_PATH": str(sample_db),
        "DEEPAGENT_CACHE_DIR": str(cache),
        "DEEPAGENT_CHECKPOINT_PATH": str(base / "checkpoints.sqlite"),
        "DEEPAGENT_RUNS_DIR": str(base / "runs"),
        "COLUMNS": "80",  # what a pipe got before: lines were cut at 80 columns
    }


def _run_id(stderr: str) -> str:
    found = re.findall(r"(?:run|运行) ([0-9a-f]{12})", stderr)
    assert found, stderr
    return str(found[-1])


def _asked(question: str, env: dict[str, str], cwd: Path, *more: str) -> Ask:
    done = _ask([question, *more], env, cwd)
    run_id = _run_id(done.stderr)
    path = Path(env["DEEPAGENT_RUNS_DIR"]) / f"{run_id}.json"
    record = json.loads(path.read_text("utf-8"))
    return Ask(done.returncode, done.stdout, done.stderr, record)


@pytest.fixture(scope="module")
def english(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Ask:
    return _asked(EN, env, tmp_path_factory.mktemp("elsewhere"))  # not the checkout


@pytest.fixture(scope="module")
def chinese(env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Ask:
    return _asked(ZH, env, tmp_path_factory.mktemp("elsewhere"))


def _jargon(ask: Ask) -> list[str]:
    """Case ids, action ids and planner thoughts of the run: none belongs in its progress."""
    record = ask.record
    rounds = record["rounds"]
    words = [str(c) for c in record["case_ids"]]
    words += [a["id"] for r in rounds for a in r["actions"]]
    words += [r["thought"] for r in rounds if r["thought"]]
    assert words  # the run had cases, actions and a thought to leave out
    return words


@pytest.mark.parametrize("which", ["english", "chinese"])
def test_stdout_holds_the_answer_alone(which: str, request: pytest.FixtureRequest) -> None:
    ask: Ask = request.getfixturevalue(which)
    assert ask.code == 0, ask.stderr
    analysis = str(ask.record["analysis"])
    assert analysis.strip() and ask.record["status"] == "completed"
    assert ask.stdout == analysis + ("" if analysis.endswith("\n") else "\n")
    assert not any(line.lstrip().startswith(MARKS) for line in ask.stdout.splitlines())
    assert ask.record["run_id"] not in ask.stdout  # the status line is progress


def test_english_progress_names_steps_by_their_titles(english: Ask) -> None:
    err = english.stderr
    assert "→ Category overview" in err and "✓ Category overview" in err
    todo = english.record["rounds"][0]["todo_list"][0]["content"]
    assert f"▶ {todo}" in err
    assert f"Completed (run {english.record['run_id']})" in err
    for word in _jargon(english):
        assert word not in err, word
    assert "get_category_overview" not in err


def test_chinese_progress_is_in_chinese(chinese: Ask) -> None:
    err = chinese.stderr
    assert "→ 类目概览" in err and "✓ 类目概览" in err and "正在撰写分析" in err
    assert f"完成（运行 {chinese.record['run_id']}）" in err
    for word in _jargon(chinese):
        assert word not in err, word
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(detect_language(line) == "zh" for line in lines), err


def test_the_resume_command_survives_a_pipe_on_one_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A plan waiting for review: nothing on stdout, the plan and the resume command on
    stderr, the command whole on one line (longer than 80 columns); answered with --run,
    and with --thread, the old name, still accepted (with a warning)."""
    shown = _ask([EN, "--review-plan"], env, tmp_path)
    assert shown.returncode == 0 and shown.stdout == "", shown.stderr
    run_id = _run_id(shown.stderr)
    hint = [ln for ln in shown.stderr.splitlines() if f"deepagent ask --run {run_id}" in ln]
    assert len(hint) == 1 and "--cancel" in hint[0] and len(hint[0]) > 80, shown.stderr
    done = _ask(["--thread", run_id, "--cancel"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: --thread is deprecated; use --run" in done.stderr
    assert done.stdout == ""
    again = _ask(["--run", run_id, "--approve"], env, tmp_path)
    assert again.returncode == 2 and "is not waiting" in again.stderr  # cancelled


def test_json_prints_the_record_alone(env: dict[str, str], tmp_path: Path) -> None:
    done = _ask([ZH, "--json"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "completed" and record["analysis"]
    assert done.stderr == ""  # no terminal: no progress, no spinner


def test_a_bad_choice_is_one_line_and_exit_2(env: dict[str, str], tmp_path: Path) -> None:
    done = _ask(["q", "--mode", "bogus"], env, tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: ")
    assert "'bogus' is not one of 'react', 'parallel', 'tree'" in done.stderr
    unknown = _ask(["q", "--bogus"], env, tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("command", "choices", "hidden"),
    [
        (["ask"], "react|parallel|tree", "--thread"),
        (["data", "generate"], "full|small", "--path"),
        (["data", "stats"], "--data-path", "--path"),
        (["tools", "call"], "--data-path", "--data "),
        (["sim-llm"], "critical|error|warning|info|debug|trace", "--thread"),
        (["cases", "review"], "--out", "--file"),
    ],
)
def test_help_lists_choices_and_hides_old_names(
    command: list[str], choices: str, hidden: str
) -> None:
    shown = CliRunner().invoke(build_app(), [*command, "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0
    assert choices in shown.stdout and hidden not in shown.stdout


def test_old_option_names_still_work(sample_db: Path) -> None:
    app = build_app()
    args = ["tools", "call", "list_child_categories", "--args", '{"category_id": 1801}']
    old = CliRunner().invoke(app, [*args, "--data", str(sample_db)])
    assert old.exit_code == 0 and "面部护理" in old.stdout
    assert "warning: --data is deprecated; use --data-path" in old.stderr
    stats = CliRunner().invoke(app, ["data", "stats", "--json", "-p", str(sample_db)])
    assert stats.exit_code == 0 and json.loads(stats.stdout)["counts"]
    clash = CliRunner().invoke(app, [*args, "--data", "a.db", "--data-path", "b.db"])
    assert clash.exit_code == 2 and "disagree" in clash.stderr


def test_default_paths_lie_under_the_project_home(
    sample_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From any directory the defaults are the checkout's (or DEEPAGENT_HOME's); a path
    given on the command line stays relative to the working directory."""
    for name in [n for n in os.environ if n.startswith("DEEPAGENT_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    app = build_app()
    shown = json.loads(CliRunner().invoke(app, ["config", "show", "--json"]).stdout)
    assert shown["home"] == str(ROOT)
    assert shown["data_path"] == str(ROOT / "var/marketplace.db")
    assert shown["checkpoint_path"] == str(ROOT / "var/checkpoints.sqlite")
    home = tmp_path / "home"
    (home / "var").mkdir(parents=True)
    (home / "var/marketplace.db").symlink_to(sample_db)
    monkeypatch.setenv("DEEPAGENT_HOME", str(home))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    stats = CliRunner().invoke(app, ["data", "stats", "--json"])
    assert stats.exit_code == 0, stats.stderr
    assert json.loads(stats.stdout)["counts"]
    shutil.copy(sample_db, "here.db")
    given = CliRunner().invoke(app, ["data", "stats", "--json", "--data-path", "here.db"])
    assert given.exit_code == 0, given.stderr
    missing = CliRunner().invoke(app, ["data", "stats", "--data-path", "var/marketplace.db"])
    assert missing.exit_code == 2  # relative to the working directory, not the home


def test_the_spinner_leaves_stdout_to_the_answer() -> None:
    """On a terminal the start-up spinner runs on stderr in the question's language; it
    does not catch stdout (the answer of `deepagent ask Q > answer.md` goes to the file)."""
    screen = io.StringIO()
    before = sys.stdout
    term = Console(file=screen, force_terminal=True)
    with Waiting(quiet=False, console=term, language="zh") as waiting:
        assert waiting.status is not None and sys.stdout is before
    assert "正在加载模型" in screen.getvalue() and waiting.status is None


class _Names:
    def title(self, name: str, language: Language) -> str:
        return {"zh": "价格带", "en": "Price bands"}[language]

    def module_title(self, name: str, language: Language) -> str:
        return name


def test_a_fan_out_is_one_line_once_its_step_is_over() -> None:
    screen, answer = io.StringIO(), io.StringIO()
    view = Progress("zh", _Names(), Console(file=screen, width=40), answer=answer)
    for i in range(12):
        view.show(ev.ActionStarted(action_id="a1_bands", tool="get_price_bands", args={},
                                   item_index=i))  # fmt: skip
    for i in range(12):
        status = "failed" if i == 3 else "ok"
        view.show(ev.ActionFinished(action_id="a1_bands", tool="get_price_bands", status=status,
                                    duration_ms=10.0 + i, error="timeout" if i == 3 else None,
                                    item_index=i))  # fmt: skip
    view.show(ev.AnalysisDelta(text="## 结论\n"))
    lines = screen.getvalue().splitlines()
    assert lines == [
        "  → 价格带（逐项执行）",
        "  ✗ 价格带 ×12（11 成功、1 失败，最长 21 ms） – timeout",
        "正在撰写分析……",
    ]
    assert answer.getvalue() == "## 结论\n" and "a1_bands" not in screen.getvalue()
