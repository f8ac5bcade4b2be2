"""The Python API for notebooks and scripts: the same engine as `inspector query` and
`inspector audit`, with results that show themselves in Jupyter.

    import inspector

    store = inspector.open("path/to/store", table="memories")    # read-only, as everywhere
    r = store.query(text="deploy the api", preset="memory-plugin", limit=5, scope="repo1")
    r                      # in a notebook: verdict (n of limit, diagnosis), stage counts, list
    r.stages, r.final_ids  # stage names; the returned ids in the system's order
    r.table("raw")         # one stage's candidates as a pyarrow.Table (r.to_pandas("raw"))
    r.to_json()            # exactly what `inspector query --json` prints for the same options
    store.audit("recall", preset="memory-lancedb-pro", sample=50)

A fixed preset (`inspector presets`) or its parameters (`overfetch=2.5`, `blend=0.5`, ...) run
the fixed pipeline; a pipeline of stages (`inspector pipeline list`, or `pipeline=FILE`) runs in
the flow engine, as the command line dispatches them. Bad input raises InspectorError, whose
message is one sentence.

Importing this module is cheap: the engine (numpy, pyarrow, LanceDB) loads on the first call.
It never imports Qt.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from inspector.api.results import AuditResult, Result
from inspector.core.errors import InspectorError

__all__ = ["AuditResult", "Result", "Store", "audit", "open", "query", "tables"]

# The fixed pipeline's parameters a query takes by name (as `inspector query --NAME`).
FIXED_PARAMS = ("mode", "distance", "overfetch", "cap", "fts_k", "vec_k", "rrf_k", "blend",
                "default_importance", "min_score", "scope_strategy", "scope_column",
                "scope_map", "filter", "tie_rule", "nprobes", "min_nprobes", "max_nprobes",
                "refine_factor", "ef", "exact")
AUDITS = ("recall", "scopes", "change")


def open(store: str | Path, table: str | None = None, *, version: int | None = None,
         storage_options: Mapping[str, str] | None = None, docs_model: str | None = None,
         columns: Mapping[str, str] | None = None) -> Store:
    """Open one table of a memory store read-only (a LanceDB folder or URI, or a SQLite docs
    file). `version` pins a table version (`inspector versions`), `columns` overrides detected
    column roles ({"importance": "weight"}), `docs_model` picks a docs store's embeddings."""
    from inspector.core.stores.opening import open_store

    uri = str(store)
    opened = open_store(uri, table, roles=dict(columns) if columns else None, version=version,
                        storage_options=dict(storage_options) if storage_options else None,
                        embedding_model=docs_model)
    return Store(uri, table, opened)


def tables(store: str | Path, *, storage_options: Mapping[str, str] | None = None
           ) -> list[dict[str, Any]]:
    """Every table of a store, as `inspector tables --json` lists them: columns, detected
    roles, rows, version, and the system (with its preset) that wrote it when recognised."""
    from inspector.core.evidence.report import tables_json
    from inspector.core.stores.opening import describe_tables
    from inspector.core.stores.safety.redact import redact_uri

    uri = str(store)
    infos = describe_tables(uri, dict(storage_options) if storage_options else None)
    return json.loads(json.dumps(tables_json(redact_uri(uri), infos)))


def query(store: str | Path | Store, table: str | None = None, **options: Any) -> Result:
    """`open(store, table).query(**options)`; `store` may be an open Store."""
    return _handle(store, table).query(**options)


def audit(store: str | Path | Store, kind: str = "recall", table: str | None = None,
          **options: Any) -> AuditResult:
    """`open(store, table).audit(kind, **options)`; `store` may be an open Store."""
    return _handle(store, table).audit(kind, **options)


def _handle(store: str | Path | Store, table: str | None) -> Store:
    if isinstance(store, Store):
        if table is not None and table != store.table:
            raise InspectorError(f"The store is open on table {store.table!r}; open "
                                 f"{table!r} with inspector.open(path, table={table!r}).")
        return store
    return open(store, table)


class Store:
    """One table of a store, open read-only. `engine_store` is the engine's own object."""

    def __init__(self, uri: str, table: str | None, engine_store: Any) -> None:
        self.uri = uri
        self._asked_table = table
        self.engine_store = engine_store

    @property
    def table(self) -> str:
        return str(self.engine_store.table_name)

    @property
    def rows(self) -> int:
        return int(self.engine_store.rows)

    @property
    def version(self) -> int:
        return int(self.engine_store.version)

    @property
    def roles(self) -> dict[str, str]:
        return {k: v for k, v in self.engine_store.roles.as_dict().items() if v}

    def __repr__(self) -> str:
        return (f"<inspector.Store {self.engine_store.display_uri} table={self.table!r} "
                f"rows={self.rows} version={self.version}>")

    def _repr_html_(self) -> str:
        e = html.escape
        roles = ", ".join(f"{e(k)}={e(str(v))}" for k, v in self.roles.items() if v)
        return (f"<div class='inspector-store'><b>{e(str(self.engine_store.display_uri))}</b> "
                f"table <code>{e(self.table)}</code>: {self.rows:,} rows, version "
                f"{self.version}<br><small>roles: {roles}</small></div>")

    # -- queries ---------------------------------------------------------------------------

    def query(self, text: str | None = None, vector: Sequence[float] | None = None,
              vector_of: str | None = None, *, preset: str | None = None,
              pipeline: str | Path | None = None, limit: int | None = None,
              scope: str | None = None, scopes: Sequence[str] | None = None,
              now: float | str | dt.datetime | None = None, set: Mapping[str, Any] | None = None,
              system_config: str | Path | None = None, embedder: str | None = None,
              expect: Iterable[str] = (), index_facet: str = "auto",
              scope_probe: str = "auto", **params: Any) -> Result:
        """Run one query through the pipeline, as `inspector query STORE ... --json` does.

        Query input: `text`, `vector` (a list of numbers) or `vector_of` (a stored row's id;
        with `text` for hybrid). `preset` names a fixed preset or a pipeline of stages;
        `pipeline` is a pipeline file instead. `set` holds STAGE.PARAM (or SETTING) values as
        `--set` does. `scope` is one scope; `scopes` a list (pipelines of stages: a row in any
        is in scope, [] denies everything). `now` (epoch ms, ISO text or a datetime) fixes the
        clock of time-dependent stages. `index_facet` and `scope_probe` are `inspector query`'s
        `--index-facet` and `--scope-probe`. Other keywords are the fixed pipeline's parameters
        (`overfetch`, `blend`, `min_score`, `mode`, `filter`, ...; see FIXED_PARAMS).
        """
        if vector is not None and vector_of is not None:
            raise InspectorError("Give either vector or vector_of, not both.")
        if scope is not None and scopes is not None:
            raise InspectorError("Give scope (one) or scopes (a list), not both.")
        unknown = sorted(set_ for set_ in params if set_ not in FIXED_PARAMS)
        if unknown:
            raise InspectorError(f"Unknown query option {unknown[0]!r}; the fixed pipeline's "
                                 f"parameters are {', '.join(FIXED_PARAMS)}.")
        if preset is not None and pipeline is not None:
            raise InspectorError("Give preset or pipeline, not both.")
        sets = dict(set or {})
        vec = _vector(vector)
        if _is_flow(preset, pipeline):
            return self._flow(text, vec, vector_of, preset, pipeline, limit, scope, scopes, now,
                              sets, system_config, embedder, list(expect), params)
        return self._fixed(text, vec, vector_of, preset, pipeline, limit, scope, scopes, now,
                           sets, system_config, embedder, list(expect), (index_facet, scope_probe),
                           params)

    def _fixed(self, text: str | None, vector: list[float] | None, vector_of: str | None,
               preset: str | None, pipeline: str | Path | None, limit: int | None,
               scope: str | None, scopes: Sequence[str] | None, now: Any,
               sets: dict[str, Any], system_config: Any, embedder: str | None,
               expect: list[str], modes: tuple[str, str], params: dict[str, Any]) -> Result:
        from inspector.core.engine.ann import facet
        from inspector.core.engine.expect import analyse, attach
        from inspector.core.engine.inputs import checked_map, question_params, question_query
        from inspector.core.engine.params import freeze_map
        from inspector.core.engine.pipeline import run
        from inspector.core.engine.scope import load_scope_map
        from inspector.core.jsonio import dumps
        from inspector.core.stores.safety.redact import redact_uri

        if now is not None or system_config is not None:
            raise InspectorError("now and system_config apply to pipelines of stages "
                                 "(e.g. preset='memory-lancedb-pro' or a pipeline file).")
        index_facet, scope_probe = modes
        if index_facet not in ("auto", "on", "off"):
            raise InspectorError("index_facet is 'auto', 'on' or 'off'.")
        if scopes is not None:
            if len(scopes) != 1:
                raise InspectorError("The fixed pipeline takes one scope (scope=NAME); "
                                     "pipelines of stages take a list, [] denying everything.")
            scope = scopes[0]
        given = {k: v for k, v in params.items() if v is not None}
        if isinstance(given.get("scope_map"), Mapping):
            given["scope_map"] = checked_map(dict(given["scope_map"]), "scope_map")
        elif isinstance(given.get("scope_map"), (str, Path)):
            given["scope_map"] = freeze_map(load_scope_map(given["scope_map"]))
        if "scope_map" in given:
            given["scope_map"] = {k: list(v) for k, v in given["scope_map"]}
        question = self._question(text=text, vector=vector, vector_of=vector_of,
                                  embedder=embedder, preset=preset, pipeline=pipeline,
                                  sets=sets, scopes=None if scope is None else [scope],
                                  limit=limit, now=None, expect=expect, params=given)
        question = question.model_copy(update={"store": redact_uri(self.uri)})  # no secret
        try:
            p = question_params(question)
        except (TypeError, ValueError) as exc:
            raise InspectorError(f"The query's parameters are not valid ({exc}).") from None
        st = self.engine_store
        q = question_query(st, question, p.mode)
        trace = facet.attach(st, q, run(st, q, p, probe=scope_probe), index_facet)
        if expect:
            trace = attach(trace, analyse(st, q, trace, expect))
        label = str(pipeline) if pipeline is not None else preset or "fixed pipeline"
        out = json.loads(dumps(trace.to_json()))
        out["question"] = question.model_dump(mode="json", by_alias=True)
        return Result(out, "fixed", trace, label)

    def _flow(self, text: str | None, vector: list[float] | None, vector_of: str | None,
              preset: str | None, pipeline: str | Path | None, limit: int | None,
              scope: str | None, scopes: Sequence[str] | None, now: Any,
              sets: dict[str, Any], system_config: Any, embedder: str | None,
              expect: list[str], params: dict[str, Any]) -> Result:
        from inspector.core.engine.flow.answer import to_json
        from inspector.core.engine.flow.question import ask, resolve
        from inspector.core.engine.flow.spec import held_options, load_file, load_shipped

        spec = load_shipped(preset) if preset else load_file(str(pipeline))
        held = held_options(spec, {k: v for k, v in params.items() if v is not None})
        sets = {**{k: v for one in held.values() for k, v in one.items()}, **sets}
        given = [k for k, v in params.items() if v is not None and k not in held]
        if given:
            raise InspectorError(f"{', '.join(given)} set the fixed pipeline's parameters; a "
                                 f"pipeline of stages takes set={{'STAGE.PARAM': value}} (see "
                                 f"`inspector pipeline show {preset or pipeline}`).")
        if not (text or vector or vector_of):
            raise InspectorError("Give a query: text, vector or vector_of.")
        q = self._question(text=text, vector=vector, vector_of=vector_of, embedder=embedder,
                           preset=preset, pipeline=pipeline, system_config=system_config,
                           sets=sets, scopes=[scope] if scope is not None else scopes,
                           limit=limit, now=now, expect=expect)
        resolve(q)
        trace, expected = ask(q, self.engine_store)
        out = to_json(trace, expected)
        out["question"] = q.model_dump(mode="json", by_alias=True)
        from inspector.core.jsonio import dumps

        return Result(json.loads(dumps(out)), "flow", trace)

    def _question(self, *, preset: str | None, pipeline: str | Path | None, sets: dict[str, Any],
                  scopes: Sequence[str] | None, limit: int | None, now: Any,
                  system_config: Any = None, **rest: Any) -> Any:
        from inspector.core.engine.flow.question import make_question
        from inspector.core.stores.safety.redact import redact_uri

        if scopes is not None and (isinstance(scopes, str) or
                                   not all(isinstance(s, str) for s in scopes)):
            raise InspectorError("scopes takes a list of scope names, e.g. ['global', "
                                 "'agent:main'] ([] denies everything).")
        return make_question(store=redact_uri(self.uri), table=self._asked_table, preset=preset,
                             columns=dict(getattr(self.engine_store, "role_overrides", None)
                                          or {}),
                             pipeline_file=None if pipeline is None else str(pipeline),
                             system_config=None if system_config is None else
                             str(system_config),
                             set=sets, scopes=None if scopes is None else list(scopes),
                             limit=limit, now=_now(now), **rest)

    # -- audits ----------------------------------------------------------------------------

    def audit(self, kind: str = "recall", *, preset: str | None = None,
              pipeline: str | Path | None = None, set: Mapping[str, Any] | None = None,
              scopes: Sequence[str] | None = None, limit: int | None = None,
              now: float | str | dt.datetime | None = None,
              system_config: str | Path | None = None, sample: int | None = None,
              seed: int = 0, per_scope: int = 10) -> AuditResult:
        """A store-wide audit over any preset or pipeline, as `inspector audit KIND --json`:
        `recall` (can each memory be recalled by its own vector and text; `scopes` probes every
        memory in those scopes instead of its own), `scopes` (leaks and starvation scope by
        scope, `per_scope` probes each), `change` (what `set` changes across every probe)."""
        from inspector.core.analysis import audit as audits
        from inspector.core.engine.flow.question import resolve

        if kind not in AUDITS:
            raise InspectorError(f"The audit kind is one of {', '.join(AUDITS)}, not {kind!r}.")
        if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int)
                                   or sample < 1):
            raise InspectorError("sample takes a whole number of memories >= 1.")
        sets = dict(set or {})
        q = self._question(preset=preset, pipeline=pipeline, system_config=system_config,
                           sets={} if kind == "change" else sets, scopes=scopes, limit=limit,
                           now=now)
        spec, _, _ = resolve(q)
        if spec.engine == "fixed" and scopes is not None and len(scopes) > 1:
            raise InspectorError(f"{spec.name} takes one scope; the pipelines of stages take "
                                 "several.")
        if kind == "change" and not sets:
            raise InspectorError("audit('change') needs the change: set={'STAGE.PARAM': value}.")
        st = self.engine_store
        now_ms = q.now if q.now is not None else time.time() * 1000
        own = scopes is None
        if kind == "scopes":
            if not 1 <= per_scope <= 10_000:
                raise InspectorError("per_scope takes a whole number between 1 and 10000.")
            res = audits.scope_audit(st, q, now_ms, per_scope=per_scope, seed=seed)
        elif kind == "recall":
            res = audits.recall_audit(st, q, now_ms, own_scope=own, sample=sample, seed=seed)
        else:
            res = audits.change_audit(st, q, now_ms, sets, own_scope=own, sample=sample,
                                      seed=seed)
        from inspector.core.jsonio import dumps

        return AuditResult(json.loads(dumps(res)), kind)


def _is_flow(preset: str | None, pipeline: str | Path | None) -> bool:
    from inspector.core.engine.flow.shipped import accepted_names, shipped_names
    from inspector.core.engine.flow.spec import load_file
    from inspector.core.engine.presets import PRESETS

    if pipeline is not None:
        return load_file(str(pipeline)).engine != "fixed"
    if preset is None or preset in PRESETS:
        return False
    if preset not in accepted_names():
        raise InspectorError(f"Unknown preset {preset!r}; the presets are "
                             f"{', '.join(dict.fromkeys([*PRESETS, *shipped_names()]))}.")
    return True


def _vector(vector: Sequence[float] | None) -> list[float] | None:
    if vector is None:
        return None
    try:
        out = [float(x) for x in (vector.tolist() if hasattr(vector, "tolist") else vector)]
    except (TypeError, ValueError):
        raise InspectorError("The query vector must be a list of numbers.") from None
    if not out or not all(math.isfinite(x) for x in out):
        raise InspectorError("The query vector must be a non-empty list of finite numbers.")
    import numpy as np

    with np.errstate(over="ignore"):
        f32 = np.asarray(out, np.float32)
    if not np.all(np.isfinite(f32)):
        raise InspectorError("The query vector holds a value beyond float32's range.")
    return [float(x) for x in f32]  # float32, as the command line reads a vector


def _now(now: float | str | dt.datetime | None) -> float | None:
    from inspector.core.engine.flow.question import parse_now

    if now is None:
        return None
    if isinstance(now, dt.datetime):
        when = now if now.tzinfo is not None else now.replace(tzinfo=dt.UTC)
        return when.timestamp() * 1000
    if isinstance(now, bool):
        raise InspectorError("now takes epoch milliseconds, ISO text or a datetime.")
    return parse_now(str(now))


# -- results -------------------------------------------------------------------------------


