"""`deepagent cases`: candidate library cases from eval runs, and their review.

``propose`` only writes a review file; ``review`` is the one way into the library, and
only for a candidate accepted explicitly (``--accept ID`` or an ``a`` answer in
``--interactive``) that passes the library's validation.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
import yaml
from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from deepagent.cli.console import renamed
from deepagent.cli.errors import bad_input
from deepagent.core.settings import load_settings

if TYPE_CHECKING:
    from deepagent.tools.registry import ToolRegistry
    from eval.harness.proposals import Candidate

app = typer.Typer(
    help="Case library feedback: propose cases from runs, review them.", no_args_is_help=True
)

REVIEW_FILE = Path("var/cases_review.yaml")
"""Under the project home (DEEPAGENT_HOME, else the checkout), unless given."""

ReviewOption = Annotated[
    Path | None,
    typer.Option("--out", help="Review file (default var/cases_review.yaml of the project)."),
]
OldReviewOption = Annotated[Path | None, typer.Option("--file", hidden=True)]  # its old name
LibraryOption = Annotated[
    Path | None,
    typer.Option("--library-dir", help="Case library folder (default rag_cases/cases)."),
]


def _review_file(given: Path | None) -> Path:
    return given if given is not None else load_settings().in_home(REVIEW_FILE)


def _library_dir(given: Path | None) -> Path:
    from rag_cases.store import CASES_DIR

    return given or CASES_DIR


def _registry() -> ToolRegistry:
    from deepagent.tools.registry import ToolRegistry

    return ToolRegistry.load(load_settings())


def _read(path: Path) -> list[Candidate]:
    from eval.harness.proposals import ReviewFileError, read_review

    try:
        return read_review(path)
    except ReviewFileError as exc:
        bad_input(str(exc))


@app.command("propose")
def propose_command(
    run_dir: Annotated[Path, typer.Argument(help="An eval directory (deepagent eval run).")],
    min_score: Annotated[
        float, typer.Option("--min-score", min=0.0, max=1.0, help="Least judge overall.")
    ] = 0.8,
    given_out: ReviewOption = None,
    library_dir: LibraryOption = None,
) -> None:
    """Write candidate cases from the high-scoring runs of RUN_DIR to the review file
    (status pending; the library itself is not touched)."""
    from eval.harness.proposals import propose, write_review
    from eval.harness.report_data import RunDirError
    from eval.harness.review import DEFAULT_TARGET, check, library_cases
    from rag_cases.store import CaseFileError, load_cases

    out = _review_file(given_out)
    folder = _library_dir(library_dir)
    existing = _read(out)
    registry = _registry()
    try:
        library = load_cases(folder)
        found, skipped = propose(run_dir, library, registry, existing, min_score=min_score)
        cases = library_cases(folder)
    except (RunDirError, CaseFileError) as exc:
        bad_input(str(exc))
    target = folder / DEFAULT_TARGET
    found = [c.model_copy(update={"problems": check(c, cases, target, registry)}) for c in found]
    write_review(out, [*existing, *found])
    console = Console()
    for c in found:
        flag = f" [yellow]({len(c.problems)} problems)[/]" if c.problems else ""
        console.print(f"{c.id}: {c.case.get('question')}{flag}", highlight=False)
    reasons = ", ".join(f"{n} {why}" for why, n in skipped.most_common()) or "none"
    console.print(f"{len(found)} candidates added to {out}; left out: {reasons}")


def show(console: Console, c: Candidate) -> None:
    case = c.case
    lines = [
        f"[bold]{case.get('question')}[/]",
        f"language {case.get('language')} · {case.get('question_type')} · "
        f"modules {case.get('modules')} · function modules {case.get('function_modules')}",
        f"fields {case.get('fields')}",
        f"from {c.eval_case} (judge {c.score:.2f}): {c.run}",
        f"closest library question: {c.similar_to or '-'}",
        "approach:",
    ]
    approach = case.get("approach")
    steps = approach if isinstance(approach, list) else []
    lines += [f"  {i}. {step}" for i, step in enumerate(steps, start=1)]
    body: list[Text | Syntax] = [Text.from_markup("\n".join(lines))]
    plan = yaml.safe_dump(case.get("plan"), allow_unicode=True, sort_keys=False, width=100)
    body.append(Syntax(plan, "yaml", word_wrap=True))
    if c.problems:
        body.append(Text("\n".join(f"! {p}" for p in c.problems), style="red"))
    console.print(Panel(Group(*body), title=f"{c.id} [{c.status}]", title_align="left"))


@app.command("review")
def review_command(
    given_file: ReviewOption = None,
    old_file: OldReviewOption = None,
    accept_ids: Annotated[
        list[str] | None, typer.Option("--accept", help="Accept these candidates (repeatable).")
    ] = None,
    reject_ids: Annotated[
        list[str] | None, typer.Option("--reject", help="Reject these candidates (repeatable).")
    ] = None,
    interactive: Annotated[
        bool, typer.Option("--interactive", help="Ask accept / reject / skip for each.")
    ] = False,
    library_dir: LibraryOption = None,
    target: Annotated[
        str, typer.Option("--target", help="Library file accepted cases are appended to.")
    ] = "accepted.yaml",
) -> None:
    """Show the pending candidates; accept (validated, then appended to the library) or
    reject the ones named. A candidate that fails validation stays pending (exit 1)."""
    from eval.harness.proposals import write_review

    file = _review_file(renamed(given_file, old_file, "--out", "--file"))
    candidates = _read(file)
    accepts, rejects = _ids(accept_ids), _ids(reject_ids)
    known = {c.id for c in candidates}
    unknown = sorted((accepts | rejects) - known)
    if unknown:
        bad_input(f"no candidate {', '.join(unknown)} in {file}")
    if accepts & rejects:
        bad_input(f"both accepted and rejected: {', '.join(sorted(accepts & rejects))}")
    if not target.endswith(".yaml") or "/" in target:
        bad_input(f"--target is a file name ending in .yaml, got {target}")
    console = Console()
    decide = _Decider(console, _library_dir(library_dir), target, accepts, rejects, interactive)
    candidates = [decide(c) for c in candidates]
    write_review(file, candidates)
    pending = sum(c.status == "pending" for c in candidates)
    console.print(f"{decide.accepted} accepted, {decide.rejected} rejected, {pending} pending")
    if decide.refused:
        raise typer.Exit(1)


def _ids(values: list[str] | None) -> set[str]:
    return {v.strip() for raw in values or [] for v in raw.split(",") if v.strip()}


class _Decider:
    """Applies the decisions to each candidate in turn (showing the pending ones)."""

    def __init__(
        self,
        console: Console,
        library_dir: Path,
        target: str,
        accepts: set[str],
        rejects: set[str],
        interactive: bool,
    ) -> None:
        self.console, self.library_dir, self.target = console, library_dir, target
        self.accepts, self.rejects, self.interactive = accepts, rejects, interactive
        self.registry: ToolRegistry | None = None
        self.accepted = self.rejected = self.refused = 0
        self.stopped = False

    def __call__(self, c: Candidate) -> Candidate:
        if c.status != "pending":
            return c
        named = c.id in self.accepts or c.id in self.rejects
        if named or not (self.accepts or self.rejects):
            show(self.console, c)
        choice = self._choice(c)
        if choice == "r":
            from eval.harness.review import reject

            self.rejected += 1
            self.console.print(f"[yellow]{c.id}: rejected[/]")
            return reject(c)
        return self._accept(c) if choice == "a" else c

    def _choice(self, c: Candidate) -> str:
        if c.id in self.accepts:
            return "a"
        if c.id in self.rejects:
            return "r"
        if not self.interactive or self.stopped:
            return "s"
        answer = typer.prompt(f"{c.id}: [a]ccept, [r]eject, [s]kip, [q]uit", default="s")
        self.stopped = answer.strip().lower().startswith("q")
        return answer.strip().lower()[:1] if not self.stopped else "s"

    def _accept(self, c: Candidate) -> Candidate:
        from eval.harness.review import accept

        self.registry = self.registry or _registry()
        done = accept(c, self.library_dir, self.registry, self.target)
        if done.status == "accepted":
            self.accepted += 1
            self.console.print(f"[green]{c.id}: accepted into {done.library_file}[/]")
        else:
            self.refused += 1
            why = "; ".join(done.problems)
            self.console.print(f"[red]{c.id}: refused, stays pending: {why}[/]", highlight=False)
        return done
