"""The one receipt of every pipeline: a reviewer's record of a question answered and, when
compared, of the same query under another pipeline or other parameters, verdict first.

A receipt (`schema.Receipt`; JSON, and one self-contained HTML page from `html.py`) holds:
- `verdict`: each side's label, pipeline, rows returned of the limit, its diagnosis and the
  fixes the diagnosis ran (label, argv, what each returned); the rows gained and lost;
- `before`, `after`: each side's whole answer as `inspector query --json` prints it (schema
  3, every stage, with the question it answers);
- `evidence`: each side's truth and metrics (scoped recall, and with judgments recall,
  precision, MRR, nDCG), the before side's safe depth, its one-query sweep, the map of its
  rows, the comparison of the two sides;
- `reopen`: the store (without credentials), table and version the answers read.

What a receipt does not keep: the fetched rows that re-running stages would need. The
former fixed-engine receipt kept a candidate pool that re-ranked offline, which only the
classic pipeline could read; for a pipeline of stages a change of any fetching parameter
needs the store anyway. So a reopened receipt shows what it recorded, as recorded, and a live
change re-runs its question on the table as of the recorded version (`reopen`): Lance keeps
versions, so that re-run is exact; it is refused, in one sentence, when the table no longer
has that version, or when the re-run's final list differs from the record (a changed
pipeline file, another embedder). A number shown is either the record's or a fresh run's,
never a stale one.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inspector.core.analysis.compare import compare_traces
from inspector.core.analysis.grid import default_axes
from inspector.core.analysis.metrics import all_metrics
from inspector.core.analysis.poolmap import pool_map
from inspector.core.analysis.sweep import Case, run_sweep
from inspector.core.analysis.truth import truth_trace
from inspector.core.engine.flow.answer import to_json
from inspector.core.engine.flow.question import Question, answer, resolve, runs_for
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.errors import InspectorError
from inspector.core.evidence.schema import FORMAT, VERSION, Receipt
from inspector.core.jsonio import dumps, read_json
from inspector.core.stores.safety.redact import redact_uri

REOPEN = ("re-run the question (`before.question`) on this table as of this version: "
          "`inspector query STORE --as-of VERSION` with the question's options, or the "
          "window's File > Open receipt with the store")


def answer_doc(q: Question, got: Any) -> dict[str, Any]:
    """What `inspector query --json` prints: the one answer and the question it answers."""
    out = json.loads(dumps(to_json(got)))
    out["question"] = q.model_copy(update={"store": redact_uri(q.store)}).model_dump(
        mode="json", by_alias=True)
    return out


def label_of(q: Question) -> str:
    """A side's name: its pipeline, and the parameters it sets."""
    name = q.preset or (Path(q.pipeline_file).name if q.pipeline_file else "pipeline")
    if q.set:
        name += " with " + ", ".join(f"{k}={_show(v)}" for k, v in q.set.items())
    return name


def _show(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def _side(label: str, doc: dict[str, Any], recall: float | None) -> dict[str, Any]:
    d = doc["diagnosis"]
    ids = [c["id"] for c in doc["stages"][-1]["candidates"]]
    return {"label": label, "pipeline": doc["pipeline"]["name"], "returned": len(ids),
            "limit": doc["params"]["limit"], "ids": ids, "code": d["code"],
            "title": d["title"], "message": d["message"], "fixes": d["fixes"],
            "exact": doc["exact"], "scoped_recall": recall}


def _measured(store: Any, q: Question, grades: dict[str, float] | None
              ) -> tuple[Any, Any, Any, list[str] | None, dict[str, float | None]]:
    """One side answered (diagnosis with its fixes run, expected rows, index facet), its
    truth's run and the metrics of its final list; its fetches shared by all of them."""
    cache = PoolCache()
    runs, _, _ = runs_for(q, store, cache)
    runs.live = True
    deep = truth_trace(runs)  # first: on a flat table its deep search serves the rest
    got = answer(q, store, cache)
    truth = None if deep is None else list(deep.final.ids)
    metrics = all_metrics(got.trace.final.ids, got.trace.limit, grades, truth)
    return got, runs, deep, truth, metrics


def build_receipt(store: Any, q: Question, against: Question | None = None,
                  labels: tuple[str | None, str | None] = (None, None),
                  grades: dict[str, float] | None = None, axes: Sequence[Any] | None = None,
                  k: int | None = None, with_map: bool = True, with_sweep: bool = True
                  ) -> dict[str, Any]:
    """The receipt of `q` on an open store (and of `against`, the other side), as a dict
    that `schema.Receipt` validates."""
    got, runs, deep, truth, metrics = _measured(store, q, grades)
    before = answer_doc(q, got)
    label = labels[0] or label_of(q)
    verdict: dict[str, Any] = {"before": _side(label, before, metrics.get(
        f"scoped_recall@{got.trace.limit}"))}
    evidence: dict[str, Any] = {"before": {"truth": truth, "metrics": metrics},
                                "judgments": dict(grades) if grades else None}
    if with_sweep:
        spec, _, _ = resolve(q)
        sweep = run_sweep(store, q, [Case(label, q, tuple(sorted((grades or {}).items())))],
                          list(axes) if axes else default_axes(spec), k)
        evidence["sweep"] = sweep.to_json()
        evidence["safe"] = sweep.queries[0].safe.to_json()
    if with_map and got.trace.vector is not None:
        try:
            evidence["map"] = pool_map(store, got.trace, deep).to_json()
        except InspectorError:
            evidence["map"] = None  # nothing fetched: the diagnosis says why
    after = None
    if against is not None:
        other, _, _, truth_b, metrics_b = _measured(store, against, grades)
        after = answer_doc(against, other)
        label_b = labels[1] or label_of(against)
        verdict["after"] = _side(label_b, after, metrics_b.get(
            f"scoped_recall@{other.trace.limit}"))
        b, a = verdict["before"]["ids"], verdict["after"]["ids"]
        verdict["gained"] = [i for i in a if i not in b]
        verdict["lost"] = [i for i in b if i not in a]
        evidence["after"] = {"truth": truth_b, "metrics": metrics_b}
        evidence["comparison"] = compare_traces(got.trace, other.trace, truth or [],
                                                truth_b or [], (label, label_b)).to_json()
    st = got.trace.store
    doc = {"format": FORMAT, "version": VERSION,
           "created": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "verdict": verdict, "before": before, "after": after, "evidence": evidence,
           "reopen": {"store": redact_uri(q.store), "table": st.get("table"),
                      "version": st.get("version"), "rows": st.get("rows"), "how": REOPEN}}
    return json.loads(dumps(doc))


def receipt_paths(path: str | Path, html: bool = True) -> list[Path]:
    """PATH.json (and PATH.html): the files a receipt written at `path` fills."""
    p = Path(path)
    base = p.with_suffix("") if p.suffix.lower() in (".json", ".html") else p
    return [base.with_suffix(".json"), *([base.with_suffix(".html")] if html else [])]


def save(receipt: dict[str, Any], path: str | Path, html: bool = True,
         stores: Sequence[str | None] = ()) -> list[Path]:
    """Write RECEIPT.json (and RECEIPT.html beside it) by the guarded writer: never into a
    store the command opened (or the receipt's own), never through a link; an existing
    receipt is replaced. Returns the paths written."""
    from inspector.core.evidence.html import render_html
    from inspector.core.stores.safety import outputs

    paths = receipt_paths(path, html)
    guard = [*stores, (receipt.get("question") or {}).get("store")]
    for p in paths:
        outputs.check_target(p, guard, force=True)  # both refused before either is written
    text = dumps(receipt)
    out = [outputs.write_file(paths[0], text, guard, force=True, make_folder=True)]
    if html:
        out.append(outputs.write_file(paths[1], render_html(receipt, text), guard, force=True))
    return out


def validate(data: Any, where: Any) -> Receipt:
    """The receipt's document checked: one sentence naming the first field that is wrong."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InspectorError(f"{where} is not an inspector receipt.")
    if data.get("version") != VERSION:
        raise InspectorError(f"Receipt {where} has version {data.get('version')!r}; this "
                             f"inspector reads version {VERSION} (an older receipt kept the "
                             f"fixed engine's pool: rebuild it with `inspector report`).")
    try:
        return Receipt.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        msg = " ".join(str(first["msg"]).split())  # a value from the file may hold breaks
        raise InspectorError(f"Receipt {where} is damaged: {loc}: {msg}.") from None


def load(path: str | Path) -> Receipt:
    """Reopen a receipt: its record, checked (the HTML page's JSON beside it is read)."""
    p = Path(path)
    if p.suffix.lower() == ".html":
        p = p.with_suffix(".json")
    return validate(read_json(p, "Receipt"), p)


def reopen(receipt: Receipt, store: Any) -> tuple[Question, Any]:
    """The receipt's question re-run on `store` (the receipt's table) as of the recorded
    version, with the recorded clock and query vector: (the question, its answer). Refused
    when that version is gone or the final list differs from the record."""
    r = receipt.reopen
    if r.table is not None and store.table_name != r.table:
        raise InspectorError(f"The receipt was read from table '{r.table}', not "
                             f"'{store.table_name}'.")
    if r.version is not None and store.version != r.version:
        try:
            store = store.reopen(r.version)
        except InspectorError as exc:
            raise InspectorError(f"The receipt read version {r.version} of table "
                                 f"'{store.table_name}', which cannot be opened now ({exc}); "
                                 f"only its record can be shown.") from None
    rec = receipt.before
    vector = (rec.model_extra or {}).get("query", {}).get("vector")
    q = rec.question.model_copy(update={
        "store": store.display_uri, "now": rec.params.get("now"),
        **({"vector": vector, "vector_of": None} if vector else {})})
    got = answer(q, store)
    want = [c.id for c in rec.stages[-1].candidates]
    if [str(x) for x in got.trace.final.ids] != [str(x) for x in want]:
        raise InspectorError(f"Re-run on version {store.version}, the question returns "
                             f"{len(got.trace.final.ids)} rows other than the receipt's "
                             f"{len(want)} (the pipeline file or the embedder changed?); only "
                             f"the record can be shown.")
    return q, got
