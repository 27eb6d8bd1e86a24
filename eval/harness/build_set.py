"""Build eval/sets/core.jsonl from the seed files, reproducibly.

    python -m eval.harness.build_set [--out eval/sets/core.jsonl] [--check] [--offline]

Seeds (eval/harness/seeds/*.yaml) are YAML lists, one case each; the file gives the source:
``library.yaml`` (case_library), ``realistic.yaml``, ``constructed.yaml``, ``coverage.yaml``
(realistic unless a seed says ``source: constructed``). A seed has the EvalCase fields with
shorter names and defaults:

- ``modules`` -> expected_modules, ``trajectory`` -> expected_trajectory, ``params`` ->
  expected_params, ``requirements`` -> expected_requirements; ``language`` defaults to the
  question's;
- library seeds name ``library_case``: question, language and modules come from the case
  library and the trajectory from the case's plan (one step per action, ``match`` default
  ``unordered``);
- clarification seeds default to needs_input, a ``call_human`` trajectory (strict), one
  planning round and no tool call;
- ``max_rounds`` defaults to the trajectory's length + 2 (4 without a trajectory);
- ``variants: n`` adds n paraphrases (eval/harness/variants.py) with source ``variant``.

With ``--check`` nothing is written: exit 1 if the file differs from what the seeds give.
Variants come from the offline templates unless the ``judge`` role has a model endpoint
(and ``--offline`` is not given); the committed set is built offline.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from deepagent.core.question import detect_language
from deepagent.core.yamlfile import safe_load
from eval.harness.cases import CALL_HUMAN, EvalCase, Source, dump_case
from eval.harness.variants import LLMParaphraser, Paraphraser, TemplateParaphraser
from rag_cases.schema import Case
from rag_cases.store import load_cases

ROOT = Path(__file__).resolve().parents[2]
SEEDS = Path(__file__).with_name("seeds")
OUT = ROOT / "eval" / "sets" / "core.jsonl"
FILES: dict[str, Source] = {
    "library.yaml": "case_library",
    "realistic.yaml": "realistic",
    "constructed.yaml": "constructed",
    "coverage.yaml": "realistic",
}
RENAMED = {"modules": "expected_modules", "trajectory": "expected_trajectory"}
RENAMED |= {"params": "expected_params", "requirements": "expected_requirements"}


def read_seeds(folder: Path = SEEDS) -> list[tuple[Source, dict[str, Any]]]:
    seeds: list[tuple[Source, dict[str, Any]]] = []
    for name, source in FILES.items():
        for entry in safe_load((folder / name).read_text(encoding="utf-8")) or []:
            seeds.append((source, dict(entry)))
    return seeds


def plan_tools(case: Case) -> list[str]:
    return [a.tool or "subagent" for a in case.plan]


def from_library(seed: dict[str, Any], library: dict[str, Case]) -> dict[str, Any]:
    case = library[seed["library_case"]]
    out: dict[str, Any] = {"question": case.question, "language": case.language}
    out["modules"] = case.modules
    out["trajectory"] = {"tools": plan_tools(case), "match": seed.pop("match", "unordered")}
    return out | seed


def with_defaults(seed: dict[str, Any], source: Source) -> dict[str, Any]:
    row = {RENAMED.get(k, k): v for k, v in seed.items() if k != "variants"}
    row.setdefault("source", source)
    row.setdefault("language", detect_language(row["question"]))
    if row["question_type"] == "clarification":
        row.setdefault("expected_status", "needs_input")
        row.setdefault("expected_trajectory", {"tools": [CALL_HUMAN], "match": "strict"})
        row.setdefault("max_rounds", 1)
        row.setdefault("max_tool_calls", 0)
    trajectory = row.get("expected_trajectory")
    row.setdefault("max_rounds", len(trajectory["tools"]) + 2 if trajectory else 4)
    return row


async def variants_of(
    case: EvalCase, n: int, paraphraser: Paraphraser, taken: set[str]
) -> list[EvalCase]:
    out: list[EvalCase] = []
    for i in range(1, n + 1):
        question = case.question
        for attempt in range(8):
            question = await paraphraser.paraphrase(case.question, f"{case.id}-v{i}-{attempt}")
            if question not in taken:
                break
        taken.add(question)
        data = case.model_dump() | {
            "id": f"{case.id}-v{i}",
            "question": question,
            "source": "variant",
            "variant_of": case.id,
            "library_case": None,
            "tags": [*case.tags, "variant"],
        }
        out.append(EvalCase.model_validate(data))
    return out


async def build(paraphraser: Paraphraser | None = None, folder: Path = SEEDS) -> list[EvalCase]:
    paraphraser = paraphraser or TemplateParaphraser()
    library = {c.id: c for c in load_cases(ROOT / "rag_cases" / "cases").cases}
    cases: list[EvalCase] = []
    taken: set[str] = set()
    for source, seed in read_seeds(folder):
        if "library_case" in seed:
            seed = from_library(seed, library)
        count = int(seed.get("variants", 0))
        case = EvalCase.model_validate(with_defaults(seed, source))
        taken.add(case.question)
        cases += [case, *await variants_of(case, count, paraphraser, taken)]
    return cases


def _paraphraser(offline: bool) -> Paraphraser:
    if offline:
        return TemplateParaphraser()
    from deepagent.core.settings import load_settings
    from deepagent.llm import chat_model

    config = load_settings().model_for("judge")
    return TemplateParaphraser() if config.kind == "offline" else LLMParaphraser(chat_model(config))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    parser.add_argument("--offline", action="store_true", help="template variants only")
    args = parser.parse_args(argv)
    cases = asyncio.run(build(_paraphraser(args.offline or args.check)))
    text = "".join(dump_case(c) + "\n" for c in cases)
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'up to date' if same else 'differs from the seeds'}")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {len(cases)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
