"""The recall audit's shortcut: a probe found among the rows near it, for any pipeline whose
stages the proof covers (`plan`: one vector leg, an importance blend, a min score, the limit).

A probe is a stored row's own vector, so under a pipeline whose score is each row's own and at
most 1 (`engine.blend.own_rank`) only the rows within its outrank radius can be ranked before it.
One bounded pass (`vectorscan.near`) finds those rows for every probe with LanceDB's exact
distances; the engine ranks the probe among them. A probe the shortcut cannot prove found
(stages or a scope the proof does not cover, a NaN score, below the min score, past the
limit, more rows near it than the pool holds) runs its whole pipeline, and
`Shortcut.refused` says why. One LanceDB search checks the pass (rows near the first probe,
and their distances) before any verdict is trusted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.analysis.audit.memories import Memories
from inspector.core.engine import blend
from inspector.core.engine.params import Params, depths
from inspector.core.stores.roles import importance_values
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import near as NR


@dataclass
class Shortcut:
    """Probes found by the shortcut (memory position -> rank in the final list), and why the
    others run their whole pipeline (reason -> probes)."""

    ranks: dict[int, int] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    checked: bool = False  # LanceDB's own search was compared (a verdict read rows' distances)


def _importance(mem: Memories, column: str | None, rows: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Importance of memory rows as `pool` reads it (float64, and which rows have none)."""
    col = mem.kept.get(column) if column else None
    values = [None] * len(rows) if col is None else col.take(rows).to_pylist()
    out, missing, _ = importance_values(values)
    return out, missing


def _whole(mem: Memories) -> str | None:
    """Why the memories cannot answer for the whole table (None: they can)."""
    if mem.rowids is None:
        return "the table's vectors were not read as stored (float32, every row, row ids)"
    if len(set(mem.ids)) != len(mem.ids):
        return "ids repeat (the pool merges rows by id)"
    return None


def shortcut(store: Any, mem: Memories, positions: Sequence[int],
             params_of: Callable[[int], Params | str], jit: bool = True) -> Shortcut:
    """The probes at `positions` the shortcut proves found; `params_of(i)` is probe i's
    parameters as the proof reads them (`plan.Request.outrank`), or why its stages are not
    the ones the proof covers."""
    out = Shortcut()
    why = _whole(mem)
    table = NR.Rows(mem.vectors) if why is None else None
    if table is not None and not table.finite:
        why = "a stored vector has NaN or infinite values"
    if why is not None or table is None:
        out.refused[why or ""] += len(positions)
        return out
    todo, ps = [], []
    for i in positions:
        p = params_of(i)
        why = p if isinstance(p, str) else blend.outrank_refusal(p)
        if why is None and not isinstance(p, str):
            todo.append(i)
            ps.append(p)
        else:
            out.refused[why] += 1
    if todo:
        _rank_all(store, mem, table, np.asarray(todo, np.int64), ps, out, jit)
    return out


def _own_scores(store: Any, mem: Memories, probes: np.ndarray, ps: list[Params], jit: bool
                ) -> np.ndarray:
    """Each probe's own score, from its LanceDB distance to itself and its importance."""
    own_d = LM.pairs(mem.vectors, mem.vectors[probes], np.arange(len(probes) + 1), probes,
                     "l2", jit=jit)
    imp, miss = _importance(mem, store.roles.importance, probes)
    return np.array([blend.own_score(float(d), float(v), bool(m), p)
                     for d, v, m, p in zip(own_d, imp, miss, ps, strict=True)])


def _rank_all(store: Any, mem: Memories, table: NR.Rows, probes: np.ndarray,
              ps: list[Params], out: Shortcut, jit: bool) -> None:
    """Rank every probe among the rows within its radius (`out.ranks`), or say why not. The
    rows are found within a rounding margin past the radius: a probe alone even there is
    found at rank 1 whatever LanceDB's last bits; any other verdict read rows' distances,
    so the kernel is first checked against LanceDB's own search."""
    scores = _own_scores(store, mem, probes, ps, jit)
    radii = np.array([blend.outrank_radius(s) for s in scores])
    ok = []
    for n, (sc, p) in enumerate(zip(scores, ps, strict=True)):
        if not np.isfinite(radii[n]):
            out.refused["its own score is NaN or not positive"] += 1
        elif not sc >= p.min_score:
            out.refused["its own score is below the min score"] += 1
        else:
            ok.append(n)
    if not ok:
        return
    found = table.within(probes[ok], radii[ok] + table.slack(probes[ok]), jit)
    imp, miss = _importance(mem, store.roles.importance, np.concatenate([r for r, _ in found]))
    ranks, at, check = {}, 0, None
    assert mem.rowids is not None
    for j, (n, (rows, dist)) in enumerate(zip(ok, found, strict=True)):
        inside = dist.astype(np.float64) <= radii[n]
        part = slice(at, at + len(rows))
        at += len(rows)
        r = rows[inside]
        own = np.flatnonzero(r == probes[n])
        rank, why = blend.own_rank(blend.Near(
            dist[inside], mem.rowids[r], imp[part][inside], miss[part][inside],
            int(own[0]) if len(own) == 1 else -1), ps[n])
        if rank is None:
            out.refused[why] += 1
            continue
        ranks[int(probes[n])] = rank
        edge = abs(scores[n] - ps[n].min_score) <= 1e-6 * max(1.0, abs(ps[n].min_score))
        if check is None and (len(rows) > 1 or edge):
            check = j
    out.checked = check is not None
    if check is not None and not _agrees(store, mem, int(probes[ok[check]]), ps[ok[check]],
                                         found[check], radii[ok[check]]):
        out.refused["the shortcut's check against LanceDB's own search failed"] += len(ranks)
        return
    out.ranks.update(ranks)


def _agrees(store: Any, mem: Memories, i: int, p: Params, near: tuple[np.ndarray, np.ndarray],
            radius: float) -> bool:
    """LanceDB's own search for probe i (whose rows near it fit in the pool): the rows it
    returns within the radius are the shortcut's, at the same distances, and the kernel gives
    every returned row's distance."""
    k = depths(p).pool
    ref = (store.table.search(mem.vectors[i], vector_column_name=store.roles.vector)
           .distance_type("l2").select([store.roles.id]).with_row_id(True).limit(k + 1)
           .to_arrow())
    d = ref.column("_distance").to_numpy(zero_copy_only=False).astype(np.float32)
    ids = ref.column("_rowid").to_numpy(zero_copy_only=False).astype(np.int64)
    assert mem.rowids is not None
    by_rowid = np.argsort(mem.rowids)
    at = np.searchsorted(mem.rowids[by_rowid], ids)
    if np.any(at >= len(by_rowid)) or not np.array_equal(mem.rowids[by_rowid[np.minimum(
            at, len(by_rowid) - 1)]], ids):
        return False
    pos = by_rowid[at]
    mine = LM.pairs(mem.vectors, mem.vectors[i:i + 1], np.array([0, len(pos)]), pos, "l2")
    inside = d.astype(np.float64) <= radius
    rows, dist = near
    rows, dist = rows[dist.astype(np.float64) <= radius], dist[dist.astype(np.float64) <= radius]
    want = sorted(zip(mem.rowids[rows].tolist(), dist.tolist(), strict=True))
    got = sorted(zip(ids[inside].tolist(), d[inside].tolist(), strict=True))
    return np.array_equal(mine, d) and want == got
