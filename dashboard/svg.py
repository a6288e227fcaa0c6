"""Server-rendered SVG charts (no JavaScript, nothing vendored): a line plot of a run's metric
per round and a horizontal bar chart of a model's ownership.

Both return an SVG element as a string; every label is XML-escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["line_plot", "ownership_bars"]

SVG_NS = "http://www.w3.org/2000/svg"
PALETTE = ("#3b6ea5", "#d1743b", "#4c9a5b", "#a54a6e", "#7a64b8", "#9a8a3b", "#3b9a9a")


def _text(
    x: float, y: float, body: str, *, anchor: str = "start", size: int = 11, **attrs: str
) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}"{extra}>'
        f"{body}</text>"
    )


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}"/>'


def line_plot(
    points: Sequence[tuple[int, float | None]],
    *,
    x_label: str = "round",
    y_label: str = "metric",
    width: int = 640,
    height: int = 280,
) -> str:
    """A line plot of (x, y) points; an x whose y is None is marked "n/a" on the axis.

    Args:
        points: (round, value) pairs, in x order.
        x_label: the x axis' name.
        y_label: the y axis' name (e.g. ``"val_bpc"``).
        width: pixels.
        height: pixels.
    """
    left, right, top, bottom = 64, 16, 16, 40
    label = f"{escape(y_label)} per {escape(x_label)}"
    parts = [
        f'<svg xmlns="{SVG_NS}" class="plot" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{label}">'
    ]
    xs = [x for x, _ in points]
    known = [(x, y) for x, y in points if y is not None]
    if not xs:
        parts.append(_text(width / 2, height / 2, "no final rounds yet", anchor="middle"))
        return "".join([*parts, "</svg>"])
    x0, x1 = min(xs), max(xs)
    ys = [y for _, y in known]
    y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
    if y1 - y0 < 1e-12:
        y0, y1 = y0 - 0.5, y1 + 0.5
    pad = (y1 - y0) * 0.1
    y0, y1 = y0 - pad, y1 + pad
    plot_w, plot_h = width - left - right, height - top - bottom
    base = top + plot_h

    def px(x: float) -> float:
        return left + (0.5 if x1 == x0 else (x - x0) / (x1 - x0)) * plot_w

    def py(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * plot_h

    parts.append(_line(left, base, left + plot_w, base, "#333"))
    parts.append(_line(left, top, left, base, "#333"))
    for i in range(5):
        v = y0 + (y1 - y0) * i / 4
        parts.append(_line(left - 4, py(v), left + plot_w, py(v), "#eee"))
        parts.append(_text(left - 6, py(v) + 4, f"{v:.3f}", anchor="end"))
    for x in xs:
        parts.append(_text(px(x), base + 16, str(x), anchor="middle"))
    drawn = [(px(x), py(y)) for x, y in known]
    if len(drawn) > 1:
        path = " ".join(f"{a:.1f},{b:.1f}" for a, b in drawn)
        parts.append(
            f'<polyline fill="none" stroke="{PALETTE[0]}" stroke-width="2" points="{path}"/>'
        )
    for (x, value), (a, b) in zip(known, drawn, strict=True):
        parts.append(
            f'<circle class="point" cx="{a:.1f}" cy="{b:.1f}" r="4" fill="{PALETTE[0]}">'
            f"<title>{escape(x_label)} {x}: {value:.4f}</title></circle>"
        )
    for x, y in points:
        if y is None:
            parts.append(_text(px(x), base - 6, "n/a", anchor="middle", fill="#999"))
    parts.append(_text(left + plot_w / 2, height - 6, escape(x_label), anchor="middle", size=12))
    mid = top + plot_h / 2
    parts.append(
        _text(14, mid, escape(y_label), anchor="middle", size=12, transform=f"rotate(-90 14 {mid})")
    )
    return "".join([*parts, "</svg>"])


def ownership_bars(holders: Sequence[tuple[str, int, int]], *, width: int = 1000) -> str:
    """Horizontal bars, one per holder: (full address, shares, basis points of the total).

    Args:
        holders: the holders, largest first.
        width: pixels.
    """
    row_h, label_w = 28, 420
    height = max(1, len(holders)) * row_h + 8
    parts = [
        f'<svg xmlns="{SVG_NS}" class="ownership" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="ownership">'
    ]
    if not holders:
        parts.append(_text(4, 20, "no shares minted yet"))
        return "".join([*parts, "</svg>"])
    bar_w = width - label_w - 90
    for i, (address, shares, bps) in enumerate(holders):
        y = 4 + i * row_h
        w = max(1.0, bar_w * bps / 10_000)
        colour = PALETTE[i % len(PALETTE)]
        parts.append(_text(0, y + 17, escape(address), size=12, font_family="monospace"))
        parts.append(
            f'<rect x="{label_w}" y="{y + 4}" width="{w:.1f}" height="{row_h - 10}" '
            f'fill="{colour}"><title>{escape(address)}: {shares} shares</title></rect>'
        )
        parts.append(_text(label_w + w + 6, y + 17, f"{bps / 100:.2f}%", size=12))
    return "".join([*parts, "</svg>"])
