"""The view-model's background work: plain functions over the core's LiveSession, run through
the window's jobs (qt.jobs) and testable without a GUI."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.engine.expect import Expectation
from inspector.core.engine.inputs import build_query, parse_vector
from inspector.core.engine.live import LiveSession
from inspector.core.engine.params import Params
from inspector.core.engine.trace import Trace
from inspector.core.stores.store import Store


@dataclass(frozen=True)
class QueryRequest:
    """What the query job needs: the parameters, the placements shown, and the query input."""

    params: Params
    placements: tuple[str, ...]
    text: str | None = None
    vector_of: str | None = None
    embedder: str | None = None  # None: the one the store records


def query_job(store: Store, req: QueryRequest, cancelled: Any = None) -> LiveSession:
    """Build the query once, then a live session deep enough for every slider position.
    Text that is a JSON array is taken as the query vector itself."""
    text = (req.text or "").strip()
    if text.startswith("[") and req.vector_of is None:
        query = build_query(store, req.params.mode, vector=parse_vector(text))
    else:
        query = build_query(store, req.params.mode, text=text or None, vector_of=req.vector_of,
                            embedder=req.embedder)
    return LiveSession.fetch(store, query, req.params, req.placements, cancelled=cancelled)


def refetch_job(session: LiveSession, params: Params, placements: tuple[str, ...],
                cancelled: Any = None) -> LiveSession:
    return session.refetched(params, placements, cancelled=cancelled)


def expect_job(session: LiveSession, traces: tuple[Trace, ...], ids: list[str],
               cancelled: Any = None) -> tuple[tuple[Expectation, ...], ...]:
    return session.expectations(traces, ids, cancelled=cancelled)
