"""One-line reasons for failed model calls, so a round or run can say what went wrong."""

from __future__ import annotations

import json


def describe_model_error(exc: BaseException) -> str:
    """Why a chat-model call raised, in one line naming the exception type.

    A body that is not JSON surfaces from the openai client as a bare
    ``json.JSONDecodeError``, which reads like bad model *output*; it is named as a
    malformed *response* here.
    """
    detail = " ".join(str(exc).split()) or "no detail"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed response from the model endpoint ({type(exc).__name__}: {detail})"
    return f"{type(exc).__name__}: {detail}"
