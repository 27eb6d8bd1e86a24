"""Every model role wired as a production gateway would expect: a binder that fails fails
its action (not the Action Tree), the module classifier is not asked when the offline one
is sure, and the planner prompt describes ``$ask``."""

from __future__ import annotations

import pytest

from context_loader.identify import Evidence, LLMClassifier, OfflineClassifier, confidence
from context_loader.loader import ContextLoader
from context_loader.models import ContextRequest
from deepagent.agent import Agent
from deepagent.core.schema import ActionSpec, CallActions, PlannerDecision
from deepagent.core.templates import BindingError
from deepagent.deps import RunDeps
from deepagent.distributed.cluster import free_port
from deepagent.execution.ask import LLMBinder
from deepagent.llm import ModelConfig, chat_model
from deepagent.planning.context import PlannerContext
from deepagent.prompts import render
from deepagent.testing import FunctionPlanner, ScriptedChatModel, answer
from tests.questions import LOOKUP


def dead_binder() -> LLMBinder:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: connection refused
    config = ModelConfig(kind="openai", model="binder", base_url=url, max_retries=0)
    return LLMBinder(chat_model(config))


async def test_a_binder_that_cannot_be_reached_is_a_binding_error() -> None:
    with pytest.raises(BindingError, match="binder model unavailable"):
        await dead_binder().bind({"$ask": "the id", "from": ["a"]}, {"a": {"id": 5}})


async def test_a_binder_failure_fails_its_action_and_the_tree_goes_on(
    loader: ContextLoader,
) -> None:
    """Two actions and an ask: the one needing the binder fails with the reason, the
    other keeps its data and the run completes (a binder timeout used to abort the tree)."""
    ask = {"$ask": "the category's name", "from": ["find"]}
    tree = PlannerDecision(action=CallActions(actions=[
        ActionSpec(id="find", tool="recognize_category", args={"text": "连衣裙"}),
        ActionSpec(id="again", tool="recognize_category", args={"text": ask},
                   depends_on=["find"]),
        ActionSpec(id="other", tool="recognize_category", args={"text": "卫衣"}),
    ]))  # fmt: skip

    def planner(ctx: PlannerContext) -> PlannerDecision:
        return tree if not ctx.history else answer()

    deps = RunDeps(loader.settings, loader, FunctionPlanner(planner), None, binder=dead_binder())
    record = await Agent(deps).run_to_end(ContextRequest(question=LOOKUP))
    statuses = {a.id: (a.status, a.error or "") for a in record.rounds[0].actions}
    assert statuses["find"][0] == "ok" and statuses["other"][0] == "ok"
    assert statuses["again"][0] == "failed" and "binder model unavailable" in statuses["again"][1]
    assert record.status == "completed"


async def test_a_sure_offline_classifier_spares_the_model_call(loader: ContextLoader) -> None:
    registry = loader.registry
    manifests = [registry.modules[n].manifest for n in registry.business_modules()]
    hits = await loader.retriever.asearch(LOOKUP, k=5)
    evidence = Evidence(LOOKUP, None, manifests, hits)
    offline = loader.classifier  # the offline one: no module_classifier endpoint here
    assert isinstance(offline, OfflineClassifier)
    margin = confidence(await offline.identify(evidence))
    assert margin > 0
    model = ScriptedChatModel.from_replies(['{"modules": ["category_trend"]}'])
    sure = LLMClassifier(model, offline, skip_margin=margin / 2)
    spared = await sure.identify(evidence)
    assert spared.method != "llm" and not model.calls and "no model call" in spared.notes[-1]
    unsure = LLMClassifier(model, offline, skip_margin=margin * 2)
    asked = await unsure.identify(evidence)
    assert asked.method == "llm" and len(model.calls) == 1


def test_the_planner_prompt_describes_ask() -> None:
    system, _ = render("planner", **_blank_planner_fields())
    assert '{"$ask": "<what to pick, in words>", "from": ["<action id>", ...]}' in system


def _blank_planner_fields() -> dict[str, str]:
    import re
    from pathlib import Path

    import deepagent.prompts as prompts

    text = (Path(prompts.__file__).parent / "planner.txt").read_text(encoding="utf-8")
    names = set(re.findall(r"(?<!\$)\$([a-z_]+)", text))
    return dict.fromkeys(names, "")
