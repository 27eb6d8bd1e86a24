"""The CI gate: process metrics of a small offline eval against thresholds in the repo.

``eval/gate.yaml`` names the subset (``eval/sets/ci.jsonl``, lines copied from
``core.jsonl``) and a ``min`` or ``max`` per metric of ``summary.json`` (``process``,
``overall``, ``performance`` or ``reliability``). tests/test_eval_gate.py runs the subset
and fails listing every metric past its threshold; ``python -m eval.harness.gate
RUN_DIR`` checks a stored eval the same way, and ``--refresh-set`` copies the subset's
lines again from core.jsonl after the core set was rebuilt.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field, model_validator

from deepagent.core.schema import Strict
from deepagent.core.yamlfile import safe_load
from eval.harness.summary import Summary

ROOT = Path(__file__).resolve().parents[2]
GATE_FILE = ROOT / "eval" / "gate.yaml"
CORE_SET = ROOT / "eval" / "sets" / "core.jsonl"


class Threshold(Strict):
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _one(self) -> Threshold:
        if (self.min is None) == (self.max is None):
            raise ValueError("a threshold is either min or max")
        return self


class Gate(Strict):
    set: str = Field(description="the subset, relative to the repository root")
    thresholds: dict[str, Threshold] = Field(min_length=1)

    @property
    def set_path(self) -> Path:
        return ROOT / self.set


def load_gate(path: Path = GATE_FILE) -> Gate:
    return Gate.model_validate(safe_load(path.read_text(encoding="utf-8")))


def metric_values(summary: Summary) -> dict[str, float | None]:
    """Every metric of a summary by name (``process`` first where names repeat)."""
    groups = (summary.reliability, summary.performance, summary.overall, summary.process)
    out: dict[str, float | None] = {}
    for group in groups:
        out.update({k: None if v is None else float(v) for k, v in group.items()})
    return out


def violations(values: Mapping[str, float | None], gate: Gate) -> list[str]:
    """One line per metric past its threshold (a metric that was not measured fails)."""
    out: list[str] = []
    for name, t in gate.thresholds.items():
        if name not in values:
            raise KeyError(f"no metric {name!r} in the summary")
        value = values[name]
        if value is None:
            out.append(f"{name}: not measured")
        elif t.min is not None and value < t.min:
            out.append(f"{name} {value:.3f} < min {t.min}")
        elif t.max is not None and value > t.max:
            out.append(f"{name} {value:.3f} > max {t.max}")
    return out


def refresh_set(gate: Gate, core: Path = CORE_SET) -> int:
    """Copy the subset's cases again from the core set (same ids); returns how many."""
    ids = [json.loads(line)["id"] for line in gate.set_path.read_text().splitlines() if line]
    lines = {json.loads(line)["id"]: line for line in core.read_text().splitlines() if line}
    missing = [i for i in ids if i not in lines]
    if missing:
        raise SystemExit(f"not in {core}: {', '.join(missing)}")
    gate.set_path.write_text("".join(lines[i] + "\n" for i in ids), encoding="utf-8")
    return len(ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="an eval directory to check")
    parser.add_argument("--refresh-set", action="store_true", help="recopy the subset")
    args = parser.parse_args(argv)
    gate = load_gate()
    if args.refresh_set:
        print(f"{refresh_set(gate)} cases written to {gate.set_path}")
        return 0
    if args.run_dir is None:
        parser.error("give an eval directory or --refresh-set")
    summary = Summary.model_validate_json((args.run_dir / "summary.json").read_text())
    failed = violations(metric_values(summary), gate)
    print("\n".join(failed) or "gate passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
