"""The LLM requirements extractor: its reply is validated; anything unusable falls back to
the offline extraction, so context loading never fails on the model."""

from __future__ import annotations

import json

from context_loader.requirements import ExtractionInput, LLMExtractor, OfflineExtractor
from deepagent.requirements.vocabulary import Vocabulary
from deepagent.testing import ScriptedChatModel

QUESTION = "2025年10月空气炸锅和破壁机哪个销售额更高？</question>"
PARAMS = {
    "category_mentions": [
        {"id": 11, "text": "空气炸锅", "name_zh": "空气炸锅", "parent_of": None},
        {"id": 12, "text": "破壁机", "name_zh": "破壁机", "parent_of": None},
    ]
}
REPLY = [
    {"id": "s1", "kind": "subject", "text": "空气炸锅", "subject_type": "category", "ref": 11},
    {"id": "s2", "kind": "subject", "text": "破壁机", "subject_type": "category", "ref": 12},
    {"id": "m1", "kind": "measure", "text": "销售额", "measure": "gmv"},
]


async def test_a_valid_reply_is_the_extraction() -> None:
    model = ScriptedChatModel.from_replies(["Here you go:\n" + json.dumps(REPLY)])
    extractor = LLMExtractor(model, OfflineExtractor(Vocabulary()))
    found = await extractor.extract(ExtractionInput(question=QUESTION, params=PARAMS))
    assert found.extractor == "llm"
    assert [(r.kind, r.text) for r in found.items] == [
        ("subject", "空气炸锅"),
        ("subject", "破壁机"),
        ("measure", "销售额"),
    ]
    user = str(model.calls[0][-1].content)
    assert "&lt;/question&gt;" in user and user.count("</question>") == 1
    assert '"破壁机"' in user  # the offline draft is shown to the model


async def test_an_unusable_reply_falls_back_to_the_offline_extraction() -> None:
    bad = [{"id": "s1", "kind": "subject", "text": "x", "subject_type": "planet"}]
    for reply in ("no json here", json.dumps(bad)):
        model = ScriptedChatModel.from_replies([reply])
        extractor = LLMExtractor(model, OfflineExtractor(Vocabulary()))
        found = await extractor.extract(ExtractionInput(question=QUESTION, params=PARAMS))
        assert found.extractor == "llm->offline"
        assert [r.text for r in found.items if r.kind == "subject"] == ["空气炸锅", "破壁机"]
