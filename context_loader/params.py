"""Context parameters: system values from the request plus module-declared providers.

Every provider runs as its own task under its own timeout, as soon as the parameters its
arguments read are settled; independent providers run concurrently. A provider that
fails, times out or finds nothing is reported in its status and never stops loading.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from graphlib import CycleError, TopologicalSorter

from context_loader.models import ContextRequest, ParamStatus
from deepagent.core.schema import JSON
from deepagent.core.templates import BindingError, fill_template, param_names, search
from deepagent.requirements.model import Requirements, SubjectReq
from deepagent.tools import ToolExecutor
from deepagent.tools.registry import ParamSpec

_TOP_N = re.compile(r"(?:top|前)\s*(\d{1,3})", re.I)
_COUNT = re.compile(
    r"(\d{1,3})\s*(?:个|款|家|种|条|categories|category|leaves|leaf|products|brands|items|shops)",
    re.I,
)


def system_params(request: ContextRequest, now: str) -> dict[str, JSON]:
    params: dict[str, JSON] = {
        "question": request.question,
        "user_id": request.user_id,
        "source": request.source,
        "question_time": now,
    }
    if request.merchant_id:
        params["merchant_id"] = request.merchant_id
    if request.page is not None:
        params["page"] = request.page.model_dump(exclude_none=True)
    return params


def derived_params(params: dict[str, JSON]) -> None:
    """Values computed from others: latest_month, month, top_n, count, campaign_ids."""
    coverage = params.get("data_coverage")
    if isinstance(coverage, dict) and coverage.get("last"):
        params.setdefault("latest_month", coverage["last"])
    latest = params.get("latest_month")
    _time_from_periods(params)
    period = params.get("time")
    end = period.get("end_month") if isinstance(period, dict) else None
    if isinstance(end, str) and (not isinstance(latest, str) or end <= latest):
        params.setdefault("month", end)
    elif isinstance(latest, str):
        params.setdefault("month", latest)
    question = str(params.get("question", ""))
    if m := _TOP_N.search(question):
        params.setdefault("top_n", int(m.group(1)))
    if m := _COUNT.search(question):
        params.setdefault("count", int(m.group(1)))
    found = params.get("campaigns")
    ids = [c["id"] for c in found if isinstance(c, dict)] if isinstance(found, list) else []
    if len(set(ids)) > 1:  # "2025年618和2025年双11": the named campaigns side by side
        params.setdefault("campaign_ids", list(dict.fromkeys(ids)))


def _time_from_periods(params: dict[str, JSON]) -> None:
    """The asked period from the periods found in the question (its first one) where the
    whole question could not be read as one time expression (a question longer than a
    time expression: its month fell back to the latest, "November 2025" was lost)."""
    periods = params.get("periods")
    if params.get("time") is not None or not isinstance(periods, list) or not periods:
        return
    first = periods[0]
    if isinstance(first, dict) and first.get("start_month") and first.get("end_month"):
        params["time"] = {"start_month": first["start_month"], "end_month": first["end_month"]}


PRODUCT_FIELDS = ("title_zh", "title_en", "category_id", "price_band_id")
OUTPUTS = ["question_product", "question_products"]


async def question_product(
    requirements: Requirements, params: dict[str, JSON], executor: ToolExecutor
) -> ParamStatus:
    """The product the question names by id (or a follow-up inherits) as
    ``params.question_product``, shaped like ``page_product``: case templates take it
    before the page's product or the merchant's newest one ("competitors of product 1474"
    fills a plan written for "my newest product")."""
    t = time.perf_counter()
    refs = [
        r.ref
        for r in requirements.items
        if isinstance(r, SubjectReq) and r.subject_type == "product" and isinstance(r.ref, int)
    ]
    if not refs:
        return ParamStatus(provider="question_product", outputs=OUTPUTS,
                           status="empty", message="the question names no product id")  # fmt: skip
    result = await executor.call("get_product_profile", {"product_id": refs[0]})
    data = result.data if result.ok and isinstance(result.data, dict) else {}
    known = {k: data[k] for k in PRODUCT_FIELDS if k in data}
    params["question_product"] = {"id": refs[0], **known}
    if len(set(refs)) > 1:  # "把我的1450和那款1431比比": every named product, in order
        params["question_products"] = list(dict.fromkeys(refs))
    message = "" if result.ok else (result.error.message if result.error else result.plain_text)
    return ParamStatus(
        provider="question_product",
        outputs=OUTPUTS,
        status="ok" if result.ok else "failed",
        duration_ms=round((time.perf_counter() - t) * 1000, 2),
        message=message,
    )


class ParamLoader:
    def __init__(self, specs: Sequence[ParamSpec], executor: ToolExecutor) -> None:
        self.specs = list(specs)
        self.executor = executor
        _check_acyclic(self.specs)

    async def load(self, params: dict[str, JSON]) -> list[ParamStatus]:
        producers: dict[str, list[asyncio.Event]] = {}
        done = {spec.name: asyncio.Event() for spec in self.specs}
        for spec in self.specs:
            for out in spec.outputs:
                producers.setdefault(out, []).append(done[spec.name])
        statuses = await asyncio.gather(
            *(self._run(spec, params, producers, done[spec.name]) for spec in self.specs)
        )
        derived_params(params)
        return list(statuses)

    async def _run(
        self,
        spec: ParamSpec,
        params: dict[str, JSON],
        producers: dict[str, list[asyncio.Event]],
        finished: asyncio.Event,
    ) -> ParamStatus:
        try:
            needs = param_names(spec.args)
            waits = [e for n in needs if n not in params for e in producers.get(n, [])]
            waits = [e for e in waits if e is not finished]
            await asyncio.gather(*(e.wait() for e in waits))
            return await self._call(spec, params)
        finally:
            finished.set()

    async def _call(self, spec: ParamSpec, params: dict[str, JSON]) -> ParamStatus:
        outputs = list(spec.outputs)
        status = ParamStatus(provider=spec.name, outputs=outputs, status="skipped")
        if all(o in params for o in outputs):
            status.message = "already known"
            return status
        try:
            args = fill_template(spec.args, params, str(params.get("question", "")))
        except BindingError as exc:
            status.status, status.message = "missing_input", str(exc)
            return status
        started = time.perf_counter()
        try:
            async with asyncio.timeout(spec.timeout_s):
                result = await self.executor.call(spec.tool, args)
        except TimeoutError:
            status.status = "timeout"
            status.message = f"{spec.tool} took longer than {spec.timeout_s:g}s"
            return status
        finally:
            status.duration_ms = round((time.perf_counter() - started) * 1000, 2)
        if not result.ok:
            kind = result.error.kind if result.error else "failed"
            status.status = (
                "timeout"
                if kind == "timeout"
                else ("empty" if kind in ("empty", "invalid_args") else "failed")
            )
            status.message = result.plain_text[:300]
            return status
        for name, path in spec.outputs.items():
            value = search(path, result.data)
            if value is not None and name not in params:
                params[name] = value
        status.status = "ok"
        return status


def _check_acyclic(specs: Sequence[ParamSpec]) -> None:
    """Providers waiting on each other would never start: refuse such a set."""
    makers: dict[str, list[str]] = {}
    for spec in specs:
        for out in spec.outputs:
            makers.setdefault(out, []).append(spec.name)
    graph = {
        spec.name: {m for n in param_names(spec.args) for m in makers.get(n, []) if m != spec.name}
        for spec in specs
    }
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        raise ValueError(f"context parameter providers form a cycle: {exc.args[1]}") from exc
