"""What the Python API returns: a query's Result and an audit's AuditResult, each as JSON,
as Arrow (or pandas) tables, and as HTML that shows itself in Jupyter (every field escaped)."""

from __future__ import annotations

import copy
import html
from collections.abc import Mapping
from typing import Any

from inspector.core.errors import InspectorError
from inspector.core.evidence import exports
from inspector.core.evidence.exports import arrow_table as _arrow_table

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
    """One query's answer. `engine` is "fixed" or "flow" (a pipeline of stages); `trace` is
    the engine's own trace; everything else reads the JSON `inspector query --json` prints."""

    def __init__(self, data: dict[str, Any], engine: str, trace: Any = None,
                 label: str | None = None) -> None:
        self._data = data
        self.engine = engine
        self.trace = trace
        self._label = label

    def to_json(self) -> dict[str, Any]:
        """The same object `inspector query --json` prints (a copy)."""
        return copy.deepcopy(self._data)

    @property
    def stages(self) -> list[str]:
        return [s["name"] for s in self._data["stages"]]

    @property
    def counts(self) -> dict[str, int]:
        return {s["name"]: int(s["count"]) for s in self._data["stages"]}

    @property
    def final_stage(self) -> str:
        return self._data["stages"][-1]["name"]

    @property
    def final_ids(self) -> list[Any]:
        return [c["id"] for c in self._data["stages"][-1]["candidates"]]

    @property
    def limit(self) -> int:
        return int(self._data["params"]["limit"])

    @property
    def diagnosis(self) -> dict[str, Any]:
        return dict(self._data["diagnosis"])

    @property
    def pipeline(self) -> str:
        if self.engine == "flow":
            return str(self._data["pipeline"]["name"])
        return self._label or "fixed pipeline"

    @property
    def warnings(self) -> list[str]:
        return list(self._data.get("warnings") or [])

    @property
    def expect(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._data.get("expect") or [])

    def _stage(self, stage: str | None) -> dict[str, Any]:
        name = self.final_stage if stage is None else stage
        for s in self._data["stages"]:
            if s["name"] == name:
                return s
        raise InspectorError(f"There is no stage {name!r}; the stages are "
                             f"{', '.join(self.stages)}.")

    def table(self, stage: str | None = None) -> Any:
        """A stage's candidates (default: the final list) as a pyarrow.Table, one row per
        candidate in the stage's order; stored columns as `columns.NAME`, a pipeline stage's
        score inputs as `inputs.NAME`."""
        return _arrow_table(self._stage(stage)["candidates"], ("id", "rank"))

    def dropped(self, stage: str) -> Any:
        """The rows a pipeline stage dropped and why (`code` and its detail), as a table."""
        if self.engine != "flow":
            raise InspectorError("Dropped rows are listed per stage by pipelines of stages; "
                                 "the fixed pipeline's outcomes are in each candidate.")
        return _arrow_table(self._stage(stage)["dropped"], ("id", "code"))

    def to_pandas(self, stage: str | None = None) -> Any:
        """table(stage) as a pandas DataFrame (needs pandas)."""
        return _pandas(self.table(stage))

    def stage_tables(self) -> dict[str, Any]:
        """Every stage as the table an export writes (file stem -> pyarrow.Table): its
        candidates with their fate, then the rows it dropped; `results` is the final list."""
        return dict(exports.stage_tables(self._data, self._fates()))

    def to_csv(self, folder: Any, *, force: bool = False) -> list[Any]:
        """Write every stage table, the final list and answer.json into `folder` as CSV, as
        `inspector query ... --export FOLDER` does; an existing file only with force=True."""
        return exports.export_answer(self._data, folder, "csv", fates=self._fates(),
                                     force=force)

    def to_parquet(self, folder: Any, *, force: bool = False) -> list[Any]:
        """to_csv, as Parquet files (`--export FOLDER --format parquet`)."""
        return exports.export_answer(self._data, folder, "parquet", fates=self._fates(),
                                     force=force)

    def _fates(self) -> Any:
        return self.trace.fates() if self.engine == "fixed" else None

    def __repr__(self) -> str:
        d = self._data["diagnosis"]
        return (f"<inspector.Result {self.pipeline}: {len(self.final_ids)} of {self.limit} "
                f"returned [{d['code']}] stages {self.counts}>")

    def _repr_html_(self) -> str:
        e = html.escape
        d = self._data["diagnosis"]
        store = self._data.get("store") or {}
        returned = len(self.final_ids)
        head = (f"<p><b>{returned} of {self.limit}</b> returned by <code>{e(self.pipeline)}"
                f"</code> on {e(str(store.get('uri', '')))} (table "
                f"{e(str(store.get('table', '')))})<br>diagnosis <code>{e(str(d['code']))}"
                f"</code>: {e(str(d.get('message', '')))}</p>")
        counts = "".join(f"<tr><td>{e(n)}</td><td style='text-align:right'>{c}</td></tr>"
                         for n, c in self.counts.items())
        stages = (f"<table><thead><tr><th>stage</th><th>rows</th></tr></thead>"
                  f"<tbody>{counts}</tbody></table>")
        final = self._data["stages"][-1]["candidates"]
        rows = "".join(f"<tr><td>{_cell(c.get('rank'))}</td><td>{_cell(c.get('id'))}</td>"
                       f"<td>{_cell(c.get('score'))}</td></tr>" for c in final[:_SHOWN_ROWS])
        more = (f"<p><small>{len(final) - _SHOWN_ROWS} more: .table()</small></p>"
                if len(final) > _SHOWN_ROWS else "")
        listed = (f"<table><thead><tr><th>rank</th><th>id</th><th>score</th></tr></thead>"
                  f"<tbody>{rows}</tbody></table>{more}")
        warn = "".join(f"<li>{e(str(w))}</li>" for w in self.warnings)
        return (f"<div class='inspector-result'>{head}{stages}"
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
