"""The index sweep: a sweep whose axes are the index knobs that the pipeline's vector legs
pass to LanceDB (IVF: nprobes x refine_factor; HNSW: ef x refine_factor), for any pipeline
on a table with an ANN index. Each cell is its own search (an approximate search at one
setting is no prefix of another); its `index_recall` is measured against the same cell
searched exactly (the index bypassed), and its scoped recall against the truth, which on an
indexed table is the exact search too (`truth.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspector.core.analysis.grid import INDEX_LADDER, Axis, declared, ladder
from inspector.core.analysis.sweep import Case, SweepResult, run_sweep
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.engine.flow.spec import PipelineSpec
from inspector.core.errors import InspectorError

__all__ = ["INDEX_LADDER", "index_axes", "run_index_sweep"]


def index_axes(spec: PipelineSpec, index: Any) -> list[Axis]:
    """The index knobs of the pipeline's vector legs that the table's index reads, each on
    its default ladder (INDEX_LADDER, 0 being LanceDB's own default)."""
    if index is None:
        raise InspectorError("This table has no vector index: index knobs change nothing on "
                             "a flat search.")
    kind = str(getattr(index, "type", "") or "").upper()
    wanted = ("ef", "refine_factor") if "HNSW" in kind else ("nprobes", "refine_factor")
    decls = declared(spec)
    out = []
    for name in wanted:
        hit = next(((k, d, v) for k, (d, v) in decls.items()
                    if d.effect == "index" and d.name == name), None)
        if hit is not None:
            key, decl, value = hit
            out.append(Axis(key, ladder(decl, value), decl.effect, decl.live, value))
    if not out:
        raise InspectorError(f"Pipeline {spec.name} passes no index knob of a "
                             f"{kind or 'vector'} index to LanceDB: its search is LanceDB's "
                             f"default one.")
    return out


def run_index_sweep(store: Any, question: Question, cases: Sequence[Case],
                    axes: Sequence[Axis] | None = None, k: int | None = None,
                    **more: Any) -> SweepResult:
    """The sweep over the index knobs (by default every knob the table's index reads)."""
    spec, _, _ = resolve(question)
    axes = list(axes) if axes else index_axes(spec, getattr(store, "vector_index", None))
    return run_sweep(store, question, cases, axes, k, **more)
