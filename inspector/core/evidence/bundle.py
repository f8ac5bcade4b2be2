"""Receipts: one JSON bundle (plus a self-contained HTML page) that reopens without the store.

The bundle holds the candidate pool, so `load(path)` gives back a Pool that `derive` re-ranks
exactly as the original did: every float is written with Python's round-tripping repr, and
NaN (a row absent from a leg, or without importance) is written as null.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from inspector.core.engine.flow.question import Question
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import derive
from inspector.core.engine.pool import Leg, Pool, Query
from inspector.core.engine.scope import ScopeSpec
from inspector.core.engine.trace import Trace
from inspector.core.errors import InspectorError
from inspector.core.evidence.schema import check_bundle
from inspector.core.jsonio import dumps, plain, read_json
from inspector.core.stores.ann.indexes import IndexInfo
from inspector.core.stores.safety import outputs
from inspector.core.stores.safety.redact import redact_uri

FORMAT = "inspector-bundle"
VERSION = 1


def _floats(a: np.ndarray) -> list[float | None]:
    return [None if not math.isfinite(x) else float(x) for x in np.asarray(a, np.float64)]


def _unfloats(xs: list[Any]) -> np.ndarray:
    return np.asarray([np.nan if x is None else float(x) for x in xs], np.float64)


def _leg_json(leg: Leg | None) -> dict[str, Any] | None:
    if leg is None:
        return None
    return {"rows": leg.rows.tolist(), "values": _floats(leg.values), "depth": leg.depth,
            "exhausted": leg.exhausted, "next_value": _floats(np.array([leg.next_value]))[0]}


def _leg_from(d: dict[str, Any] | None) -> Leg | None:
    if d is None:
        return None
    return Leg(rows=np.asarray(d["rows"], np.int64), values=_unfloats(d["values"]),
               depth=int(d["depth"]), exhausted=bool(d["exhausted"]),
               next_value=float(_unfloats([d.get("next_value")])[0]))


def _array_json(a: np.ndarray) -> dict[str, Any]:
    if a.dtype == object:
        data: list[Any] = [plain(x) for x in a]
    elif a.dtype.kind == "f":
        data = _floats(a)
    else:
        data = a.tolist()
    return {"dtype": str(a.dtype), "data": data}


def _array_from(d: dict[str, Any]) -> np.ndarray:
    if d["dtype"] == "object":
        out = np.empty(len(d["data"]), dtype=object)
        out[:] = d["data"]
        return out
    if np.dtype(d["dtype"]).kind == "f":
        return _unfloats(d["data"]).astype(d["dtype"])
    return np.asarray(d["data"], dtype=d["dtype"])


def pool_to_json(pool: Pool) -> dict[str, Any]:
    """Every field of a Pool as JSON-ready values; arrays keep their dtype, so fields added
    to Pool later round-trip too."""
    out: dict[str, Any] = {}
    for f in fields(pool):
        v = getattr(pool, f.name)
        if isinstance(v, np.ndarray):
            out[f.name] = _array_json(v)
        elif isinstance(v, Leg) or f.name in ("vec_leg", "fts_leg"):
            out[f.name] = _leg_json(v)
        elif isinstance(v, (Query, IndexInfo)):
            out[f.name] = v.to_json()
        elif isinstance(v, ScopeSpec):
            out[f.name] = {"scope": v.scope, "strategy": v.strategy, "column": v.column,
                           "scope_map": {k: list(m) for k, m in v.scope_map}}
        elif f.name == "columns":
            out[f.name] = {c: [plain(x) for x in vals] for c, vals in v.items()}
        elif isinstance(v, tuple):
            out[f.name] = list(v)
        else:
            out[f.name] = v
    return out


def pool_from_json(d: dict[str, Any]) -> Pool:
    """The inverse of pool_to_json."""
    values: dict[str, Any] = {}
    for f in fields(Pool):
        if f.name not in d:
            continue  # a field newer than the bundle keeps its default
        v = d[f.name]
        if f.name in ("vec_leg", "fts_leg"):
            values[f.name] = _leg_from(v)
        elif f.name == "query":
            vec = None if v.get("vector") is None else np.asarray(v["vector"], np.float32)
            values[f.name] = Query(text=v.get("text"), vector=vec, source=v.get("source", "text"))
        elif f.name == "scope":
            values[f.name] = ScopeSpec(
                scope=v["scope"], strategy=v["strategy"], column=v.get("column"),
                scope_map=tuple(sorted((k, tuple(m)) for k, m in v.get("scope_map", {}).items())))
        elif isinstance(v, dict) and set(v) == {"dtype", "data"}:
            values[f.name] = _array_from(v)
        elif f.name == "warnings":
            values[f.name] = tuple(v)
        elif f.name == "index":
            values[f.name] = IndexInfo(**v) if v else None
        else:
            values[f.name] = v
    return Pool(**values)


@dataclass(frozen=True)
class Evidence:
    """Optional parts of a receipt, each already JSON-ready (None = not computed)."""

    metrics: dict[str, Any] | None = None
    truth: list[Any] | None = None
    safe: dict[str, Any] | None = None
    sweep: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None
    pool_map: dict[str, Any] | None = None
    judgments: dict[str, float] | None = None


def make_bundle(trace: Trace, pool: Pool | None = None,
                evidence: Evidence | None = None, label: str | None = None,
                question: Question | None = None) -> dict[str, Any]:
    """The receipt for one query: the question asked (the caller's, the one the query ran;
    store URI without credentials), the trace's own JSON (store, version, parameters,
    counters, every stage, diagnosis), the evidence, and the (deep) pool it was derived
    from; `label` names its parameters (the preset) on the receipt's first screen."""
    ev = evidence or Evidence()
    t = trace.to_json()
    asked = None
    if question is not None:
        asked = question.model_copy(update={"store": redact_uri(question.store)})
    return {
        "format": FORMAT, "version": VERSION, "label": label,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "question": None if asked is None else asked.model_dump(mode="json", by_alias=True),
        "store": t["store"], "query": t["query"], "params": trace.params.to_json(),
        "trace": t, "metrics": ev.metrics, "truth": ev.truth, "judgments": ev.judgments,
        "safe": ev.safe, "sweep": ev.sweep, "comparison": ev.comparison, "map": ev.pool_map,
        "pool": pool_to_json(pool if pool is not None else trace.pool),
    }


def save(bundle: dict[str, Any], path: str | Path, html: bool = True,
         stores: Sequence[str | None] = ()) -> list[Path]:
    """Write BUNDLE.json (and BUNDLE.html next to it) by the guarded writer (never into a
    store, never through a link; an existing bundle is replaced); returns the paths written."""
    from inspector.core.evidence.flow_receipt import receipt_paths
    from inspector.core.evidence.html import render_html

    paths = receipt_paths(path, html)
    guard = [*stores, (bundle.get("store") or {}).get("uri")]
    for p in paths:
        outputs.check_target(p, guard, force=True)  # both refused before either is written
    text = dumps(bundle)
    out = [outputs.write_file(paths[0], text, guard, force=True, make_folder=True)]
    if html:
        out.append(outputs.write_file(paths[1], render_html(bundle, text), guard, force=True))
    return out


class Loaded(NamedTuple):
    """What a reopened bundle gives back: the pool, the parameters, and the whole document."""

    pool: Pool
    params: Params
    data: dict[str, Any]

    @property
    def question(self) -> Question | None:
        """The question the receipt's query asked; None for a bundle written before
        receipts carried it (its parameters and query input are all it has)."""
        asked = self.data.get("question")
        return None if asked is None else Question.model_validate(asked)


def load(path: str | Path) -> Loaded:
    """Reopen a bundle offline; `derive(loaded.pool, p)` re-ranks without the store."""
    p = Path(path)
    if p.suffix.lower() == ".html":
        p = p.with_suffix(".json")
    data = read_json(p, "Bundle")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InspectorError(f"{p} is not an inspector bundle.")
    if data.get("version") != VERSION:
        raise InspectorError(f"Bundle {p} has version {data.get('version')!r}; this inspector "
                             f"reads version {VERSION}.")
    check_bundle(data, p)
    try:
        pool = pool_from_json(data["pool"])
        params = Params.from_json(data["params"])
    except InspectorError as exc:
        why = " ".join(str(exc).split())  # a value from the file may hold line breaks
        raise InspectorError(f"Bundle {p} has parameters this inspector refuses: {why}") \
            from None
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise InspectorError(f"Bundle {p} has a damaged candidate pool ({exc}).") from None
    try:  # the proof that the window can show it: the receipt's own trace, derived again
        derive(pool, params, probe=pool)
    except InspectorError as exc:
        raise InspectorError(f"Bundle {p} cannot be re-ranked: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a shape the schema check let through
        raise InspectorError(f"Bundle {p} is damaged: its pool cannot be re-ranked "
                             f"({type(exc).__name__}).") from None
    return Loaded(pool=pool, params=params, data=data)
