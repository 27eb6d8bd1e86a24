"""Comparing settings on the same cases: named configs and the comparison table.

A config name is a YAML file of Settings overrides in ``eval/harness/configs/``
(``react`` -> ``configs/react.yaml``). ``deepagent eval compare`` runs each into its own
subdirectory of the comparison directory (resumable like any eval run) and prints
``comparison_table``: one row per config.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.table import Table

from eval.harness.report_data import RunView
from eval.harness.summary import Summary

CONFIG_DIR = Path(__file__).parent / "configs"


class ConfigNameError(ValueError):
    """A config name with no YAML file in the configs directory."""


def available_configs(config_dir: Path = CONFIG_DIR) -> list[str]:
    return sorted(p.stem for p in config_dir.glob("*.yaml"))


def resolve_configs(names: str, config_dir: Path = CONFIG_DIR) -> list[tuple[str, Path]]:
    """``"react,parallel,tree"`` -> [(name, path)], in the order given, without repeats."""
    wanted = list(dict.fromkeys(n.strip() for n in names.split(",") if n.strip()))
    if not wanted:
        raise ConfigNameError("no config named (e.g. --configs react,parallel,tree)")
    known = available_configs(config_dir)
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ConfigNameError(
            f"unknown config {', '.join(unknown)}; known: {', '.join(known)} "
            f"(YAML files in {config_dir})"
        )
    return [(n, config_dir / f"{n}.yaml") for n in wanted]


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


Column = tuple[str, Callable[[Summary], str]]

COLUMNS: tuple[Column, ...] = (
    ("pass", lambda s: _f(s.reliability.get("pass_rate"))),
    ("modules exact", lambda s: _f(s.process.get("module_exact"))),
    ("trajectory", lambda s: _f(s.process.get("trajectory_match"))),
    ("arguments", lambda s: _f(s.process.get("param_accuracy"))),
    ("judge", lambda s: _f(s.overall.get("judge_overall"))),
    ("rounds", lambda s: _f(s.performance["planning_rounds_mean"], 2)),
    ("p50 / p95 ms",
     lambda s: f"{s.performance['latency_p50_ms']:.0f} / {s.performance['latency_p95_ms']:.0f}"),
    ("tool calls",
     lambda s: f"{s.performance['tool_calls_mean']:.2f} / {s.performance['tool_calls_p95']:.0f}"),
    ("silent miss", lambda s: _f(s.process.get("silent_miss_rate"))),
)  # fmt: skip
CAPTION = (
    "pass rate; module exact match; trajectory match (case's mode); argument accuracy; "
    "judge overall; mean planning rounds; run latency p50 / p95; tool calls mean / p95; "
    "silent-miss rate (completed runs)"
)


def comparison_rows(views: Sequence[RunView]) -> list[list[str]]:
    return [[v.name, *(get(v.summary) for _, get in COLUMNS)] for v in views]


def comparison_table(views: Sequence[RunView], title: str) -> Table:
    table = Table(title=title, caption=CAPTION)
    table.add_column("config")
    for name, _ in COLUMNS:
        table.add_column(name, justify="right")
    for row in comparison_rows(views):
        table.add_row(*row)
    return table


def comparison_markdown(views: Sequence[RunView]) -> str:
    header = ["config", *(name for name, _ in COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in comparison_rows(views)]
    return "\n".join(lines) + "\n"


def fewest_rounds(views: Sequence[RunView]) -> tuple[list[str], float]:
    """The configs with the lowest mean planning rounds (ties: all of them) and that mean."""
    means = {v.name: v.summary.performance["planning_rounds_mean"] for v in views}
    low = min(means.values())
    return [n for n, m in means.items() if m == low], low
