"""The LLM module classifier, driven by the scripted chat model shipped in the library."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from context_loader.identify import Evidence, LLMClassifier, OfflineClassifier
from context_loader.models import PageContext
from deepagent.testing import ScriptedChatModel
from tests.tool_helpers import manifest

MANIFESTS = [
    manifest(
        "category_trend",
        ("类目趋势", "Category trend"),
        "Market size and competition of categories.",
        ["类目", "competition"],
        "category_report",
    ),
    manifest(
        "search_insight",
        ("搜索洞察", "Search insight"),
        "Search terms and their volume.",
        ["搜索"],
        "search_insight_page",
    ),
]
QUESTION = "Which categories are least crowded, and what do people search for there?"


async def test_model_choice_is_used_and_prompt_shows_the_evidence() -> None:
    model = ScriptedChatModel.from_replies(
        ['{"modules": ["category_trend", "search_insight"], "reason": "both"}']
    )
    page = PageContext(type="search_insight_page", category_id=5)
    result = await LLMClassifier(model, OfflineClassifier()).identify(
        Evidence(QUESTION, page, MANIFESTS, [])
    )
    assert result.method == "llm"
    assert set(result.selected) == {"category_trend", "search_insight"}
    system, user = (m.content for m in model.calls[0])
    assert "category_trend: Category trend / 类目趋势" in str(system)
    assert '"type":"search_insight_page"' in str(user) and QUESTION in str(user)


async def test_unusable_answers_fall_back_to_offline() -> None:
    for reply in ["I think category trends", '{"modules": ["nonexistent"]}']:
        model = ScriptedChatModel.from_replies([reply])
        result = await LLMClassifier(model).identify(Evidence("类目竞争", None, MANIFESTS, []))
        assert result.method == "offline"
        assert result.selected == ["category_trend"]
        assert "used offline" in result.notes[0]


async def test_model_errors_fall_back_to_offline() -> None:
    class Broken(ScriptedChatModel):
        def _generate(self, *args: object, **kwargs: object) -> AIMessage:  # type: ignore[override]
            raise ConnectionError("endpoint down")

    result = await LLMClassifier(Broken.from_replies([])).identify(
        Evidence("搜索词", None, MANIFESTS, [])
    )
    assert result.method == "offline" and "ConnectionError" in result.notes[0]
    assert result.selected == ["search_insight"]


def test_the_suite_refuses_non_loopback_connections() -> None:
    import socket

    import pytest

    from tests.conftest import _loopback_only

    class FakeSocket:  # never touches the network, whatever the guard does
        family = socket.AF_INET

    with pytest.raises(ConnectionRefusedError, match=r"may not connect to 192\.0\.2\.1"):
        _loopback_only(FakeSocket(), ("192.0.2.1", 443))  # type: ignore[arg-type]
    assert socket.socket.connect is _loopback_only
