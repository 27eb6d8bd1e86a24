"""``results.jsonl`` across evals into one directory: an eval run never loses the
results of cases an earlier run stored there.

A run of some cases (``--limit 2``, a smaller set) into a directory that already holds
results replaces the scores of the cases it ran (every repeat of them) and keeps the
others, in their earlier order; cases new to the directory come last. The summary is
then computed over all of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from eval.harness.scoring import RunScore


class ResultsError(ValueError):
    """An existing results.jsonl cannot be read (so its runs could not be kept)."""


def read_results(out_dir: Path) -> list[RunScore]:
    """The scored runs stored in ``out_dir`` (none when there is no results.jsonl)."""
    path = out_dir / "results.jsonl"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        return [RunScore.model_validate_json(line) for line in lines if line.strip()]
    except ValidationError as exc:
        raise ResultsError(
            f"{path} is unreadable ({exc.error_count()} errors), so its earlier results "
            "could not be kept; use another --out directory (or delete that file)"
        ) from exc


def merge_scores(
    earlier: Sequence[RunScore], new: Sequence[RunScore], ran: Iterable[str]
) -> tuple[list[RunScore], int]:
    """(every score: the new ones for the cases in ``ran``, the earlier ones for the other
    cases; number of earlier cases kept)."""
    ran_ids = set(ran)
    by_case: dict[str, list[RunScore]] = {}
    for score in new:
        by_case.setdefault(score.case_id, []).append(score)
    out: list[RunScore] = []
    placed: set[str] = set()
    kept: set[str] = set()
    for score in earlier:
        case = score.case_id
        if case not in ran_ids:
            out.append(score)
            kept.add(case)
        elif case not in placed:
            out.extend(by_case.get(case, []))
            placed.add(case)
    for case, scores in by_case.items():
        if case not in placed:
            out.extend(scores)
    return out, len(kept)
