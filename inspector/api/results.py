"""What the Python API returns: a query's Result (over the engine's one Answer) and an audit's
AuditResult, each as Arrow (or pandas) tables, as JSON when asked, and as HTML that shows
itself in Jupyter (every field escaped)."""

from __future__ import annotations

import copy
import html
import json
from collections.abc import Mapping
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.evidence import exports
from inspector.core.evidence.exports import arrow_table as _arrow_table
from inspector.core.jsonio import finite

_SHOWN_ROWS = 20  # rows of the final list shown inline


def _pandas(table: Any) -> Any:
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise InspectorError("to_pandas needs pandas, which is not installed: pip install "
                             "'memory-store-inspector[pandas]' (or pip install pandas; or use "
                             ".table(), a pyarrow.Table).") from None
    return table.to_pandas()


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return html.escape(f"{v:.6g}")
    return html.escape("" if v is None else str(v))


class Result:
    """One question answered: `question` (the Question asked, as `inspector query --json`
    carries it) and `trace` (the run: every stage's rows in and out, drops, ties) are there
    at once; `answer` (the engine's Answer: the diagnosis with its fixes, each run, the
    expected rows, the index facet) is made when first read; `to_json()` builds the one JSON
    answer (schema 3) only when called."""

    def __init__(self, question: Any, asked: Any, fixes: bool = True,
                 facet_mode: str = "auto") -> None:
        self.question = question
        self._asked = asked
        self._fixes = fixes
        self._facet_mode = facet_mode
        self._answer: Any = None
        self._json: dict[str, Any] | None = None

    # -- the run -------------------------------------------------------------------------

    @property
    def trace(self) -> Any:
        """The engine's FlowTrace: every stage's rows in and out, drops, ties."""
        return self._asked.trace

    @property
    def pipeline(self) -> str:
        return str(self.trace.spec.name)

    @property
    def stages(self) -> list[str]:
        return [st.name for st in self.trace.stages]

    @property
    def counts(self) -> dict[str, int]:
        return {st.name: len(st.rows) for st in self.trace.stages}

    @property
    def final_stage(self) -> str:
        return str(self.trace.final.name)

    @property
    def final_ids(self) -> list[str]:
        """The returned ids in the system's order."""
        return self.trace.final.ids

    @property
    def limit(self) -> int:
        return int(self.trace.limit)

    @property
    def warnings(self) -> list[str]:
        return list(self.trace.warnings)

    # -- what is read from it (made when first read) -------------------------------------

    @property
    def answer(self) -> Any:
        """The engine's Answer (`flow.answer.Answer`), made on first use: the index facet, then
        the diagnosis (its fix search runs here unless the query said fixes=False), then the
        expected rows, through the same runs as `inspector query`."""
        if self._answer is None:
            self._answer = self._asked.answer(self._fixes)
        return self._answer

    @property
    def diagnosis(self) -> Any:
        """The Diagnosis: `code`, `title`, `message`, the starving `stage`, `first_at`,
        `page_at`, and `fixes`, each run (`label`, `kind` own|what_if, `argv`: the extra
        `inspector query` arguments that apply it, `returns`: the rows it returned)."""
        return self.answer.diagnosis

    @property
    def fixes(self) -> tuple[Any, ...]:
        return tuple(self.diagnosis.fixes)

    @property
    def expected(self) -> list[dict[str, Any]]:
        """Each id asked with expect=: where it is dropped and the smallest change that
        returns it (`inspector query --expect ID`)."""
        return copy.deepcopy(list(self.answer.expected))

    @property
    def index_facet(self) -> Any:
        """The IndexFacet (None: no vector leg searched an ANN index, or not compared)."""
        return self.answer.facet

    def apply(self, fix: Any) -> Result:
        """The same question with a fix's change (a Fix of `fixes`, or its position there):
        what its argv does on the command line, answered as a new Result."""
        from inspector.core.engine.flow.question import run_question

        if isinstance(fix, int) and not isinstance(fix, bool):
            if not 0 <= fix < len(self.fixes):
                raise InspectorError(f"There are {len(self.fixes)} fixes; {fix} is not one.")
            fix = self.fixes[fix]
        change = getattr(fix, "change", None)
        if change is None:
            raise InspectorError("apply takes one of this result's fixes (or its position).")
        q = self.question
        sets = {**q.set, **{k: list(v) if isinstance(v, tuple) else v for k, v in change.sets}}
        again = q.model_copy(update={"set": sets, "widen": {**q.widen, **dict(change.widen)},
                                     "exact": q.exact or change.exact,
                                     "limit": q.limit if change.limit is None else change.limit})
        runs = self._asked.runs
        return Result(again, run_question(again, runs.store, runs.cache, self._facet_mode),
                      self._fixes, self._facet_mode)

    # -- tables and JSON ---------------------------------------------------------------------

    def _stage(self, stage: str | None) -> Any:
        name = self.final_stage if stage is None else stage
        for st in self.trace.stages:
            if st.name == name:
                return st
        raise InspectorError(f"There is no stage {name!r}; the stages are "
                             f"{', '.join(self.stages)}.")

    def table(self, stage: str | None = None) -> Any:
        """A stage's candidates (default: the final list) as a pyarrow.Table, one row per
        candidate in the stage's order, as the JSON answer lists them: rank, id, score, the
        score and rank before the stage, each score input as `inputs.NAME`, scope, importance,
        timestamp."""
        from inspector.core.engine.flow.answer import stage_json

        return _arrow_table(finite(stage_json(self._stage(stage))["candidates"]), ("id", "rank"))

    def dropped(self, stage: str) -> Any:
        """The rows a stage dropped and why (`code` and its detail), as a pyarrow.Table."""
        st = self._stage(stage)
        return _arrow_table(finite([d.to_json() for d in st.dropped]), ("id", "code"))

    def to_pandas(self, stage: str | None = None) -> Any:
        """table(stage) as a pandas DataFrame (needs pandas)."""
        return _pandas(self.table(stage))

    def to_json(self) -> dict[str, Any]:
        """The object `inspector query --json` prints for the same question (schema 3), built
        on the first call (a copy each time)."""
        if self._json is None:
            from inspector.core.engine.flow.answer import to_json
            from inspector.core.jsonio import dumps

            out = json.loads(dumps(to_json(self.answer)))
            out["question"] = self.question.model_dump(mode="json", by_alias=True)
            self._json = out
        return copy.deepcopy(self._json)

    def stage_tables(self) -> dict[str, Any]:
        """Every stage as the table an export writes (file stem -> pyarrow.Table): its
        candidates with their fate, then the rows it dropped; `results` is the final list."""
        return dict(exports.stage_tables(self.to_json()))

    def to_csv(self, folder: Any, *, force: bool = False) -> list[Any]:
        """Write every stage table, the final list and answer.json into `folder` as CSV, as
        `inspector query ... --export FOLDER` does; an existing file only with force=True."""
        return exports.export_answer(self.to_json(), folder, "csv", force=force)

    def to_parquet(self, folder: Any, *, force: bool = False) -> list[Any]:
        """to_csv, as Parquet files (`--export FOLDER --format parquet`)."""
        return exports.export_answer(self.to_json(), folder, "parquet", force=force)

    # -- display -------------------------------------------------------------------------

    def __repr__(self) -> str:  # never runs the fix search: a repr must be cheap
        return (f"<inspector.Result {self.pipeline}: {len(self.final_ids)} of {self.limit} "
                f"returned, stages {self.counts}>")

    def _repr_html_(self) -> str:
        e = html.escape
        t, d = self.trace, self.diagnosis
        head = (f"<p><b>{len(self.final_ids)} of {self.limit}</b> returned by <code>"
                f"{e(self.pipeline)}</code> on {e(str(t.store.get('uri', '')))} (table "
                f"{e(str(t.store.get('table', '')))})<br>diagnosis <code>{e(d.code)}</code>: "
                f"{e(d.message)}</p>")
        fixes = "".join(f"<li>{e(f.label)} <code>{e(' '.join(f.argv))}</code></li>"
                        for f in d.fixes)
        counts = "".join(f"<tr><td>{e(n)}</td><td style='text-align:right'>{c}</td></tr>"
                         for n, c in self.counts.items())
        stages = (f"<table><thead><tr><th>stage</th><th>rows</th></tr></thead>"
                  f"<tbody>{counts}</tbody></table>")
        final = t.final.rows
        rows = "".join(f"<tr><td>{i}</td><td>{_cell(s.id)}</td><td>{_cell(s.score)}</td></tr>"
                       for i, s in enumerate(final[:_SHOWN_ROWS], start=1))
        more = (f"<p><small>{len(final) - _SHOWN_ROWS} more: .table()</small></p>"
                if len(final) > _SHOWN_ROWS else "")
        listed = (f"<table><thead><tr><th>rank</th><th>id</th><th>score</th></tr></thead>"
                  f"<tbody>{rows}</tbody></table>{more}")
        warn = "".join(f"<li>{e(str(w))}</li>" for w in self.warnings)
        return (f"<div class='inspector-result'>{head}"
                f"{f'<p>fixes (each was run):</p><ul>{fixes}</ul>' if fixes else ''}{stages}"
                f"<p>final list ({e(self.final_stage)})</p>{listed}"
                f"{f'<ul>{warn}</ul>' if warn else ''}</div>")


# an audit's default table: the list of records each kind reports
_AUDIT_TABLES = {"recall": "never_recallable", "scopes": "scopes", "change": "improved_ids"}


class AuditResult:
    """A store-wide audit's answer, the same object `inspector audit KIND --json` prints."""

    def __init__(self, data: dict[str, Any], kind: str) -> None:
        self._data = data
        self.kind = kind

    def to_json(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(self._data[key])

    def table(self, what: str | None = None) -> Any:
        """A list the audit reports as a pyarrow.Table (recall: `never_recallable` or `found`;
        scopes: `scopes`; change: `improved_ids` or `hurt_ids`)."""
        name = what or _AUDIT_TABLES[self.kind]
        value = self._data.get(name)
        if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in value):
            lists = [k for k, v in self._data.items() if isinstance(v, list) and
                     all(isinstance(x, Mapping) for x in v)]
            raise InspectorError(f"This audit has no list {name!r}; it has "
                                 f"{', '.join(lists) or 'none'}.")
        return _arrow_table(value)

    def to_pandas(self, what: str | None = None) -> Any:
        return _pandas(self.table(what))

    def _summary(self) -> list[tuple[str, Any]]:
        d = self._data
        if self.kind == "recall":
            return [*d["counts"].items()]
        if self.kind == "scopes":
            return [("scopes", len(d["scopes"])), ("leaks", d["leak_total"]),
                    ("short probes", sum(s["short"] for s in d["scopes"]))]
        return [("probes", d["probes"]), ("improved", d["improved"]), ("hurt", d["hurt"]),
                ("rows gained", d["rows_gained"]), ("rows lost", d["rows_lost"])]

    def __repr__(self) -> str:
        return f"<inspector.AuditResult {self.kind} {self._data['pipeline']}: " + ", ".join(
            f"{k} {v}" for k, v in self._summary()) + ">"

    def _repr_html_(self) -> str:
        e = html.escape
        d = self._data
        title = {"recall": f"recallability of {d.get('probes')} memories",
                 "scopes": "scope isolation", "change": "one change over every probe"}[self.kind]
        rows = "".join(f"<tr><td>{e(str(k))}</td><td style='text-align:right'>{_cell(v)}</td>"
                       f"</tr>" for k, v in self._summary())
        return (f"<div class='inspector-audit'><p><b>{e(title)}</b> under <code>"
                f"{e(str(d['pipeline']))}</code></p><table><tbody>{rows}</tbody></table></div>")
