"""The receipt as one self-contained HTML page: tables, inline SVG plots, and the bundle JSON.

No external assets (no scripts, fonts or style sheets are fetched); everything a reviewer
needs is in the page, and the full bundle is embedded in a <script type="application/json">.
A bundle is a file anyone can edit, so every value the page shows is escaped wherever it came
from, and a section whose data has the wrong shape is replaced by a line saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from inspector.core.engine.diagnosis import TITLES, safe_words
from inspector.core.evidence import svg, verdict
from inspector.core.jsonio import dumps

_CSS = """body{font:15px/1.5 system-ui,sans-serif;margin:20px auto;max-width:1100px;color:#111;
padding:0 12px}h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin-top:26px;
border-bottom:1px solid #eee}h3{font-size:15px;margin:8px 0 2px}
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ddd;padding:3px 7px;
text-align:left;vertical-align:top;overflow-wrap:anywhere}th{background:#f4f4f5}
.out{color:#999}.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}.muted{color:#666}code{background:#f4f4f5;padding:1px 4px}
.diag{padding:8px 12px;border-left:4px solid #2563eb;background:#eff6ff}
.bad{border-color:#dc2626;background:#fef2f2}
.verdict,.lists{display:flex;gap:12px;flex-wrap:wrap}.lists>div{flex:1 1 320px;min-width:0}
.lists table{width:100%}th{white-space:nowrap}
.side{flex:1 1 300px;padding:10px 14px;border-left:5px solid #2563eb;background:#eff6ff}
.side.bad{border-color:#dc2626;background:#fef2f2}.side.good{border-color:#16a34a;
background:#f0fdf4}.big{font-size:22px;font-weight:600}.gain{background:#dcfce7}
.loss{background:#fee2e2}details{margin:10px 0}summary{cursor:pointer;font-weight:600}
svg{max-width:100%;height:auto}svg text{font-size:12px}"""


def _e(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return escape(str(v))


def _kv(d: dict[str, Any]) -> str:
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>"
                               for k, v in d.items()) + "</table>"


def _stage_table(stage: dict[str, Any], text_col: str | None) -> str:
    head = ("<tr><th>#</th><th>id</th><th>distance</th><th>fused</th><th>base</th>"
            "<th>importance</th><th>multiplier</th><th>score</th><th>scope</th><th>text</th></tr>")
    rows = []
    for c in stage["candidates"]:
        cls = "" if c["in_scope"] else ' class="out"'
        text = c["columns"].get(text_col) if text_col else None
        rows.append(f"<tr{cls}><td>{_e(c['rank'])}</td><td><code>{_e(c['id'])}</code></td>"
                    f"<td class=num>{_e(c['distance'])}</td><td class=num>{_e(c['fused_score'])}"
                    f"</td><td class=num>{_e(c['base_score'])}</td>"
                    f"<td class=num>{_e(c['importance_used'])}</td>"
                    f"<td class=num>{_e(c['multiplier'])}</td><td class=num>{_e(c['score'])}</td>"
                    f"<td>{'in' if c['in_scope'] else 'OUT'}</td><td>{_e(text)}</td></tr>")
    return f"<table>{head}{''.join(rows)}</table>"


def _header(b: dict[str, Any]) -> str:
    """The first screen: what was asked, the verdict before and after, the ranked lists."""
    st, q = b["store"], b["query"]
    meta = (f"store <code>{_e(st.get('uri'))}</code> · table <code>{_e(st.get('table'))}</code>"
            f" · version {_e(st.get('version'))} · {_e(st.get('rows'))} rows · created "
            f"{_e(b.get('created'))}")
    return (f"<h1>Receipt: {_e(q.get('text') or '(vector query)')}</h1>"
            f'<div class="muted">{meta}</div><h2>Verdict</h2>'
            + _section(verdict.sides, b, "verdict") + _section(verdict.lists, b, "lists"))


def _diagnosis(b: dict[str, Any]) -> str:
    t = b["trace"]
    d = t["diagnosis"]
    cls = "diag" if d["code"] == "ok" else "diag bad"
    return ("<h2>Counters and diagnosis</h2>"
            + svg.bars([(k, float(v)) for k, v in t["counters"].items()], "counters")
            + f'<p class="{cls}"><b>{_e(TITLES.get(d["code"], d["code"]))}</b>: '
            f'{_e(d["message"])}</p>')


def _metrics(b: dict[str, Any]) -> str:
    out = []
    if b.get("metrics"):
        out.append("<h2>Metrics</h2>" + _kv(b["metrics"]))
    safe = b.get("safe")
    if safe:
        marks = [(safe["overfetch"], f"safe {safe['overfetch']:g}")] if safe.get("overfetch") \
            else []
        pts = [(c["overfetch"], c["recall"]) for c in safe["curve"]]
        out.append("<h2>Scoped recall against over-fetch</h2>"
                   + svg.line_chart([("scoped recall (no cap)", pts)], "over-fetch factor",
                                    "scoped recall", marks=marks)
                   + _p(_safe_sentence(safe, b["trace"]["params"])))
    return "".join(out)


def _p(text: str) -> str:
    return f"<p>{_e(text)}</p>"


def _safe_sentence(safe: dict[str, Any], p: dict[str, Any]) -> str:
    """Safe over-fetch in the words the window's banner and sweep tab use."""
    if safe.get("depth") is None:
        return f"No safe over-fetch: {safe.get('reason')}."
    where = "within the cap" if safe.get("within_cap") else safe.get("reason")
    return f"Minimum {safe_words(int(safe['depth']), int(p['limit']))}, {where}."


def _sweep(b: dict[str, Any]) -> str:
    s = b.get("sweep")
    if not s:
        return ""
    grid = s["grid"]
    agg = s["aggregate"].get("objective")
    if agg is None:
        return ""
    matrix = [[row[0] for row in per_f] for per_f in agg]  # first min score
    best = s["best"].get("pick")
    cell = None
    if best:
        cell = (grid["overfetch"].index(best["overfetch"]), grid["blend"].index(best["blend"]))
    return ("<h2>Sweep: over-fetch × blend weight</h2>"
            + svg.heatmap(matrix, grid["overfetch"], grid["blend"], "over-fetch",
                          "blend weight", "mean objective (min score "
                          f"{grid['min_score'][0]:g})", cell)
            + _p(_pick(s["best"], len(s["queries"]))))


def _pick(best: dict[str, Any], queries: int) -> str:
    p = best.get("pick")
    if not p:
        return "No cell has a defined value."
    return (f"Best mean objective {float(best['value']):.3g} over {queries} "
            f"quer{'y' if queries == 1 else 'ies'}, in {best.get('cells')} cells; the cheapest: "
            f"over-fetch {float(p['overfetch']):g}, blend weight {float(p['blend']):g}, "
            f"min score {float(p['min_score']):g}.")


def _comparison(b: dict[str, Any]) -> str:
    c = b.get("comparison")
    if not c:
        return ""
    a, bb = c["a"], c["b"]
    rows = "".join(
        f"<tr{'' if r['in_scope'] else ' class=out'}><td>{_e(r['rank_a'])}</td>"
        f"<td>{_e(r['rank_b'])}</td><td>{_e(r['shift'])}</td><td>{_e(r['side'])}</td>"
        f"<td><code>{_e(r['id'])}</code></td><td>{_e(r['text'])}</td></tr>" for r in c["rows"])
    return (f"<h2>Side by side: {_e(a['label'])} vs {_e(bb['label'])}</h2>"
            + _kv({"Jaccard": c["jaccard"], f"RBO (p={c['rbo_p']:g}, {c['rbo_form']})": c["rbo"],
                   f"Kendall's tau ({c['kendall_variant']})": c["kendall_tau"],
                   "shared": c["shared"],
                   f"starved in scope ({a['label']})": a["starved"],
                   f"starved in scope ({bb['label']})": bb["starved"],
                   f"scoped recall ({a['label']})": a["scoped_recall"],
                   f"scoped recall ({bb['label']})": bb["scoped_recall"]})
            + f"<table><tr><th>{_e(a['label'])}</th><th>{_e(bb['label'])}</th><th>shift</th>"
            f"<th>side</th><th>id</th><th>text</th></tr>{rows}</table>")


def _map(b: dict[str, Any]) -> str:
    m = b.get("map")
    if not m:
        return ""
    kinds = ["returned" if f else ("in cut" if s else "in cut, out of scope") if r
             else "in scope" if s else "out of scope"
             for f, r, s in zip(m["final"], m["raw_rank"], m["in_scope"], strict=True)]
    q = tuple(m["query"]) if m.get("query") else None
    ex = m["explained"]
    return ("<h2>Candidate pool map (PCA)</h2>"
            + svg.scatter(m["x"], m["y"], kinds, q, m.get("cut_radius"),
                          f"{len(m['x'])} candidates; axes explain {ex[0]:.0%} and {ex[1]:.0%}")
            + f"<p>Dashed circle: the top-{_e(m['cut_depth'])} cut, drawn through the farthest "
            "candidate inside it (the projection distorts distances, so it is a guide).</p>")


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                   "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_TABLE = str.maketrans(_SCRIPT_ESCAPES)


def script_safe_json(text: str) -> str:
    """JSON text that can sit inside <script> whatever the stored strings hold: `<`, `>` and `&`
    occur only inside JSON strings, where their \\u escapes mean the same characters, so no
    `</script>`, `<!--` or `<script` sequence can end or hide the element (HTML5 script data
    states), and a JSON parser reads back exactly the same document."""
    return text.translate(_SCRIPT_TABLE)


def _section(build: Callable[[dict[str, Any]], str], bundle: dict[str, Any], name: str) -> str:
    """One section of the page, or a line saying its data could not be drawn."""
    try:
        return build(bundle)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
            ZeroDivisionError) as exc:
        return f"<p class=out>The {_e(name)} could not be drawn from this bundle " \
               f"({_e(type(exc).__name__)}).</p>"


def _asked(b: dict[str, Any]) -> str:
    """The question the receipt's query asked, as given: what the parameters below came from
    (the preset, the values given explicitly, scope, limit, the query input)."""
    q = b.get("question")
    if q is None:
        return "<p class=muted>This receipt was written before receipts kept the question " \
               "asked; the parameters below are all it has.</p>"
    shown: dict[str, Any] = {k: v for k, v in q.items()
                             if k not in ("schema", "vector") and v not in (None, {}, [])}
    if q.get("vector") is not None:
        shown["vector"] = f"{len(q['vector'])} numbers"
    return "<h3>The question asked</h3>" + _kv(
        {k: dumps(v) if isinstance(v, (dict, list)) else v for k, v in shown.items()})


def _stages(b: dict[str, Any]) -> str:
    text_col = b["pool"]["roles"].get("text")
    return "".join(f"<details{' open' if s['name'] == 'final' else ''}><summary>"
                   f"{_e(s['name'])} ({_e(s['count'])})</summary>{_stage_table(s, text_col)}"
                   "</details>" for s in b["trace"]["stages"])


def render_html(bundle: dict[str, Any], json_text: str | None = None) -> str:
    """The whole page for a bundle (json_text: the bundle's JSON, to embed as is)."""
    payload = script_safe_json(json_text or dumps(bundle))
    parts = [_section(_header, bundle, "header"), _section(_diagnosis, bundle, "diagnosis"),
             _section(_metrics, bundle, "metrics"), _section(_sweep, bundle, "sweep"),
             _section(_comparison, bundle, "comparison"), _section(_map, bundle, "map"),
             "<h2>Every stage</h2>", _section(_stages, bundle, "stages"),
             "<h2>Parameters</h2>", _section(_asked, bundle, "question"),
             _section(verdict.parameters, bundle, "parameters")]
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            f"<title>Retrieval receipt</title><style>{_CSS}</style></head><body>"
            + "".join(parts)
            + '<script type="application/json" id="bundle">' + payload + "</script>"
            + "</body></html>")
