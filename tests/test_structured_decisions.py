"""Structured planner decisions: the output mode a request carries, its fallback, the
parser and the compact re-ask (``planning.structured``, ``planning.planner``).

Runs go through the production path against ``deepagent sim-llm``: settings ->
RunDeps.create -> ChatOpenAI -> HTTP -> simulator, whose planner answers in the wire form
when the request holds it to the wire schema, and logs what each request carried.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import pytest_asyncio
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.deps import RunDeps
from deepagent.llm import ModelConfig
from deepagent.llm.config import OutputMode
from deepagent.llm.testing import ScriptedChatModel, length_cut
from deepagent.planning.grammar import BOUNDED_SCHEMA, round_schema
from deepagent.planning.offline.model import OfflinePlannerModel
from deepagent.planning.planner import parse_decision
from deepagent.planning.structured import (
    REPLY_TAIL,
    configure,
    json_objects,
    refuses_format,
    reset_fallbacks,
)
from deepagent.planning.wire import SCHEMA_NAME, WIRE_SCHEMA
from deepagent.prompts.sections import sections
from deepagent.record import RunRecord
from deepagent.simllm import SimConfig
from deepagent.simllm.server import Running, serve_in_thread
from tests.questions import LOOKUP

PLANNER = "offline-planner"


@pytest.fixture(scope="module")
def sim() -> Iterator[Running]:
    with serve_in_thread(SimConfig(seed=3)) as running:
        yield running


@pytest.fixture(autouse=True)
def fresh(sim: Running) -> Iterator[None]:
    sim.state.received.clear()
    reset_fallbacks()
    yield
    reset_fallbacks()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def offline(loader: ContextLoader) -> RunRecord:
    """The lookup question planned offline: the calls every simulated run must make."""
    agent = Agent(RunDeps(loader.settings, loader, OfflinePlannerModel(), None))
    record = await agent.run_to_end(ContextRequest(question=LOOKUP))
    assert record.status == "completed"
    return record


def calls(record: RunRecord) -> list[list[tuple[str, str | None, str, str]]]:
    return [
        [(a.id, a.tool, json.dumps(a.args, sort_keys=True), a.status) for a in r.actions]
        for r in record.rounds
    ]


async def run(loader: ContextLoader, base_url: str, **planner: Any) -> RunRecord:
    config = ModelConfig(kind="openai", model=PLANNER, base_url=base_url, timeout_s=5, **planner)
    settings = loader.settings.model_copy(update={"models": {"planner": config}})
    return await Agent(RunDeps.create(settings, loader)).run_to_end(ContextRequest(question=LOOKUP))


def planner_requests(sim: Running) -> list[dict[str, Any]]:
    return [r for r in sim.state.received if r.get("model") == PLANNER]


# --- the request carries the mode; the decision parses from the wire form -----------------


async def test_the_planner_request_carries_the_wire_schema_and_the_run_matches_offline(
    sim: Running, loader: ContextLoader, offline: RunRecord
) -> None:
    record = await run(loader, sim.base_url)  # the planner's default: json_schema
    assert record.status == "completed", record.error
    assert calls(record) == calls(offline) and calls(record)[0]
    (request,) = planner_requests(sim)
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": WIRE_SCHEMA},
    }
    assert "tools" not in request
    assert [r.output_mode for r in record.rounds] == ["json_schema"] * len(record.rounds)
    assert record.rounds[0].output_fallback is None


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_each_mode_runs_the_same_plan(
    stream: bool, sim: Running, loader: ContextLoader, offline: RunRecord
) -> None:
    for mode in ("json_schema", "tools", "json_object_schema", "json_object", "text"):
        sim.state.received.clear()
        record = await run(loader, sim.base_url, output=mode, stream_decisions=stream)
        assert record.status == "completed", (mode, record.error)
        assert calls(record) == calls(offline), mode
        assert record.rounds[0].output_mode == mode
        (request,) = planner_requests(sim)
        assert request.get("stream", False) is (stream and mode != "tools"), mode
        if mode == "tools":
            (tool,) = request["tools"]
            assert tool["function"]["name"] == SCHEMA_NAME
            assert tool["function"]["parameters"] == WIRE_SCHEMA
            assert request["tool_choice"] == {"type": "function", "function": {"name": SCHEMA_NAME}}
        grammar = round_schema(
            record.tools_loaded,
            record.case_ids,
            [r.id for r in record.requirements.items] if record.requirements else [],
        )
        expected = {
            "json_object": {"type": "json_object"},
            "json_object_schema": {"type": "json_object", "schema": grammar},
        }.get(mode)
        if mode in ("tools", "text", "json_object", "json_object_schema"):
            assert request.get("response_format") == expected, mode


def test_the_prompt_describes_the_wire_form_only_when_the_reply_is_held_to_it() -> None:
    from deepagent.planning.context import PlannerContext
    from deepagent.planning.planner import _with_mode
    from deepagent.planning.render import planner_messages

    base = planner_messages(PlannerContext(question=LOOKUP, language="zh"))
    held: tuple[OutputMode, ...] = ("json_schema", "json_object_schema", "tools")
    free: tuple[OutputMode, ...] = ("json_object", "text")
    for mode in held:
        system = str(_with_mode(base, mode)[0].content)
        assert system.startswith(str(base[0].content)) and '"ref_"' in system
        assert "value_json" in system
    for mode in free:
        assert _with_mode(base, mode) == base


# --- a server that refuses the format -------------------------------------------------------


@pytest.mark.parametrize(
    ("refused", "lands_on"),
    [
        (["json_schema"], "json_object_schema"),
        (["json_schema", "json_object_schema"], "json_object"),
        (["json_schema", "json_object_schema", "json_object"], "text"),
    ],
)
async def test_a_refused_format_falls_back_and_stays_down_for_the_process(
    refused: list[str], lands_on: str, loader: ContextLoader, offline: RunRecord
) -> None:
    with serve_in_thread(SimConfig(refuse_formats=refused)) as strict_less:
        record = await run(loader, strict_less.base_url)
        assert record.status == "completed", record.error
        assert calls(record) == calls(offline)
        first = record.rounds[0]
        assert first.output_mode == lands_on
        assert first.output_fallback is not None
        assert first.output_fallback.startswith("json_schema refused by the endpoint (")
        assert "unsupported" in first.output_fallback
        assert first.output_fallback.endswith(f": {lands_on}")
        asked = [mode_of(r) for r in strict_less.state.received]
        assert asked == [*refused, lands_on]
        assert record.llm_calls["planner"] >= 1
        strict_less.state.received.clear()
        again = await run(loader, strict_less.base_url)  # the process remembers
        assert again.rounds[0].output_mode == lands_on
        assert [mode_of(r) for r in strict_less.state.received] == [lands_on]


def mode_of(request: dict[str, Any]) -> str:
    """The output mode a logged request asked for."""
    form = request.get("response_format") or {}
    if form.get("type") == "json_object" and form.get("schema"):
        return "json_object_schema"
    return str(form.get("type", "text"))


def test_only_a_format_refusal_is_one() -> None:
    class BadRequest(Exception):
        status_code = 400

    assert refuses_format(BadRequest("Invalid parameter: response_format json_schema"))
    assert refuses_format(BadRequest("'tools' are not supported"))
    assert refuses_format(RuntimeError("structured outputs unsupported by this backend"))
    assert not refuses_format(BadRequest("maximum context length is 8192 tokens"))
    assert not refuses_format(TimeoutError("Request timed out"))

    class ServerError(Exception):
        status_code = 500

    # llama.cpp's server validates the request and answers a json_schema format with 500
    said = "response_format.type must be 'text' or 'json_object'"
    assert refuses_format(ServerError(said))
    assert not refuses_format(ServerError("internal error"))


# --- the parser --------------------------------------------------------------------------

GOOD = '{"thought": "t", "action": {"type": "final_analysis"}}'


@pytest.mark.parametrize(
    "text",
    [
        f"Here is my decision:\n```json\n{GOOD}\n```\nI hope this helps {{really}}.",
        f'{{"note": "a draft"}} and then {GOOD} and {{"action": {{"type": "call_human"}}}}',
        f"I use {{braces}} in prose first. {GOOD}",
        f'{{"thought": "}}{{ in a string", "action": {{"type": "final_analysis"}}}} {GOOD}',
    ],
    ids=["fenced-with-prose", "three-objects", "prose-braces", "braces-in-strings"],
)
def test_the_decision_is_the_first_object_that_validates(text: str) -> None:
    decision = parse_decision(text)
    assert decision.action.type == "final_analysis"


def test_the_error_is_the_first_objects_and_bad_json_says_where() -> None:
    with pytest.raises(ValueError, match="confidence: Extra inputs") as first:
        parse_decision(
            '{"thought": "a", "confidence": 1, "action": {"type": "final_analysis"}} '
            '{"action": {"type": "nope"}}'
        )
    assert "nope" not in str(first.value)
    with pytest.raises(ValueError, match=r"invalid JSON: .* at position 12"):
        parse_decision('{"thought": }')
    with pytest.raises(ValueError, match="no JSON object"):
        parse_decision("no decision here")
    found = json_objects('```json\n{"a": {"b": 1}}\n```\n{"c": 2} [1, 2] {"d": }')
    assert found.objects == [{"a": {"b": 1}}, {"c": 2}]
    assert found.first_error is not None and "invalid JSON" in found.first_error


def test_a_wire_form_reply_parses_in_any_mode() -> None:
    wire = {
        "thought": None,
        "todo_list": None,
        "covers": None,
        "action": {
            "type": "call_actions",
            "answers": True,
            "actions": [
                {"id": "a", "kind": None, "tool": "list_things", "subagent": None,
                 "args": [{"name": "month", "value_json": "\"2025-12\""}],
                 "depends_on": None, "for_each": None},
                {"id": "b", "kind": None, "tool": "get_thing", "subagent": None,
                 "args": [{"name": "id", "value_json": "{\"$item\": \"id\"}"}],
                 "depends_on": None, "for_each": {"ref_": "a", "path": "items"}},
            ],
        },
    }  # fmt: skip
    decision = parse_decision(json.dumps(wire))
    first, second = decision.action.actions  # type: ignore[union-attr]
    assert first.args == {"month": "2025-12"}
    assert second.args == {"id": {"$item": "id"}}
    assert second.for_each is not None and second.for_each.ref == "a"
    assert second.depends_on == ["a"]


# --- the compact re-ask ------------------------------------------------------------------


async def test_the_reask_is_compact_and_keeps_the_first_error(loader: ContextLoader) -> None:
    padding = "x" * 3000
    bad = '{"thought": "' + padding + '", "confidence": 1, "action": {"type": "final_analysis"}}'
    planner = ScriptedChatModel.from_replies([bad, '{"thought": }'])
    agent = Agent(RunDeps(loader.settings, loader, planner, None))
    record = await agent.run_to_end(ContextRequest(question=LOOKUP))
    first, second = planner.calls
    assert len(first) == 2 and isinstance(first[0], SystemMessage)
    assert len(second) == 3 and second[:2] == first  # the original prompt, once
    reask = second[2]
    assert isinstance(reask, HumanMessage)
    text = str(reask.content)
    parts = sections(text)
    assert "confidence: Extra inputs are not permitted" in parts["validation_error"]
    assert parts["reply_tail"].endswith(bad[-REPLY_TAIL:]) and padding not in text
    assert len(text) < 1200
    prompt = sum(len(str(m.content)) for m in first)
    assert sum(len(str(m.content)) for m in second) < prompt + 1200  # not the prompt twice
    assert sum(str(m.content).count("<question>") for m in second) == 1
    assert record.status == "failed"
    assert record.error is not None and "invalid JSON" in record.error
    assert "(first reply: confidence: Extra inputs are not permitted)" in record.error


async def test_a_tool_call_reply_is_read_from_its_arguments(loader: ContextLoader) -> None:
    call = {"name": SCHEMA_NAME, "args": {"thought": None, "todo_list": None, "covers": None,
            "action": {"type": "call_human", "question": "Which month?", "options": None}},
            "id": "c1"}  # fmt: skip
    planner = configure(ScriptedChatModel.from_replies([AIMessage("", tool_calls=[call])]), "tools")
    agent = Agent(RunDeps(loader.settings, loader, planner, None))
    record = await agent.run_to_end(ContextRequest(question=LOOKUP))
    assert record.status == "needs_input" and record.pending_question == "Which month?"


def test_a_grammar_held_reply_is_bounded_and_still_holds_every_plan() -> None:
    """Every free string and list of the llama.cpp form is bounded, so a grammar built
    from it ends every reply as a whole object (a tiny model ran on to its reply limit);
    strings the models require are not empty; the schema is otherwise unchanged."""
    import json as _json

    text = _json.dumps(BOUNDED_SCHEMA)
    assert '"maxLength": 400' in text and '"maxItems": 12' in text
    assert "maxLength" not in _json.dumps(WIRE_SCHEMA)  # OpenAI's strict mode: unbounded

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            drop = ("maxLength", "maxItems", "minLength")
            return {k: strip(v) for k, v in value.items() if k not in drop}
        return [strip(v) for v in value] if isinstance(value, list) else value

    assert strip(BOUNDED_SCHEMA) == WIRE_SCHEMA
    assert '"minLength": 1' in text


# --- a reply cut at its length limit --------------------------------------------------------


class CutFirst(ScriptedChatModel):
    """Runs to its length limit on its first ``cuts`` calls, then replies as scripted."""

    cuts: int = 1

    def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        if self.cuts > 0:
            self.cuts -= 1
            self.calls.append(list(messages))
            raise length_cut('{"thought": "aaaa', 6000, 1024)
        return super()._generate(messages, *args, **kwargs)


async def test_a_reply_cut_at_its_limit_is_asked_again_shorter() -> None:
    """``finish_reason: length`` is read as what it is, a decision not finished, and
    repaired once by a compact re-ask (it used to fail the round as a model error)."""
    from deepagent.planning.context import PlannerContext
    from deepagent.planning.planner import plan_round

    model = CutFirst(messages=iter([GOOD]))
    result = await plan_round(model, PlannerContext(question=LOOKUP, language="zh"))
    assert result.decision is not None and result.calls == 2, result.error
    reask = str(model.calls[1][-1].content)
    assert "cut at its length limit (1024 tokens)" in reask and "aaaa" in reask
    twice = CutFirst(messages=iter([GOOD]), cuts=2)
    failed = await plan_round(twice, PlannerContext(question=LOOKUP, language="zh"))
    assert failed.decision is None and "cut at its length limit" in (failed.error or "")
