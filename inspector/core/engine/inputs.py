"""Turn what a user typed (text, a vector, a row id, a preset and overrides) into engine input."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.engine.params import Params, freeze_map
from inspector.core.engine.pool import Query
from inspector.core.engine.presets import get_preset
from inspector.core.engine.scope import load_scope_map
from inspector.core.errors import InspectorError
from inspector.core.stores.embed import embedder_for_store
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class QuerySpec:
    """What to ask before a store is open: a preset, the explicitly given parameters, and the
    query input. The CLI builds one from its arguments; the window's `shot` runs it."""

    preset: str | None = None
    given: dict[str, Any] = field(default_factory=dict)
    text: str | None = None
    vector: tuple[float, ...] | None = None
    vector_of: str | None = None
    embedder: str | None = None
    expect: tuple[str, ...] = ()

    def params(self) -> Params:
        return build_params(preset=self.preset, **self.given)


def parse_vector(spec: str) -> np.ndarray:
    """A JSON array of numbers, or @FILE holding one."""
    text = spec
    if spec.startswith("@"):
        try:
            text = Path(spec[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise InspectorError(f"Cannot read the vector file {spec[1:]}: {exc.strerror}.") \
                from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InspectorError("The query vector must be a JSON array of numbers, "
                             "e.g. [0.1, 0.2].") from exc
    if not isinstance(data, list) or not data or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in data):
        raise InspectorError("The query vector must be a non-empty JSON array of numbers.")
    vec = np.asarray(data, np.float64)
    if not np.all(np.isfinite(vec)):
        raise InspectorError("The query vector contains NaN or infinite values.")
    return vec.astype(np.float32)


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


def build_params(preset: str | None = None, scope_map_file: str | None = None,
                 **given: Any) -> Params:
    """A preset (for the given limit and scope) with every explicitly given value on top."""
    given = {k: v for k, v in given.items() if v is not None}
    if scope_map_file:
        given["scope_map"] = freeze_map(load_scope_map(scope_map_file))
    if preset:
        limit = given.pop("limit", 10)
        return get_preset(preset).params(limit=limit, scope=given.pop("scope", None), **given)
    return Params(**given)


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
    try:
        if preset:
            return build_params(preset=preset, limit=current.limit, scope=current.scope,
                                **changes)
        return current.with_(**changes)
    except TypeError as exc:
        raise InspectorError(f"Unknown parameter in the changes ({exc}).") from None
