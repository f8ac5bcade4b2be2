"""The receipt as one self-contained HTML page: the verdict first (before and after, each with
its diagnosis and the fixes that were run), the ranked lists side by side, what changed, what
each stage did, then the evidence (metrics, the safe depth and its curve, the sweep, the
agreement of the two sides, the map of the rows) and every parameter, folded; the receipt's
JSON embedded as `<script type="application/json" id="receipt">`.

No external assets (no scripts run, fonts or style sheets fetched). A receipt is a file
anyone can edit, so every value the page shows is escaped wherever it came from, never shown
as a Python value, and a section whose data has the wrong shape is replaced by a line saying
so.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from inspector.core.analysis.safe import safe_words
from inspector.core.evidence import svg
from inspector.core.jsonio import dumps

_CSS = """body{font:15px/1.5 system-ui,sans-serif;margin:20px auto;max-width:1100px;color:#111;
padding:0 12px}h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin-top:26px;
border-bottom:1px solid #e5e5e5}h3{font-size:15px;margin:8px 0 2px}
table{border-collapse:collapse;margin:6px 0;width:100%}td,th{border:1px solid #ddd;
padding:3px 7px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.scroll{overflow-x:auto}th,.num{white-space:nowrap;overflow-wrap:normal}th{background:#f4f4f5}
.num{text-align:right;font-variant-numeric:tabular-nums}.verdict{display:flex;gap:12px;
flex-wrap:wrap}.side{flex:1 1 300px;padding:10px 14px;border-left:5px solid #2563eb;
background:#eff6ff}.side.bad{border-color:#dc2626;background:#fef2f2}.side.good{
border-color:#16a34a;background:#f0fdf4}.big{font-size:22px;font-weight:600}.lists{
display:flex;gap:12px;flex-wrap:wrap}.lists>div{flex:1 1 300px;min-width:0}.gain{
background:#dcfce7}.loss{background:#fee2e2}.muted{color:#666}code{background:#f4f4f5;
padding:1px 4px}details{margin:8px 0}summary{cursor:pointer;font-weight:600}.fixes{
margin:6px 0 0 0;padding-left:18px}.out{color:#999}svg{max-width:100%;height:auto}
@media (prefers-color-scheme: dark){body{background:#111;color:#eee}th{background:#222}
td,th{border-color:#333}.side{background:#172554}.side.bad{background:#450a0a}
.side.good{background:#052e16}.gain{background:#14532d}.loss{background:#7f1d1d}
code{background:#222}.muted{color:#aaa}}"""


def _e(v: Any) -> str:
    """A value as a reader reads it: yes/no, none, numbers to 4 significant digits, lists
    and objects joined; never a Python repr."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return escape(", ".join(_plain(x) for x in v)) if v else "none"
    if isinstance(v, dict):
        return escape(", ".join(f"{k} {_plain(x)}" for k, x in v.items())) if v else "none"
    return escape(str(v))


def _plain(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple, dict)):
        return dumps(v)
    return "none" if v is None else str(v)


def _kv(d: dict[str, Any]) -> str:
    return "<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>"
                               for k, v in d.items()) + "</table>"


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                   "\u2028": "\\u2028", "\u2029": "\\u2029"}
_SCRIPT_TABLE = str.maketrans(_SCRIPT_ESCAPES)


def script_safe_json(text: str) -> str:
    """JSON text that can sit inside <script> whatever the stored strings hold: `<`, `>` and `&`
    occur only inside JSON strings, where their \\u escapes mean the same characters, so no
    `</script>`, `<!--` or `<script` sequence can end or hide the element (HTML5 script data
    states), and a JSON parser reads back exactly the same document."""
    return text.translate(_SCRIPT_TABLE)


def _section(build: Callable[[dict[str, Any]], str], receipt: dict[str, Any], name: str) -> str:
    """One section of the page, or a line saying its data could not be drawn."""
    try:
        return build(receipt)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError,
            ZeroDivisionError) as exc:
        return f"<p class=out>The {_e(name)} could not be drawn from this receipt " \
               f"({_e(type(exc).__name__)}).</p>"


# ---------------------------------------------------------------------------- the verdict

def _fix(f: dict[str, Any], limit: int) -> str:
    r = f["returns"]
    return (f"<li>{_e(f['label'])} <code>{_e(' '.join(f['argv']))}</code> "
            f"<span class=muted>returns {int(r['count'])} of {int(limit)}"
            f"{', a full page' if r['full_page'] else ''}</span></li>")


def _side(role: str, s: dict[str, Any]) -> str:
    ok = s["code"] == "ok" and s["returned"] >= s["limit"]
    cls = "good" if ok else ("bad" if s["returned"] == 0 else "")
    recall = "" if s.get("scoped_recall") is None else \
        f"<div>scoped recall {float(s['scoped_recall']):.2f}</div>"
    exact = "" if s["exact"] else "<div><b>Not exact:</b> see the notes below.</div>"
    fixes = "" if not s["fixes"] else (
        "<div>Fixes, each run:</div><ul class=fixes>"
        + "".join(_fix(f, s["limit"]) for f in s["fixes"]) + "</ul>")
    return (f'<div class="side {cls}"><div class="muted">{role} · {_e(s["label"])} · pipeline '
            f'<code>{_e(s["pipeline"])}</code></div><div class="big">{int(s["returned"])} of '
            f'{int(s["limit"])} returned</div><div><b>{_e(s["title"])}</b>: '
            f'{_e(s["message"])}</div>{recall}{exact}{fixes}</div>')


def _verdict(r: dict[str, Any]) -> str:
    v = r["verdict"]
    sides = _side("before", v["before"]) + \
        (_side("after", v["after"]) if v.get("after") else "")
    change = ""
    if v.get("after"):
        change = f"<p>Gained: {_e(v['gained'])}. Lost: {_e(v['lost'])}.</p>"
    return f'<h2>Verdict</h2><div class="verdict">{sides}</div>{change}'


def _list_html(title: str, doc: dict[str, Any], mark: set[Any], cls: str) -> str:
    rows = "".join(
        f'<tr class="{cls if c["id"] in mark else ""}"><td class="num">{int(c["rank"])}</td>'
        f'<td><code>{_e(c["id"])}</code></td><td class="num">{_e(c["score"])}</td>'
        f'<td>{_e(c.get("scope"))}</td></tr>' for c in doc["stages"][-1]["candidates"])
    return (f"<div><h3>{_e(title)}</h3><div class=scroll><table><tr><th>#</th><th>id</th>"
            f"<th>score</th><th>scope</th></tr>"
            f"{rows or '<tr><td colspan=4>nothing returned</td></tr>'}</table></div></div>")


def _lists(r: dict[str, Any]) -> str:
    v = r["verdict"]
    out = _list_html(f"before · {v['before']['label']}", r["before"], set(v.get("lost", [])),
                     "loss")
    if r.get("after"):
        out += _list_html(f"after · {v['after']['label']}", r["after"], set(v["gained"]),
                          "gain")
    return f"<div class=lists>{out}</div>"


def _differences(r: dict[str, Any]) -> str:
    before, after = r["before"], r.get("after")
    if not after:
        return ""
    rows = []
    if before["pipeline"]["name"] != after["pipeline"]["name"]:
        rows.append(f"<tr><td>pipeline</td><td>{_e(before['pipeline']['name'])}</td>"
                    f"<td>{_e(after['pipeline']['name'])}</td></tr>")
    bp, ap = before["params"]["stages"], after["params"]["stages"]
    for st in dict.fromkeys([*bp, *ap]):
        for k in dict.fromkeys([*bp.get(st, {}), *ap.get(st, {})]):
            x, y = bp.get(st, {}).get(k), ap.get(st, {}).get(k)
            if x != y:
                rows.append(f"<tr><td>{_e(st)}.{_e(k)}</td><td>{_e(x)}</td><td>{_e(y)}</td>"
                            f"</tr>")
    body = ("<table><tr><th>parameter</th><th>before</th><th>after</th></tr>" + "".join(rows)
            + "</table>") if rows else "<p>No parameter differs.</p>"
    return f"<h2>What changed</h2>{body}"


def _stages(r: dict[str, Any]) -> str:
    before, after = r["before"], r.get("after")
    names = [s["name"] for s in before["stages"]]
    if after:
        names += [s["name"] for s in after["stages"] if s["name"] not in names]
    b = {s["name"]: s for s in before["stages"]}
    a = {s["name"]: s for s in after["stages"]} if after else {}
    head = "<tr><th>stage</th><th>kind</th><th>before</th>" + \
        ("<th>after</th>" if after else "") + "<th>what it did (before)</th></tr>"
    out = []
    for n in names:
        s = b.get(n) or a[n]
        drops: dict[str, int] = {}
        for d in s["dropped"]:
            drops[d["code"]] = drops.get(d["code"], 0) + 1
        did = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in drops.items()) or s["note"]

        def count(side: dict[str, Any], n: str = n) -> str:
            st = side.get(n)
            return "–" if st is None or st["role"] == "query" else str(int(st["count"]))

        cells = f'<td class="num">{count(b)}</td>' + \
            (f'<td class="num">{count(a)}</td>' if after else "")
        out.append(f"<tr><td>{_e(n)}</td><td>{_e(s['kind'])}</td>{cells}<td>{_e(did)}</td>"
                   f"</tr>")
    return f"<h2>Stage by stage</h2><div class=scroll><table>{head}{''.join(out)}</table></div>"


# ---------------------------------------------------------------------------- the evidence

def _metrics(r: dict[str, Any]) -> str:
    ev = r["evidence"]
    sides = [("before", ev["before"])] + ([("after", ev["after"])] if ev.get("after") else [])
    keys = list(dict.fromkeys(k for _, s in sides for k in s["metrics"]))
    if not keys:
        return ""
    head = "<tr><th>metric</th>" + "".join(f"<th>{_e(n)}</th>" for n, _ in sides) + "</tr>"
    rows = "".join(f"<tr><td>{_e(k)}</td>" + "".join(
        f"<td class=num>{_e(s['metrics'].get(k))}</td>" for _, s in sides) + "</tr>"
        for k in keys)
    return ("<h2>Metrics</h2><p>Scoped recall counts the rows of each side's truth (the same "
            "question, its filters seeing the whole ranking) that it returned.</p>"
            f"<table>{head}{rows}</table>")


def _safe(r: dict[str, Any]) -> str:
    s = r["evidence"].get("safe")
    if not s:
        return ""
    pts = [(float(c["value"]), c["recall"]) for c in s["curve"]
           if isinstance(c["value"], (int, float))]
    marks = [(float(s["value"]), f"safe {_plain(s['value'])}")] \
        if isinstance(s.get("value"), (int, float)) and pts else []
    chart = svg.line_chart([("scoped recall", pts)], str(s["key"]), "scoped recall",
                           marks=marks) if pts else ""
    words = safe_words(s)
    return f"<h2>Safe depth</h2>{chart}<p>{_e(words[0].upper() + words[1:])}.</p>"


def _sweep(r: dict[str, Any]) -> str:
    s = r["evidence"].get("sweep")
    if not s:
        return ""
    axes = s["axes"]
    obj = [c["objective"] for c in s["cells"]]
    best = s["best"]["pick"]
    words = "No cell has a defined value." if not best else (
        f"Best mean objective {float(s['best']['value']):.3g} in {s['best']['cells']} cells; "
        f"the cheapest: " + ", ".join(f"{k} {_plain(v)}" for k, v in best.items()) + ".")
    if len(axes) == 1:
        pts = [(float(v), o) for v, o in zip(axes[0]["values"], obj, strict=True)]
        plot = svg.line_chart([("objective", pts)], axes[0]["key"], "mean objective")
    elif len(axes) == 2:
        rows, cols = axes[0]["values"], axes[1]["values"]
        matrix = [obj[i * len(cols):(i + 1) * len(cols)] for i in range(len(rows))]
        at = None
        if best:
            at = (rows.index(best[axes[0]["key"]]), cols.index(best[axes[1]["key"]]))
        plot = svg.heatmap(matrix, rows, cols, axes[0]["key"], axes[1]["key"],
                           "mean objective (nDCG@k where judged, else scoped recall@k)", at)
    else:
        plot = ""
    title = " × ".join(a["key"] for a in axes)
    return f"<h2>Sweep: {_e(title)}</h2>{plot}<p>{_e(words)}</p>"


def _comparison(r: dict[str, Any]) -> str:
    c = r["evidence"].get("comparison")
    if not c:
        return ""
    a, b = c["a"], c["b"]
    return (f"<h2>Side by side: {_e(a['label'])} and {_e(b['label'])}</h2>"
            + _kv({"Jaccard": c["jaccard"], f"RBO (p={c['rbo_p']:g}, {c['rbo_form']})": c["rbo"],
                   f"Kendall's tau ({c['kendall_variant']})": c["kendall_tau"],
                   "rows in both": c["shared"],
                   f"truth rows not returned ({a['label']})": a["starved"],
                   f"truth rows not returned ({b['label']})": b["starved"]}))


def _map(r: dict[str, Any]) -> str:
    m = r["evidence"].get("map")
    if not m:
        return ""
    kinds = ["returned" if f else ("in cut" if s else "in cut, out of scope") if rank
             else "in scope" if s else "out of scope"
             for f, rank, s in zip(m["final"], m["raw_rank"], m["in_scope"], strict=True)]
    q = tuple(m["query"]) if m.get("query") else None
    ex = m["explained"]
    return ("<h2>Where the rows sit (PCA)</h2>"
            + svg.scatter(m["x"], m["y"], kinds, q, m.get("cut_radius"),
                          f"{len(m['x'])} rows of the deep search; axes explain {ex[0]:.0%} "
                          f"and {ex[1]:.0%}")
            + f"<p>Dashed circle: the {int(m['cut_depth'])} rows the query fetched, drawn "
            "through the farthest of them (the projection distorts distances, so it is a "
            "guide). Out of scope: a filter of the pipeline drops the row.</p>")


# ---------------------------------------------------------------------------- the rest

def _notes(r: dict[str, Any]) -> str:
    notes = []
    for side in ("before", "after"):
        doc = r.get(side)
        if doc:
            notes += [f"{side}: {x}" for x in doc.get("warnings", [])]
            notes += [f"{side}, not exact: {x}" for x in doc.get("inexact", [])]
    return ("<h2>Notes</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>") \
        if notes else ""


def _params_table(doc: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{_e(st)}</td><td>{_e(k)}</td><td>{_e(v)}</td></tr>"
                   for st, ps in doc["params"]["stages"].items() for k, v in ps.items())
    return f"<table><tr><th>stage</th><th>parameter</th><th>value</th></tr>{rows}</table>"


def _asked(q: dict[str, Any]) -> str:
    shown = {k: v for k, v in q.items() if k not in ("schema", "vector")
             and v not in (None, {}, [], False)}
    if q.get("vector") is not None:
        shown["vector"] = f"{len(q['vector'])} numbers"
    return _kv(shown)


def _folded(r: dict[str, Any]) -> str:
    out = []
    for side in ("before", "after"):
        doc = r.get(side)
        if doc:
            out.append(f"<details><summary>Every parameter ({side})</summary>"
                       f"{_params_table(doc)}</details>")
            out.append(f"<details><summary>The question asked ({side})</summary>"
                       f"{_asked(doc['question'])}</details>")
    ro = r["reopen"]
    out.append(f"<details><summary>Reopening this receipt</summary><p>{_e(ro['how'])}. "
               f"Store <code>{_e(ro['store'])}</code>, table <code>{_e(ro['table'])}</code>, "
               f"version {_e(ro['version'])}.</p></details>")
    return "".join(out)


def _header(r: dict[str, Any]) -> str:
    before = r["before"]
    q, st, p = before["question"], before["store"], before["params"]
    what = q.get("text") or (f"the vector of {q['vector_of']}" if q.get("vector_of") else
                             "a vector query")
    scopes = p["scopes"]
    meta = (f"store <code>{_e(st['uri'])}</code> · table <code>{_e(st['table'])}</code> · "
            f"version {_e(st['version'])} · {_e(st['rows'])} rows · scopes "
            f"{'unscoped' if scopes is None else _e(scopes) if scopes else 'none (deny all)'}"
            f" · limit {int(p['limit'])} · clock {_e(p['now_iso'])} · created "
            f"{_e(r['created'])}")
    return f"<h1>Receipt: {_e(what)}</h1><div class=muted>{meta}</div>"


def render_html(receipt: dict[str, Any], json_text: str | None = None) -> str:
    """The whole page for a receipt (json_text: the receipt's JSON, to embed as is)."""
    payload = script_safe_json(json_text or dumps(receipt))
    parts = [(_header, "header"), (_verdict, "verdict"), (_lists, "lists"),
             (_differences, "differences"), (_stages, "stages"), (_metrics, "metrics"),
             (_safe, "safe depth"), (_sweep, "sweep"), (_comparison, "comparison"),
             (_map, "map"), (_notes, "notes"), (_folded, "parameters")]
    body = "".join(_section(fn, receipt, name) for fn, name in parts)
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width,initial-scale=1">'
            f"<title>Retrieval receipt</title><style>{_CSS}</style></head><body>{body}"
            f'<script type="application/json" id="receipt">{payload}</script></body></html>')
