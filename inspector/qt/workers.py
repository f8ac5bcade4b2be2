"""Background jobs: plain functions that touch LanceDB (tested without a GUI), and a helper
that runs one on the global thread pool and hands its answer back to the GUI thread.

Every request carries the generation number it was started with; the view-model drops any
answer whose generation is no longer current, so a slow old query never overwrites a new one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from superqt.utils import create_worker

from inspector.core.engine.params import Params
from inspector.core.engine.pool import Pool, Query
from inspector.core.errors import InspectorError
from inspector.core.stores.opening import open_for_browsing
from inspector.core.stores.store import Store

MAX_OVERFETCH = 20.0  # the over-fetch slider's top: one fetch serves every slider position


@dataclass(frozen=True)
class Lane:
    """One filter placement's cached pool, plus the deep probe `run` would use for a miss."""

    placement: str
    pool: Pool
    probe: Pool | None

    def probe_for(self, p: Params) -> Pool | None:
        """The probe exactly when pipeline.run would use one for these parameters."""
        from inspector.core.engine.pipeline import probe_applies

        return probe_applies(self.probe, p)


@dataclass(frozen=True)
class Fetched:
    query: Query
    lanes: tuple[Lane, ...]


@dataclass(frozen=True)
class QueryRequest:
    params: Params
    placements: tuple[str, ...]
    text: str | None = None
    vector_of: str | None = None
    embedder: str | None = None  # None: the one the store records


open_job = open_for_browsing


def query_job(store: Store, req: QueryRequest) -> Fetched:
    """Build the query once, then fetch one pool per placement deep enough for every slider.

    Text that is a JSON array is taken as the query vector itself."""
    from inspector.core.engine.inputs import build_query, parse_vector
    from inspector.core.engine.pipeline import derive, fetch_for, fetch_probe, probe_applies

    text = (req.text or "").strip()
    if text.startswith("[") and req.vector_of is None:
        query = build_query(store, req.params.mode, vector=parse_vector(text))
    else:
        query = build_query(store, req.params.mode, text=text or None, vector_of=req.vector_of,
                            embedder=req.embedder)
    lanes = []
    for placement in req.placements:
        p = req.params.with_(filter=placement)
        pool = fetch_for(store, query, p, max_overfetch=MAX_OVERFETCH)
        probe = fetch_probe(store, query, p, pool)  # as deep as every slider position needs
        if probe is not None and p.mode == "hybrid":
            # a hybrid miss's depth hint scans depths once per probe (then cached): do it here,
            # off the GUI thread, rather than on the first slider tick
            derive(pool, p, probe=probe_applies(probe, p))
        lanes.append(Lane(placement=placement, pool=pool, probe=probe))
    return Fetched(query=query, lanes=tuple(lanes))


def expect_job(store: Store, query: Query, traces: Sequence[Any], ids: Sequence[str],
               cache: dict[int, Pool]) -> tuple[tuple[Any, ...], dict[int, Pool]]:
    """Where each expected id is dropped, per lane; the exhaustive pools are cached by lane."""
    from inspector.core.engine.expect import analyse, exhaustive_pool

    out, pools = [], dict(cache)
    for n, trace in enumerate(traces):
        if n not in pools:
            pools[n] = exhaustive_pool(store, query, trace.params)
        out.append(analyse(store, query, trace, list(ids), pool=pools[n]))
    return tuple(out), pools


@dataclass(frozen=True)
class Answer:
    """What a job produced (or the one-sentence error it raised), tagged with its generation."""

    generation: int
    value: Any = None
    error: str | None = None


def _guarded(fn: Callable[..., Any], generation: int, *args: Any) -> Answer:
    try:
        return Answer(generation, fn(*args))
    except InspectorError as exc:
        return Answer(generation, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - the window must survive anything a store throws
        return Answer(generation, error=f"Unexpected {type(exc).__name__}: {exc}")


def start(fn: Callable[..., Any], generation: int, *args: Any,
          on_answer: Callable[[Answer], None]) -> Any:
    """Run fn(*args) on the global thread pool; on_answer gets an Answer on the GUI thread."""
    worker = create_worker(_guarded, fn, generation, *args, _start_thread=False,
                           _ignore_errors=True)
    worker.returned.connect(on_answer)
    worker.start()
    return worker
