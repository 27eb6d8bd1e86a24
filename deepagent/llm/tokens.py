"""A tokenizer-free token estimate for budgeting prompts, and each role's prompt budget.

``count_tokens`` splits text the way BPE pre-tokenizers do (CJK runs, words, digit runs,
whitespace, single punctuation marks) and prices each piece: a CJK character 1.25 tokens,
a word one token per six letters (at least one), digits one token per two, a punctuation
mark 0.6 (JSON's ``":`` and ``",`` often merge into one token), a line break or a run of
spaces half a token. It is meant to over-estimate: calibrated offline against cl100k_base
and o200k_base (js-tiktoken 1.0.21 on this project's own prompts: the skin-care question's
planner and analyst prompts, skills, tool lists, JSON results, the eval questions in Chinese
and English), it gave 1.00-1.21 times the larger of the two counts on every sample (Chinese
questions 1.00 of cl100k, 1.56 of o200k; the analyst's JSON data 1.06-1.11; English 1.03-1.12).
The latency model (``pacing.approx_tokens``) keeps its own, cheaper estimate: benchmark
figures depend on it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import BaseMessage

from deepagent.llm.config import ModelConfig, Role

if TYPE_CHECKING:
    from deepagent.core.settings import Settings

CJK_RANGES = r"\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_PIECE = re.compile(
    rf"(?P<c>[{CJK_RANGES}]+)|(?P<w>[A-Za-z]+)|(?P<d>[0-9]+)|(?P<s>\s+)"
    rf"|(?P<p>[^\sA-Za-z0-9{CJK_RANGES}])"
)
CJK_TOKENS = 1.25  # a CJK character (cl100k gives about 1.1 on Chinese questions)
WORD_CHARS = 6  # letters per token of a word, at least one token a word
DIGIT_CHARS = 2  # digits per token
PUNCT_TOKENS = 0.6  # one punctuation mark or other symbol
SPACE_TOKENS = 0.5  # a line break or a run of spaces (a single space joins the next word)
MESSAGE_OVERHEAD = 4  # a chat message's role and separators
MARGIN_SHARE = 0.05  # of the context window, kept free besides the reply ...
MIN_MARGIN = 256  # ... and at least this many tokens


def count_tokens(text: str) -> int:
    """The estimated tokens of ``text`` (an over-estimate for common BPE tokenizers)."""
    total = 0.0
    for m in _PIECE.finditer(text):
        piece, kind = m.group(0), m.lastgroup
        if kind == "c":
            total += len(piece) * CJK_TOKENS
        elif kind == "w":
            total += math.ceil(len(piece) / WORD_CHARS)
        elif kind == "d":
            total += math.ceil(len(piece) / DIGIT_CHARS)
        elif kind == "s":
            total += SPACE_TOKENS if len(piece) > 1 or "\n" in piece else 0.0
        else:
            total += PUNCT_TOKENS
    return math.ceil(total)


def prompt_tokens(messages: Sequence[BaseMessage]) -> int:
    """The estimated tokens of a chat request: every message's text and tool calls, plus
    the chat format's overhead per message."""
    total = 0
    for m in messages:
        text = m.content if isinstance(m.content, str) else json.dumps(m.content)
        total += count_tokens(text) + MESSAGE_OVERHEAD
        calls = getattr(m, "tool_calls", None)
        if calls:
            total += count_tokens(json.dumps(calls, ensure_ascii=False, default=str))
    return total


def prompt_budget(config: ModelConfig, role: Role) -> int | None:
    """The tokens a prompt of ``role`` may take on this model: its context window less the
    reply's limit and a margin (5% of the window, at least 256). None for an offline role,
    whose window is unlimited."""
    if config.kind == "offline":
        return None
    window = config.context_window
    margin = max(MIN_MARGIN, math.ceil(window * MARGIN_SHARE))
    return max(0, window - config.output_tokens(role) - margin)


def role_budget(settings: Settings, role: Role) -> int | None:
    """``prompt_budget`` of the model configured for ``role``."""
    return prompt_budget(settings.model_for(role), role)


def planner_budget(settings: Settings, subagent: bool) -> int | None:
    """The planner's prompt budget; in a SubAgent, the SubAgent planner's when that role
    has a model of its own (SubAgents use the planner otherwise)."""
    own = subagent and settings.model_for("subagent_planner").kind != "offline"
    return role_budget(settings, "subagent_planner" if own else "planner")
