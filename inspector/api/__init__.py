"""The Python API for notebooks and scripts: the same engine as `inspector query` and
`inspector audit`, with results that show themselves in Jupyter.

    import inspector

    store = inspector.open("path/to/store", table="memories")    # read-only, as everywhere
    r = store.query(text="deploy the api", preset="memory-plugin", limit=5, scope="repo1")
    r                      # in a notebook: verdict (n of limit, diagnosis), stage counts, list
    r.final_ids            # the returned ids in the system's order
    r.table("fetch")       # one stage's candidates as a pyarrow.Table (r.to_pandas("fetch"))
    r.diagnosis.fixes      # each fix was run: its label, argv and what it returns
    r.to_json()            # exactly what `inspector query --json` prints for the same options
    store.audit("recall", preset="memory-lancedb-pro", sample=50)

Every preset and pipeline file runs in the one engine (`flow.question`); no preset named runs
LanceDB's own search (pipeline `lancedb`), as the command line does. Bad input raises
InspectorError, whose message is one sentence.

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

AUDITS = ("recall", "scopes", "change")
FACET_MODES = ("auto", "on", "off")
FILTERS = ("post", "pushdown")
MAX_WIDEN = 10_000_000  # the deepest a what-if may widen a stage, as --widen takes it


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
              expect: Iterable[str] = (), widen: Mapping[str, int] | None = None,
              exact: bool = False, where: str | None = None, fixes: bool = True,
              index_facet: str = "auto", **options: Any) -> Result:
        """Answer one question through its pipeline, as `inspector query STORE ...` does.

        Query input: `text`, `vector` (a list of numbers) or `vector_of` (a stored row's id;
        with `text` for hybrid). `preset` names a shipped pipeline, `pipeline` a pipeline
        file; neither runs LanceDB's own search (pipeline `lancedb`). `set` holds
        {"STAGE.PARAM": value} (or a pipeline SETTING) as `--set` does; the command line's
        options by keyword (`overfetch=`, `blend=`, `min_score=`, `mode=`, `filter=`,
        `nprobes=`, ...: flow/spec.py OPTION_PARAMS) set the stage parameter that holds
        them, and one no stage of the pipeline holds is refused. `scope` is one scope,
        `scopes` a list (a row in any is in scope; [] denies everything); `now` (epoch ms,
        ISO text or a datetime) fixes the clock of time-dependent stages. What-ifs, never the
        system's own behaviour: `widen` ({"STAGE": depth}) and `exact` (bypass the ANN
        index). `fixes=False` is `--fixes off` and `index_facet` is `--index-facet`.

        The run happens here; the diagnosis (its fixes each run), the expected rows and the
        index facet when they are first read, and the JSON only when `.to_json()` is called.
        """
        from inspector.core.engine.flow.question import run_question
        from inspector.core.engine.flow.shipped import DEFAULT_PIPELINE

        if scope is not None and scopes is not None:
            raise InspectorError("Give scope (one) or scopes (a list), not both.")
        if preset is not None and pipeline is not None:
            raise InspectorError("Give preset or pipeline, not both.")
        if index_facet not in FACET_MODES:
            raise InspectorError(f"index_facet is {', '.join(map(repr, FACET_MODES))}, not "
                                 f"{index_facet!r}.")
        if not isinstance(fixes, bool) or not isinstance(exact, bool):
            raise InspectorError("fixes and exact take True or False.")
        if vector is not None and vector_of is not None:
            raise InspectorError("Give either vector or vector_of, not both.")
        vec = _vector(vector)
        if not (text or vec or vector_of):
            raise InspectorError("Give a query: text, vector or vector_of.")
        if preset is None and pipeline is None:
            preset = DEFAULT_PIPELINE
        sets = {**_held(preset, pipeline, options), **dict(set or {})}
        if where is not None:
            if "where" in sets:
                raise InspectorError("Give where= or set={'where': ...}, not both.")
            sets["where"] = where
        q = self._question(text=text, vector=vec, vector_of=vector_of, embedder=embedder,
                           preset=preset, pipeline=pipeline, system_config=system_config,
                           sets=sets, scopes=[scope] if scope is not None else scopes,
                           limit=limit, now=now, expect=_ids(expect), widen=_widen(widen),
                           exact=exact)
        return Result(q, run_question(q, self.engine_store, facet_mode=index_facet), fixes,
                      index_facet)

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
        resolve(q)  # a bad pipeline, config or set is said before any probe runs
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


def _held(preset: str | None, pipeline: str | Path | None, options: dict[str, Any]
          ) -> dict[str, Any]:
    """The command line's options given by keyword (overfetch=, blend=, filter=, ...) as the
    STAGE.PARAM values of the stages that hold them, as `inspector query --OPTION` sets them;
    an option no stage of this pipeline holds is refused."""
    from inspector.core.engine.flow.spec import (
        OPTION_PARAMS,
        OPTION_SETTINGS,
        held_options,
        load_file,
        load_shipped,
    )
    from inspector.core.engine.scope import load_scope_map, parse_scope_map

    known = [*OPTION_PARAMS, *OPTION_SETTINGS]
    unknown = [k for k in options if k not in known]
    if unknown:
        raise InspectorError(f"Unknown query option {unknown[0]!r}; the options are "
                             f"{', '.join(known)}, and set={{'STAGE.PARAM': value}} sets any "
                             f"stage's parameter.")
    given = {k: v for k, v in options.items() if v is not None}
    if not given:
        return {}
    if "filter" in given and given["filter"] not in FILTERS:
        raise InspectorError(f"filter takes {' or '.join(map(repr, FILTERS))}, not "
                             f"{given['filter']!r}.")
    if "scope_map" in given:
        m = given["scope_map"]
        given["scope_map"] = parse_scope_map(dict(m), "scope_map") \
            if isinstance(m, Mapping) else load_scope_map(m)
    spec = load_shipped(preset) if preset else load_file(str(pipeline))
    held = held_options(spec, given)
    missing = [k for k in given if k not in held]
    if missing:
        raise InspectorError(f"{', '.join(missing)}: pipeline {spec.name} has no stage that "
                             f"takes {'it' if len(missing) == 1 else 'them'}; its parameters "
                             f"are set with set={{'STAGE.PARAM': value}} (see `inspector "
                             f"pipeline show {preset or pipeline}`).")
    return {k: v for one in held.values() for k, v in one.items()}


def _ids(expect: Iterable[str] | str) -> list[str]:
    ids = [expect] if isinstance(expect, str) else list(expect)
    if not all(isinstance(x, str) for x in ids):
        raise InspectorError("expect takes row ids as text, e.g. ['a6'].")
    return ids


def _widen(widen: Mapping[str, int] | None) -> dict[str, int]:
    """{STAGE: DEPTH}: what-if depths, as --widen STAGE=DEPTH takes them."""
    out = {}
    for stage, depth in dict(widen or {}).items():
        if not isinstance(stage, str) or isinstance(depth, bool) or \
                not isinstance(depth, int) or not 1 <= depth <= MAX_WIDEN:
            raise InspectorError(f"widen takes {{'STAGE': DEPTH}} with a whole depth from 1 "
                                 f"to {MAX_WIDEN:,}, not {stage!r}: {depth!r}.")
        out[stage] = depth
    return out


def _vector(vector: Sequence[float] | None) -> list[float] | None:
    if vector is None:
        return None
    import numpy as np

    if isinstance(vector, np.ndarray) and vector.ndim == 1 and vector.dtype.kind == "f":
        out = vector  # a float array (what a notebook's embedder gives): checked as an array
        finite = bool(len(out)) and bool(np.isfinite(out).all())
    else:
        try:
            out = [float(x) for x in (vector.tolist() if hasattr(vector, "tolist") else vector)]
        except (TypeError, ValueError):
            raise InspectorError("The query vector must be a list of numbers.") from None
        finite = bool(out) and all(map(math.isfinite, out))
    if not finite:
        raise InspectorError("The query vector must be a non-empty list of finite numbers.")
    with np.errstate(over="ignore"):
        f32 = np.asarray(out, np.float32)
    if not np.all(np.isfinite(f32)):
        raise InspectorError("The query vector holds a value beyond float32's range.")
    return f32.astype(np.float64).tolist()  # float32, as the command line reads a vector


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


