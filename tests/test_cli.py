"""The CLI's outputs and exit codes (0 ok, 1 failed, 2 bad input with one line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepagent.cli.app import build_app

REQUIRED_TOOLS = {
    "common": {"recognize_category", "resolve_time", "get_merchant_profile"},
    "category_trend": {
        "list_child_categories",
        "list_leaf_categories",
        "get_category_overview",
        "get_category_trend",
        "rank_categories",
    },
    "new_product": {
        "list_my_new_products",
        "get_price_bands",
        "get_top_products",
        "get_product_profile",
        "get_product_trend",
    },
    "competitor_flow": {"get_flow_analysis", "compare_products"},
    "consumer_insight": {"get_review_keywords", "get_audience_profile"},
}


def run(*args: str, data: Path | None = None) -> tuple[int, str, str]:
    env = {"DEEPAGENT_DATA_PATH": str(data)} if data is not None else {}
    result = CliRunner().invoke(build_app(), list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_tools_list_json_shows_the_tree() -> None:
    code, out, _ = run("tools", "list", "--json")
    assert code == 0
    modules = {m["name"]: m for m in json.loads(out)["modules"]}
    assert len(modules) >= 6 and "common" in modules
    tools = {
        name: {t["name"] for fm in mod["function_modules"] for t in fm["tools"]}
        for name, mod in modules.items()
    }
    for module, required in REQUIRED_TOOLS.items():
        assert required <= tools[module], (module, required - tools[module])
    assert sum(len(t) for t in tools.values()) >= 35
    one = modules["category_trend"]["function_modules"][0]["tools"][0]
    assert {"name", "description", "signature", "parameters", "timeout_s"} <= set(one)


def test_tools_list_one_module_and_unknown_module() -> None:
    code, out, _ = run("tools", "list", "--module", "new_product", "--json")
    assert code == 0
    assert [m["name"] for m in json.loads(out)["modules"]] == ["new_product"]
    code, _, err = run("tools", "list", "--module", "nope")
    assert code == 2
    assert err.count("\n") == 1 and "unknown module 'nope'" in err


@pytest.mark.parametrize("text", ["连衣裙", "Dresses"])
def test_recognize_category_puts_the_dresses_leaf_first(full_db: Path, text: str) -> None:
    code, out, _ = run(
        "tools",
        "call",
        "recognize_category",
        "--args",
        json.dumps({"text": text}),
        "--json",
        data=full_db,
    )
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is True
    first = result["data"]["categories"][0]
    assert (first["name_zh"], first["name_en"]) == ("连衣裙", "Dresses")
    assert first["is_leaf"] is True
    assert first["path_zh"].startswith("女装/女士精品") and first["path_zh"].endswith("连衣裙")


def test_tool_call_renders_text_without_json(sample_db: Path) -> None:
    code, out, _ = run(
        "tools", "call", "list_child_categories", "--args", '{"category_id": 1801}', data=sample_db
    )
    assert code == 0
    assert out.startswith("ok") and "面部护理" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tools", "call", "no_such_tool"], "unknown tool 'no_such_tool'"),
        (["tools", "call", "list_child_categories", "--args", "{bad"], "not valid JSON"),
        (["tools", "call", "list_child_categories", "--args", "[1]"], "must be a JSON object"),
        (["tools", "call", "list_child_categories", "--args", "{}"], "category_id: Field required"),
        (
            ["tools", "call", "list_child_categories", "--args", '{"category_id": "x"}'],
            "category_id: Input should be a valid integer",
        ),
        (["tools", "call", "list_child_categories", "--now", "yesterday"], "--now must be a date"),
    ],
)
def test_bad_input_exits_2_with_one_line(sample_db: Path, args: list[str], message: str) -> None:
    code, out, err = run(*args, data=sample_db)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err


def test_missing_database_is_bad_input(tmp_path: Path) -> None:
    code, _, err = run(
        "tools",
        "call",
        "list_child_categories",
        "--args",
        '{"category_id": 1801}',
        data=tmp_path / "missing.db",
    )
    assert code == 2 and "deepagent data generate" in err


def test_empty_data_is_a_valid_answer(sample_db: Path) -> None:
    code, out, _ = run(
        "tools",
        "call",
        "list_child_categories",
        "--args",
        '{"category_id": 999}',
        "--json",
        data=sample_db,
    )
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is False and result["error"]["kind"] == "empty"


def test_data_stats_json(full_db: Path) -> None:
    code, out, _ = run("data", "stats", "--json", "--data-path", str(full_db))
    assert code == 0
    stats = json.loads(out)
    assert stats["leaf_categories"] >= 300
    assert stats["months"]["count"] == 24
    assert (stats["months"]["first"], stats["months"]["last"]) == ("2024-01", "2025-12")


def test_data_generate_skips_up_to_date_and_refuses_foreign_files(tmp_path: Path) -> None:
    target = tmp_path / "db.sqlite"
    code, out, _ = run("data", "generate", "--profile", "small", "--data-path", str(target))
    assert code == 0 and "wrote" in out and target.exists()
    code, out, _ = run("data", "generate", "--profile", "small", "--data-path", str(target))
    assert code == 0 and "up to date" in out
    foreign = tmp_path / "notes.txt"
    foreign.write_text("my notes")
    code, _, err = run("data", "generate", "--data-path", str(foreign))
    assert code == 2 and "--force" in err
    assert foreign.read_text() == "my notes"
    code, _, err = run("data", "generate", "--profile", "huge", "--data-path", str(target))
    assert code == 2 and "--profile" in err
    code, _, err = run("data", "stats", "--data-path", str(tmp_path / "none.db"))
    assert code == 2 and "deepagent data generate" in err


def test_console_entry_point_runs(sample_db: Path) -> None:
    env = {**os.environ, "DEEPAGENT_DATA_PATH": str(sample_db)}
    args = ["tools", "call", "list_child_categories", "--args", '{"category_id": 1}']
    proc = subprocess.run(
        [sys.executable, "-m", "deepagent", *args], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "deepagent", "tools", "call", "x"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown tool")


def test_context_command_json_and_bad_input(sample_db: Path, warm_cache: Path) -> None:
    env = {"DEEPAGENT_DATA_PATH": str(sample_db), "DEEPAGENT_CACHE_DIR": str(warm_cache)}
    app = build_app()
    result = CliRunner().invoke(
        app, ["context", "2025年12月女装连衣裙类目下销售额为多少？", "--json"], env=env
    )
    assert result.exit_code == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert "category_trend" in loaded["modules"] and "common" in loaded["modules"]
    assert loaded["params"]["month"] == "2025-12"
    assert loaded["cases"][0]["id"] == "canon-gmv-lookup"
    for bad, reason in [("   ", "question"), ("x" * 2001, "at most 2000")]:
        result = CliRunner().invoke(app, ["context", bad], env=env)
        assert result.exit_code == 2
        assert result.stderr.count("\n") == 1 and reason in result.stderr


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["ask", "   "], "question"),
        (["ask", "x" * 2001], "at most 2000"),
        (["ask", "q", "--mode", "fast"], "'fast' is not one of 'react', 'parallel', 'tree'"),
        (["ask", "--run", "abc"], "--run goes with --answer"),
        (["ask", "q", "--approve"], "--run goes with"),
        (["ask", "--run", "abc", "--approve", "--cancel"], "are exclusive"),
        (["ask", "--run", "abc", "--answer", "x", "--approve"], "not a plan review"),
        (["ask", "--run", "abc", "--reject", " "], "--reject needs a reason"),
        (["ask", "--run", "abc", "--edit", "/nonexistent.json"], "cannot read"),
        (["ask", "q", "--now", "soon"], "--now must be a date"),
    ],
)
def test_ask_bad_input_exits_2(sample_db: Path, args: list[str], reason: str) -> None:
    code, out, err = run(*args, data=sample_db)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and reason in err


def test_ask_review_plan_then_answer_it_from_the_cli(
    sample_db: Path, tmp_path: Path, warm_cache: Path
) -> None:
    env = {
        "DEEPAGENT_DATA_PATH": str(sample_db),
        "DEEPAGENT_CACHE_DIR": str(warm_cache),
        "DEEPAGENT_CHECKPOINT_PATH": str(tmp_path / "checkpoints.sqlite"),
        "DEEPAGENT_RUNS_DIR": str(tmp_path / "runs"),
    }
    app = build_app()
    question = "2025年12月女装连衣裙类目下销售额为多少？"
    shown = CliRunner().invoke(app, ["ask", question, "--review-plan"], env=env)
    assert shown.exit_code == 0, shown.stderr
    assert "等待你的确认" in shown.stderr and "--approve" in shown.stderr  # progress: stderr
    assert shown.stdout == ""  # no answer yet
    record = json.loads(next((tmp_path / "runs").glob("*.json")).read_text("utf-8"))
    run_id, proposal = record["run_id"], record["pending_review"]
    assert record["status"] == "needs_input" and proposal["actions"]
    refused = CliRunner().invoke(app, ["ask", "--run", run_id, "--answer", "x"], env=env)
    assert refused.exit_code == 2 and "waits for a plan review" in refused.stderr
    edit = tmp_path / "edit.json"
    edit.write_text(json.dumps({"remove": ["missing"]}), "utf-8")
    bad = CliRunner().invoke(app, ["ask", "--run", run_id, "--edit", str(edit)], env=env)
    assert bad.exit_code == 2 and "the run still waits" in bad.stderr
    proposal["todo_list"] = [{"content": "查连衣裙 12 月的销售额"}]  # the shown plan, edited
    edit.write_text(json.dumps(proposal, ensure_ascii=False), "utf-8")
    args = ["ask", "--run", run_id, "--edit", str(edit), "--json"]
    done = CliRunner().invoke(app, args, env=env)
    assert done.exit_code == 0, done.stderr
    final = json.loads(done.stdout)
    assert final["status"] == "completed" and final["plan_reviews"][0]["decision"] == "edit"
    assert final["rounds"][0]["todo_list"] == [
        {"content": "查连衣裙 12 月的销售额", "status": "pending"}
    ]


def test_ask_json_prints_the_run_record(sample_db: Path, tmp_path: Path, warm_cache: Path) -> None:
    env = {
        "DEEPAGENT_DATA_PATH": str(sample_db),
        "DEEPAGENT_CACHE_DIR": str(warm_cache),
        "DEEPAGENT_CHECKPOINT_PATH": str(tmp_path / "checkpoints.sqlite"),
    }
    question = "2025年12月女装连衣裙类目下销售额为多少？"
    result = CliRunner().invoke(build_app(), ["ask", question, "--json"], env=env)
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["status"] == "completed" and record["planning_rounds"] == 1
    assert record["question"] == question and "GMV" in record["analysis"]
    assert (tmp_path / "checkpoints.sqlite").exists()


def test_the_command_line_starts_without_the_model_stack() -> None:
    """`deepagent --help` builds every command (plugins included) without importing
    langchain, LangGraph, the OpenAI client or the scheduler: a shell waits for it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from deepagent.cli.app import build_app\n"
        "build_app()\n"
        "heavy = ('langchain', 'langgraph', 'openai', 'networkx', 'jieba')\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith(heavy)}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_ask_says_at_once_on_a_terminal_that_it_is_working() -> None:
    """A spinner on the terminal's stderr from the start until the run's first event; it is
    cleared, and nothing is written when stderr is no terminal (a script reads it)."""
    import io

    from rich.console import Console

    from deepagent.cli.waiting import TEXT, Waiting

    screen = io.StringIO()
    with Waiting(quiet=False, console=Console(file=screen, force_terminal=True)) as waiting:
        assert waiting.status is not None
    assert TEXT in screen.getvalue() and waiting.status is None
    pipe = io.StringIO()
    with Waiting(quiet=False, console=Console(file=pipe)) as waiting:
        assert waiting.status is None
    assert pipe.getvalue() == ""
