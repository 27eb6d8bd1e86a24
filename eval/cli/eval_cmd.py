"""`deepagent eval`: evaluation commands."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from deepagent.cli.errors import bad_input
from deepagent.core.settings import Settings, SettingsError, load_settings
from eval.cli.run_support import config_plan, note_kept, print_summary, read_overrides

if TYPE_CHECKING:
    from eval.harness.requirements_eval import RequirementsReport
    from eval.harness.runner import EvalPlan
    from eval.harness.scoring import RunScore
    from eval.harness.summary import Summary

app = typer.Typer(help="Evaluate the service on labelled sets.", no_args_is_help=True)


@app.command("context")
def eval_context(
    set_path: Annotated[
        Path | None, typer.Option("--set", help="Labelled set (default eval/sets/context.jsonl).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
) -> None:
    """Module exact match and recall, case recall@3, share of tools loaded, step timings."""
    from context_loader.loader import ContextLoader
    from eval.context_eval import DEFAULT_SET, evaluate, read_set, report_json

    path = set_path or DEFAULT_SET
    if not path.exists():
        bad_input(f"no labelled set at {path}")
    try:
        cases = read_set(path)
    except ValueError as exc:
        bad_input(str(exc))
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    loader = ContextLoader.create(settings)
    with Progress(transient=True, disable=as_json) as bar:
        task = bar.add_task("context", total=len(cases))
        report = asyncio.run(
            evaluate(loader, cases, lambda done, _: bar.update(task, completed=done))
        )
    if as_json:
        typer.echo(report_json(report))
        return
    table = Table(title=f"context loading on {path.name} ({report.questions} questions)")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("module exact match", f"{report.module_exact:.3f}")
    table.add_row("module recall", f"{report.module_recall:.3f}")
    table.add_row(f"case recall@3 ({report.case_questions} q)", f"{report.case_recall_at_3:.3f}")
    table.add_row("case hit@3 (any expected case in top 3)", f"{report.case_hit_at_3:.3f}")
    table.add_row("case hit@1 (the case the planner follows)", f"{report.case_hit_at_1:.3f}")
    table.add_row("tools loaded (mean share)", f"{report.tool_share_mean:.3f}")
    for step, p95 in report.timings_p95_ms.items():
        table.add_row(f"{step} p50 / p95 ms", f"{report.timings_p50_ms[step]:.1f} / {p95:.1f}")
    console = Console()
    console.print(table)
    for f in report.failures[:15]:
        console.print(f"[yellow]{f.id}[/] expected {f.expected} got {f.selected}")


@app.command("requirements")
def eval_requirements(
    set_path: Annotated[
        Path | None,
        typer.Option("--set", help="Labelled set (default eval/sets/requirements.jsonl)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="List every question's missed and extra items.")
    ] = False,
) -> None:
    """Precision and recall of the extracted requirements per field (micro-averaged)."""
    from context_loader.loader import ContextLoader
    from eval.harness.requirements_eval import evaluate, report_json
    from eval.harness.requirements_set import DEFAULT_SET, SetError, read_set, resolve_on

    path = set_path or DEFAULT_SET
    if not path.exists():
        bad_input(f"no labelled set at {path}")
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    try:
        cases = read_set(path)
        refs = resolve_on(cases, settings.data_path)
    except SetError as exc:
        bad_input(str(exc))
    loader = ContextLoader.create(settings)
    with Progress(transient=True, disable=as_json) as bar:
        task = bar.add_task("requirements", total=len(cases))
        report = asyncio.run(
            evaluate(
                loader,
                cases,
                refs,
                path.name,
                lambda done, _: bar.update(task, completed=done),
                within={t.name: t.within for t in loader.registry.vocabulary().aspects if t.within},
            )
        )
    if as_json:
        typer.echo(report_json(report))
        return
    console = Console()
    console.print(_requirements_table(report))
    shown = report.errors if verbose else report.errors[:10]
    for q in shown:
        console.print(f"[yellow]{q.id}[/] {q.question}", highlight=False)
        for label, items in (("missed", q.missed), ("extra", q.extra)):
            if items:
                console.print(f"  {label}: {'; '.join(items)}", highlight=False, markup=False)
    if len(shown) < len(report.errors):
        console.print(f"[dim]{len(report.errors) - len(shown)} more; --verbose lists all[/]")


@app.command("plans")
def eval_plans(
    set_path: Annotated[
        Path | None,
        typer.Option("--set", help="Labelled set (default eval/sets/case_choice.jsonl)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="List every failure.")] = False,
) -> None:
    """Case choice: share of questions whose first plan has the labelled structure."""
    from context_loader.loader import ContextLoader
    from deepagent.deps import RunDeps
    from eval.harness.plan_choice import evaluate, read_set

    path = set_path or Path(__file__).parents[1] / "sets" / "case_choice.jsonl"
    if not path.exists():
        bad_input(f"no labelled set at {path}")
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    try:
        cases = read_set(path)
    except ValueError as exc:
        bad_input(str(exc))
    loader = ContextLoader.create(settings)
    planner = RunDeps.create(settings, loader, use_redis=False).planner
    with Progress(transient=True, disable=as_json) as bar:
        task = bar.add_task("plans", total=len(cases))
        report, _ = asyncio.run(
            evaluate(loader, planner, cases, lambda done, _: bar.update(task, completed=done))
        )
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    console = Console()
    console.print(f"case choice on {path.name}: {report.accuracy:.3f} of {report.questions}")
    for name, share in report.by_structure.items():
        console.print(f"  {name:<24} {share:.2f}", highlight=False)
    for r in report.failures if verbose else report.failures[:10]:
        console.print(
            f"[yellow]{r.id}[/] case {r.case}: got {r.got}; missing {'; '.join(r.missing)}",
            highlight=False,
        )


def _requirements_table(report: RequirementsReport) -> Table:
    extractor = ", ".join(report.extractors) or "none"
    table = Table(
        title=f"requirements on {report.set} ({report.questions} questions, "
        f"{report.exact} exact, extractor {extractor})"
    )
    for name in ("field", "precision", "recall", "support"):
        table.add_column(name, justify="left" if name == "field" else "right")
    for row in [*report.fields, report.overall]:
        p = "-" if row.precision is None else f"{row.precision:.3f}"
        r = "-" if row.recall is None else f"{row.recall:.3f}"
        table.add_row(row.field, p, r, str(row.support))
    return table


@app.command("run")
def eval_run(
    set_path: Annotated[Path, typer.Option("--set", help="Eval set (JSONL of EvalCase).")],
    config: Annotated[
        Path | None,
        typer.Option("--config", help="JSON or YAML file of Settings overrides (mode, ...)."),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs per case.")] = 1,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Runs at once.")] = 2,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="First n cases.")] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Eval directory (default var/evals/<name>).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json.")] = False,
) -> None:
    """Run every case (resumable: stored runs are skipped), score process, judge,
    performance and pass^k, write results.jsonl and summary.json, print the headline.

    Into a directory that already holds results, earlier cases are never lost: the cases
    run now replace their old results, the others are kept, and summary.json is computed
    over all of them (a note on stderr says how many were kept). Use another --out for a
    summary of these cases only."""
    from eval.harness.cases import SetError, load_set
    from eval.harness.results import ResultsError
    from eval.harness.runner import EvalPlan, MetaMismatchError

    if not set_path.exists():
        bad_input(f"no eval set at {set_path}")
    try:
        cases = load_set(set_path)[:limit]
    except SetError as exc:
        bad_input(str(exc))
    overrides = read_overrides(config)
    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        where = f"{config}: " if config else ""
        bad_input(where + str(exc))
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    name = set_path.stem + (f"-{config.stem}" if config else "")
    plan = EvalPlan(
        name=name,
        cases=cases,
        out_dir=out or settings.in_home(Path("var/evals") / name),
        repeat=repeat,
        workers=workers,
        meta={"set": str(set_path), "config": overrides, "repeat": repeat},
    )
    try:
        summary, scores = asyncio.run(_run_plan(plan, settings, quiet=as_json))
    except (MetaMismatchError, ResultsError) as exc:
        bad_input(str(exc))
    note_kept(summary, plan.out_dir)
    if as_json:
        typer.echo(summary.model_dump_json(indent=2))
        return
    print_summary(summary, scores, plan.out_dir)


async def _run_plan(
    plan: EvalPlan, settings: Settings, quiet: bool
) -> tuple[Summary, list[RunScore]]:
    from deepagent.deps import RunDeps
    from eval.harness.judge import make_judge
    from eval.harness.runner import run_eval

    deps = RunDeps.create(settings)
    with Progress(transient=True, disable=quiet) as bar:
        task = bar.add_task(f"eval {plan.name}", total=len(plan.cases) * plan.repeat)

        def progress(done: int, total: int, skipped: int) -> None:
            label = f"eval {plan.name}" + (f" ({skipped} resumed)" if skipped else "")
            bar.update(task, completed=done, total=total, description=label)

        return await run_eval(plan, settings, make_judge(settings), deps=deps, progress=progress)


@app.command("report")
def eval_report(
    run_dir: Annotated[Path, typer.Argument(help="An eval directory (deepagent eval run).")],
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare",
            "--baseline",
            help="Another eval directory, the baseline: deltas, and a case-by-case diff "
            "(status and metric changes, both answers side by side for changed runs).",
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Where report.md / report.html go (RUN_DIR).")
    ] = None,
    worst: Annotated[int, typer.Option("--worst", min=1, help="Worst runs listed.")] = 15,
) -> None:
    """Write report.md and a self-contained report.html for an eval directory: run
    metadata (commit, date, settings digest, models), metrics with inline SVG plots,
    breakdowns, the worst runs and every run (question, answer excerpt, expectations,
    metrics, pass / fail), filterable by question type, module and status.

    With --compare BASELINE_DIR (or --baseline) the page also holds the deltas against
    the baseline and a diff case by case: each run's status and metric changes, and
    for every changed run the baseline's answer beside this run's."""
    from eval.harness.report import write_report
    from eval.harness.report_data import RunDirError, load_run

    try:
        views = [load_run(run_dir)]
        if compare is not None:
            views.insert(0, load_run(compare))
    except RunDirError as exc:
        bad_input(str(exc))
    md, page = write_report(views, out or run_dir, worst=worst)
    typer.echo(f"{md}\n{page}")


@app.command("compare")
def eval_compare(
    set_path: Annotated[Path, typer.Option("--set", help="Eval set (JSONL of EvalCase).")],
    configs: Annotated[
        str,
        typer.Option(
            "--configs", help="Config names, comma-separated (eval/harness/configs/<name>.yaml)."
        ),
    ],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="First n cases.")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Runs at once.")] = 2,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Comparison directory (default var/evals/compare-<set>)."),
    ] = None,
) -> None:
    """Run the same cases under each config (one resumable eval directory per config),
    print one row per config and write the comparison report (first config = baseline):
    OUT/report.md and OUT/report.html, with each other config's diff against the
    baseline case by case (status and metric changes, answers side by side for the
    runs that changed). `deepagent eval report RUN --compare BASELINE` gives the same
    diff for any two eval directories."""
    from eval.harness.cases import SetError, load_set
    from eval.harness.compare import (
        ConfigNameError,
        comparison_table,
        fewest_rounds,
        resolve_configs,
    )
    from eval.harness.report import write_report
    from eval.harness.report_data import load_run
    from eval.harness.results import ResultsError
    from eval.harness.runner import MetaMismatchError

    if not set_path.exists():
        bad_input(f"no eval set at {set_path}")
    try:
        named = resolve_configs(configs)
        cases = load_set(set_path)[:limit]
    except (ConfigNameError, SetError) as exc:
        bad_input(str(exc))
    root = out or load_settings().in_home(Path("var/evals") / f"compare-{set_path.stem}")
    runs = []
    for name, config in named:
        plan, settings = config_plan(set_path, cases, name, config, root / name, workers)
        try:
            asyncio.run(_run_plan(plan, settings, quiet=False))
        except (MetaMismatchError, ResultsError) as exc:
            bad_input(str(exc))
        runs.append(load_run(plan.out_dir, name))
    console = Console()
    if not console.is_terminal:  # piped or logged: do not squeeze the table into 80 columns
        console = Console(width=160)
    console.print(comparison_table(runs, f"{set_path.name}: {len(cases)} cases per config"))
    names, low = fewest_rounds(runs)
    console.print(f"fewest mean planning rounds: {', '.join(names)} ({low:.2f})")
    md, page = write_report(runs, root, worst=10)
    console.print(f"[dim]runs in {root}/<config>; report {md} and {page}[/]")
