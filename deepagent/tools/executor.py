"""The one door every tool call goes through.

Checks, in order: the tool exists, it is visible in this run, the arguments validate,
the same call has not already failed; then runs it under its timeout (after any injected
latency) and caps what enters the context. Every failure is returned as a ToolResult.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from deepagent.core.schema import JSON, ToolResult
from deepagent.tools.capping import cap_result
from deepagent.tools.offload.workspace import (
    Workspace,
    WorkspaceError,
    offload_note,
    should_offload,
)
from deepagent.tools.registry import ToolRegistry
from deepagent.tools.spec import ToolContext, ToolSpec


class ToolExecutor:
    """Runs tools for one run; remembers which calls failed so they are not repeated."""

    def __init__(
        self,
        registry: ToolRegistry,
        context: ToolContext,
        *,
        visible: Collection[str] | None = None,
        workspace: Workspace | None = None,
    ) -> None:
        self.registry = registry
        self.context = context
        self.workspace = workspace
        self.visible = None if visible is None else frozenset(visible)
        self._failed: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.prefetched: dict[str, asyncio.Task[ToolResult]] = {}
        """Calls started before their decision was final (streaming dispatch), by call key:
        ``call`` awaits such a task instead of running the tool again."""

    def remember_failure(self, name: str, args: Mapping[str, JSON], kind: str) -> None:
        """Carry a failure over from an earlier round (a new executor per round forgets)."""
        spec = self.registry.get(name)
        canonical: JSON = dict(args)
        if spec is not None:
            parsed = self._validate(spec, args)
            if not isinstance(parsed, ToolResult):
                canonical = parsed.model_dump(mode="json")
        self._failed[call_key(name, canonical)] = kind

    async def call(
        self,
        name: str,
        args: Mapping[str, JSON] | str | None = None,
        *,
        action_id: str | None = None,
    ) -> ToolResult:
        """Run one tool call; ``action_id`` names what an offloaded result is stored as
        (the tool's name when the call is not an action's)."""
        spec = self.registry.get(name)
        if spec is None:
            return ToolResult.failure("unknown_tool", self.unknown_tool_message(name))
        if self.visible is not None and name not in self.visible:
            return ToolResult.failure(
                "refused", f"tool {name!r} (module {spec.module}) is not loaded in this run"
            )
        checked = self._checked(spec, args)
        if isinstance(checked, ToolResult):
            return checked
        parsed, key = checked
        if key in self._failed:
            return ToolResult.failure(
                "refused",
                f"{name} already failed with these arguments ({self._failed[key]}); "
                "do not retry the same call, change the arguments or the approach",
            )
        early = self.prefetched.pop(key, None)
        result = await (early if early is not None else self._run(spec, parsed))
        if not result.ok and result.error is not None:
            self._failed[key] = result.error.kind
        limit = self.context.settings.offload_chars
        if self.workspace is not None and should_offload(result, limit):
            try:
                stored = await asyncio.to_thread(
                    self.workspace.offload, action_id or name, result, limit
                )
                # The planner's context gets the path and the text (plain_text); the data
                # stays with the run for the analysis.
                where = stored.data["offloaded"]
                note = offload_note(where["path"], where["bytes"])
                result = result.model_copy(update={"plain_text": note + result.plain_text})
            except WorkspaceError as exc:
                result = result.model_copy(update={"plain_text": f"{result.plain_text} ({exc})"})
        return cap_result(result, self.context.settings.max_result_chars)

    def start_early(self, name: str, args: Mapping[str, JSON]) -> str | None:
        """Start a read-only call now, before its decision is final (streaming dispatch);
        the call key it is kept under, once however often it is asked for (None: not
        started: unknown, hidden, invalid, refused, already failed, or with side effects)."""
        spec = self.registry.get(name)
        if spec is None or not spec.read_only or (self.visible and name not in self.visible):
            return None
        checked = self._checked(spec, args)
        if isinstance(checked, ToolResult) or checked[1] in self._failed:
            return None
        parsed, key = checked
        if key not in self.prefetched:
            self.prefetched[key] = asyncio.ensure_future(self._run(spec, parsed))
        return key

    def drop_early(self) -> None:
        """Cancel the early calls no action took (the decision changed or failed)."""
        for task in self.prefetched.values():
            task.cancel()
        self.prefetched.clear()

    def _checked(
        self, spec: ToolSpec, args: Mapping[str, JSON] | str | None
    ) -> tuple[Any, str] | ToolResult:
        """The parsed arguments and the call key, or the refusal."""
        parsed = self._validate(spec, args)
        if isinstance(parsed, ToolResult):
            return parsed
        denied = self._merchant_denied(spec, parsed)
        if denied is not None:
            return denied
        return parsed, call_key(spec.name, parsed.model_dump(mode="json"))

    def _merchant_denied(self, spec: ToolSpec, parsed: Any) -> ToolResult | None:
        """A refusal when the call reads a merchant's private data outside the binding."""
        if spec.merchant_arg is None:
            return None
        merchant = str(getattr(parsed, spec.merchant_arg))
        if self.context.may_read(merchant):
            return None
        return ToolResult.failure(
            "refused",
            f"{spec.name}: merchant {merchant!r} is not one this run may read (the caller's "
            "key is not bound to it); answer without that merchant's private data",
        )

    def _validate(self, spec: ToolSpec, args: Mapping[str, JSON] | str | None) -> Any:
        try:
            if isinstance(args, str):
                return spec.input_model.model_validate_json(args or "{}")
            return spec.input_model.model_validate(dict(args or {}))
        except ValidationError as exc:
            return ToolResult.failure(
                "invalid_args", f"invalid arguments for {spec.name}: {validation_message(exc)}"
            )

    async def _run(self, spec: ToolSpec, parsed: Any) -> ToolResult:
        settings = self.context.settings
        latency = settings.tool_latency_ms.get(spec.name, settings.tool_latency_ms.get("*", 0.0))
        timeout = spec.timeout_s * settings.tool_timeout_scale
        lock = None if spec.concurrency_safe else self._locks.setdefault(spec.name, asyncio.Lock())
        try:
            async with asyncio.timeout(timeout):
                if lock is not None:
                    await lock.acquire()
                try:
                    if latency > 0:
                        await asyncio.sleep(latency / 1000)
                    result = await spec.fn(parsed, self.context)
                finally:
                    if lock is not None:
                        lock.release()
        except TimeoutError:
            return ToolResult.failure("timeout", f"{spec.name} timed out after {timeout:g}s")
        except Exception as exc:  # a tool bug must not abort the run: it becomes a value
            return ToolResult.failure("failed", f"{spec.name} failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, ToolResult):
            return ToolResult.failure(
                "failed", f"{spec.name} returned {type(result).__name__}, not a ToolResult"
            )
        return result

    def unknown_tool_message(self, name: str) -> str:
        pool = list(self.registry.tools) if self.visible is None else sorted(self.visible)
        close = difflib.get_close_matches(name, pool, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return f"unknown tool {name!r}{hint}"


def call_key(name: str, args: JSON) -> str:
    """Canonical identity of a call: tool name plus its validated arguments."""
    return f"{name}:{json.dumps(args, sort_keys=True, ensure_ascii=False)}"


def validation_message(exc: ValidationError) -> str:
    """One line naming each bad field and why."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)
