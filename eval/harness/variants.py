"""Variant generator: paraphrases of seed questions for the eval set.

Offline (the default, deterministic): ``TemplateParaphraser`` swaps a few words for
synonyms and puts the question in another frame ("请问…", "Quick question: …"), seeded by
the case id, never touching category names, months or figures. With an LLM (``judge``
role configured): ``LLMParaphraser`` asks the model for a paraphrase and keeps it only if
it keeps every number and the language; otherwise it falls back to the templates.
"""

from __future__ import annotations

import random
import re
from typing import Protocol

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from deepagent.core.question import detect_language

# (pattern, replacements): patterns are plain text for Chinese, whole words for English.
ZH_SWAPS: list[tuple[str, list[str]]] = [
    ("销售额", ["成交额", "GMV"]),
    ("是多少", ["有多少"]),
    ("哪些", ["哪几个"]),
    ("怎么样", ["如何", "咋样"]),
    ("分析一下", ["看一下", "研究一下"]),
    ("卖得最好", ["最畅销", "卖得最火"]),
    ("最近", ["近期"]),
    ("帮我", ["麻烦帮我", "请帮我"]),
    ("有什么", ["有哪些"]),
    ("是什么", ["是啥"]),
    ("差评", ["负面评价"]),
    ("商品", ["产品"]),
]
ZH_FRAMES = ["请问{q}", "{q}麻烦看一下。", "想了解一下：{q}", "老板让我问一下，{q}", "{q}谢谢！"]
EN_SWAPS: list[tuple[str, list[str]]] = [
    ("What was", ["What's"]),
    ("best-selling", ["top-selling"]),
    ("best-sellers", ["top sellers"]),
    ("right now", ["at the moment", "these days"]),
    ("Show me", ["Can you show me", "Give me"]),
    ("buyers", ["shoppers", "customers"]),
    ("brought in", ["generated"]),
    ("How many", ["What number of"]),
    ("Find me", ["Look for"]),
]
EN_FRAMES = [
    "Quick question: {q}",
    "Could you check this for me? {q}",
    "{q} Thanks!",
    "I need this for a report: {q}",
    "Hi, {q}",
]


class Paraphraser(Protocol):
    async def paraphrase(self, question: str, seed: str) -> str: ...


def _swap(text: str, pattern: str, new: str, zh: bool) -> str:
    if zh:
        return text.replace(pattern, new, 1)
    return re.sub(rf"(?<![\w-]){re.escape(pattern)}(?![\w-])", new, text, count=1)


class TemplateParaphraser:
    """Deterministic paraphrases: synonym swaps plus a frame, chosen by ``seed``."""

    async def paraphrase(self, question: str, seed: str) -> str:
        return self.sync(question, seed)

    def sync(self, question: str, seed: str) -> str:
        rng = random.Random(seed)
        zh = detect_language(question) == "zh"
        swaps, frames = (ZH_SWAPS, ZH_FRAMES) if zh else (EN_SWAPS, EN_FRAMES)
        text = question.strip()
        present = [(p, alts) for p, alts in swaps if _swap(text, p, "\0", zh) != text]
        for pattern, alts in rng.sample(present, k=min(len(present), 2)):
            text = _swap(text, pattern, rng.choice(alts), zh)
        frame = rng.choice([f for f in frames if "麻烦" not in f or "麻烦" not in text])
        if frame.startswith("Hi") and text[1:2].islower():
            text = text[0].lower() + text[1:]  # "Hi, what was ..." but "Hi, GMV ..."
        if zh and frame.startswith("{q}") and text[-1] not in "？?。！!":
            text += "，"
        return frame.format(q=text)


def keeps_essentials(original: str, variant: str) -> bool:
    """A paraphrase must keep every number and the language of the original."""
    numbers = re.findall(r"\d+", original)
    return (
        bool(variant.strip())
        and all(n in variant for n in numbers)
        and detect_language(variant) == detect_language(original)
    )


class LLMParaphraser:
    """A model's paraphrase, checked by ``keeps_essentials``; templates otherwise."""

    SYSTEM = (
        "Rewrite the user's question the way another merchant might ask it. Keep its "
        "meaning, its language, every category or product name, every date and number. "
        "Reply with the rewritten question only."
    )

    def __init__(self, model: BaseChatModel) -> None:
        self.model = model
        self.fallback = TemplateParaphraser()

    async def paraphrase(self, question: str, seed: str) -> str:
        reply = await self.model.ainvoke([SystemMessage(self.SYSTEM), HumanMessage(question)])
        text = str(reply.content).strip().strip('"')
        if keeps_essentials(question, text) and text != question:
            return text
        return self.fallback.sync(question, seed)
