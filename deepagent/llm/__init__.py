"""Model roles: each is an OpenAI-compatible endpoint or the deterministic offline policy."""

from deepagent.llm.config import ROLES, ModelConfig, Role, chat_model

__all__ = ["ROLES", "ModelConfig", "Role", "chat_model"]
