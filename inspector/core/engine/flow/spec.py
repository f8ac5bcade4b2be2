"""Pipeline files: a retrieval system as data (routes of stages with parameters), read from
TOML or JSON, checked against the stage registry, changed by `--set` and by the system's own
configuration file (`--system-config`)."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import tomllib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspector.core.engine.flow import stages as _stages  # noqa: F401  (registers the kinds)
from inspector.core.engine.flow.registry import ParamDecl, kind_of
from inspector.core.engine.flow.shipped import (
    accepted_names,
    canonical,
    shipped_dir,
    shipped_names,
)
from inspector.core.errors import InspectorError
from inspector.core.jsonio import lone_surrogate, read_text
from inspector.core.stores.safety.bounds import MAX_CANDIDATES

CONDITIONS = ("always", "tag_query", "mode_vector", "no_fts_index")
MAX_FILE_BYTES = 4 * 1024 * 1024
# a pipeline's bounds, checked before it is validated or run (the shipped ones hold at most
# 3 routes and 36 stages): routes, stages over all routes, and its size once every [defs]
# reference is expanded
MAX_ROUTES = 32
MAX_STAGES = 256
MAX_EXPANDED_BYTES = MAX_FILE_BYTES

MAX_LIMIT = MAX_CANDIDATES  # the largest limit asked: the deepest candidate list fetched
LIMIT_BOUND = ParamDecl("value", "int", 5, "a pipeline's limit", 1, MAX_LIMIT)

# Every pipeline setting a stage or route reads, declared once: a file or --set giving another
# key, or a value of another type or outside its choices, is refused naming it.
SETTINGS = {d.name: d for d in (
    ParamDecl("where", "str", "", "a SQL filter LanceDB applies with the scope (checked by "
              "safety.filters: it can only narrow the scope)"),
    ParamDecl("mode", "str", "hybrid", "retrieval.mode: hybrid, or vector (the vector route)",
              choices=("hybrid", "vector")),
    ParamDecl("source", "str", "manual", "the caller: manual (tools), auto-recall or cli",
              choices=("manual", "auto-recall", "cli")),
    ParamDecl("tag_prefixes", "list", (), "the prefixes of a tag query (proj:x)"),
    ParamDecl("tie_rule", "str", "lancedb", "how equal scores are ordered: lancedb or id",
              choices=("lancedb", "id")),
)}


class StageSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    kind: str
    params: dict[str, Any] = Field(default_factory=dict)


class RouteSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    when: list[Literal["always", "tag_query", "mode_vector", "no_fts_index"]] = ["always"]
    stages: list[StageSpec]


class LimitSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    default: int = Field(5, ge=1, le=MAX_LIMIT)
    min: int = Field(1, ge=1, le=MAX_LIMIT)
    max: int = Field(10_000, ge=1, le=MAX_LIMIT)


class SystemConfigSpec(BaseModel):
    """How the system's own configuration file maps onto stage parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    format: str
    roots: list[str] = Field(default_factory=list)  # where the config may sit in a bigger file
    map: dict[str, list[str]] = Field(default_factory=dict)
    ignored: dict[str, str] = Field(default_factory=dict)  # key: why it changes nothing here
    unmodelled: dict[str, str] = Field(default_factory=dict)  # key: what is not reproduced


class PipelineSpec(BaseModel):
    """One system and path: its routes (the first whose condition holds runs), limit rule,
    settings and how its configuration file maps onto parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_: int = Field(1, alias="schema")
    engine: Literal["stages", "fixed"] = "stages"
    name: str
    title: str
    depth_rule: str = ""
    index_knobs: str = ""
    system: str = ""
    version: str = ""
    # the call a user of the system makes that this pipeline reproduces (e.g.
    # "LanceDB.similarity_search_with_relevance_scores(query, k, filter)"), and what the
    # pipeline was checked against (a fixture recorded from the real package, its code)
    entry_point: str = ""
    checked_against: str = ""
    path: str = ""
    sources: list[str] = Field(default_factory=list)
    ties: str = ""
    not_reproduced: list[str] = Field(default_factory=list)  # what the preset leaves out
    # the parameters the system itself exposes (STAGE.PARAM -> how its user sets it), besides
    # those its configuration file maps onto; a fix of any other parameter is a what-if.
    # Absent (and no system_config): every declared parameter is the system's
    own_params: dict[str, str] | None = None
    limit: LimitSpec = LimitSpec()
    settings: dict[str, Any] = Field(default_factory=dict)
    routes: list[RouteSpec]
    system_config: SystemConfigSpec | None = None

    def stage_names(self) -> list[str]:
        return list(dict.fromkeys(s.name for r in self.routes for s in r.stages))

    def own(self, key: str) -> tuple[bool, str]:
        """Whether STAGE.PARAM is the system's own parameter, and how its user sets it."""
        mapped = {t.partition("=")[0]: k for k, ts in
                  (self.system_config.map if self.system_config else {}).items() for t in ts}
        if self.own_params is None and not mapped:
            return True, ""
        if self.own_params and key in self.own_params:
            return True, self.own_params[key]
        if key in mapped:
            return True, f"config {mapped[key]}"
        return False, ""

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


def _expand_defs(data: dict[str, Any], where: str) -> dict[str, Any]:
    """Pipeline files name shared tables once under [defs] and refer to them as "@name";
    the references may expand to at most MAX_EXPANDED_BYTES (measured before each copy)."""
    defs = data.pop("defs", {})
    defs = defs if isinstance(defs, dict) else {}
    sizes: dict[str, int] = {}
    total = 0
    # a wrong shape is left as it is, for the schema's validation to name
    routes = data.get("routes", [])
    for route in routes if isinstance(routes, list) else []:
        stages = route.get("stages", []) if isinstance(route, dict) else []
        for st in stages if isinstance(stages, list) else []:
            if not isinstance(st, dict) or not isinstance(st.get("params", {}), dict):
                continue
            params = {k: v for k, v in st.items() if k not in ("name", "kind", "params")}
            params.update(st.get("params", {}))
            for k, v in list(params.items()):
                if isinstance(v, str) and v.startswith("@"):
                    if v[1:] not in defs:
                        raise InspectorError(f"Stage {st.get('name')} refers to {v}, which "
                                             f"the file's [defs] does not hold.")
                    if v[1:] not in sizes:
                        sizes[v[1:]] = len(json.dumps(defs[v[1:]], default=str))
                    total += sizes[v[1:]]
                    if total > MAX_EXPANDED_BYTES:
                        raise InspectorError(
                            f"The pipeline file {where}: its [defs] references expand to more "
                            f"than {MAX_EXPANDED_BYTES:,} bytes; name a table once per stage "
                            f"that needs it.")
                    params[k] = copy.deepcopy(defs[v[1:]])
            for k in list(st):
                if k not in ("name", "kind"):
                    del st[k]
            st["params"] = params
    return data


def _bounded(data: dict[str, Any], where: str) -> None:
    """At most MAX_ROUTES routes and MAX_STAGES stages, said before anything is validated,
    expanded or run."""
    routes = data.get("routes")
    if not isinstance(routes, list):
        return  # the schema's validation names it
    if len(routes) > MAX_ROUTES:
        raise InspectorError(f"The pipeline file {where} has {len(routes):,} routes; a "
                             f"pipeline has at most {MAX_ROUTES}.")
    stages = sum(len(r["stages"]) for r in routes
                 if isinstance(r, dict) and isinstance(r.get("stages"), list))
    if stages > MAX_STAGES:
        raise InspectorError(f"The pipeline file {where} has {stages:,} stages; a pipeline "
                             f"has at most {MAX_STAGES} over all its routes.")


def _shipped_text(name: str) -> str:
    """A shipped pipeline's text (a file of the package). Only a shipped name is ever read,
    never a path (`extends = "/x"` or "../x" names no shipped pipeline), so every file a
    user gives is read by the one bounded reader (load_file)."""
    if name not in accepted_names():
        raise InspectorError(f"Unknown pipeline '{name}'; the shipped ones are "
                             f"{', '.join(shipped_names())}.")
    return shipped_dir().joinpath(f"{canonical(name)}.toml").read_text(encoding="utf-8")


def _raw_shipped(name: str) -> dict[str, Any]:
    return tomllib.loads(_shipped_text(name))


def _extended(data: dict[str, Any], where: str, depth: int = 0) -> dict[str, Any]:
    """`extends = "NAME"`: start from that shipped pipeline; every top-level key given here
    replaces the base's, except [defs], whose tables merge. Only a shipped pipeline is
    extended (a path is refused before anything is read)."""
    base_name = data.pop("extends", None)
    if base_name is None:
        return data
    if not isinstance(base_name, str) or base_name not in accepted_names() or depth > 4:
        raise InspectorError(f"The pipeline file {where}: extends names one shipped pipeline "
                             f"({', '.join(shipped_names())}), not {base_name!r} (a file is "
                             f"given with --pipeline FILE).")
    base = _extended(_raw_shipped(base_name), base_name, depth + 1)
    merged = {**base, **data}
    merged["defs"] = {**base.get("defs", {}), **data.get("defs", {})}
    return merged


def parse_pipeline(text: str, where: str, fmt: str) -> PipelineSpec:
    try:
        data = tomllib.loads(text) if fmt == "toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise InspectorError(f"The pipeline file {where} is not valid {fmt.upper()}: "
                             f"{exc}.") from None
    except RecursionError:
        raise InspectorError(f"The pipeline file {where} nests too deeply to be read.") \
            from None
    if not isinstance(data, dict):
        raise InspectorError(f"The pipeline file {where} must hold a table (object).")
    if lone_surrogate(data):
        raise InspectorError(f"The pipeline file {where} holds half a character (a lone "
                             f"surrogate escape), which is not text.")
    data = _extended(data, where)
    _bounded(data, where)
    if data.get("engine") == "fixed":  # a former fixed-pipeline file: the classic shape now
        from inspector.core.engine.flow.fixed import translate

        data = translate(_expand_defs(data, where), where)
    try:
        spec = PipelineSpec.model_validate(_expand_defs(data, where))
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        raise InspectorError(f"The pipeline file {where}: {loc}: {first['msg']}.") from None
    check(spec)
    return spec


def check(spec: PipelineSpec) -> None:
    """Every stage names a registered kind and only its declared parameters, within range;
    every setting is a declared one, of its type."""
    if not spec.routes:
        raise InspectorError(f"Pipeline {spec.name} has no route.")
    check_settings(spec.name, spec.settings)
    for route in spec.routes:
        names = [s.name for s in route.stages]
        if len(set(names)) != len(names):
            raise InspectorError(f"Pipeline {spec.name}, route {route.name}: stage names must "
                                 f"be unique.")
        for st in route.stages:
            kind_of(st.kind).resolve(st.params, st.name)
    if not 1 <= spec.limit.min <= spec.limit.default <= spec.limit.max:
        raise InspectorError(f"Pipeline {spec.name}: limit needs min <= default <= max.")


def check_settings(name: str, settings: dict[str, Any]) -> None:
    """Each setting declared (SETTINGS) and of its type; a `where` a filter that can only
    narrow the scope."""
    from inspector.core.stores.safety.filters import checked_filter

    for key, value in settings.items():
        decl = SETTINGS.get(key)
        if decl is None:
            raise InspectorError(f"Pipeline {name} has the setting {key!r}, which no stage "
                                 f"reads; the settings are {', '.join(SETTINGS)}.")
        decl.check(value, f"Pipeline {name}: setting")
        if key == "where":
            checked_filter(value, "The filter (setting where)")


def load_shipped(name: str) -> PipelineSpec:
    """A shipped pipeline, parsed once per process (the files ship with the package and a
    PipelineSpec is frozen: every change makes a new one), so a question pays no parse."""
    return _shipped_spec(canonical(name))


@functools.cache
def _shipped_spec(name: str) -> PipelineSpec:
    text = _shipped_text(name)  # names the shipped ones when this is not one of them
    return parse_pipeline(text, f"{name}.toml", "toml")


def load_file(path: str) -> PipelineSpec:
    text = read_text(path, "The pipeline file", MAX_FILE_BYTES)
    fmt = "json" if path.lower().endswith(".json") else "toml"
    return parse_pipeline(text, path, fmt)


def load_stages_file(path: str) -> PipelineSpec:
    """A pipeline file the window's pipeline view runs: a pipeline of stages (a fixed-pipeline
    file is refused in one sentence)."""
    spec = load_file(path)
    if spec.engine != "stages":
        raise InspectorError(f"{path} is a fixed-pipeline file ({spec.name}); the window's "
                             f"pipeline view runs pipelines of stages (`inspector query "
                             f"--pipeline FILE` and `inspector shot` run both).")
    return spec


def apply_set(spec: PipelineSpec, assignments: dict[str, Any]) -> PipelineSpec:
    """`STAGE.PARAM=VALUE` changes that parameter in every route's stage of that name;
    `SETTING=VALUE` (no dot) a pipeline setting; `limit.default` the default limit.

    The new spec shares every part of `spec` it does not change (each is frozen and was
    validated when `spec` was made); what changes is checked as a parsed file is (`check`),
    so the answer and every refusal are the same as validating the whole spec again."""
    settings: dict[str, Any] = {}
    limit: dict[str, Any] = {}
    params: dict[str, dict[str, Any]] = {}  # stage name -> its changed parameters
    names = spec.stage_names()
    for key, value in assignments.items():
        stage_name, dot, param = key.partition(".")
        if not dot:
            if key not in spec.settings:
                raise InspectorError(f"--set {key}: pipeline {spec.name} has no setting {key}"
                                     f" (settings: {', '.join(spec.settings) or 'none'}; "
                                     f"stage parameters are STAGE.PARAM).")
            settings[key] = value
            continue
        if stage_name == "limit":
            if param not in ("default", "min", "max"):
                raise InspectorError(f"--set {key}: limit has default, min and max.")
            limit[param] = dataclasses.replace(LIMIT_BOUND, name=param).check(
                value, "--set limit")
            continue
        if stage_name not in names:
            raise InspectorError(f"--set {key}: pipeline {spec.name} has no stage "
                                 f"{stage_name}; its stages are {', '.join(names)}.")
        for route in spec.routes:
            for st in route.stages:
                if st.name == stage_name:
                    decl = kind_of(st.kind).by_name.get(param)
                    if decl is None:
                        raise InspectorError(
                            f"--set {key}: stage {stage_name} ({st.kind}) has no parameter "
                            f"{param}; it takes {', '.join(kind_of(st.kind).by_name)}.")
                    params.setdefault(stage_name, {})[param] = decl.check(value, stage_name)
    update: dict[str, Any] = {}
    if settings:
        update["settings"] = {**spec.settings, **settings}
    if limit:
        update["limit"] = spec.limit.model_copy(update=limit)
    if params:
        update["routes"] = [_with_params(route, params) for route in spec.routes]
    out = spec.model_copy(update=update)
    if settings:
        check_settings(out.name, out.settings)
    if limit and not 1 <= out.limit.min <= out.limit.default <= out.limit.max:
        raise InspectorError(f"Pipeline {out.name}: limit needs min <= default <= max.")
    for route in out.routes:
        for st in route.stages:
            if st.name in params:
                kind_of(st.kind).resolve(st.params, st.name)
    return out


def _with_params(route: RouteSpec, params: dict[str, dict[str, Any]]) -> RouteSpec:
    """The route with each named stage's parameters changed (the route itself when none of
    its stages is named)."""
    if not any(st.name in params for st in route.stages):
        return route
    return route.model_copy(update={"stages": [
        st.model_copy(update={"params": {**st.params, **params[st.name]}})
        if st.name in params else st for st in route.stages]})


# a column role (`--column ROLE=PATH`) and the stage parameter that reads it
ROLE_PARAMS = {"scope": "scope_path", "importance": "importance_path", "created": "time_path",
               "id": "id_column", "text": "text_column", "vector": "vector_column"}


def roles_read(spec: PipelineSpec) -> list[str]:
    """The column roles some stage of this pipeline reads from a column it is told."""
    return sorted(k for k, v in ROLE_PARAMS.items() if any(
        v in kind_of(st.kind).by_name for r in spec.routes for st in r.stages))


def role_assignments(spec: PipelineSpec, columns: dict[str, str]) -> dict[str, str]:
    """`--column ROLE=PATH` as the --set of every stage reading that role (a column, a struct
    field or a JSON-text key); a role no stage of this pipeline reads is refused."""
    out: dict[str, str] = {}
    if any(kind_of(st.kind).store_roles for r in spec.routes for st in r.stages):
        return out  # its stages read the store's roles, which --column sets when it opens
    for role, path in columns.items():
        param = ROLE_PARAMS.get(role)
        hits = [st.name for r in spec.routes for st in r.stages
                if param is not None and param in kind_of(st.kind).by_name]
        if not hits:
            readable = roles_read(spec)
            raise InspectorError(
                f"--column {role}={path}: pipeline {spec.name} reads its {role} where its "
                f"system does, not from a column you name"
                + (f"; its stages take {', '.join(readable)}." if readable else
                   "; it takes no --column role."))
        out.update({f"{name}.{param}": path for name in dict.fromkeys(hits)})
    return out


# the command line's pipeline options, each the parameter of every stage kind that holds it:
# option -> ((stage kind, parameter), ...); a value given as the option is converted by
# OPTION_VALUES where the parameter's type differs
_POOL = "lancedb_pool"
_WHERE = "lancedb_vector_where"
OPTION_PARAMS: dict[str, tuple[tuple[str, str], ...]] = {
    "mode": ((_POOL, "mode"),),
    "distance": ((_POOL, "distance"), (_WHERE, "distance")),
    "overfetch": ((_POOL, "overfetch"),),
    "cap": ((_POOL, "cap"),),
    "fts_k": ((_POOL, "fts_k"), ("openclaw_docs_cli_args", "fts_k")),
    "vec_k": ((_POOL, "vec_k"), ("openclaw_docs_cli_args", "vec_k")),
    "rrf_k": ((_POOL, "rrf_k"), ("openclaw_docs_request", "search_rrf_k"),
              ("openclaw_docs_cli_args", "k")),
    "blend": (("importance_blend", "weight"),),
    "default_importance": (("importance_blend", "default_importance"),),
    "min_score": (("min_score", "min"),),
    "scope_strategy": (("scope_rule", "strategy"),),
    "scope_column": (("scope_rule", "column"),),
    "scope_map": (("scope_rule", "map"),),
    "filter": (("scope_rule", "pushdown"), (_WHERE, "prefilter")),
    "nprobes": ((_POOL, "nprobes"), (_WHERE, "nprobes")),
    "min_nprobes": ((_POOL, "min_nprobes"),),
    "max_nprobes": ((_POOL, "max_nprobes"),),
    "refine_factor": ((_POOL, "refine_factor"), (_WHERE, "refine_factor")),
    "ef": ((_POOL, "ef"), (_WHERE, "ef")),
}
# options whose value is not the parameter's: --filter pushdown is a flag set true
OPTION_VALUES = {"filter": lambda v: v == "pushdown",
                 "scope_map": lambda v: {k: list(x) for k, x in dict(v).items()}}
# options that are pipeline settings
OPTION_SETTINGS = {"tie_rule": "tie_rule"}
# what else an option sets on the stage that holds it: an explicit over-fetch replaces the
# over-fetch a scoped query would derive
OPTION_ALSO = {"overfetch": {(_POOL, "scoped_overfetch"): ""}}


def held_options(spec: PipelineSpec, given: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per option this pipeline holds, the --set assignments it stands for (`--overfetch 2.5`:
    fetch.overfetch=2.5 on the stage that over-fetches; `--rrf-k K`: the plugin's searchRrfK,
    the CLI's --k); options it does not hold are left out."""
    out = {}
    for option, value in given.items():
        conv = OPTION_VALUES.get(option, lambda v: v)
        sets = {f"{st.name}.{param}": conv(value) for r in spec.routes for st in r.stages
                for kind, param in OPTION_PARAMS.get(option, ()) if st.kind == kind}
        sets.update({f"{st.name}.{param}": also for r in spec.routes for st in r.stages
                     for (kind, param), also in OPTION_ALSO.get(option, {}).items()
                     if st.kind == kind})
        if option in OPTION_SETTINGS and OPTION_SETTINGS[option] in spec.settings:
            sets[OPTION_SETTINGS[option]] = value
        if sets:
            out[option] = sets
    return out


def parse_assignment(text: str) -> tuple[str, Any]:
    """`KEY=VALUE`, the value read as JSON when it parses (numbers, true/false, lists), else
    as text."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise InspectorError(f"--set takes STAGE.PARAM=VALUE, not {text!r}.")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    if lone_surrogate(value) or lone_surrogate(key):
        raise InspectorError(f"--set {ascii(text)[:80]} holds half a character (a lone "
                             f"surrogate), which is not text.")
    return key.strip(), value
