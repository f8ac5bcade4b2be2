"""Small inline SVG plots drawn from numbers (no plotting library): line, heat map, scatter, bars.

Each function returns one `<svg>` element as text; every label is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

W, H = 560, 300
PAD_L, PAD_R, PAD_T, PAD_B = 56, 16, 24, 44
COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2")


def _svg(body: list[str], width: int = W, height: int = H, title: str = "") -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">')
    cap = f'<text x="{width / 2:.0f}" y="14" text-anchor="middle" font-weight="bold">' \
          f'{escape(title)}</text>' if title else ""
    return head + cap + "".join(body) + "</svg>"


def _scale(lo: float, hi: float, a: float, b: float):  # noqa: ANN202 - tiny local helper
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _axes(xlabel: str, ylabel: str, xs: Sequence[float], y0: float, y1: float) -> list[str]:
    x0, x1 = PAD_L, W - PAD_R
    yb, yt = H - PAD_B, PAD_T
    out = [f'<line x1="{x0}" y1="{yb}" x2="{x1}" y2="{yb}" stroke="#333"/>',
           f'<line x1="{x0}" y1="{yb}" x2="{x0}" y2="{yt}" stroke="#333"/>',
           f'<text x="{(x0 + x1) / 2:.0f}" y="{H - 8}" text-anchor="middle">'
           f'{escape(xlabel)}</text>',
           f'<text x="14" y="{(yb + yt) / 2:.0f}" text-anchor="middle" '
           f'transform="rotate(-90 14 {(yb + yt) / 2:.0f})">{escape(ylabel)}</text>']
    sy = _scale(y0, y1, yb, yt)
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        v = y0 + t * (y1 - y0)
        out.append(f'<text x="{x0 - 4}" y="{sy(v) + 4:.1f}" text-anchor="end">{v:g}</text>')
        out.append(f'<line x1="{x0}" y1="{sy(v):.1f}" x2="{x1}" y2="{sy(v):.1f}" '
                   'stroke="#eee"/>')
    return out


def line_chart(series: Sequence[tuple[str, Sequence[tuple[float, float | None]]]],
               xlabel: str, ylabel: str, title: str = "", y_range: tuple[float, float] = (0, 1),
               marks: Sequence[tuple[float, str]] = ()) -> str:
    """Lines over a shared x axis; None values break a line; marks are labelled verticals."""
    xs = sorted({x for _, pts in series for x, _ in pts} | {m for m, _ in marks}) or [0.0, 1.0]
    sx = _scale(xs[0], xs[-1], PAD_L, W - PAD_R)
    sy = _scale(y_range[0], y_range[1], H - PAD_B, PAD_T)
    body = _axes(xlabel, ylabel, xs, *y_range)
    for x in xs[:: max(1, len(xs) // 10)]:
        body.append(f'<text x="{sx(x):.1f}" y="{H - PAD_B + 14}" text-anchor="middle">{x:g}</text>')
    for n, (label, pts) in enumerate(series):
        color = COLORS[n % len(COLORS)]
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts if y is not None)
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        for x, y in pts:
            if y is not None:
                body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.5" fill="{color}"/>')
        body.append(f'<text x="{W - PAD_R - 4}" y="{PAD_T + 12 + 13 * n}" text-anchor="end" '
                    f'fill="{color}">{escape(label)}</text>')
    for x, label in marks:
        body.append(f'<line x1="{sx(x):.1f}" y1="{H - PAD_B}" x2="{sx(x):.1f}" y2="{PAD_T}" '
                    'stroke="#555" stroke-dasharray="4 3"/>')
        body.append(f'<text x="{sx(x) + 3:.1f}" y="{PAD_T + 10}">{escape(label)}</text>')
    return _svg(body, title=title)


def _color(v: float | None) -> str:
    if v is None:
        return "#ddd"
    v = min(1.0, max(0.0, v))
    r, g, b = int(247 - 200 * v), int(251 - 120 * v), int(255 - 90 * v)
    return f"rgb({r},{g},{b})"


def heatmap(values: Sequence[Sequence[float | None]], rows: Sequence[float],
            cols: Sequence[float], row_label: str, col_label: str, title: str = "",
            best: tuple[int, int] | None = None) -> str:
    """values[i][j] in [0, 1] for row value i (y axis) and column value j (x axis)."""
    nr, nc = max(1, len(rows)), max(1, len(cols))
    cw, ch = (W - PAD_L - PAD_R) / nc, (H - PAD_T - PAD_B) / nr
    body = []
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            x, y = PAD_L + j * cw, H - PAD_B - (i + 1) * ch
            stroke = ' stroke="#111" stroke-width="2"' if best == (i, j) else ""
            tip = "-" if v is None else f"{v:.3f}"
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cw:.1f}" height="{ch:.1f}" '
                        f'fill="{_color(v)}"{stroke}><title>{escape(row_label)} {rows[i]:g}, '
                        f'{escape(col_label)} {cols[j]:g}: {tip}</title></rect>')
            if cw > 26 and ch > 12:
                body.append(f'<text x="{x + cw / 2:.1f}" y="{y + ch / 2 + 4:.1f}" '
                            f'text-anchor="middle" font-size="9">{tip}</text>')
    for i, r in enumerate(rows):
        body.append(f'<text x="{PAD_L - 4}" y="{H - PAD_B - (i + 0.5) * ch + 4:.1f}" '
                    f'text-anchor="end">{r:g}</text>')
    for j, c in enumerate(cols):
        body.append(f'<text x="{PAD_L + (j + 0.5) * cw:.1f}" y="{H - PAD_B + 14}" '
                    f'text-anchor="middle">{c:g}</text>')
    body.append(f'<text x="{(PAD_L + W - PAD_R) / 2:.0f}" y="{H - 8}" text-anchor="middle">'
                f'{escape(col_label)}</text>')
    body.append(f'<text x="12" y="{H / 2:.0f}" text-anchor="middle" '
                f'transform="rotate(-90 12 {H / 2:.0f})">{escape(row_label)}</text>')
    return _svg(body, title=title)


def scatter(xs: Sequence[float], ys: Sequence[float], kinds: Sequence[str],
            query: tuple[float, float] | None, radius: float | None, title: str = "") -> str:
    """Points coloured by kind (returned; inside the top-N cut, in or out of scope; beyond
    it), the query as a star, and the cut as a dashed circle around it."""
    style = {"returned": ("#16a34a", 4.5), "in cut": ("#2563eb", 3.5),
             "in cut, out of scope": ("#f97316", 3.5), "in scope": ("#60a5fa", 2.5),
             "out of scope": ("#bbb", 2.0)}
    allx = list(xs) + ([query[0]] if query else [])
    ally = list(ys) + ([query[1]] if query else [])
    lo = min(min(allx, default=0), min(ally, default=0))
    hi = max(max(allx, default=1), max(ally, default=1))
    side = min(W - PAD_L - PAD_R, H - PAD_T - PAD_B)
    s = _scale(lo, hi, 0, side)
    ox, oy = PAD_L, PAD_T
    body = [f'<rect x="{ox}" y="{oy}" width="{side}" height="{side}" fill="none" stroke="#ccc"/>']
    order = ("out of scope", "in scope", "in cut, out of scope", "in cut", "returned")
    for kind in order:
        color, r = style[kind]
        for x, y, k in zip(xs, ys, kinds, strict=True):
            if k == kind:
                body.append(f'<circle cx="{ox + s(x):.1f}" cy="{oy + side - s(y):.1f}" r="{r}" '
                            f'fill="{color}" fill-opacity="0.8"/>')
    if query is not None:
        qx, qy = ox + s(query[0]), oy + side - s(query[1])
        body.append(f'<text x="{qx:.1f}" y="{qy + 5:.1f}" text-anchor="middle" font-size="16" '
                    'fill="#dc2626">★</text>')
        if radius:  # inside a nested svg the size of the box: the ring is clipped to it
            body.append(f'<svg x="{ox}" y="{oy}" width="{side}" height="{side}">'
                        f'<circle cx="{qx - ox:.1f}" cy="{qy - oy:.1f}" '
                        f'r="{s(lo + radius) - s(lo):.1f}" fill="none" stroke="#dc2626" '
                        'stroke-dasharray="5 3"/></svg>')
    for n, kind in enumerate(order):
        color, r = style[kind]
        body.append(f'<circle cx="{ox + side + 20}" cy="{oy + 10 + 16 * n}" r="{r}" '
                    f'fill="{color}"/><text x="{ox + side + 30}" y="{oy + 14 + 16 * n}">'
                    f'{kind}</text>')
    return _svg(body, title=title)


def bars(items: Sequence[tuple[str, float]], title: str = "") -> str:
    """Horizontal bars, one per (label, value)."""
    h = PAD_T + 22 * len(items) + 10
    top = max([v for _, v in items] + [1])
    body = []
    for n, (label, v) in enumerate(items):
        y = PAD_T + 22 * n
        w = (W - 220) * v / top
        body.append(f'<text x="150" y="{y + 14}" text-anchor="end">{escape(label)}</text>'
                    f'<rect x="156" y="{y + 3}" width="{w:.1f}" height="15" fill="#2563eb"/>'
                    f'<text x="{160 + w:.1f}" y="{y + 14}">{v:g}</text>')
    return _svg(body, height=h, title=title)
