"""Inline SVG charts for the HTML report: histogram, CDF, grouped bars.  No plotting library, no script.

Each function returns one ``<svg>`` element sized by its ``viewBox`` (it scales to the page width), with
axes, ticks and a legend; values come in as plain lists, already read from the results files.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

# One colour per target (colour-blind-friendly order), reused by every chart and table of the report.
PALETTE = ("#2563eb", "#ea580c", "#059669", "#9333ea", "#dc2626", "#0891b2", "#a16207")
AXIS = "#475569"
GRID = "#e2e8f0"

Series = Sequence[tuple[str, Sequence[float]]]  # (name, values) per target

W, H = 440, 250
LEFT, RIGHT, TOP, BOTTOM = 52, 14, 46, 40


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def nice_step(span: float, ticks: int = 6) -> float:
    """A 1/2/2.5/5 × 10^k step giving about ``ticks`` ticks over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    step = nice_step(hi - lo, n)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def fmt_tick(v: float) -> str:
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 or abs(v) >= 10 else f"{v:g}"


def _frame(title: str, xlabel: str, ylabel: str) -> list[str]:
    return [
        f'<svg class="chart" viewBox="0 0 {W} {H}" xmlns="http://www.w3.org/2000/svg" role="img"'
        f' aria-label="{escape(title)}">',
        f'<text x="{LEFT}" y="18" class="ctitle">{escape(title)}</text>',
        f'<text x="{(LEFT + W - RIGHT) / 2}" y="{H - 6}" class="clabel" text-anchor="middle">'
        f"{escape(xlabel)}</text>",
        f'<text x="12" y="{(TOP + H - BOTTOM) / 2}" class="clabel" text-anchor="middle"'
        f' transform="rotate(-90 12 {(TOP + H - BOTTOM) / 2})">{escape(ylabel)}</text>',
    ]


def _axes(
    x0: float, x1: float, y0: float, y1: float, xfmt: str = "", yfmt: str = ""
) -> tuple[list[str], Scale]:
    """Grid, ticks and labels for data ranges [x0, x1] × [y0, y1]; returns the elements and the scale."""
    sc = Scale(x0, x1, y0, y1)
    out = []
    for y in ticks(y0, y1, 5):
        py = sc.y(y)
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py:.1f}" y2="{py:.1f}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{LEFT - 6}" y="{py + 4:.1f}" class="tick" text-anchor="end">{fmt_tick(y)}{yfmt}</text>'
        )
    for x in ticks(x0, x1, 7):
        px = sc.x(x)
        out.append(
            f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{H - BOTTOM}" y2="{H - BOTTOM + 4}" stroke="{AXIS}"/>'
        )
        out.append(
            f'<text x="{px:.1f}" y="{H - BOTTOM + 16}" class="tick" text-anchor="middle">'
            f"{fmt_tick(x)}{xfmt}</text>"
        )
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}" stroke="{AXIS}"/>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{H - BOTTOM}" stroke="{AXIS}"/>')
    return out, sc


class Scale:
    """Data → SVG coordinates inside the plot area."""

    def __init__(self, x0: float, x1: float, y0: float, y1: float) -> None:
        self.x0, self.x1 = x0, (x1 if x1 > x0 else x0 + 1)
        self.y0, self.y1 = y0, (y1 if y1 > y0 else y0 + 1)

    def x(self, v: float) -> float:
        return LEFT + (v - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)

    def y(self, v: float) -> float:
        return H - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (H - TOP - BOTTOM)


def _legend(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    x = float(W - RIGHT)
    for i, name in reversed(list(enumerate(names))):
        label = escape(name if len(name) <= 28 else name[:27] + "…")
        x -= 16 + 6.2 * len(label)
        out.append(f'<rect x="{x:.0f}" y="25" width="10" height="10" fill="{color(i)}"/>')
        out.append(f'<text x="{x + 14:.0f}" y="34" class="tick">{label}</text>')
    return out


def _empty(title: str) -> str:
    lines = _frame(title, "", "")
    lines.append(f'<text x="{W / 2}" y="{H / 2}" class="clabel" text-anchor="middle">no data</text></svg>')
    return "\n".join(lines)


def min_span(lo: float, hi: float) -> float:
    """The x range a chart of values in ``[lo, hi]`` spans: at least 10 % of their size (and 1), so that one
    value, or a few close ones, still get an axis that reads (``220, 225, 230``, not ``220, 220, 220``)."""
    return max(hi - lo, 0.1 * max(abs(lo), abs(hi)), 1.0)


def _x_range(values: Sequence[float], ticks: int) -> tuple[float, float, float]:
    """Where a chart of ``values`` starts (a whole step), its step, and how far it must at least reach."""
    first, last = min(values), max(values)
    span = min_span(first, last)
    step = nice_step(span, ticks)
    return math.floor(first / step) * step, step, max(last, first + span)


def histogram(series: Series, *, title: str, xlabel: str, ylabel: str = "turns", bins: int = 24) -> str:
    """Counts per bin, one bar per target side by side in each bin (shared bin edges)."""
    values = [v for _, vs in series for v in vs]
    if not values:
        return _empty(title)
    lo, step, reach = _x_range(values, bins)
    n_bins = max(1, math.ceil((reach - lo) / step - 1e-9))
    if lo + n_bins * step <= max(values):
        n_bins += 1
    counts = [[0] * n_bins for _ in series]
    for s, (_, vs) in enumerate(series):
        for v in vs:
            counts[s][min(n_bins - 1, int((v - lo) // step))] += 1
    top = max(max(c) for c in counts)
    out = _frame(title, xlabel, ylabel)
    axes, sc = _axes(lo, lo + n_bins * step, 0, top * 1.1)
    out += axes
    width = (sc.x(lo + step) - sc.x(lo)) / len(series)
    for s, (name, _) in enumerate(series):
        for b, count in enumerate(counts[s]):
            if count:
                x, y = sc.x(lo + b * step) + s * width, sc.y(count)
                out.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(width - 0.6, 0.6):.1f}"'
                    f' height="{sc.y(0) - y:.1f}" fill="{color(s)}" opacity="0.85">'
                    f"<title>{escape(name)}: {count} {escape(ylabel)} in [{fmt_tick(lo + b * step)}, "
                    f"{fmt_tick(lo + (b + 1) * step)}) {escape(xlabel)}</title></rect>"
                )
    out += _legend([n for n, _ in series])
    out.append("</svg>")
    return "\n".join(out)


def cdf(
    series: Series, *, title: str, xlabel: str, ylabel: str = "share of turns", noun: str = "turns"
) -> str:
    """Empirical cumulative distribution per target, as step lines on a shared axis."""
    values = [v for _, vs in series for v in vs]
    if not values:
        return _empty(title)
    lo, step, reach = _x_range(values, 7)
    hi = math.ceil(reach / step) * step
    out = _frame(title, xlabel, ylabel)
    axes, sc = _axes(lo, hi, 0, 1)
    out += axes
    for s, (name, vs) in enumerate(series):
        xs = sorted(vs)
        if not xs:
            continue
        pts = [f"{sc.x(lo):.1f},{sc.y(0):.1f}"]
        for i, v in enumerate(xs):
            pts.append(f"{sc.x(v):.1f},{sc.y(i / len(xs)):.1f}")
            pts.append(f"{sc.x(v):.1f},{sc.y((i + 1) / len(xs)):.1f}")
        pts.append(f"{sc.x(hi):.1f},{sc.y(1):.1f}")
        out.append(
            f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color(s)}" stroke-width="2">'
            f"<title>{escape(name)}: {len(xs)} {escape(noun)}</title></polyline>"
        )
    out += _legend([n for n, _ in series])
    out.append("</svg>")
    return "\n".join(out)


def grouped_bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
) -> str:
    """One group of bars per category (e.g. rhythm score 1-5), one bar per target."""
    top = max((v for _, vs in series for v in vs), default=0)
    if top <= 0:
        return _empty(title)
    out = _frame(title, xlabel, ylabel)
    sc = Scale(0, len(categories), 0, top * 1.1)
    for y in ticks(0, top * 1.1, 5):
        py = sc.y(y)
        out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{py:.1f}" y2="{py:.1f}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{LEFT - 6}" y="{py + 4:.1f}" class="tick" text-anchor="end">{fmt_tick(y)}</text>'
        )
    out.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{H - BOTTOM}" y2="{H - BOTTOM}" stroke="{AXIS}"/>')
    group = sc.x(1) - sc.x(0)
    width = group * 0.8 / max(1, len(series))
    for c, cat in enumerate(categories):
        out.append(
            f'<text x="{sc.x(c + 0.5):.1f}" y="{H - BOTTOM + 16}" class="tick" text-anchor="middle">'
            f"{escape(cat)}</text>"
        )
        for s, (name, vs) in enumerate(series):
            v = vs[c]
            x, y = sc.x(c) + group * 0.1 + s * width, sc.y(v)
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{width - 1:.1f}" height="{sc.y(0) - y:.1f}"'
                f' fill="{color(s)}" opacity="0.85"><title>{escape(name)}: {fmt_tick(v)} {escape(ylabel)}'
                f" at {escape(xlabel)} {escape(cat)}</title></rect>"
            )
    out += _legend([n for n, _ in series])
    out.append("</svg>")
    return "\n".join(out)
