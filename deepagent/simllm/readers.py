"""Finding a role's prompt among the messages the simulator is sent.

The simulator gets only the messages (no side channel). Each role's prompt is read back by
the reader that sits beside its renderer (``planning.render``, ``analysis.prompt``,
``summaries.prompt``, ``execution.ask``, ``context_loader.identify``); this module picks
the message to read. A prompt that does not have the expected shape raises
``PromptError``, which the server answers with HTTP 400.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from deepagent.prompts.sections import PromptError

__all__ = ["PromptError", "system_text", "upto_prompt", "user_text"]


def system_text(messages: Sequence[BaseMessage]) -> str:
    return next((str(m.content) for m in messages if isinstance(m, SystemMessage)), "")


def user_text(messages: Sequence[BaseMessage], marker: str = "") -> str:
    """The last user message containing ``marker`` (a re-ask after it is ignored)."""
    for m in reversed(messages):
        if isinstance(m, HumanMessage) and marker in str(m.content):
            return str(m.content)
    raise PromptError(f"no user message containing {marker!r}" if marker else "no user message")


def upto_prompt(messages: Sequence[BaseMessage], marker: str) -> list[BaseMessage]:
    """The messages up to the last user message containing ``marker``: drops a re-ask
    exchange (our invalid reply + "Your decision is invalid ...") so the policy answers
    the original prompt again."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage) and marker in str(messages[i].content):
            return list(messages[: i + 1])
    return list(messages)
