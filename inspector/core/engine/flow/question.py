"""The question model: everything one retrieval question asks (store, query input, pipeline
and its overrides, scopes, clock, expected rows), serialised as JSON with a published JSON
Schema, and `ask`, which answers it through the pipeline engine."""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from inspector.core.engine.flow.insight import expect as flow_expect
from inspector.core.engine.flow.runner import FlowTrace, PoolCache
from inspector.core.engine.flow.runs import Change, Runs, freeze
from inspector.core.engine.flow.spec import (
    MAX_LIMIT,
    PipelineSpec,
    apply_set,
    load_file,
    load_shipped,
    role_assignments,
)
from inspector.core.engine.flow.sysconfig import from_config, read_config
from inspector.core.errors import InspectorError
from inspector.core.jsonio import lone_surrogate

MAX_SCOPES = 1_000


class Question(BaseModel):
    """What is asked. `scopes`: None = unscoped, [] = deny everything (as the systems do)."""

    model_config = ConfigDict(extra="forbid")
    schema_: int = Field(1, alias="schema")
    store: str
    table: str | None = None
    text: str | None = None
    vector: list[float] | None = None
    vector_of: str | None = None
    embedder: str | None = None
    preset: str | None = None
    pipeline_file: str | None = None
    system_config: str | None = None
    set: dict[str, Any] = Field(default_factory=dict)
    columns: dict[str, str] = Field(default_factory=dict, description="column roles as "
                                    "--column ROLE=PATH: a column, a struct field or a key "
                                    "of JSON text (metadata.user_id)")
    scopes: list[str] | None = None
    limit: int | None = Field(None, le=MAX_LIMIT, description="how many rows the caller asks "
                              "for (a pipeline clamps it to its own range, as its system does)")
    now: float | None = Field(None, description="the clock of time-dependent stages, epoch ms")
    expect: list[str] = Field(default_factory=list)
    widen: dict[str, int] = Field(default_factory=dict, description="what-if: these stages "
                                  "keep at least so many rows (a fetch asks for that many); "
                                  "never the system's own behaviour")
    exact: bool = Field(False, description="what-if: vector legs bypass the ANN index (an "
                        "exact flat search)")
    params: dict[str, Any] = Field(default_factory=dict, description="always empty: the "
                                   "former fixed engine's parameters; options such as "
                                   "--overfetch now set the stage that holds them (`set`). "
                                   "Kept so that questions written before still read")

    @field_validator("scopes")
    @classmethod
    def _scopes(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(v) > MAX_SCOPES:
            raise ValueError(f"at most {MAX_SCOPES} scopes")
        return v

    @field_validator("vector")
    @classmethod
    def _vector(cls, v: list[float] | None) -> list[float] | None:
        if v is not None and (not v or not all(map(math.isfinite, v))):
            raise ValueError("the vector must be a non-empty list of finite numbers")
        return v

    @model_validator(mode="after")
    def _texts(self) -> Question:
        for name in ("table", "text", "vector_of", "embedder", "preset", "scopes", "expect",
                     "columns", "set", "params"):
            if lone_surrogate(getattr(self, name)):
                raise ValueError(f"{name} holds text that is not valid Unicode (a lone "
                                 f"surrogate)")
        return self

    @model_validator(mode="after")
    def _one_pipeline(self) -> Question:
        if self.vector is not None and self.vector_of is not None:
            raise ValueError("give either vector or vector_of, not both")
        if self.preset is not None and self.pipeline_file is not None:
            raise ValueError("name one of preset and pipeline_file, not both")
        if self.preset is None and self.pipeline_file is None \
                and (self.set or self.system_config or self.now is not None):
            # no pipeline named asks the fixed pipeline's defaults (`inspector query STORE
            # --text ...`), which --set, a system config and a clock do not apply to
            raise ValueError("name exactly one of preset and pipeline_file")
        return self


def make_question(**fields: Any) -> Question:
    """The question these fields ask, or one sentence naming the field that is not valid and
    why (the one translation of the model's validation for the command line, the API and
    the MCP server)."""
    try:
        return Question(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"] if x != "__root__")
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise InspectorError(f"The question is not valid: {loc + ': ' if loc else ''}{msg} "
                             f"(given {_given(first.get('input'))}).") from None


def _given(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def question_schema() -> dict[str, Any]:
    return Question.model_json_schema(by_alias=True)


def parse_now(text: str) -> float:
    """Epoch milliseconds, or an ISO 8601 date-time (UTC when no offset is given)."""
    try:
        ms = float(text)
    except ValueError:
        try:
            when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InspectorError(f"--now takes epoch milliseconds or an ISO date-time, not "
                                 f"{text!r}.") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        return when.timestamp() * 1000
    if not math.isfinite(ms) or not 0 <= ms < 2**53:
        raise InspectorError(f"--now {text} is not a usable epoch time in milliseconds.")
    return ms


def resolve(q: Question) -> tuple[PipelineSpec, list[str], list[str]]:
    """The pipeline the question runs: preset or file, then the system's own configuration,
    then the column roles, then --set on top. Also what the configuration said that changes
    nothing, and what it asks for that is not reproduced."""
    if q.preset is None and q.pipeline_file is None:
        raise InspectorError("Name a pipeline: a preset or a pipeline file.")
    spec = load_shipped(q.preset) if q.preset else load_file(str(q.pipeline_file))
    notes: list[str] = []
    inexact: list[str] = []
    if q.system_config:
        applied = from_config(spec, read_config(q.system_config), q.system_config)
        for name, value in applied.assignments.items():  # a bad value named by its key
            try:
                apply_set(spec, {name: value})
            except InspectorError as exc:
                raise InspectorError(f"The system configuration file {q.system_config}: "
                                     f"{applied.sources.get(name, name)}: {exc}") from None
        spec = apply_set(spec, applied.assignments)
        notes += [f"system config {n}" for n in applied.notes]
        notes += [f"system config key {k} is not a {spec.name} retrieval setting: ignored"
                  for k in applied.unknown]
        inexact += list(applied.inexact)
    if q.columns:
        spec = apply_set(spec, role_assignments(spec, q.columns))
    if q.set:
        spec = apply_set(spec, q.set)
    if q.scopes is not None and not _scoped(spec):
        raise InspectorError(f"Pipeline {spec.name} applies no scope (a route of it has no "
                             f"stage that filters rows by one), so its answer could not be "
                             f"scoped to {q.scopes}: ask it without --scope.")
    return spec, notes, inexact


def _scoped(spec: PipelineSpec) -> bool:
    """True when every route (whichever runs) has a stage applying the caller's scope."""
    from inspector.core.engine.flow.registry import kind_of
    from inspector.core.engine.flow.stages import applies_scope

    return all(any(applies_scope(st.kind, kind_of(st.kind).resolve(st.params, st.name))
                   for st in route.stages) for route in spec.routes)


def query_vector(store: Any, q: Question) -> tuple[np.ndarray | None, str, str | None]:
    """(vector or None, how it was made, why there is none)."""
    if q.vector is not None:
        vec = np.asarray(q.vector, np.float64)
        if vec.shape[0] != store.dim:
            raise InspectorError(f"The query vector has {vec.shape[0]} dimensions but the "
                                 f"store's vectors have {store.dim}.")
        return vec, "vector", None
    if q.vector_of is not None:
        return np.asarray(store.vector_of(q.vector_of), np.float64), f"example:{q.vector_of}", \
            None
    if not q.text or not q.text.strip():
        raise InspectorError("Give a query: --text TEXT, --vector JSON or --vector-of ID.")
    from inspector.core.stores.embed import embedder_for_store

    try:
        emb = embedder_for_store(store.embedder, q.embedder, store.dim)
    except InspectorError as exc:
        return None, "text", str(exc)
    vec = np.asarray(emb.embed([q.text])[0], np.float64)
    if not np.any(vec):  # a vector leg would search by nothing: each says why instead
        return None, "text", (f"The embedder '{emb.name}' found no words it knows in the "
                              f"query text, so it has nothing to search by.")
    return vec, f"text:{emb.name}", None


def runs_for(q: Question, store: Any, cache: PoolCache | None = None
             ) -> tuple[Runs, list[str], list[str]]:
    """The question's runs on an open store (its what-ifs as the base change), and what its
    system configuration noted and left unreproduced."""
    spec, notes, inexact = resolve(q)
    if q.widen:
        names = spec.stage_names()
        bad = [k for k in q.widen if k not in names]
        if bad:
            raise InspectorError(f"--widen {bad[0]}: pipeline {spec.name} has no stage "
                                 f"{bad[0]}; its stages are {', '.join(names)}.")
    vec, source, why = query_vector(store, q)
    now = q.now if q.now is not None else time.time() * 1000
    scopes = None if q.scopes is None else tuple(q.scopes)
    runs = Runs(store, spec, q.text, vec, scopes, q.limit, now, source, why,
                cache if cache is not None else PoolCache(),
                Change(widen=freeze(q.widen), exact=q.exact))
    return runs, notes, inexact


@dataclass(frozen=True)
class Asked:
    """A question's run, before what is read from it: `answer` makes the index facet, the
    diagnosis (with its fixes, each run, when asked) and the expected rows, through the same
    runs, so a caller that wants the rows alone pays for the run alone."""

    question: Question
    runs: Runs
    trace: FlowTrace
    index: Any  # the store's ANN index, compared with an exact search when `compare`
    compare: bool

    def answer(self, fixes: bool = True) -> Any:
        from inspector.core.engine.flow.answer import Answer
        from inspector.core.engine.flow.insight.diagnosis import diagnose
        from inspector.core.engine.flow.insight.facet import facet

        runs, trace = self.runs, self.trace
        found = facet(trace, runs, self.index) if self.compare else None
        lost = found is not None and bool(found.lost_final)
        diag = diagnose(trace, runs if fixes else None, index_lost=lost)
        expected = tuple(flow_expect.explain(trace, rid, runs) for rid in self.question.expect)
        return Answer(trace, diag, expected, found, runs.count)


def run_question(q: Question, store: Any, cache: PoolCache | None = None,
                 facet_mode: str = "auto") -> Asked:
    """The question's run on an open store; `.answer()` reads the rest from it."""
    from inspector.core.engine.flow.insight.facet import indexed_legs, wanted

    runs, notes, inexact = runs_for(q, store, cache)
    trace = runs.run()
    if notes or inexact:
        trace = trace.with_notes(notes, inexact)
    index = getattr(store, "vector_index", None)
    compare = False
    if indexed_legs(trace, index):
        if wanted(store.rows, facet_mode):
            compare = True
        else:
            why = f"{store.rows:,} rows" if facet_mode == "auto" else "--index-facet off"
            note = (f"the {index.type} index's answer was not compared with an exact search "
                    f"({why}): rows the index lost are not counted; add --index-facet on to "
                    f"compare")
            trace = trace.with_notes([note], [])
    return Asked(q, runs, trace, index, compare)


def answer(q: Question, store: Any, cache: PoolCache | None = None, fixes: bool = True,
           facet_mode: str = "auto") -> Any:
    """The question answered on an open store: the run, its diagnosis (with the fixes, each
    run, when `fixes`), the expected rows explained and the index facet."""
    return run_question(q, store, cache, facet_mode).answer(fixes)


def ask(q: Question, store: Any, cache: PoolCache | None = None) -> tuple[FlowTrace,
                                                                         list[dict[str, Any]]]:
    """Run the question's pipeline on an open store; expected rows explained."""
    got = answer(q, store, cache, fixes=False, facet_mode="off")
    return got.trace, list(got.expected)
