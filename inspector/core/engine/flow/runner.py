"""Run a pipeline over a store: pick the route, run each stage over the candidate list, and
record every stage in one vocabulary (rows in and out, scores before and after, why each
dropped row fell, rank moves). Fetch results are cached by everything that shapes them, so a
change of a live parameter re-runs the stages from the cached legs, exactly as a fresh run."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from inspector.core.engine.flow.columns import NOTHING, Outline
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.rows import Context, Drop, Outcome, Scored, Tie
from inspector.core.engine.flow.spec import PipelineSpec, RouteSpec
from inspector.core.engine.pools import CACHE_ENTRIES, Lru
from inspector.core.errors import InspectorError


@dataclass(frozen=True)
class StageRun:
    name: str
    kind: str
    role: str
    params: dict[str, Any]
    rows_in: tuple[Scored, ...]
    rows: tuple[Scored, ...]
    dropped: Sequence[Drop]  # a tuple, or a cut's CutDrops (each Drop made when read)
    note: str
    deferred: tuple[str, ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def ids(self) -> list[str]:
        return [s.id for s in self.rows]


_FIELDS = tuple(StageRun.__dataclass_fields__)


def _stage_run(*values: Any) -> StageRun:
    """StageRun(*values), every field given, made without the frozen dataclass's __init__
    (see rows.scored): a sweep makes one per stage of each of its thousands of runs."""
    r = object.__new__(StageRun)
    r.__dict__.update(zip(_FIELDS, values, strict=True))
    return r


class PoolCache(Lru):
    """Fetch-stage results of one store and query, keyed by everything that shapes them: the
    one owner of fetched rows for flow pipelines, under the pool source's one eviction rule
    (pools.Lru: least recently used out past CACHE_ENTRIES results; a session's legs are
    bounded by its pipeline, so no row bound unless given)."""

    def __init__(self, max_entries: int = CACHE_ENTRIES, max_rows: int | None = None) -> None:
        super().__init__(max_entries, max_rows, weigh=lambda got: len(got[0].rows))


@dataclass(frozen=True)
class FlowTrace:
    spec: PipelineSpec
    route: str
    stages: tuple[StageRun, ...]
    limit: int
    limit_asked: int | None
    now_ms: float
    scopes: tuple[str, ...] | None
    text: str | None
    bm25_text: str | None
    vector: np.ndarray | None
    query_source: str
    ties: tuple[Tie, ...]
    warnings: tuple[str, ...]
    inexact: tuple[str, ...]
    store: dict[str, Any]
    exact: bool = False  # what-if: vector legs bypassed the index
    widen: tuple[tuple[str, int], ...] = ()  # what-if: stages kept at least this many rows

    @property
    def what_if(self) -> bool:
        return self.exact or bool(self.widen)

    def with_notes(self, warnings: list[str], inexact: list[str]) -> FlowTrace:
        return replace(self, warnings=self.warnings + tuple(warnings),
                       inexact=tuple(dict.fromkeys(self.inexact + tuple(inexact))))

    @property
    def final(self) -> StageRun:
        return self.stages[-1]

    def marks(self) -> tuple[tuple[int, str], ...]:
        """Each stage's rows kept and note: what tells two runs apart short of their rows (a
        search's "this change moved nothing"); `columns.Outline.marks` of a run over
        columns."""
        return tuple((len(s.rows), s.note) for s in self.stages)

    def stage(self, name: str) -> StageRun:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)


def _index_type(store: Any) -> str | None:
    index = getattr(store, "vector_index", None)
    return getattr(index, "type", None)


def tag_tokens(text: str | None, prefixes: list[str] | tuple[str, ...]) -> list[str]:
    """Tokens like `proj:atlas` (the JavaScript `(?:p1|p2):[\\w-]+` with flags gi)."""
    if not text or not prefixes:
        return []
    rx = re.compile("(?:" + "|".join(prefixes) + r"):[\w-]+", re.IGNORECASE | re.ASCII)
    return rx.findall(text)


def choose_route(spec: PipelineSpec, ctx: Context) -> RouteSpec:
    for route in spec.routes:
        for cond in route.when:
            if cond == "always" \
                    or cond == "tag_query" and ctx.settings.get("_tags") \
                    or cond == "mode_vector" and ctx.settings.get("mode") == "vector" \
                    or cond == "no_fts_index" and ctx.store.fts_index_column() is None:
                return route
    raise InspectorError(f"No route of pipeline {spec.name} applies to this query.")


def clamp_limit(spec: PipelineSpec, limit: int | None) -> int:
    n = spec.limit.default if limit is None else limit
    return max(spec.limit.min, min(spec.limit.max, math.floor(n)))


def _key(ctx: Context, st_name: str, kind: str, params: dict[str, Any]) -> Any:
    vec = None if ctx.vector is None else ctx.vector.tobytes()
    return (st_name, kind, tuple(sorted((k, repr(v)) for k, v in params.items())), ctx.text,
            ctx.bm25_text, vec, ctx.scopes, ctx.limit, ctx.now_ms, ctx.store.version,
            tuple(sorted((k, repr(v)) for k, v in ctx.request.items())), ctx.exact,
            ctx.widen.get(st_name, 0))


# (kind, stage, the parameters given) -> every parameter's checked value: a sweep or a live
# session runs the same stages with the same parameters thousands of times
_RESOLVED = Lru(4096, None)


# id(given) -> (given, kind, stage, every parameter's checked value): a remembered pipeline's
# stage gives the same dict run after run (a sweep's queries share their applied pipelines),
# so it is looked up by identity first; the entry holds the dict, so its id names it while
# the entry lives, and no stage's parameters are changed in place once made
_BY_DICT: dict[int, tuple[dict[str, Any], str, str, dict[str, Any]]] = {}
_BY_DICT_MAX = 4096


def _resolved(kind: Any, kind_name: str, name: str, given: dict[str, Any]) -> dict[str, Any]:
    """kind.resolve(given, name), remembered for hashable parameters; a copy each time (a
    stage's run keeps the dict it is given)."""
    hit = _BY_DICT.get(id(given))
    if hit is not None and hit[0] is given and hit[1] == kind_name and hit[2] == name:
        return dict(hit[3])
    try:
        # typed: True == 1 == 1.0 for a dict, not for the check (a bool given for a number)
        key = (kind_name, name, tuple((k, type(v), v) for k, v in given.items()))
        got = _RESOLVED.get(key)
    except TypeError:  # a table or list parameter: checked every time
        return kind.resolve(given, name)
    if got is None:
        got = kind.resolve(given, name)
        _RESOLVED.put(key, got)
    if len(_BY_DICT) >= _BY_DICT_MAX:
        _BY_DICT.clear()
    _BY_DICT[id(given)] = (given, kind_name, name, got)
    return dict(got)


def context(store: Any, spec: PipelineSpec, *, text: str | None, vector: np.ndarray | None,
            scopes: tuple[str, ...] | None, limit: int | None, now_ms: float,
            query_source: str = "text", vector_error: str | None = None, exact: bool = False,
            widen: dict[str, int] | None = None, live: bool = False,
            memo: dict[str, Any] | None = None) -> Context:
    """What a run of this query starts from (the limit clamped as the system clamps it): the
    one place a run's context is made, so what a stage will ask can be read before the run
    (an audit's batched scan)."""
    n = clamp_limit(spec, limit)
    settings = dict(spec.settings)
    settings["_tags"] = tuple(tag_tokens(text, settings.get("tag_prefixes", ())))
    settings["_vector_error"] = vector_error
    settings["_query_source"] = query_source
    settings["_live"] = live  # a live session: fetches serve every slider position at once
    ctx = Context(store=store, text=text, vector=vector, scopes=scopes, limit=n,
                  now_ms=float(now_ms), settings=settings, exact=exact,
                  widen=dict(widen or {}), memo=memo)
    if limit is not None and n != limit:
        ctx.warnings.append(f"limit {limit} clamped to {n}, as the system clamps it "
                            f"({spec.limit.min}..{spec.limit.max})")
    return ctx


def run(store: Any, spec: PipelineSpec, *, text: str | None, vector: np.ndarray | None,
        scopes: tuple[str, ...] | None, limit: int | None, now_ms: float,
        query_source: str = "text", cache: PoolCache | None = None,
        vector_error: str | None = None, exact: bool = False,
        widen: dict[str, int] | None = None, live: bool = False,
        memo: dict[str, Any] | None = None) -> FlowTrace:
    """Every stage of the route the system would take for this query; `exact` and `widen`
    are what-ifs (the index bypassed; stages kept at least so many rows); `memo`: the
    question's stage memo its runs share (Context.memo)."""
    ctx = context(store, spec, text=text, vector=vector, scopes=scopes, limit=limit,
                  now_ms=now_ms, query_source=query_source, vector_error=vector_error,
                  exact=exact, widen=widen, live=live, memo=memo)
    n = ctx.limit
    route = choose_route(spec, ctx)
    current: list[Scored] = []
    handed: Outcome | None = None  # the outcome `current` copies, untouched since
    runs: list[StageRun] = []
    for st in route.stages:
        kind = kind_of(st.kind)
        params = _resolved(kind, st.kind, st.name, st.params)
        ctx.stage = st.name
        ctx.handed = handed
        if kind.role == "fetch":
            key = _key(ctx, st.name, st.kind, params)
            hit = cache.get(key) if cache is not None else None
            if hit is None:
                before = len(ctx.ties)
                out = kind.fn(ctx, current, params)
                if cache is not None:
                    cache.put(key, (out, tuple(ctx.ties[before:])))
            else:
                out, ties = hit
                ctx.ties.extend(ties)
            ctx.legs[st.name] = list(out.rows)
        else:
            out = kind.fn(ctx, current, params)
        rows_in = tuple(current) if kind.role != "fetch" else ()
        runs.append(_stage_run(st.name, st.kind, kind.role, params, rows_in,
                               tuple(out.rows), out.dropped, out.note, out.deferred,
                               dict(out.facts)))
        if kind.role != "query":
            current, handed = list(out.rows), out
        else:  # a query stage was handed `current` itself
            handed = None
    return FlowTrace(spec=spec, route=route.name, stages=tuple(runs), limit=n,
                     limit_asked=limit, now_ms=float(now_ms), scopes=scopes, text=text,
                     bm25_text=ctx.bm25_text, vector=vector, query_source=query_source,
                     ties=tuple(ctx.ties), warnings=tuple(ctx.warnings),
                     inexact=tuple(dict.fromkeys(ctx.inexact)),
                     store={"uri": store.display_uri, "table": store.table_name,
                            "version": store.version, "rows": store.rows,
                            "index": _index_type(store)},
                     exact=exact, widen=tuple(sorted(ctx.widen.items())))


def outline(store: Any, spec: PipelineSpec, *, text: str | None, vector: np.ndarray | None,
            scopes: tuple[str, ...] | None, limit: int | None, now_ms: float,
            query_source: str = "text", vector_error: str | None = None, exact: bool = False,
            widen: dict[str, int] | None = None, live: bool = False,
            memo: dict[str, Any] | None = None) -> Outline | None:
    """What `run` with the same arguments keeps, made over columns (`flow.columns`): each
    stage's rows kept and note, and the ids of its last stage. The same context, route,
    resolved parameters and pool source as `run`, each stage in its column form. None where
    a stage of the route has none, or its parameters need the rows: `run` then answers.
    Raises the InspectorError `run` raises where a column form reaches it (a parameter
    refused, a depth past the table's bound). `memo`: the question's (Context.memo)."""
    ctx = context(store, spec, text=text, vector=vector, scopes=scopes, limit=limit,
                  now_ms=now_ms, query_source=query_source, vector_error=vector_error,
                  exact=exact, widen=widen, live=live, memo=memo)
    route = choose_route(spec, ctx)
    kinds = [kind_of(st.kind) for st in route.stages]
    if not kinds or any(k.columns is None for k in kinds):
        return None
    cols = NOTHING
    kept = []
    for st, kind in zip(route.stages, kinds, strict=True):
        params = _resolved(kind, st.kind, st.name, st.params)
        ctx.stage = st.name
        got = kind.columns(ctx, cols, params)
        if got is None:
            return None
        cols = got
        kept.append((len(cols.at), cols.note))
    return Outline(tuple(cols.ids()), tuple(kept))
