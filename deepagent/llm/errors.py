"""Failed model calls: a one-line reason, and whether the model was unavailable or erred.

A run that fails because of a model says so in one stable form, ``<role> model
unavailable: <reason>`` (endpoint down, timeout, 429/502/503/504 after the client's own
retries) or ``<role> model error: <reason>`` (another HTTP error, a malformed response, an
unusable reply). :func:`failure_in` reads that form back from a record's ``error`` or
``stop_reason``, so the service can answer 503 or 502 without a side channel.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Literal

from deepagent.llm.config import ROLES

FailureKind = Literal["unavailable", "error"]
"""``unavailable``: the model could not be reached or answered in time (HTTP 503);
``error``: it answered, but with an error or something unusable (HTTP 502)."""

UNAVAILABLE_STATUS = frozenset({429, 502, 503, 504})
"""Upstream HTTP statuses that mean "not available now" (still so after the retries)."""
_UNREACHABLE = frozenset(
    {
        "APIConnectionError",  # openai (its APITimeoutError is one)
        "ModelConnectionError",  # langchain-core
        "ModelTimeoutError",
        "TransportError",  # httpx: connect / read timeouts, refused, reset
    }
)
_ROLE = "|".join(ROLES)
_HEAD = r"^(?:[a-z_]+: )?"  # the text itself, or a stop reason: "planner_failed: <text>"
_READ = re.compile(_HEAD + rf"(?P<role>{_ROLE}) model (?P<kind>unavailable|error): ")
_INVALID = re.compile(_HEAD + rf"(?P<what>invalid (?P<role>{_ROLE}) output\b.*)", re.S)


def describe_model_error(exc: BaseException) -> str:
    """Why a chat-model call raised, in one line naming the exception type (and the root
    cause when the client wrapped it: "Connection error." alone does not say refused).

    A body that is not JSON surfaces from the openai client as a bare
    ``json.JSONDecodeError``, which reads like bad model *output*; it is named as a
    malformed *response* here.
    """
    detail = _one_line(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed response from the model endpoint ({type(exc).__name__}: {detail})"
    text = f"{type(exc).__name__}: {detail}"
    root = _root_cause(exc)
    if root is not exc and _one_line(root) not in text:
        text += f" ({type(root).__name__}: {_one_line(root)})"
    return text


def failure_kind(exc: BaseException) -> FailureKind:
    """Whether a model call's exception means the model is unavailable or that it erred."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return "unavailable" if status in UNAVAILABLE_STATUS else "error"
    if isinstance(exc, TimeoutError | ConnectionError):
        return "unavailable"
    names = {c.__name__ for c in type(exc).__mro__}
    return "unavailable" if names & _UNREACHABLE else "error"


@dataclass(frozen=True)
class ModelFailure:
    """A model role that failed: its kind and the one-line reason."""

    role: str
    kind: FailureKind
    detail: str

    @property
    def text(self) -> str:
        """``<role> model unavailable: <detail>`` or ``<role> model error: <detail>``."""
        return f"{self.role} model {self.kind}: {self.detail}"

    @classmethod
    def of(cls, role: str, exc: BaseException) -> ModelFailure:
        return cls(role, failure_kind(exc), describe_model_error(exc))


class ModelFailed(Exception):
    """A model role failed (raised by the model-backed stages that cannot go on without
    it, e.g. the analyst); carries the :class:`ModelFailure`."""

    def __init__(self, failure: ModelFailure) -> None:
        super().__init__(failure.text)
        self.failure = failure


def failure_in(text: str | None) -> ModelFailure | None:
    """The model failure a record's ``error`` or ``stop_reason`` states, if any (an
    invalid reply after the re-ask counts as the model's error)."""
    if not text:
        return None
    if found := _READ.match(text):
        kind: FailureKind = "unavailable" if found["kind"] == "unavailable" else "error"
        return ModelFailure(found["role"], kind, text[found.end() :])
    if found := _INVALID.match(text):
        return ModelFailure(found["role"], "error", found["what"])
    return None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or "no detail"


def _root_cause(exc: BaseException) -> BaseException:
    seen = {id(exc)}
    while exc.__cause__ is not None and id(exc.__cause__) not in seen:
        exc = exc.__cause__
        seen.add(id(exc))
    return exc
