"""A run taken over mid-analysis streams its analysis again from the start (the analysis
node re-runs from the last checkpoint); the events of the dead process stay stored. So
that the stream a client assembles equals the record, the new deltas are spliced onto the
text already sent:

- while the new text is a prefix of what was sent, nothing is stored;
- once it goes beyond, only the rest is stored: the stream continues exactly (the
  templated analyst is deterministic, so this is the usual case);
- if the new text differs from what was sent (a model analyst writes it anew), an
  ``analysis_restarted`` event is stored, then the new text from its start: clients drop
  the text before that event.
"""

from __future__ import annotations

import json

from deepagent import events as ev

RESTARTED = "the run was taken over by another process and its analysis written again"


class AnalysisSplice:
    def __init__(self, sent: str) -> None:
        self.sent = sent
        self.new = ""
        self.done = not sent

    def feed(self, event: ev._Event) -> list[ev._Event]:
        """What to store for ``event``: nothing, the event, its unsent rest, or a restart
        and the new text so far."""
        if self.done or not isinstance(event, ev.AnalysisDelta):
            return [event]
        self.new += event.text
        if self.sent.startswith(self.new):
            return []
        self.done = True
        if self.new.startswith(self.sent):
            return [event.model_copy(update={"text": self.new[len(self.sent) :]})]
        restart = ev.AnalysisRestarted(reason=RESTARTED, run_id=event.run_id, ts=event.ts)
        return [restart, event.model_copy(update={"text": self.new})]


def sent_analysis(stored: list[tuple[int, str, str]]) -> str:
    """The analysis text a client has assembled from stored events (``seq, type, body``):
    the deltas after the last restart."""
    text: list[str] = []
    for _, type_, body in stored:
        if type_ == "analysis_restarted":
            text = []
        elif type_ == "analysis_delta":
            text.append(str(json.loads(body).get("text", "")))
    return "".join(text)
