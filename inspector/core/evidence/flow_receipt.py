"""A reviewer's receipt for a pipeline of stages: the verdict first (before and after, each
named: rows returned of the limit, the diagnosis), the ranked lists side by side, what each
stage did in both, then the parameters that differ and every parameter, folded. One
self-contained HTML page (no scripts run, nothing fetched) and its JSON."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from inspector.core.jsonio import dumps
from inspector.core.stores.safety import outputs

FORMAT = "inspector-flow-receipt"

_CSS = """body{font:15px/1.5 system-ui,sans-serif;margin:20px auto;max-width:1100px;color:#111;
padding:0 12px}h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin-top:26px;
border-bottom:1px solid #e5e5e5}table{border-collapse:collapse;margin:6px 0;width:100%}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top;
overflow-wrap:anywhere}.scroll{overflow-x:auto}th,.num{white-space:nowrap;overflow-wrap:normal}
th{background:#f4f4f5}.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{display:flex;gap:12px;flex-wrap:wrap}.side{flex:1 1 300px;padding:10px 14px;
border-left:5px solid #2563eb;background:#eff6ff}.side.bad{border-color:#dc2626;
background:#fef2f2}.side.good{border-color:#16a34a;background:#f0fdf4}.big{font-size:22px;
font-weight:600}.lists{display:flex;gap:12px;flex-wrap:wrap}.lists>div{flex:1 1 300px}
.gain{background:#dcfce7}.loss{background:#fee2e2}.muted{color:#666}code{background:#f4f4f5;
padding:1px 4px}details{margin:8px 0}summary{cursor:pointer;font-weight:600}
@media (prefers-color-scheme: dark){body{background:#111;color:#eee}th{background:#222}
td,th{border-color:#333}.side{background:#172554}.side.bad{background:#450a0a}
.side.good{background:#052e16}.gain{background:#14532d}.loss{background:#7f1d1d}
code{background:#222}.muted{color:#aaa}}"""


def _e(v: Any) -> str:
    """A value as a reader reads it: yes/no, none, numbers to 4 significant digits, lists
    joined; never a Python repr."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return escape(", ".join(str(x) for x in v)) if v else "none"
    if isinstance(v, dict):
        return escape(", ".join(f"{k} {x}" for k, x in v.items())) if v else "none"
    return escape(str(v))


def build(question: dict[str, Any], before: dict[str, Any], after: dict[str, Any] | None,
          before_label: str, after_label: str | None) -> dict[str, Any]:
    def side(doc: dict[str, Any], label: str) -> dict[str, Any]:
        ids = [c["id"] for c in doc["stages"][-1]["candidates"]]
        return {"label": label, "pipeline": doc["pipeline"]["name"],
                "returned": len(ids), "limit": doc["params"]["limit"], "ids": ids,
                "diagnosis": doc["diagnosis"], "exact": doc["exact"]}

    verdict = {"before": side(before, before_label)}
    if after is not None:
        verdict["after"] = side(after, after_label or "after")
        b, a = verdict["before"]["ids"], verdict["after"]["ids"]
        verdict["gained"] = [i for i in a if i not in b]
        verdict["lost"] = [i for i in b if i not in a]
    return {"format": FORMAT, "version": 1, "question": question, "verdict": verdict,
            "before": before, "after": after}


def _side_html(s: dict[str, Any], other: dict[str, Any] | None) -> str:
    ok = s["diagnosis"]["code"] == "ok" and s["returned"] == s["limit"]
    cls = "good" if ok else ("bad" if s["returned"] == 0 else "")
    exact = "" if s["exact"] else "<div><b>Not exact:</b> see the notes below.</div>"
    return (f'<div class="side {cls}"><div class="muted">{_e(s["label"])} · pipeline '
            f'<code>{_e(s["pipeline"])}</code></div><div class="big">{s["returned"]} of '
            f'{s["limit"]} returned</div><div>{_e(s["diagnosis"]["message"])}</div>'
            f"{exact}</div>")


def _list_html(title: str, doc: dict[str, Any], mark: set[str], cls: str) -> str:
    rows = "".join(
        f'<tr class="{cls if c["id"] in mark else ""}"><td class="num">{c["rank"]}</td>'
        f'<td>{_e(c["id"])}</td><td class="num">{c["score"]:.4f}</td><td>{_e(c["scope"])}'
        f"</td></tr>" for c in doc["stages"][-1]["candidates"])
    return (f"<div><h3>{_e(title)}</h3><div class=scroll><table><tr><th>#</th><th>id</th>"
            f"<th>score</th><th>scope</th></tr>"
            f"{rows or '<tr><td colspan=4>nothing returned</td></tr>'}</table></div></div>")


def _stages_html(before: dict[str, Any], after: dict[str, Any] | None) -> str:
    names = [s["name"] for s in before["stages"]]
    if after is not None:
        names += [s["name"] for s in after["stages"] if s["name"] not in names]
    b = {s["name"]: s for s in before["stages"]}
    a = {s["name"]: s for s in after["stages"]} if after else {}
    head = "<tr><th>stage</th><th>kind</th><th>before</th>" + \
        ("<th>after</th>" if after else "") + "<th>what it did</th></tr>"
    out = []
    for n in names:
        s = b.get(n) or a[n]
        drops = {}
        for d in s["dropped"]:
            drops[d["code"]] = drops.get(d["code"], 0) + 1
        did = "; ".join(f"{k.replace('_', ' ')}: {v}" for k, v in drops.items()) or s["note"]

        def count(side: dict[str, Any], n: str = n) -> str:
            st = side.get(n)
            return "–" if st is None or st["role"] == "query" else str(st["count"])

        cells = f'<td class="num">{count(b)}</td>'
        if after:
            cells += f'<td class="num">{count(a)}</td>'
        out.append(f"<tr><td>{_e(n)}</td><td>{_e(s['kind'])}</td>{cells}<td>{_e(did)}</td>"
                   f"</tr>")
    return f"<div class=scroll><table>{head}{''.join(out)}</table></div>"


def _params_html(doc: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{_e(st)}</td><td>{_e(k)}</td><td>{_e(v)}</td></tr>"
                   for st, ps in doc["params"]["stages"].items() for k, v in ps.items())
    return f"<table><tr><th>stage</th><th>parameter</th><th>value</th></tr>{rows}</table>"


def _differences(before: dict[str, Any], after: dict[str, Any]) -> str:
    rows = []
    bp, ap = before["params"]["stages"], after["params"]["stages"]
    for st in dict.fromkeys([*bp, *ap]):
        for k in dict.fromkeys([*bp.get(st, {}), *ap.get(st, {})]):
            x, y = bp.get(st, {}).get(k), ap.get(st, {}).get(k)
            if x != y:
                rows.append(f"<tr><td>{_e(st)}.{_e(k)}</td><td>{_e(x)}</td><td>{_e(y)}</td>"
                            f"</tr>")
    if before["pipeline"]["name"] != after["pipeline"]["name"]:
        rows.insert(0, f"<tr><td>pipeline</td><td>{_e(before['pipeline']['name'])}</td>"
                       f"<td>{_e(after['pipeline']['name'])}</td></tr>")
    return ("<table><tr><th>parameter</th><th>before</th><th>after</th></tr>"
            + "".join(rows) + "</table>") if rows else "<p>No parameter differs.</p>"


def render_html(receipt: dict[str, Any]) -> str:
    v, before, after = receipt["verdict"], receipt["before"], receipt["after"]
    q = receipt["question"]
    title = f"Receipt: {q.get('text') or q.get('vector_of') or 'vector query'}"
    sides = _side_html(v["before"], v.get("after")) + \
        (_side_html(v["after"], v["before"]) if after else "")
    change = ""
    if after:
        change = (f"<p>Gained: {_e(v['gained'])}. Lost: {_e(v['lost'])}.</p>")
    lists = _list_html(v["before"]["label"], before, set(v.get("lost", [])), "loss")
    if after:
        lists += _list_html(v["after"]["label"], after, set(v["gained"]), "gain")
    notes = [*before["warnings"], *[f"not exact: {x}" for x in before["inexact"]]]
    if after:
        notes += [f"after: {x}" for x in after["warnings"]]
        notes += [f"after, not exact: {x}" for x in after["inexact"]]
    notes_html = "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>" if notes else ""
    scopes = before["params"]["scopes"]
    meta = (f"store <code>{_e(before['store']['uri'])}</code> table "
            f"<code>{_e(before['store']['table'])}</code> version "
            f"{_e(before['store']['version'])} · scopes "
            f"{'unscoped' if scopes is None else _e(scopes) if scopes else 'none (deny all)'}"
            f" · limit {before['params']['limit']} · clock {_e(before['params']['now_iso'])}")
    data = dumps(receipt).replace("<", "\\u003c")
    diffs = f"<h2>What changed</h2>{_differences(before, after)}" if after else ""
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport "
            f'content="width=device-width,initial-scale=1"><title>{_e(title)}</title>'
            f"<style>{_CSS}</style></head><body><h1>{_e(title)}</h1>"
            f'<div class="muted">{meta}</div><h2>Verdict</h2><div class="verdict">{sides}'
            f"</div>{change}<div class=lists>{lists}</div>{diffs}<h2>Stage by stage</h2>"
            f"{_stages_html(before, after)}{notes_html}<details><summary>Every parameter"
            f" (before)</summary>{_params_html(before)}</details>"
            + (f"<details><summary>Every parameter (after)</summary>{_params_html(after)}"
               f"</details>" if after else "")
            + f'<script type="application/json" id="receipt">{data}</script></body></html>')


def save(receipt: dict[str, Any], path: str, html: bool = True,
         stores: Sequence[str | None] = ()) -> list[Path]:
    """Write RECEIPT.json (and RECEIPT.html beside it) by the guarded writer: never into a
    store, never through a link; an existing receipt is replaced."""
    paths = receipt_paths(path, html)
    guard = [*stores, (receipt.get("question") or {}).get("store")]
    for p in paths:
        outputs.check_target(p, guard, force=True)  # both refused before either is written
    out = [outputs.write_file(paths[0], dumps(receipt), guard, force=True, make_folder=True)]
    if html:
        out.append(outputs.write_file(paths[1], render_html(receipt), guard, force=True))
    return out


def receipt_paths(path: str | Path, html: bool = True) -> list[Path]:
    """PATH.json (and PATH.html): the files a receipt written at `path` fills."""
    p = Path(path)
    base = p.with_suffix("") if p.suffix.lower() in (".json", ".html") else p
    return [base.with_suffix(".json"), *([base.with_suffix(".html")] if html else [])]
