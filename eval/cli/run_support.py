"""Helpers of `deepagent eval run` and `eval compare`: the --config overrides, the plan
of one config, what is printed after a run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
import yaml
from rich.console import Console

from deepagent.cli.errors import bad_input
from deepagent.core.settings import Settings, SettingsError, load_settings
from deepagent.core.yamlfile import safe_load

if TYPE_CHECKING:
    from eval.harness.cases import EvalCase
    from eval.harness.runner import EvalPlan
    from eval.harness.scoring import RunScore
    from eval.harness.summary import Summary


def note_kept(summary: Summary, out_dir: Path) -> None:
    kept = summary.meta.earlier_cases if summary.meta else 0
    if kept:
        typer.echo(
            f"kept {kept} earlier case(s) in {out_dir}; summary.json covers all "
            f"{summary.cases} cases",
            err=True,
        )


def read_overrides(config: Path | None) -> dict[str, Any]:
    if config is None:
        return {}
    if not config.exists():
        bad_input(f"no config file at {config}")
    try:
        data = safe_load(config.read_text(encoding="utf-8"))  # YAML reads JSON too
    except yaml.YAMLError as exc:
        bad_input(f"{config}: not JSON or YAML ({exc})")
    if not isinstance(data, dict):
        bad_input(f"{config}: expected a mapping of settings, got {type(data).__name__}")
    return data


def print_summary(summary: Summary, scores: list[RunScore], out_dir: Path) -> None:
    from eval.harness.headline import by_group, failing_lines, headline

    console = Console()
    console.print(headline(summary))
    console.print(by_group("by question type", summary.by_question_type))
    console.print(by_group("by language / source", {**summary.by_language, **summary.by_source}))
    for line in failing_lines(scores):
        console.print(f"[yellow]{line}[/]", markup=True, highlight=False)
    console.print(f"[dim]records, results.jsonl and summary.json in {out_dir}[/]")


def config_plan(
    set_path: Path,
    cases: list[EvalCase],
    name: str,
    config: Path,
    out_dir: Path,
    workers: int,
) -> tuple[EvalPlan, Settings]:
    from eval.harness.runner import EvalPlan

    overrides = read_overrides(config)
    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        bad_input(f"{config}: {exc}")
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    plan = EvalPlan(
        name=f"{set_path.stem}-{name}",
        cases=cases,
        out_dir=out_dir,
        workers=workers,
        meta={"set": str(set_path), "config": overrides, "repeat": 1},
    )
    return plan, settings
