"""Small inline SVG charts for the eval report: grouped bars, columns and deltas.

Each function returns one ``<svg>`` element as a string, meant to be put straight into
an HTML page: no JavaScript, no external file, no plotting library. A chart compares
one value per label for every series (a series is one eval run or configuration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from math import floor, log10

PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#a463f2", "#97bbf5")
GOOD, BAD = "#3ca951", "#e45756"
FONT = 'font-family="sans-serif" font-size="11"'


@dataclass(frozen=True)
class Series:
    """One run's values, one per label of the chart (None: not measured)."""

    name: str
    values: Sequence[float | None]


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    head = (
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}" {FONT}>'
    )
    caption = f'<text x="4" y="14" font-size="13" font-weight="bold">{escape(title)}</text>'
    return "\n".join([head, caption, *body, "</svg>"])


def _text(x: float, y: float, text: str, attrs: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" {attrs}>{text}</text>'


def _legend(series: Sequence[Series], x: int, y: int) -> list[str]:
    out: list[str] = []
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="{y + i * 14}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="{y + i * 14 + 9}">{escape(s.name)}</text>')
    return out


def hbars(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    vmax: float | None = None,
    fmt: str = "{:.2f}",
) -> str:
    """Horizontal grouped bars: a row per label, a bar per series (0 at the left)."""
    top = vmax or max((v for s in series for v in s.values if v is not None), default=1.0) or 1.0
    bar, gap, left, scale = 10, 8, 190, 300
    row = bar * len(series) + gap
    legend = 14 * len(series) if len(series) > 1 else 0
    height = 24 + legend + row * len(labels) + 6
    body = _legend(series, left, 22) if len(series) > 1 else []
    y0 = 24 + legend
    for r, label in enumerate(labels):
        y = y0 + r * row
        body.append(_text(left - 6, y + row / 2, escape(label), 'text-anchor="end"'))
        for i, s in enumerate(series):
            value = s.values[r]
            by = y + i * bar
            if value is None:
                body.append(f'<text x="{left + 2}" y="{by + bar - 1}" fill="#888">n/a</text>')
                continue
            w = max(0.0, min(value / top, 1.0)) * scale
            colour = PALETTE[i % len(PALETTE)]
            body.append(
                f'<rect x="{left}" y="{by}" width="{w:.1f}" height="{bar - 1}" fill="{colour}"/>'
            )
            body.append(_text(left + w + 3, by + bar - 1, fmt.format(value)))
    return _svg(left + scale + 60, height, title, body)


def columns(
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    x_label: str = "",
    y_label: str = "runs",
) -> str:
    """Vertical grouped columns (a histogram when the labels are bins), counts on top."""
    top = max((v for s in series for v in s.values if v is not None), default=1.0) or 1.0
    col, gap, left, plot_h = 12, 10, 40, 140
    group = col * len(series) + gap
    legend = 14 * len(series) if len(series) > 1 else 0
    base = 28 + legend + plot_h
    width = left + group * len(labels) + 20
    body = _legend(series, left, 22) if len(series) > 1 else []
    body.append(f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#444"/>')
    body.append(
        f'<text x="12" y="{base - plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 12 {base - plot_h / 2})">{escape(y_label)}</text>'
    )
    for g, label in enumerate(labels):
        x = left + g * group + gap / 2
        body.append(
            f'<text x="{x + group / 2 - gap / 2}" y="{base + 13}" text-anchor="middle">'
            f"{escape(label)}</text>"
        )
        for i, s in enumerate(series):
            value = s.values[g] or 0.0
            h = value / top * plot_h
            cx = x + i * col
            colour = PALETTE[i % len(PALETTE)]
            body.append(
                f'<rect x="{cx:.1f}" y="{base - h:.1f}" width="{col - 1}" height="{h:.1f}" '
                f'fill="{colour}"/>'
            )
            if value:
                body.append(
                    f'<text x="{cx + col / 2:.1f}" y="{base - h - 2:.1f}" text-anchor="middle" '
                    f'font-size="9">{value:g}</text>'
                )
    if x_label:
        body.append(f'<text x="{left}" y="{base + 28}" fill="#555">{escape(x_label)}</text>')
    return _svg(max(width, 220), base + 34, title, body)


def deltas(
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    better: Sequence[int],
    *,
    fmt: str = "{:+.3f}",
) -> str:
    """Diverging bars around zero, the value in a column on the right; green when the
    change is an improvement (``better``: +1 higher is better, -1 lower is better, 0
    neither: grey)."""
    top = max((abs(v) for v in values if v is not None), default=0.0) or 1.0
    left, half, row = 190, 130, 16
    mid, text_x = left + half, left + 2 * half + 8
    height = 24 + row * len(labels) + 6
    body = [f'<line x1="{mid}" y1="20" x2="{mid}" y2="{height - 4}" stroke="#444"/>']
    for r, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = 24 + r * row
        body.append(f'<text x="{left - 6}" y="{y + 11}" text-anchor="end">{escape(label)}</text>')
        if value is None:
            body.append(f'<text x="{text_x}" y="{y + 11}" fill="#888">n/a</text>')
            continue
        w = abs(value) / top * half
        x = mid if value >= 0 else mid - w
        sign = better[r] * (1 if value > 0 else -1 if value < 0 else 0)
        colour = GOOD if sign > 0 else BAD if sign < 0 else "#999"
        body.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="12" fill="{colour}"/>')
        shown = "0" if value == 0 else fmt.format(value)
        body.append(f'<text x="{text_x}" y="{y + 10}">{escape(shown)}</text>')
    return _svg(text_x + 70, height, title, body)


def nice_width(span: float, bins: int = 10) -> float:
    """A bin width of 1, 2 or 5 times a power of ten giving at most ``bins`` bins."""
    if span <= 0:
        return 1.0
    raw = span / bins
    power = float(10 ** floor(log10(raw)))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def histogram(
    samples: Sequence[Sequence[float]], bins: int = 10
) -> tuple[list[str], list[list[float]]]:
    """Shared bins over several samples: (bin labels = each bin's lower edge, counts per
    sample)."""
    top = max((v for s in samples for v in s), default=0.0)
    width = nice_width(top, bins)
    n = int(top // width) + 1
    labels = [f"{i * width:g}" for i in range(n)]
    counts = [[0.0] * n for _ in samples]
    for row, sample in zip(counts, samples, strict=True):
        for v in sample:
            row[min(int(v // width), n - 1)] += 1
    return labels, counts


def integer_counts(samples: Sequence[Sequence[int]]) -> tuple[list[str], list[list[float]]]:
    """Counts of each integer value from 0 to the largest, per sample."""
    top = max((v for s in samples for v in s), default=0)
    labels = [str(i) for i in range(top + 1)]
    counts = [[float(sum(1 for v in s if v == i)) for i in range(top + 1)] for s in samples]
    return labels, counts
