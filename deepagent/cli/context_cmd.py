"""`deepagent context "QUESTION"`: what the context loader selects for a question."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from context_loader.models import ContextRequest, LoadedContext, PageContext
from deepagent.cli.console import make_console
from deepagent.cli.errors import bad_input
from deepagent.core.settings import load_settings
from deepagent.tools.executor import validation_message


def context_command(
    question: Annotated[str, typer.Argument(help="The question.")],
    user: Annotated[str, typer.Option("--user", help="User id.")] = "demo",
    merchant: Annotated[str | None, typer.Option("--merchant", help="Merchant id.")] = None,
    page: Annotated[str | None, typer.Option("--page", help="Page type the user is on.")] = None,
    page_category: Annotated[int | None, typer.Option(help="Category id of the page.")] = None,
    page_product: Annotated[int | None, typer.Option(help="Product id of the page.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the LoadedContext JSON.")] = False,
) -> None:
    """Print the LoadedContext: modules with scores, tools, skills, cases, parameters, timings."""
    try:
        page_ctx = None
        if page is not None:
            page_ctx = PageContext(type=page, category_id=page_category, product_id=page_product)
        request = ContextRequest(
            question=question.strip(),
            user_id=user,
            merchant_id=merchant,
            page=page_ctx,
            source="cli",
        )
    except ValidationError as exc:
        bad_input(validation_message(exc))
    settings = load_settings()
    if not settings.data_path.exists():
        bad_input(f"no sample database at {settings.data_path}; run `deepagent data generate`")
    from context_loader.loader import ContextLoader  # heavy imports only when used

    loader = ContextLoader.create(settings)
    loaded = asyncio.run(loader.load(request))
    if as_json:
        typer.echo(loaded.model_dump_json(indent=2))
        return
    _print(loaded)


def _requirements(ctx: LoadedContext) -> Table:
    """What the question asks for: one row per requirement, with the words it came from."""
    table = Table(title=f"requirements ({ctx.requirements.extractor})")
    for col in ("id", "kind", "words", "value"):
        table.add_column(col)
    for item in ctx.requirements.items:
        value = item.model_dump(exclude={"id", "kind", "text"}, exclude_none=True)
        shown = ", ".join(f"{k}={v}" for k, v in value.items() if v not in ("", []))
        table.add_row(item.id, item.kind, item.text, shown)
    return table


def _print(ctx: LoadedContext) -> None:
    console = make_console()
    table = Table(title=f"modules ({ctx.classifier})", show_lines=False)
    for col in ("module", "score", "selected", "evidence"):
        table.add_column(col)
    for s in ctx.module_scores:
        table.add_row(s.name, f"{s.score:.2f}", "yes" if s.selected else "", "; ".join(s.evidence))
    console.print(table)
    share = len(ctx.tools) / max(ctx.tool_count_total, 1)
    console.print(
        f"[bold]tools[/] {len(ctx.tools)}/{ctx.tool_count_total} ({share:.0%}): "
        + ", ".join(ctx.tools)
    )
    console.print("[bold]skills[/] " + ", ".join(ctx.skills))
    for c in ctx.cases:
        console.print(f"[bold]case[/] {c.id} {c.score:.2f} [dim]{c.question}[/]")
    console.print_json(json.dumps(ctx.params, ensure_ascii=False))
    console.print(_requirements(ctx))
    for p in ctx.param_status:
        if p.status in ("failed", "timeout"):
            console.print(f"[yellow]param {p.provider}: {p.status}[/] [dim]{p.message}[/]")
    absent = [p.provider for p in ctx.param_status if p.status in ("empty", "missing_input")]
    if absent:
        console.print("[dim]not in this question or request: " + ", ".join(absent) + "[/]")
    console.print(
        "[bold]timings ms[/] " + ", ".join(f"{k} {v:.1f}" for k, v in ctx.timings_ms.items())
    )
