"""Turn what a user typed (text, a vector, a row id, a preset and overrides) into engine input."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from inspector.core.engine.params import Params, freeze_map
from inspector.core.engine.pool import Query
from inspector.core.engine.presets import Preset, get_preset
from inspector.core.engine.scope import is_global, load_scope_map, parse_scope_map
from inspector.core.errors import InspectorError
from inspector.core.jsonio import read_text
from inspector.core.stores.embed import embedder_for_store
from inspector.core.stores.store import Store

MAX_VECTOR_BYTES = 64 * 1024 * 1024  # a --vector @FILE larger than this is refused unread
MAX_DIM = 65_536
MAX_DEPTH = 1_000_000  # largest candidate depth (limit x over-fetch, a leg's k) ever fetched
_F32_MAX = float(np.finfo(np.float32).max)


def _vector_text(spec: str) -> str:
    """The JSON text of a --vector argument: itself, or the content of @FILE (a regular file
    of at most MAX_VECTOR_BYTES, UTF-8; see jsonio.read_input)."""
    if not spec.startswith("@"):
        return spec
    return read_text(spec[1:], "The vector file", MAX_VECTOR_BYTES)


def parse_vector(spec: str) -> np.ndarray:
    """A JSON array of numbers, or @FILE holding one; every value must fit a float32."""
    text = _vector_text(spec)
    if len(text) > MAX_VECTOR_BYTES:
        raise InspectorError("The query vector is too long.")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise InspectorError("The query vector must be a JSON array of numbers, "
                             "e.g. [0.1, 0.2].") from None
    if not isinstance(data, list) or not data or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in data):
        raise InspectorError("The query vector must be a non-empty JSON array of numbers.")
    if len(data) > MAX_DIM:
        raise InspectorError(f"The query vector has {len(data):,} values; at most {MAX_DIM:,}.")
    try:
        vec = np.asarray(data, np.float64)
    except OverflowError:  # an integer beyond float64
        raise InspectorError("The query vector holds a number too large for a float.") from None
    if not np.all(np.isfinite(vec)):
        raise InspectorError("The query vector contains NaN or infinite values.")
    if np.any(np.abs(vec) > _F32_MAX):
        raise InspectorError("The query vector holds a value beyond float32's range "
                             f"(about {_F32_MAX:.3g}).")
    return vec.astype(np.float32)


def check_bounds(p: Params) -> Params:
    """Refuse parameters that would ask LanceDB for more than MAX_DEPTH candidates, before
    any allocation (e.g. --overfetch 1e308 --cap 0)."""
    for what, k in (("--limit", p.limit), ("--fts-k", p.fts_k), ("--vec-k", p.vec_k),
                    ("--cap", p.cap)):
        if k > MAX_DEPTH:
            raise InspectorError(f"{what} {k:,} is above the largest depth the inspector "
                                 f"fetches ({MAX_DEPTH:,}).")
    asked = p.limit * p.overfetch
    if not p.cap and asked > MAX_DEPTH:
        raise InspectorError(f"Over-fetch {p.overfetch:g} x limit {p.limit} asks for more than "
                             f"{MAX_DEPTH:,} candidates; lower --overfetch or set a --cap.")
    return p


def build_query(store: Store, mode: str, text: str | None = None,
                vector: np.ndarray | None = None, vector_of: str | None = None,
                embedder: str | None = None) -> Query:
    """A query for this store: an explicit vector, a stored row's vector, or embedded text."""
    if vector is not None:
        vec = np.asarray(vector, np.float32).ravel()
        if vec.shape[0] != store.dim:
            raise InspectorError(f"The query vector has {vec.shape[0]} dimensions but the "
                                 f"store's vectors have {store.dim}.")
        return Query(text=text, vector=vec, source="vector")
    if vector_of is not None:
        return Query(text=text, vector=store.vector_of(vector_of), source=f"example:{vector_of}")
    if not text or not text.strip():
        raise InspectorError("Give a query: --text TEXT, --vector JSON or --vector-of ID.")
    if mode == "fts":
        return Query(text=text, source="text")
    emb = embedder_for_store(store.embedder, embedder, store.dim)
    vec = emb.embed([text])[0]
    if not np.any(vec):
        raise InspectorError(f"The embedder '{emb.name}' found no words it knows in the query "
                             "text, so it has nothing to search by.")
    return Query(text=text, vector=vec, source=f"text:{emb.name}")


def build_params(preset: str | Preset | None = None, scope_map_file: str | None = None,
                 **given: Any) -> Params:
    """A preset (for the given limit and scope) with every explicitly given value on top,
    checked against the depth bounds."""
    given = {k: v for k, v in given.items() if v is not None}
    if scope_map_file:
        given["scope_map"] = freeze_map(load_scope_map(scope_map_file))
    if not preset:
        return check_bounds(Params(**given))
    limit = given.pop("limit", 10)
    scope = given.pop("scope", None)
    chosen = preset if isinstance(preset, Preset) else get_preset(preset)
    if "overfetch" not in given and isinstance(limit, int) and not isinstance(limit, bool) \
            and limit >= 1:
        own = chosen.build(limit, scope is not None and not is_global(scope)).get("overfetch", 1)
        if own < 1:
            # The preset's pool (e.g. min(50, limit*5)) is smaller than a large limit: the pool
            # stays at the preset's cap, with the legs widened to it as over-fetch widens them.
            given["overfetch"] = math.nextafter(1.0, 2.0)
    return check_bounds(chosen.params(limit=limit, scope=scope, **given))


def parse_changes(pairs: Iterable[str]) -> dict[str, Any]:
    """KEY=VALUE parameter changes (`overfetch=3`, `filter=pushdown`): a value is JSON when it
    parses as JSON, else the text itself; dashes in keys read as underscores."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise InspectorError(f"Parameter changes are KEY=VALUE, not {pair!r}.")
        try:
            out[key] = json.loads(raw.strip())
        except ValueError:
            out[key] = raw.strip()
    return out


def params_with_changes(current: Params, preset: str | None, changes: dict[str, Any]) -> Params:
    """A preset (keeping current's limit and scope) or current itself, with changes on top."""
    if isinstance(changes.get("scope_map"), dict):
        changes = {**changes, "scope_map": checked_map(changes["scope_map"], "scope_map")}
    try:
        if preset:
            return build_params(preset=preset, limit=current.limit, scope=current.scope,
                                **changes)
        return check_bounds(current.with_(**changes))
    except TypeError as exc:
        raise InspectorError(f"Unknown parameter in the changes ({exc}).") from None


def checked_map(data: Any, what: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A scope map given inline ({scope: [prefix, ...]}), checked and frozen."""
    return freeze_map(parse_scope_map(data, what))


def fixed_preset_of(preset: str | None, pipeline_file: str | None,
                    sets: dict[str, Any]) -> str | Preset | None:
    """The fixed preset a question names: the name, or, for a pipeline file or --set, the
    Preset compiled from the fixed pipeline file with the assignments applied."""
    from inspector.core.engine.flow.spec import apply_set, load_file, load_shipped
    from inspector.core.engine.presets import from_spec

    if pipeline_file is None and not sets:
        return preset
    if pipeline_file is not None:
        if preset is not None:
            raise InspectorError("Give a preset or a pipeline file (--preset, --pipeline), "
                                 "not both.")
        spec = load_file(pipeline_file)
    elif preset is None:
        raise InspectorError("--set (set=) changes a pipeline: name a preset or a pipeline "
                             "file (--preset NAME, --pipeline FILE).")
    else:
        spec = load_shipped(preset)
    return from_spec(apply_set(spec, sets) if sets else spec)


def question_given(q: Any) -> dict[str, Any]:
    """The explicitly given parameters of a question (flow.question.Question) as
    build_params takes them: its own parameters, its one scope and its limit."""
    given = dict(q.params)
    unknown = sorted(set(given) - {f.name for f in dataclasses.fields(Params)})
    if unknown:
        raise InspectorError(f"The question's params name no parameter of the fixed "
                             f"pipeline: {', '.join(unknown)}.")
    if "scope_map" in given:
        given["scope_map"] = checked_map(given["scope_map"], "question's scope_map")
    if q.scopes is not None:
        if len(q.scopes) != 1:
            raise InspectorError("The fixed pipeline takes one scope; pipelines of stages "
                                 "take several.")
        given["scope"] = q.scopes[0]
    if q.limit is not None:
        given["limit"] = q.limit
    return given


def question_params(q: Any) -> Params:
    """The fixed pipeline's parameters a question (flow.question.Question) asks: its preset
    or fixed pipeline file for its limit and scope, its explicit parameters on top."""
    return build_params(preset=fixed_preset_of(q.preset, q.pipeline_file, dict(q.set)),
                        **question_given(q))


def given_question(store: str, preset: str | None, given: dict[str, Any],
                   **asked: Any) -> Any:
    """The question model for a fixed preset and explicitly given parameters, as the window
    keeps them (the inverse of question_given): scope and limit become the question's own,
    a scope map is held inline, the store URI loses its credentials; `asked` is the rest of
    the question (text, vector, vector_of, embedder, expect, table)."""
    from inspector.core.engine.flow.question import make_question
    from inspector.core.stores.safety.redact import redact_uri

    params = {k: v.item() if isinstance(v, np.generic) else v
              for k, v in given.items() if v is not None}
    scope, limit = params.pop("scope", None), params.pop("limit", None)
    if "scope_map" in params:
        smap = params["scope_map"]
        params["scope_map"] = {str(k): list(v) for k, v in
                               (smap.items() if isinstance(smap, dict) else smap)}
    return make_question(store=redact_uri(store), preset=preset, params=params,
                         scopes=None if scope is None else [scope], limit=limit, **asked)


def question_query(store: Store, q: Any, mode: str) -> Query:
    """The query a question asks of the fixed pipeline (see build_query)."""
    vector = None if q.vector is None else np.asarray(q.vector, np.float64)
    return build_query(store, mode, text=q.text, vector=vector, vector_of=q.vector_of,
                       embedder=q.embedder)
