"""The fixed pipeline's receipt leads with its verdict: before (its preset named) with the rows
returned of the limit and the diagnosis; after (the compared preset named) with the rows
returned and scoped recall; the ranked lists side by side; the parameters in words, folded.
Every value comes from the bundle and is escaped; none is shown as a Python value."""

from __future__ import annotations

from html import escape
from typing import Any

from inspector.core.engine.diagnosis import TITLES
from inspector.core.engine.presets import PRESETS

PARAM_WORDS = {
    "mode": "search mode", "distance": "distance metric", "limit": "results asked for",
    "overfetch": "over-fetch factor", "cap": "candidate cap", "depths": "candidate depths",
    "fts_k": "full-text depth floor", "vec_k": "vector depth floor",
    "rrf_k": "reciprocal-rank fusion k", "scope": "scope", "scope_strategy": "scope rule",
    "scope_map": "scope map", "scope_column": "scope column", "filter": "filter placement",
    "blend": "importance blend weight", "default_importance": "importance of a row without one",
    "min_score": "min score", "tie_rule": "tie rule", "nprobes": "IVF partitions probed",
    "min_nprobes": "fewest partitions probed", "max_nprobes": "most partitions probed",
    "refine_factor": "refine factor", "ef": "HNSW search breadth (ef)",
    "exact": "exact (flat) search", "pool": "pool", "pushdown_sql": "pushdown filter (SQL)",
    "pushdown_note": "how the scope is pushed down", "index": "vector index",
}
UNSET = {"cap": "none", "scope": "none (every row matches)", "scope_column": "the store's own",
         "nprobes": "LanceDB's default", "min_nprobes": "LanceDB's default",
         "max_nprobes": "LanceDB's default", "refine_factor": "none", "ef": "LanceDB's default"}
FILTER_WORDS = {"post": "post-filter (after the global top-k cut)",
                "pushdown": "pushdown (inside the search)"}


def words(key: str, v: Any) -> str:
    """A parameter's value as a reader reads it: yes/no, none, lists and maps joined."""
    if v is None or (key == "cap" and v == 0):
        return escape(UNSET.get(key, "none"))
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, dict):
        return escape("; ".join(f"{PARAM_WORDS.get(str(k), k)} {words(str(k), x)}"
                                for k, x in v.items())) if v else "none"
    if isinstance(v, list | tuple):
        return escape(", ".join(str(x) for x in v)) if v else "none"
    if key == "filter" and v in FILTER_WORDS:
        return escape(FILTER_WORDS[v])
    return escape(str(v))


def named(label: Any) -> str:
    """'preset docs-pushdown' for a shipped preset, else the label as given."""
    text = str(label) if label not in (None, "") else "as given"
    return f"preset {text}" if text in PRESETS else text


def _recall(v: Any) -> str:
    return "scoped recall –" if v is None else f"scoped recall {float(v):.2f}"


def _side(role: str, label: Any, n: int, limit: int, lines: list[str], cls: str,
          title: str = "") -> str:
    body = (f"<div><b>{escape(title)}</b></div>" if title else "") + \
        "".join(f"<div>{escape(x)}</div>" for x in lines)
    return (f'<div class="side {cls}"><div class="muted">{role} · {escape(named(label))}</div>'
            f'<div class="big">{int(n)} of {int(limit)} returned</div>{body}</div>')


def _grade(n: int, limit: int, ok: bool) -> str:
    return "good" if ok and n >= limit else "bad" if n == 0 else ""


def sides(b: dict[str, Any]) -> str:
    """The verdict: before, and after when the receipt compares a second parameter set."""
    t, c = b["trace"], b.get("comparison")
    d = t["diagnosis"]
    limit = int(t["params"]["limit"])
    label = b.get("label") or (c["a"]["label"] if c else None)
    n = int(t["counters"]["returned"])
    recall = (b.get("metrics") or {}).get(f"scoped_recall@{limit}")
    if c is not None:
        recall = c["a"]["scoped_recall"]
    before = _side("before", label, n, limit,
                   [str(d["message"]), _recall(recall)], _grade(n, limit, d["code"] == "ok"),
                   TITLES.get(d["code"], str(d["code"])).split(":")[0])
    if c is None:
        return f'<div class="verdict">{before}</div>'
    after_limit = int(c["b"]["params"]["limit"])
    m = len(c["b"]["ids"])
    after = _side("after", c["b"]["label"], m, after_limit, [_recall(c["b"]["scoped_recall"])],
                  _grade(m, after_limit, c["b"]["scoped_recall"] == 1))
    return f'<div class="verdict">{before}{after}</div>'


def _list(title: str, rows: list[tuple[Any, Any, Any, bool, str]]) -> str:
    body = "".join(f'<tr class="{cls}"><td class="num">{escape(str(r))}</td>'
                   f"<td><code>{escape(str(i))}</code></td><td>{'in' if s else 'OUT'}</td>"
                   f"<td>{escape(str(text or ''))}</td></tr>" for r, i, text, s, cls in rows)
    return (f"<div><h3>{escape(title)}</h3><div class=scroll><table><tr><th>#</th><th>id</th>"
            f"<th>scope</th><th>text</th></tr>"
            f"{body or '<tr><td colspan=4>nothing returned</td></tr>'}</table></div></div>")


def lists(b: dict[str, Any]) -> str:
    """The ranked lists side by side: before's final rows, and after's from the comparison
    (a row only after returns is marked gained, one only before returns lost)."""
    t, c = b["trace"], b.get("comparison")
    text_col = (b.get("pool") or {}).get("roles", {}).get("text")
    final = t["stages"][-1]["candidates"]
    label = b.get("label") or (c["a"]["label"] if c else None)
    if c is None:
        return "<div class=lists>" + _list(f"before · {named(label)}", [
            (x["rank"], x["id"], x["columns"].get(text_col) if text_col else "", x["in_scope"],
             "") for x in final]) + "</div>"
    rows = c["rows"]
    a = sorted((r for r in rows if r["rank_a"] is not None), key=lambda r: r["rank_a"])
    z = sorted((r for r in rows if r["rank_b"] is not None), key=lambda r: r["rank_b"])
    return ("<div class=lists>"
            + _list(f"before · {named(label)}", [
                (r["rank_a"], r["id"], r["text"], r["in_scope"],
                 "loss" if r["rank_b"] is None else "") for r in a])
            + _list(f"after · {named(c['b']['label'])}", [
                (r["rank_b"], r["id"], r["text"], r["in_scope"],
                 "gain" if r["rank_a"] is None else "") for r in z])
            + "</div>")


def parameters(b: dict[str, Any]) -> str:
    """Every parameter in words, folded: before's, and after's where they differ."""
    p = b["trace"]["params"]
    c = b.get("comparison")
    q = c["b"]["params"] if c else {}
    head = "<tr><th>parameter</th><th>before</th>" + ("<th>after</th>" if c else "") + "</tr>"
    rows = []
    for k, v in p.items():
        after = ""
        if c:
            w = q.get(k, v)
            after = f"<td>{words(k, w)}</td>" if w != v else "<td class=muted>same</td>"
        rows.append(f"<tr><td>{escape(PARAM_WORDS.get(str(k), str(k)))}</td>"
                    f"<td>{words(str(k), v)}</td>{after}</tr>")
    return (f"<details><summary>Every parameter, in words</summary><div class=scroll><table>"
            f"{head}{''.join(rows)}</table></div></details>")
