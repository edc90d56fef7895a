"""Charts drawn on the server as SVG markup (plain Python, no Django): pages stay one request,
readable without JavaScript, and labelled for screen readers."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime
from html import escape

#: Series colours, each with at least 4.5:1 contrast on white (lines and their labels).
PALETTE = ("#8a1538", "#1a5fb4", "#26734d", "#7a4b00", "#5c3c92")


@dataclass(frozen=True)
class Point:
    """One fitted rating: when, the rating and its 95% interval, the matches behind it, and
    the bot version fitted (None: a built-in, or a point from before versions were rated
    apart)."""

    at: datetime
    rating: float
    low: float
    high: float
    matches: int
    version: int | None = None


def along(points: list[Point]) -> list[Point]:
    """A history of several versions drawn along one axis of matches played: each version's
    own match counts (a new version starts from 0) moved past its predecessors'.

    >>> at = datetime(2026, 1, 1)
    >>> history = [Point(at, 1, 0, 2, 5, 1), Point(at, 1, 0, 2, 9, 1), Point(at, 1, 0, 2, 3, 2)]
    >>> [p.matches for p in along(history)]
    [5, 9, 12]
    """
    moved, offset, last = [], 0, None
    for point in points:
        if last is not None and point.version != last.version:
            offset += last.matches
        moved.append(replace(point, matches=point.matches + offset))
        last = point
    return moved


def nice_step(span: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving about ``ticks`` ticks.

    >>> nice_step(230), nice_step(47), nice_step(0.9)
    (50.0, 10.0, 0.2)
    """
    raw = max(span, 1e-9) / ticks
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return float(factor * power)
    return float(10 * power)  # pragma: no cover - the loop always returns


def thin(points: list[Point], limit: int) -> list[Point]:
    """At most ``limit`` points, evenly spread, keeping the first and the last.

    >>> at = datetime(2026, 1, 1)
    >>> [p.matches for p in thin([Point(at, 0, 0, 0, i) for i in range(10)], 4)]
    [0, 3, 6, 9]
    """
    if len(points) <= limit:
        return points
    last = len(points) - 1
    return [points[round(i * last / (limit - 1))] for i in range(limit)]


def rating_history_svg(
    series: dict[str, list[Point]],
    *,
    width: int = 640,
    height: int = 240,
    title: str = "Rating history",
    max_points: int = 200,
) -> str:
    """An SVG line chart of each series' rating as matches are played (points in time order,
    each titled with its date), the 95% interval as a band.

    The ``<title>`` and ``<desc>`` name the chart and say where each series starts and ends,
    so the image has a text alternative.

    >>> at = datetime(2026, 1, 1)
    >>> later = at.replace(day=2)
    >>> svg = rating_history_svg({"standard": [Point(at, 1500, 1400, 1600, 4),
    ...                                        Point(later, 1550, 1480, 1620, 9)]})
    >>> svg.startswith("<svg") and 'role="img"' in svg and "1500 to 1550 between 4 and 9" in svg
    True
    """
    series = {name: thin(points, max_points) for name, points in series.items() if points}
    left, right, top, bottom = 52, 16, 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    if not series:
        summary = "No rated matches yet."
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{escape(title)}: {summary}" class="chart"><text x="{width / 2}" '
            f'y="{height / 2}" text-anchor="middle" fill="#444">{summary}</text></svg>'
        )
    everything = [p for points in series.values() for p in points]
    # Across: the matches played (a bot's rating moves only when it plays, so its points are
    # evenly readable however the refits were spread in time); each point names its date.
    first = min(p.matches for p in everything)
    last = max(p.matches for p in everything)
    if last == first:
        first, last = first - 1, last + 1
    step = nice_step(max(p.high for p in everything) - min(p.low for p in everything))
    y_low = math.floor(min(p.low for p in everything) / step) * step
    y_high = math.ceil(max(p.high for p in everything) / step) * step
    if y_high <= y_low:
        y_high = y_low + step

    def x(matches: float) -> float:
        return round(left + plot_w * (matches - first) / (last - first), 1)

    def y(value: float) -> float:
        return round(top + plot_h * (y_high - value) / (y_high - y_low), 1)

    def describe(name: str, points: list[Point]) -> str:
        first, last = points[0], points[-1]
        takeovers = [
            f"v{p.version} from {p.matches}"
            for before, p in zip([None, *points], points, strict=False)
            if p.version is not None and (before is None or before.version != p.version)
        ]
        return (
            f"{name}: from {first.rating:.0f} to {last.rating:.0f} between {first.matches} and "
            f"{last.matches} matches played"
            + (f" ({', '.join(takeovers)})" if takeovers else "")
            + f"; latest {last.rating:.0f} (95% interval {last.low:.0f}–{last.high:.0f}, "
            f"{last.at:%Y-%m-%d %H:%M})"
        )

    desc = "; ".join(describe(name, points) for name, points in series.items())
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="chart-title chart-desc" class="chart">',
        f'<title id="chart-title">{escape(title)}</title>',
        f'<desc id="chart-desc">{escape(desc)}</desc>',
        '<g aria-hidden="true" font-size="12" fill="#444">',
    ]
    value = y_low
    while value <= y_high + step / 2:
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(value)}" y2="{y(value)}" '
            f'stroke="#ddd"/><text x="{left - 6}" y="{y(value) + 4}" text-anchor="end">'
            f"{value:.0f}</text>"
        )
        value += step
    across = max(1.0, nice_step(last - first, 6))
    tick = math.ceil(first / across) * across
    while tick <= last:
        parts.append(
            f'<text x="{x(tick)}" y="{height - 18}" text-anchor="middle">{tick:.0f}</text>'
        )
        tick += across
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 3}" text-anchor="middle">'
        "rated matches played</text>"
    )
    parts.append("</g>")
    for index, (name, points) in enumerate(series.items()):
        colour = PALETTE[index % len(PALETTE)]
        upper = " ".join(f"{x(p.matches)},{y(p.high)}" for p in points)
        lower = " ".join(f"{x(p.matches)},{y(p.low)}" for p in reversed(points))
        line = " ".join(f"{x(p.matches)},{y(p.rating)}" for p in points)
        parts.append(f'<g class="series" data-series="{escape(name)}">')
        parts.append(f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.15"/>')
        parts.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for before, p in zip([None, *points], points, strict=False):
            if p.version is not None and (before is None or before.version != p.version):
                # where this version took over
                parts.append(
                    f'<line class="takeover" x1="{x(p.matches)}" x2="{x(p.matches)}" '
                    f'y1="{top}" y2="{top + plot_h}" stroke="{colour}" stroke-dasharray="3 3"/>'
                    f'<text x="{x(p.matches) + 3}" y="{top + plot_h - 4}" fill="{colour}" '
                    f'font-size="11" aria-hidden="true">v{p.version}</text>'
                )
            version = f" v{p.version}" if p.version is not None else ""
            parts.append(
                f'<circle cx="{x(p.matches)}" cy="{y(p.rating)}" r="3" fill="{colour}">'
                f"<title>{escape(name)}{version} {p.at:%Y-%m-%d %H:%M}: {p.rating:.0f} "
                f"({p.low:.0f}–{p.high:.0f}), {p.matches} matches</title></circle>"
            )
        if len(series) > 1:
            parts.append(
                f'<text x="{left + 8}" y="{top + 14 + 16 * index}" fill="{colour}" '
                f'font-size="12" aria-hidden="true">{escape(name)}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)
