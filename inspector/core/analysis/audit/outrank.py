"""The recall audit's shortcut: a probe found among the rows near it, for any pipeline whose
stages the proof covers (`plan`: one vector leg, an importance blend, a min score, the limit).

A probe is a stored row's own vector, so under a pipeline whose score is each row's own and at
most 1 (`engine.blend.own_rank`) only the rows within its outrank radius can be ranked before it.
One bounded pass (`vectorscan.near`) finds those rows for every probe with LanceDB's exact
distances; the engine ranks the probe among them. Under an active scope the rows are those
the pool can hold (LanceDB's own pushed-down filter picks them, `_Scopes`; every row under a
post-filter), all of which must fit in the pool, and then those the scope filter keeps (the
engine's own rule on the memories' columns); the probe's own row must be among them. A probe
the shortcut cannot prove found (stages the proof does not cover, its own row out of its
scope, a NaN score, below the min score, past the limit, more rows near it than the pool
holds) runs its whole pipeline, and `Shortcut.refused` says why. One LanceDB search (in the
checked probe's scope) checks the pass (rows near the probe, and their distances) before any
verdict is trusted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.analysis.audit.memories import Memories
from inspector.core.engine import blend
from inspector.core.engine import scope as scopes
from inspector.core.engine.params import Params, depths
from inspector.core.errors import InspectorError
from inspector.core.stores.roles import importance_values
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import near as NR
from inspector.core.stores.vectorscan import scan as S


@dataclass
class Shortcut:
    """Probes found by the shortcut (memory position -> rank in the final list), and why the
    others run their whole pipeline (reason -> probes)."""

    ranks: dict[int, int] = field(default_factory=dict)
    refused: Counter[str] = field(default_factory=Counter)
    checked: bool = False  # LanceDB's own search was compared (a verdict read rows' distances)
    # probes proved dropped by the min score (memory position -> its own score there): its
    # row is fetched (fewer rows ahead of it than the pool holds), the scope filter keeps it,
    # and its own score is below the min score
    below: dict[int, float] = field(default_factory=dict)


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
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each probe's own score, from its LanceDB distance to itself and its importance, and
    that distance."""
    own_d = LM.pairs(mem.vectors, mem.vectors[probes], np.arange(len(probes) + 1), probes,
                     "l2", jit=jit)
    imp, miss = _importance(mem, store.roles.importance, probes)
    return np.array([blend.own_score(float(d), float(v), bool(m), p)
                     for d, v, m, p in zip(own_d, imp, miss, ps, strict=True)]), own_d


def _rank_all(store: Any, mem: Memories, table: NR.Rows, probes: np.ndarray,
              ps: list[Params], out: Shortcut, jit: bool) -> None:
    """Rank every probe among the rows within its radius (`out.ranks`), or say why not. The
    rows are found within a rounding margin past the radius: a probe alone even there is
    found at rank 1 whatever LanceDB's last bits; any other verdict read rows' distances,
    so the kernel is first checked against LanceDB's own search."""
    scores, own_d = _own_scores(store, mem, probes, ps, jit)
    radii = np.array([blend.outrank_radius(s) for s in scores])
    ok, low = [], []
    for n, (sc, p) in enumerate(zip(scores, ps, strict=True)):
        if not np.isfinite(radii[n]):
            out.refused["its own score is NaN or not positive"] += 1
        elif not sc >= p.min_score:
            low.append(n)
        else:
            ok.append(n)
    if not ok and not low:
        return
    assert mem.rowids is not None
    scoped = _Scopes(store, mem)
    below, check = _below(mem, table, probes, ps, scores, own_d, low, scoped, out, jit)
    ranks: dict[int, int] = {}
    found = table.within(probes[ok], radii[ok] + table.slack(probes[ok]), jit) if ok else []
    imp, miss = _importance(mem, store.roles.importance,
                            np.concatenate([r for r, _ in found] or [np.empty(0, np.int64)]))
    at = 0
    for n, (rows, dist) in zip(ok, found, strict=True):
        inside = dist.astype(np.float64) <= radii[n]
        part = slice(at, at + len(rows))
        at += len(rows)
        pooled, where, why = scoped.restrict(ps[n], rows, inside, int(probes[n]))
        if why:
            out.refused[why] += 1
            continue
        inside &= pooled
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
            held = scoped.held(ps[n], rows)  # the rows its pool can hold: LanceDB's search's
            check = (int(probes[n]), ps[n], (rows[held], dist[held]), radii[n], where)
    if below and check is None:  # their scores read distances no check has compared
        out.refused["no probe below the min score could be checked against LanceDB"] += \
            len(below)
        below = {}
    out.checked = check is not None
    if check is not None and not _agrees(store, mem, *check):
        out.refused["the shortcut's check against LanceDB's own search failed"] += \
            len(ranks) + len(below)
        return
    out.ranks.update(ranks)
    out.below.update(below)


def _below(mem: Memories, table: NR.Rows, probes: np.ndarray, ps: list[Params],
           scores: np.ndarray, own_d: np.ndarray, low: list[int], scoped: _Scopes,
           out: Shortcut, jit: bool) -> tuple[dict[int, float], Any]:
    """The probes (`low`: positions in `probes` whose own score is below their min score)
    proved dropped there, with their own score, and the check against LanceDB a verdict
    needs (None: none). Its own score is the run's: its row is fetched when fewer rows than
    the pool holds come before it in the pool's order (distance, then row id; every such row
    is within its own distance, which `within` finds them all inside), the scope filter keeps
    it, and the stages between (an importance blend) drop no row. The score is read off its
    own distance's bits, so LanceDB's own search is compared as for a rank (on a probe whose
    rows within its own distance fit in the pool, so LanceDB returns them all)."""
    below: dict[int, float] = {}
    check = None
    if not low:
        return below, check
    assert mem.rowids is not None
    found = table.within(probes[low], own_d[low] + table.slack(probes[low]), jit)
    for n, (rows, dist) in zip(low, found, strict=True):
        own = int(probes[n])
        mine = np.flatnonzero(rows == own)
        if len(mine) != 1:
            out.refused["its own row is not within its radius"] += 1
            continue
        d0 = dist[mine[0]]
        inside = dist <= d0
        _, where, why = scoped.restrict(ps[n], rows, inside, own)
        if why:
            out.refused[why] += 1
            continue
        held = scoped.held(ps[n], rows)
        rid = mem.rowids[rows]
        ahead = held & ((dist < d0) | ((dist == d0) & (rid < rid[mine[0]])))
        if int(np.count_nonzero(ahead)) >= depths(ps[n]).pool:
            out.refused["rows before its own fill the pool"] += 1
            continue
        below[own] = float(scores[n])
        if check is None and int(np.count_nonzero(inside & held)) <= depths(ps[n]).pool:
            # a probe whose rows within its own distance LanceDB's search returns whole
            check = (own, ps[n], (rows[held], dist[held]), float(d0), where)
    return below, check


class _Scopes:
    """The rows near a probe its active scope lets it rank among: those the pool can hold
    (under a pushed-down scope LanceDB's own filter decides, one read of the row ids it keeps
    per predicate; under a post-filter every row) and, of them, those the scope filter keeps
    (the engine's rule, `scope.evaluate`, on the memories' columns as the pool reads them)."""

    def __init__(self, store: Any, mem: Memories) -> None:
        self.store, self.mem = store, mem
        self._allowed: dict[str, np.ndarray] = {}
        self._specs: dict[Any, tuple[scopes.ScopeSpec, Any]] = {}
        self._names = set(store.schema.names)
        self._values: dict[str, list[Any]] = {}  # a scope column's values as the pool reads
        # them (`to_pylist`), read once: each probe looks up its few rows near it

    def _rule(self, p: Params) -> tuple[scopes.ScopeSpec, Any]:
        """The probe's scope and the predicate its pool is searched with (None: none)."""
        key = (p.scope, p.scope_strategy, p.scope_map, p.scope_column, p.filter)
        got = self._specs.get(key)
        if got is None:
            spec = p.scope_spec()
            push = scopes.pushdown(spec, self.store.roles, self.store.schema) \
                if spec.active and p.filter == "pushdown" else None
            got = self._specs[key] = (spec, push if push is not None and push.expr is not None
                                      else None)
        return got

    def _column(self, c: str) -> list[Any]:
        got = self._values.get(c)
        if got is None:
            got = self._values[c] = self.mem.kept[c].to_pylist()
        return got

    def held(self, p: Params, rows: np.ndarray) -> np.ndarray:
        """Which of the memory rows `rows` the pool can hold (bool)."""
        push = self._rule(p)[1]
        if push is None:
            return np.ones(len(rows), bool)
        allowed = self._allowed.get(push.sql)
        if allowed is None:  # the predicate's own column is the least LanceDB reads with it
            small = push.column if push.column in self.store.schema.names else \
                self.store.roles.id
            allowed = self._allowed[push.sql] = S.allowed_rowids(self.store.table, push.expr,
                                                                 small)
        assert self.mem.rowids is not None
        ids = self.mem.rowids[rows]
        at = np.minimum(np.searchsorted(allowed, ids), max(len(allowed) - 1, 0))
        return allowed[at] == ids if len(allowed) else np.zeros(len(rows), bool)

    def restrict(self, p: Params, rows: np.ndarray, inside: np.ndarray, own: int
                 ) -> tuple[np.ndarray, Any, str]:
        """Which rows of `rows` the probe (memory row `own`) ranks among, the pushed-down
        predicate (None: none), and why the shortcut cannot answer ('' when it can)."""
        spec, push = self._rule(p)
        if not spec.active:
            return np.ones(len(rows), bool), None, ""
        try:
            cols = scopes.scope_columns(self.store.roles, spec)
        except InspectorError as exc:  # the run says it again, in its own words
            return inside, None, str(exc).rstrip(".")
        missing = [c for c in cols if c not in self.mem.kept or c not in self._names]
        if missing:
            return inside, None, (f"the scope's columns ({', '.join(missing)}) are not "
                                  "read as the pool reads them")
        held = self.held(p, rows)
        if int(np.count_nonzero(inside & held)) > depths(p).pool:
            return inside, None, "more rows within the outrank radius than the pool holds"
        values = {c: list(map(self._column(c).__getitem__, rows.tolist())) for c in cols}
        kept = np.asarray(scopes.evaluate(spec, self.store.roles, values, len(rows))[0], bool)
        mine = rows == own
        if not np.any(mine & held & kept):
            return inside, None, "its own row is outside its scope"
        return held & kept, None if push is None else push.expr, ""


def _agrees(store: Any, mem: Memories, i: int, p: Params, near: tuple[np.ndarray, np.ndarray],
            radius: float, where: Any = None) -> bool:
    """LanceDB's own search for probe i (whose rows near it fit in the pool; `where` its
    pushed-down scope): the rows it returns within the radius are the shortcut's (`near`, the
    rows the pool can hold), at the same distances, and the kernel gives every returned row's
    distance."""
    k = depths(p).pool
    q = (store.table.search(mem.vectors[i], vector_column_name=store.roles.vector)
         .distance_type("l2").select([store.roles.id]).with_row_id(True).limit(k + 1))
    ref = (q if where is None else q.where(where, prefilter=True)).to_arrow()
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
