"""How a run ends when a model role fails: ``failed`` with the reason, never a report that
reads like "no data found".

- The planner fails (its endpoint is down, it times out or errs after the client's
  retries, or its decision is still invalid after the re-ask) before the run holds any
  usable data: the run ends ``failed`` here, without an analysis; ``error`` and
  ``stop_reason`` carry the reason (``planner model unavailable: ...``). After some data
  was collected the loop analyses it as before, the ``stop_reason`` naming the failure
  (the report opens with it and states what is not covered).
- The analyst model is not asked when nothing usable was collected, and a failure of it
  with data hands the report to the templated analyst (``loop.analysis_step``): an
  analyst failure never ends a run.

Either way one short note in the question's language is streamed as the answer's text, so
every reader (CLI, SSE, record) sees why there is no report.
"""

from __future__ import annotations

from typing import Any

from deepagent import events as ev
from deepagent.core.question import Language
from deepagent.loop.state import RunState
from deepagent.loop.streaming import emit

NOTES: dict[str, tuple[str, str]] = {
    "planner": (
        "> 无法回答：在收集到任何可用数据之前，规划就失败了（{why}），"
        "因此没有可依据的结论。请稍后重试。",
        "> No answer: planning failed before any usable data was collected ({why}), so there "
        "is nothing to base an answer on. Please try again later.",
    ),
}


def note(language: Language, key: str, why: str) -> str:
    zh, en = NOTES[key]
    return (zh if language == "zh" else en).format(why=why)


def nothing_collected(state: RunState) -> bool:
    """No action of the run produced usable data (so an analysis could only say so)."""
    return not state.get("data")


def planner_failed(state: RunState, language: Language, reason: str) -> dict[str, Any]:
    """The update ending a run whose planner failed before it collected anything (the
    failure note streamed as its text)."""
    text = note(language, "planner", reason)
    emit(ev.AnalysisDelta(text=text))
    return {"status": "failed", "error": reason, "analysis": text}
