"""What both views share: a copy's status as the page shows it, a group's status, counts
and span, dependency levels inside a round, and the analysis rendered as HTML."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from markdown_it import MarkdownIt

from deepagent.console.model import CopyView, NodeStatus, NodeView

COPY_STATUS: dict[str, NodeStatus] = {
    "ok": "done",
    "empty": "failed",  # no usable data: its dependants are skipped, as after a failure
    "failed": "failed",
    "skipped": "skipped",
}
"""The executor's status of a copy (``ActionStatus``) -> the page's."""


def copy_status(outcome: str) -> NodeStatus:
    return COPY_STATUS.get(outcome, "failed")


def group_status(statuses: Sequence[NodeStatus]) -> NodeStatus:
    """A node's status from its copies': failed if any failed, running if any runs,
    cancelled if any was cancelled, skipped if all were, done if all that ran are done,
    planned if none started yet; a fan-out half started is running."""
    seen = set(statuses)
    for first in ("failed", "running", "cancelled"):
        if first in seen:
            return first
    if not seen or seen == {"planned"}:
        return "planned"
    if seen == {"skipped"}:
        return "skipped"
    if seen <= {"done", "skipped"}:
        return "done"
    return "running"


def settle(node: NodeView) -> NodeView:
    """The node's copies sorted, and its status, counts, fan-out and span from them."""
    node.copies.sort(key=lambda c: -1 if c.item_index is None else c.item_index)
    statuses = [c.status for c in node.copies]
    node.counts = dict(Counter(statuses))
    node.status = group_status(statuses) if node.copies else "planned"
    node.fan_out = node.fan_out or any(c.item_index is not None for c in node.copies)
    node.duration_ms = span_of(node.copies)
    return node


def span_of(copies: Sequence[CopyView]) -> float | None:
    """First copy start to last copy end (None: no copy started)."""
    ran = [c for c in copies if c.started_ms is not None]
    if not ran:
        return None
    start = min(c.started_ms or 0.0 for c in ran)
    end = max((c.started_ms or 0.0) + (c.duration_ms or 0.0) for c in ran)
    return round(end - start, 3)


def levels(depends_on: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Each action's dependency level inside its round: 0 without a dependency in the
    round (one on an earlier round's action counts as none), else one more than its
    deepest dependency's. A cycle (never a valid plan) is cut where it closes."""
    found: dict[str, int] = {}

    def level(node: str, path: frozenset[str]) -> int:
        if node in found:
            return found[node]
        inside = [d for d in depends_on.get(node, []) if d in depends_on and d not in path]
        value = 1 + max((level(d, path | {node}) for d in inside), default=-1)
        found[node] = value
        return value

    for node in depends_on:
        level(node, frozenset())
    return found


def title_of(tool: str | None, fallback: str, titles: Mapping[str, str]) -> str:
    """A tool's title for people, else the tool's name, else ``fallback`` (a SubAgent's
    task)."""
    if tool is None:
        return fallback
    return titles.get(tool) or tool


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})  # raw HTML in the text is escaped
    md.enable("table")
    md.disable(["image", "link", "autolink"])  # nothing fetched, nothing linked out
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """The analysis as HTML (CommonMark and tables), every raw tag escaped ("" for none)."""
    return str(_MD.render(text)) if text else ""
