"""How a prompt was fitted into its role's budget: the record's shape, apart from the
fitting itself (``prompts.budget``) so that reading a record needs no model stack."""

from __future__ import annotations

from pydantic import Field

from deepagent.core.schema import Strict


class Fitting(Strict):
    """How a prompt was fitted into its budget (recorded with the round or the analysis)."""

    role: str
    budget: int = Field(description="tokens the prompt may take: window - reply - margin")
    tokens_before: int = Field(description="the whole prompt, estimated (llm.tokens)")
    tokens_after: int = Field(description="the prompt as sent")
    dropped: list[str] = Field(default_factory=list, description="what was left out, in order")
