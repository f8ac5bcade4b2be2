"""A query's answer for other tools: every stage as a table (CSV or Parquet) and a query set's
final lists as a TREC run (with the set's judgments as qrels).

Everything is read from the answer `inspector query --json` prints (schema 3), row for row: a
stage table holds that stage's candidates in its order (`fate`: `kept`, `deferred`, or
`returned` in the final stage), then the rows it dropped (`fate`: the drop code, its detail as
`detail.*`). Files go only where the caller asked, never into the store (by any of its names,
nor through a link planted in the folder: see core.stores.safety.outputs), and an existing
file is replaced only with `force`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspector.core.engine.flow.answer import SCHEMA_VERSION as SCHEMA
from inspector.core.errors import InspectorError
from inspector.core.stores.safety import outputs

FORMATS = ("csv", "parquet")
LEAD = ("stage", "rank", "id", "score", "fate")  # the first columns of every stage table
TREC_SCORES = ("system", "rank")
ANSWER_FILE = "answer.json"


def flat(row: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate as one flat record: nested objects (`columns`, `inputs`) as `key.sub`."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, Mapping):
            for k2, v2 in v.items():
                out[f"{k}.{k2}"] = v2
        else:
            out[k] = v
    return out


def arrow_table(records: Sequence[Mapping[str, Any]], first: Sequence[str] = ("id",)) -> Any:
    """Records as a pyarrow.Table: every key a column (missing values null), `first` leading;
    a column whose values mix types holds each value's JSON text."""
    import pyarrow as pa

    rows = [flat(r) for r in records]
    seen = dict.fromkeys(k for r in rows for k in r)
    names = list(dict.fromkeys([*(f for f in first if f in seen or not rows), *seen]))
    cols = {}
    for name in names:
        values = [r.get(name) for r in rows]
        try:
            cols[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            cols[name] = pa.array([None if v is None else json.dumps(v) for v in values],
                                  pa.string())
    return pa.table(cols)


def stage_rows(answer: Mapping[str, Any]) -> list[tuple[str, list[dict]]]:
    """(stage name, rows) for every stage of an answer, each row a candidate with its stage
    and fate, then the stage's dropped rows."""
    if answer.get("schema") != SCHEMA:
        raise InspectorError(f"An answer of schema {answer.get('schema')!r} cannot be "
                             f"exported; this inspector writes and reads schema {SCHEMA}.")
    stages = answer["stages"]
    out = []
    for n, st in enumerate(stages):
        deferred = set(st.get("deferred") or ())
        settled = "returned" if n == len(stages) - 1 else "kept"
        rows = []
        for c in st["candidates"]:
            fate = "deferred" if c["id"] in deferred else settled
            rows.append({"stage": st["name"], "rank": c.get("rank"), "id": c["id"],
                         "score": c.get("score"), "fate": fate, **c})
        for d in st.get("dropped") or ():
            rows.append({"stage": st["name"], "rank": None, "id": d["id"], "score": None,
                         "fate": d["code"],
                         "detail": {k: v for k, v in d.items() if k not in ("id", "code")}})
        out.append((st["name"], rows))
    return out


def stage_tables(answer: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(file stem, pyarrow.Table) per stage, `NN-stage` in pipeline order, then `results`:
    the final list (the last stage's candidates)."""
    rows = stage_rows(answer)
    out = [(f"{n:02d}-{_safe(name)}", arrow_table(r, LEAD))
           for n, (name, r) in enumerate(rows, start=1)]
    last = rows[-1][1] if rows else []
    out.append(("results", arrow_table([r for r in last if r["rank"] is not None], LEAD)))
    return out


def export_answer(answer: Mapping[str, Any], folder: str | Path, fmt: str = "csv", *,
                  force: bool = False, stores: Sequence[str | None] = ()) -> list[Path]:
    """Write every stage table, the final list and the answer itself (answer.json) into
    `folder` (created when missing), each file by the one guarded writer (never into the
    answer's store nor into `stores`, never through a link); returns the paths written."""
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    if fmt not in FORMATS:
        raise InspectorError(f"The export format is {' or '.join(FORMATS)}, not {fmt!r}.")
    tables = stage_tables(answer)
    names = [f"{stem}.{fmt}" for stem, _ in tables] + [ANSWER_FILE]
    guard = [*stores, (answer.get("store") or {}).get("uri")]
    target = prepare_folder(folder, names, guard, force)
    paths = []
    for stem, table in tables:
        def write(tmp: Path, table: Any = table) -> None:
            if fmt == "csv":
                pa_csv.write_csv(table, tmp)
            else:
                pq.write_table(table, tmp)

        paths.append(outputs.write_file(target / f"{stem}.{fmt}", write, guard, force))
    text = json.dumps(answer, allow_nan=False, ensure_ascii=False) + "\n"
    return [*paths, outputs.write_file(target / ANSWER_FILE, text, guard, force)]


def prepare_folder(folder: str | Path, names: Sequence[str], stores: Sequence[str | None],
                   force: bool) -> Path:
    """The export folder, created when missing; refused inside a store, and when a file to
    write exists (unless `force`), before anything is written."""
    shown = Path(folder).expanduser()
    outputs.refuse_inside_store(shown, stores)
    if shown.exists() and not shown.is_dir():
        raise InspectorError(f"{shown} exists and is not a folder; exports go into a folder.")
    for name in names:
        outputs.check_target(shown / name, stores, force)
    outputs.output_folder(shown, stores)
    return shown


def check_token(value: Any, what: str) -> str:
    """A TREC field: non-empty and without whitespace, which would split the line."""
    text = str(value)
    if not text or re.search(r"\s", text):
        raise InspectorError(f"The {what} {text!r} is empty or holds whitespace, which a TREC "
                             f"line cannot carry.")
    return text


def query_ids(queries: Sequence[Any]) -> list[str]:
    """A query set's TREC query ids: each query's name with its runs of whitespace written as
    one `_` (a TREC line splits on whitespace: "key rotation" is `key_rotation`, in the run
    and the qrels alike), else its position (1-based). Two queries with one id are refused."""
    ids = ["_".join(str(q.name).split()) or str(n) if q.name else str(n)
           for n, q in enumerate(queries, start=1)]
    for n, i in enumerate(ids):
        first = ids.index(i)
        if first != n:
            names = [queries[k].name or f"query {k + 1}" for k in (first, n)]
            raise InspectorError(f"Two queries of the set have the TREC id {i!r} ({names[0]!r} "
                                 f"and {names[1]!r}); TREC ids are unique.")
    return ids


def trec_lines(qid: str, answer: Mapping[str, Any], tag: str, score: str = "system") -> list[str]:
    """`qid Q0 docid rank score tag`, one line per row of the final list in the system's
    order. `score`: `system` (the pipeline's own score) or `rank` (n - rank + 1, so tools
    that sort by score keep the system's order)."""
    if score not in TREC_SCORES:
        raise InspectorError(f"The TREC score is {' or '.join(TREC_SCORES)}, not {score!r}.")
    final = answer["stages"][-1]["candidates"]
    lines = []
    for c in final:
        value = len(final) - c["rank"] + 1 if score == "rank" else _score(c.get("score"))
        lines.append(f"{qid} Q0 {check_token(c['id'], 'row id')} {c['rank']} {value} {tag}")
    return lines


def score_order_kept(answer: Mapping[str, Any]) -> bool:
    """True when the final list's scores fall strictly along its order, so a tool that sorts
    a run by score (trec_eval) sees the system's order."""
    scores = [c.get("score") for c in answer["stages"][-1]["candidates"]]
    return all(a is not None and b is not None and a > b for a, b in zip(scores, scores[1:],
                                                                         strict=False))


def qrels_lines(qid: str, grades: Sequence[tuple[str, float]]) -> list[str]:
    """`qid 0 docid grade` per judged row (whole grades as integers)."""
    return [f"{qid} 0 {check_token(rid, 'judged id')} "
            f"{int(g) if float(g).is_integer() else g}" for rid, g in grades]


def write_text_file(path: str | Path, text: str, stores: Sequence[str | None],
                    force: bool) -> Path:
    """Write one output file (a run, qrels) where the caller asked, by the guarded writer."""
    return outputs.write_file(path, text, stores, force)


def _score(value: Any) -> str:
    if value is None or not math.isfinite(float(value)):
        return "0"
    return repr(float(value))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "stage"
