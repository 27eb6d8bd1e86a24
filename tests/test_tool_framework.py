"""The tool framework: decorator, registry tree and the executor's checks."""

from __future__ import annotations

import asyncio
from datetime import date

import pytest
from pydantic import BaseModel, ConfigDict

from deepagent.core.schema import ToolResult
from deepagent.core.settings import Settings
from deepagent.tools import ToolContext, ToolExecutor, ToolRegistry, tool
from deepagent.tools.registry import BusinessModule, RegistryError, load_module
from tests import fake_module


def make_executor(visible: set[str] | None = None, **settings: object) -> ToolExecutor:
    registry = ToolRegistry([load_module("tests.fake_module")])
    ctx = ToolContext(settings=Settings(**settings), now=date(2026, 1, 15))  # type: ignore[arg-type]
    return ToolExecutor(registry, ctx, visible=visible)


@pytest.fixture(autouse=True)
def reset_counters() -> None:
    fake_module.CALLS.clear()
    fake_module.ACTIVE.update(now=0, max=0)


class LooseArgs(BaseModel):
    x: int


class StrictArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


def test_decorator_rejects_sync_functions_and_loose_models() -> None:
    with pytest.raises(TypeError, match="async"):
        tool(module="fake", function_module="basic")(lambda a, c: None)  # type: ignore[arg-type,return-value]

    async def loose(args: LooseArgs, ctx: ToolContext) -> ToolResult:
        """Doc."""
        return ToolResult.success(None, "", "")

    with pytest.raises(TypeError, match="extra='forbid'"):
        tool(module="fake", function_module="basic")(loose)

    async def undocumented(args: StrictArgs, ctx: ToolContext) -> ToolResult:
        return ToolResult.success(None, "", "")

    with pytest.raises(TypeError, match="description"):
        tool(module="fake", function_module="basic")(undocumented)


def test_registry_tree_and_schema() -> None:
    registry = ToolRegistry([load_module("tests.fake_module")])
    tree = registry.tree()
    assert [m["name"] for m in tree] == ["fake"]
    groups = {g["name"]: [t["name"] for t in g["tools"]] for g in tree[0]["function_modules"]}
    assert groups == {
        "basic": ["echo", "numbers", "nothing", "broken", "wrong_type"],
        "slow": ["sleepy", "exclusive"],
    }
    echo = registry.tools["echo"]
    assert echo.signature() == "echo(text: string, times: integer = 1)"
    schema = echo.json_schema()
    assert schema["required"] == ["text"]
    assert schema["additionalProperties"] is False
    assert "title" not in schema and "title" not in schema["properties"]["text"]


def test_registry_rejects_duplicates_and_unknown_function_modules() -> None:
    module = load_module("tests.fake_module")
    with pytest.raises(RegistryError, match="registered twice"):
        ToolRegistry([module, module])
    bad_manifest = module.manifest.model_copy(update={"function_modules": {"basic": "x"}})
    with pytest.raises(RegistryError, match="function module 'slow'"):
        ToolRegistry([BusinessModule(manifest=bad_manifest, tools=module.tools)])


async def test_success_passes_validated_args() -> None:
    result = await make_executor().call("echo", {"text": "ab", "times": 2})
    assert result.ok and result.data == {"text": "abab"}
    assert result.status == "ok"
    as_json = await make_executor().call("echo", '{"text": "x"}')
    assert as_json.data == {"text": "x"}


async def test_unknown_tool_suggests_close_names() -> None:
    result = await make_executor().call("ecko", {})
    assert result.error is not None and result.error.kind == "unknown_tool"
    assert "did you mean echo" in result.error.message


async def test_tool_not_loaded_in_this_run_is_refused() -> None:
    result = await make_executor(visible={"numbers"}).call("echo", {"text": "a"})
    assert result.error is not None and result.error.kind == "refused"
    assert "not loaded" in result.error.message
    assert fake_module.CALLS == {}


async def test_invalid_arguments_name_the_field() -> None:
    executor = make_executor()
    missing = await executor.call("echo", {})
    assert missing.error is not None and missing.error.kind == "invalid_args"
    assert "text: Field required" in missing.error.message
    extra = await executor.call("echo", {"text": "a", "colour": "red"})
    assert extra.error is not None and "colour: Extra inputs are not permitted" in extra.plain_text
    bounds = await executor.call("echo", {"text": "a", "times": 9})
    assert bounds.error is not None and "times" in bounds.error.message
    assert fake_module.CALLS == {}


async def test_timeout_becomes_a_value() -> None:
    result = await make_executor().call("sleepy", {"seconds": 2})
    assert result.error is not None and result.error.kind == "timeout"
    assert "timed out after 0.05s" in result.error.message


async def test_injected_latency_counts_against_the_timeout() -> None:
    executor = make_executor(tool_latency_ms={"sleepy": 1000})
    result = await executor.call("sleepy", {"seconds": 0})
    assert result.error is not None and result.error.kind == "timeout"
    assert "sleepy" not in fake_module.CALLS  # cancelled during the injected latency
    fast = await make_executor(tool_latency_ms={"*": 1}).call("echo", {"text": "a"})
    assert fast.ok


async def test_exceptions_and_wrong_return_types_are_failures() -> None:
    executor = make_executor()
    raised = await executor.call("broken", {"n": 1})
    assert raised.error is not None and raised.error.kind == "failed"
    assert "RuntimeError: boom 1" in raised.error.message
    wrong = await executor.call("wrong_type", {"n": 1})
    assert wrong.error is not None and "not a ToolResult" in wrong.error.message


async def test_repeat_of_a_failed_call_is_refused_without_running() -> None:
    executor = make_executor()
    first = await executor.call("broken", {"n": 1})
    assert first.error is not None and first.error.kind == "failed"
    again = await executor.call("broken", '{"n": 1}')
    assert again.error is not None and again.error.kind == "refused"
    assert "already failed" in again.error.message
    other = await executor.call("broken", {"n": 2})
    assert other.error is not None and other.error.kind == "failed"
    assert fake_module.CALLS["broken"] == 2
    empty = await executor.call("nothing", {"n": 3})
    assert empty.status == "empty"
    assert (await executor.call("nothing", {"n": 3})).error.kind == "refused"  # type: ignore[union-attr]
    assert fake_module.CALLS["nothing"] == 1


async def test_successful_calls_may_repeat() -> None:
    executor = make_executor()
    for _ in range(3):
        assert (await executor.call("echo", {"text": "a"})).ok
    assert fake_module.CALLS["echo"] == 3


async def test_large_results_are_truncated_with_total() -> None:
    executor = make_executor(max_result_chars=1000)
    result = await executor.call("numbers", {"n": 200})
    assert result.ok and result.truncated
    assert result.total == 200
    items = result.data["items"]
    assert 0 < len(items) < 200
    assert items == [{"i": i, "label": f"item number {i}"} for i in range(len(items))]
    assert result.data["query"] == "numbers"
    assert f"showing {len(items)} of 200" in result.plain_text
    small = await executor.call("numbers", {"n": 3})
    assert not small.truncated and small.total is None


async def test_tools_not_safe_for_concurrency_are_serialized() -> None:
    executor = make_executor()
    await asyncio.gather(*(executor.call("exclusive", {"seconds": 0.01}) for _ in range(4)))
    assert fake_module.ACTIVE["max"] == 1
    await asyncio.gather(*(executor.call("echo", {"text": str(i)}) for i in range(4)))
