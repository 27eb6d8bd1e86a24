"""Parameter providers: concurrency, dependencies, failures and timeouts are reported."""

from __future__ import annotations

from datetime import date

import pytest

from context_loader.models import ContextRequest, PageContext
from context_loader.params import ParamLoader, derived_params, system_params
from deepagent.core.schema import JSON
from deepagent.core.settings import Settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry
from deepagent.tools.registry import ParamSpec, load_module
from tests import fake_params_module


@pytest.fixture
def loader() -> ParamLoader:
    module = load_module("tests.fake_params_module")
    registry = ToolRegistry([module])
    executor = ToolExecutor(registry, ToolContext(settings=Settings(), now=date(2026, 1, 15)))
    fake_params_module.ACTIVE.update(now=0, max=0)
    return ParamLoader(module.manifest.params, executor)


async def test_providers_report_each_outcome_and_never_raise(loader: ParamLoader) -> None:
    params = system_params(ContextRequest(question="q", user_id="u1"), "2026-01-15")
    statuses = {s.provider: s for s in await loader.load(params)}
    assert params["a"] == "A" and params["b"] == "B"
    assert params["a2"] == "A-2"  # waited for its input
    assert statuses["slow"].status == "timeout" and "0.1s" in statuses["slow"].message
    assert "slow" not in params
    assert statuses["broken"].status == "failed"
    assert "provider backend down" in statuses["broken"].message
    assert statuses["needs_missing"].status == "missing_input"
    assert statuses["given"].status == "skipped"  # the request already gave user_id
    assert params["user_id"] == "u1"


async def test_independent_providers_run_concurrently(loader: ParamLoader) -> None:
    await loader.load({"question": "q"})
    assert fake_params_module.ACTIVE["max"] >= 2


def test_cyclic_providers_are_refused() -> None:
    def spec(name: str, reads: str, out: str) -> ParamSpec:
        return ParamSpec(
            name=name,
            description="",
            tool="t",
            args={"x": f"{{{{params.{reads}}}}}"},
            outputs={out: "@"},
        )

    registry = ToolRegistry([])
    executor = ToolExecutor(registry, ToolContext(settings=Settings(), now=date(2026, 1, 15)))
    with pytest.raises(ValueError, match="cycle"):
        ParamLoader([spec("p1", "b", "a"), spec("p2", "a", "b")], executor)


def test_system_and_derived_params() -> None:
    request = ContextRequest(
        question="选10个竞争强度最低的叶子类目，看Top 20商品",
        merchant_id="M9",
        page=PageContext(type="new_product_page", product_id=7),
    )
    params = system_params(request, "2026-01-15")
    assert params["merchant_id"] == "M9"
    assert params["page"] == {"type": "new_product_page", "product_id": 7}
    params["data_coverage"] = {"first": "2024-01", "last": "2025-12"}
    params["time"] = {"start_month": "2026-01", "end_month": "2026-01", "months": ["2026-01"]}
    derived_params(params)
    assert params["latest_month"] == "2025-12"
    assert params["month"] == "2025-12"  # the asked month has no data yet
    assert (params["count"], params["top_n"]) == (10, 20)
    inside: dict[str, JSON] = {
        "question": "Top20",
        "latest_month": "2025-12",
        "time": {"end_month": "2025-06"},
    }
    derived_params(inside)
    assert inside["month"] == "2025-06" and inside["top_n"] == 20 and "count" not in inside
