"""The comparison's ratios as an SVG bar chart (docs/benchmarks_ratios.svg).

One group per question: tree/deepagents wall time and time to the first answer token, as
horizontal bars on a linear scale, with the lines the issue asks against (1.0: as fast as
deepagents; 0.75: the geometric-mean target). Plain SVG text, no plotting library: the
chart has a dozen bars.
"""

from __future__ import annotations

from html import escape
from typing import Any

BAR_H, GAP, LEFT, WIDTH, TOP = 9, 8, 300, 420, 30
SERIES = (
    ("tree_wall_s", "wall", "#3b6ea8"),
    ("tree_first_answer_s", "first answer token", "#e0a030"),
)


def _x(ratio: float, top: float) -> float:
    return LEFT + WIDTH * min(ratio, top) / top


def svg(result: dict[str, Any]) -> str:
    rows = result["questions"]
    top = max(2.0, *(r["ratios"].get(k, 0) for r in rows for k, _, _ in SERIES))
    group = len(SERIES) * BAR_H + GAP
    height = TOP + group * len(rows) + 40
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 60}" height="{height}"'
        ' font-family="sans-serif" font-size="11">',
        f'<text x="{LEFT}" y="14">tree / deepagents (lower is faster); dashed: 0.75 and 1.0</text>',
    ]
    for i, row in enumerate(rows):
        y = TOP + i * group
        label = f"{i + 1}. {row['question'][:44]}{'…' if len(row['question']) > 44 else ''}"
        out.append(f'<text x="{LEFT - 6}" y="{y + BAR_H + 3}" text-anchor="end">'
                   f"{escape(label)}</text>")  # fmt: skip
        for j, (key, _, colour) in enumerate(SERIES):
            ratio = row["ratios"].get(key, 0.0)
            yy = y + j * BAR_H
            out.append(f'<rect x="{LEFT}" y="{yy}" width="{_x(ratio, top) - LEFT:.1f}"'
                       f' height="{BAR_H - 1}" fill="{colour}"/>')  # fmt: skip
            out.append(f'<text x="{_x(ratio, top) + 3:.1f}" y="{yy + BAR_H - 1}">{ratio:.2f}'
                       "</text>")  # fmt: skip
    bottom = TOP + group * len(rows)
    for mark in (0.75, 1.0):
        x = _x(mark, top)
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom}"'
                   ' stroke="#555" stroke-dasharray="3,3"/>')  # fmt: skip
        out.append(f'<text x="{x:.1f}" y="{bottom + 12}" text-anchor="middle">{mark}</text>')
    for j, (_, name, colour) in enumerate(SERIES):
        x = LEFT + j * 160
        out.append(f'<rect x="{x}" y="{bottom + 22}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="{bottom + 31}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
