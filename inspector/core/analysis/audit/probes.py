"""One prober for every pipeline: each probe is one ordinary run of the pipeline (`flow.runs.
Runs`, what `inspector query --vector-of ID --text TEXT` runs), its memory's fate read off the
trace (`flow.expect.where_dropped`) in the audit's vocabulary.

Where it was earned the speed is kept, without changing a run: on a flat table the pool
source's fetch stage (`lancedb_pool`) takes its vector leg from one batched scan (the pool
source's cache is warmed with the pool the stage would fetch, `plan.Planner`), and a recall
audit's probes the outrank proof covers (`plan`, `outrank`) are found without a run. The
fixes of the probes that get them (`fix`, `diagnosis`) are the engine's expected-row search
and diagnosis, each run, over one deep pool per probe from one more scan instead of a deep
search each. On an indexed table a probe whose memory the exact run beside returns is
`lost_to_index` (`flow.facet`). `method()` says what served each probe, and why not more.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core import batch_gc
from inspector.core.analysis.audit.memories import Memories, read_memories
from inspector.core.analysis.audit.outrank import Shortcut, shortcut
from inspector.core.analysis.audit.plan import Planner, Request
from inspector.core.engine import pools

PER_PASS = 1024  # probes a scan pass: the bench's 1,000 in one pass, one self-check
# the codes of a memory cut by other rows (past a limit or window, or never fetched): where a
# returned near-duplicate may explain it, and where the rows a scope filter removed crowded it
CUT_CODES = ("past_limit", "outside_window", "not_fetched")


def _own_searches(method: Callable[..., Any]) -> Callable[..., Any]:
    """The prober's method, run with every vector leg LanceDB's own search when its scan is
    off (`pools.searched_only`: no deep leg scanned either)."""
    @functools.wraps(method)
    def run(self: Prober, *a: Any, **k: Any) -> Any:
        if self.scan:
            return method(self, *a, **k)
        with pools.searched_only():
            return method(self, *a, **k)

    return run


@dataclass(frozen=True)
class Answer:
    """What one probe returned, and where its own memory fell (stage None: returned)."""

    ids: tuple[str, ...]  # returned, in the system's order
    limit: int
    stage: str | None
    code: str  # returned, lost_to_index, or the engine's drop code
    detail: dict[str, Any]
    crowded: dict[str, int] = field(default_factory=dict)  # rows a scope filter removed,
    # by their own scope
    own_only: bool = False  # only the memory's own fate is known (the outrank shortcut of a
    # recall audit): `ids` is empty
    runs: Any = field(default=None, compare=False, repr=False)  # the probe's Runs (fixes)
    facet: Any = field(default=None, compare=False, repr=False)  # the index facet, if run


@dataclass(frozen=True)
class _Case:
    """A probe as `pools.vector_legs` takes a query, and the purpose of its leg's depth."""

    query: Any
    p: Any
    purpose: str = "params"

    def params(self, base: Any) -> Any:
        return self.p


@dataclass(frozen=True)
class _Columns:
    """Where a pipeline reads each memory's id, text, vector and own scope (`by_path`: the
    first segment of a path), and what else the shortcut reads (`keep`)."""

    id: str | None
    text: str | None
    vector: str | None
    scope: str | None
    by_path: bool = False
    keep: tuple[str, ...] = ()


def _columns(spec: Any, store: Any) -> _Columns:
    """The store's roles and the scope rule's column for the pool source's stages; the columns
    a LanceDB fetch stage is told; by name otherwise."""
    from inspector.core.engine import scope as scopes
    from inspector.core.engine.flow.registry import kind_of

    roles = store.roles
    for route in spec.routes:
        for st in route.stages:
            p = kind_of(st.kind).resolve(st.params, st.name)
            if st.kind == "scope_rule":
                if p["strategy"] == "none":
                    col = None
                elif p["strategy"] in scopes.COLUMN_STRATEGIES:
                    col = p["column"] or roles.scope or roles.agent
                else:  # a repo rule: the repo, else the path's first segment
                    col = roles.repo or roles.path
                # and every column its scope filter may read (the shortcut's scope verdicts)
                filtered = (p["column"] or None, roles.scope, roles.agent, roles.repo,
                            roles.path)
                keep = (roles.importance, *filtered) if any(
                    x and x != "none" for x in (p["strategy"], p["strategy_unscoped"])) \
                    else (roles.importance,)
                return _Columns(roles.id, roles.text, roles.vector, col,
                                col is not None and col == roles.path and col != roles.repo,
                                tuple(dict.fromkeys(c for c in keep if c)))
            if st.kind == "lancedb_vector_where":
                return _Columns(p["id_column"], p["text_column"], p["vector_column"],
                                p["scope_path"] or "scope")
    return _Columns("id", "text", "vector", "scope")


class Prober:
    """Probes of one pipeline on one store (`prepare` first, then `ask` per memory); `scan`
    False runs every probe on its own searches (no batched scan, no shortcut); `facet_mode`
    as `inspector query --index-facet` (auto: tables up to 20,000 rows)."""

    def __init__(self, store: Any, spec: Any, limit: int | None, now_ms: float,
                 scan: bool = True, facet_mode: str = "auto") -> None:
        self.store, self.spec, self.limit, self.now_ms = store, spec, limit, now_ms
        self.scan, self.facet_mode = scan, facet_mode
        self.name = spec.name
        self.scanned = self.searched = self.shortcut = self.runs = self.outside = 0
        self.below = 0  # probes the shortcut proved dropped by the min score (no run)
        self.unfaceted = 0  # probes on an indexed table not compared with an exact run
        self._why: str | None = "not prepared"
        self._short = Shortcut()
        self._legs: Any = None
        self._asked: dict[int, Request] = {}
        self._slot: dict[int, int] = {}
        self._deep: dict[int, tuple[Request, Any, str]] = {}  # leg, and the purpose of its depth
        self._out: dict[int, Any] = {}  # probes whose memory the scope rule excludes: Fall
        self._cuts: dict[int, tuple[str, Any]] = {}  # probes proved below: the min score stage
        self._proved_below: set[int] = set()  # answered so: their fixes search no deeper
        self._mem: Memories | None = None  # the memories the fixes are for (`deepen`)
        self._planner = Planner(store, spec, limit, now_ms)

    # -- the memories ---------------------------------------------------------------------
    def read(self, sample: int | None, seed: int) -> Memories:
        c = _columns(self.spec, self.store)

        def own(row: dict[str, Any]) -> Any:
            v = row.get(c.scope) if c.scope else None
            if v is None:
                return None
            return str(v).strip("/").split("/")[0] if c.by_path else v

        return read_memories(self.store, c.id, c.text, c.vector, own,
                             (c.scope,) if c.scope else (), sample, seed, keep=c.keep)

    # -- one probe ---------------------------------------------------------------------------
    def _runs(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> Any:
        from inspector.core.engine.flow.runs import Runs

        vec = mem.vector(i)
        return Runs(self.store, self.spec, mem.texts[i],
                    None if vec is None else vec.astype(np.float64), scopes, self.limit,
                    self.now_ms, f"example:{mem.ids[i]}")

    def _request(self, mem: Memories, i: int, scopes: tuple[str, ...] | None
                 ) -> Request | str:
        vec = mem.vector(i)
        return self._planner.request(text=mem.texts[i], vector=None if vec is None else
                                     vec.astype(np.float64), scopes=scopes,
                                     source=f"example:{mem.ids[i]}")

    def _scan(self, mem: Memories, reqs: dict[int, Request],
              purposes: dict[int, str] | None = None) -> Any:
        """Every request's vector leg from batched scans over the table (the audit's vectors
        when read as stored): at the depth the fetch stage asks ("params"), or at the depth of
        each probe's purpose (`purposes`: "exhaustive", the analysis depth its fixes search
        to)."""
        from inspector.core.engine import pools
        from inspector.core.engine.pools.batched import Source

        cases = [_Case(r.query, r.params, (purposes or {}).get(i, "params"))
                 for i, r in reqs.items()]
        source = None if mem.rowids is None else Source(mem.vectors, mem.rowids)
        return pools.vector_legs(self.store, cases, cases[0].p,
                                 lambda c: pools.depth_for(c.purpose, self.store, c.p)[0],
                                 source=source, per_pass=PER_PASS)

    def _refusal(self) -> str | None:
        """Why no probe can take a scanned leg (None: the table allows it)."""
        from inspector.core.engine.pools.batched import scannable

        return "the batched scan was turned off" if not self.scan else scannable(self.store)

    @_own_searches
    def prepare(self, mem: Memories, positions: Sequence[int],
                scopes: Sequence[tuple[str, ...] | None], own_only: bool = False) -> None:
        """Where the table allows it: with `own_only` (a recall audit reads only each memory's
        own fate), the outrank shortcut for the probes it proves found or dropped by the min
        score, then one batched scan for the other probes' vector legs."""
        self._legs, self._slot, self._asked, self._short = None, {}, {}, Shortcut()
        self._cuts, self._proved_below = {}, set()
        pairs = list(zip(positions, scopes, strict=True))
        self._out = {}
        if own_only and self.scan:  # a memory outside its asked scope: the scope rule says
            # so, no run (with `scan` off every probe runs: the reference the tests hold)
            self._out = {i: f for i, s in pairs if (f := self._outside(
                mem, i, self._planner.barrier(text=mem.texts[i], scopes=s), True))
                is not None}
            pairs = [(i, s) for i, s in pairs if i not in self._out]
        self._why = self._refusal()
        if self._why is not None or not pairs:
            return
        asked = {i: self._request(mem, i, s) for i, s in pairs}
        reqs = {i: r for i, r in asked.items() if isinstance(r, Request)}
        if not reqs:
            self._why = next((r for r in asked.values() if isinstance(r, str)), "no probe")
            return
        if all(r.params.mode == "fts" for r in reqs.values()):
            self._why = "a full-text pipeline has no vector leg"
            return
        if own_only:
            self._short = shortcut(self.store, mem, list(reqs),
                                   lambda i: reqs[i].outrank)
            for i in list(self._short.below):
                cut = reqs[i].cut
                if cut is None:  # no min score stage to name: the run answers
                    del self._short.below[i]
                else:
                    self._cuts[i] = cut
            reqs = {i: r for i, r in reqs.items()
                    if i not in self._short.ranks and i not in self._short.below}
            if not reqs:
                return
        self._asked = reqs
        self._legs = self._scan(mem, reqs)
        self._slot = {i: n for n, i in enumerate(reqs)}
        if not len(self._legs):
            self._why = "the scan could not reproduce LanceDB's search on this table"

    def _warm(self, req: Request, leg: Any, purpose: str) -> None:
        """The pool source holds the pool the fetch stage asks for, its vector leg scanned."""
        from inspector.core.engine import pools

        pools.fetch(self.store, req.query, req.params,
                    *pools.depth_for(purpose, self.store, req.params), vec_leg=leg)

    @_own_searches
    def ask(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> Answer:
        from inspector.core.engine.flow.insight.expect import trace_barrier, where_dropped
        from inspector.core.engine.flow.runner import clamp_limit

        batch_gc.valve()  # an audit's probes are one batch: a full collection a minute at most

        rid = mem.ids[i]
        if i in self._out:
            self.outside += 1
            f = self._out.pop(i)
            return Answer((), clamp_limit(self.spec, self.limit), f.stage, f.code,
                          dict(f.detail), own_only=True)
        if i in self._short.ranks:
            self.shortcut += 1
            return Answer((), clamp_limit(self.spec, self.limit), None, "returned",
                          {"rank": self._short.ranks.pop(i)}, own_only=True)
        if i in self._short.below:  # the min score stage's drop, in its words; the run is
            # made for a fix, which runs it then
            self.below += 1
            name, least = self._cuts.pop(i)
            self._proved_below.add(i)
            return Answer((), clamp_limit(self.spec, self.limit), name, "below_min_score",
                          {"score": self._short.below.pop(i), "min": least}, own_only=True,
                          runs=self._runs(mem, i, scopes))
        req, slot = self._asked.pop(i, None), self._slot.pop(i, None)
        leg = self._legs.pop(slot) if self._legs is not None and slot is not None else None
        if req is not None and leg is not None:
            self._warm(req, leg, "params")
        elif req is not None and self._why is None:
            self._why = "the scan's self-check against LanceDB failed for a pass"
        self.scanned += leg is not None
        self.searched += leg is None
        runs = self._runs(mem, i, scopes)
        trace = runs.run()
        self.runs += 1
        ids = tuple(trace.final.ids)
        crowded = _crowded(trace, mem)
        fall = where_dropped(trace, rid)
        if fall.code == "not_fetched":  # as `--expect ID` says it (flow.expect.explain)
            fall = self._outside(mem, i, trace_barrier(trace, self.store.roles)) or fall
        if fall.code == "returned":
            return Answer(ids, trace.limit, None, "returned", dict(fall.detail), crowded,
                          runs=runs)
        stage, code, detail = fall.stage, fall.code, dict(fall.detail)
        if code == "not_fetched" and stage is not None:  # what the fetch did, not the why
            st = trace.stage(stage)
            detail = {"fetched": len(st.rows), **{k: st.facts[k] for k in ("depth",)
                                                   if k in st.facts}}
        fc = self._facet(trace, runs)
        lost = [x.stage for x in fc.legs if rid in x.lost] if fc is not None else []
        if fc is not None and rid in fc.lost_final:
            stage, code = (lost or [fall.stage])[0], "lost_to_index"  # the leg, or the
            # stage that dropped the row the index scored approximately
            detail = {"index": fc.index_type, "legs": lost, "dropped_at": fall.stage,
                      "reason": fall.code}
        elif crowded and code in CUT_CODES:
            detail["crowded_by"] = crowded
        return Answer(ids, trace.limit, stage, code, detail, crowded, runs=runs, facet=fc)

    def _outside(self, mem: Memories, i: int, barrier: Any, unrun: bool = False) -> Any:
        """Where memory i falls when the barrier's scope rule excludes it (its columns as the
        audit read them, else from the store as `--expect ID` reads them); None: inside, or
        no barrier. `unrun`: for a probe not run, which needs the barrier to be the first
        stage that can drop its row, and the columns the audit read."""
        from inspector.core.engine.flow.insight.expect import outside_scope

        if barrier is None or (unrun and not barrier.first):
            return None
        if all(c in mem.kept for c in barrier.columns):
            values = {c: mem.kept[c][i].as_py() for c in barrier.columns}
        elif unrun:  # a probe the run will answer
            return None
        else:  # a column the audit did not read: the store's, as `--expect ID` reads it
            values = self.store.columns_of(mem.ids[i], barrier.columns)
            if values is None or any(c not in values for c in barrier.columns):
                return None
        return outside_scope(barrier, self.store.roles, values)

    def _facet(self, trace: Any, runs: Any, count: bool = True) -> Any:
        """The index facet of a probe's run (None: no leg searched an index, or not
        compared: `facet_mode`, counted in `method` when `count`)."""
        from inspector.core.engine.flow.insight.facet import facet, indexed_legs, wanted

        index = getattr(self.store, "vector_index", None)
        if not indexed_legs(trace, index):
            return None
        if not wanted(self.store.rows, self.facet_mode):
            self.unfaceted += count
            return None
        return facet(trace, runs, index)

    # -- the fixes of the probes that get them ----------------------------------------------
    def fixable(self, a: Answer) -> bool:
        """Whether a change of the pipeline's parameters may return the probe's memory: not
        one outside its asked scope, which the scope filter drops whatever they are
        (`--expect ID` searches nothing for it either)."""
        from inspector.core.engine.flow.insight.expect import trace_barrier

        if a.code != "out_of_scope":
            return True
        if a.runs is None:  # proved before any run (`prepare`)
            return False
        barrier = trace_barrier(a.runs.run(), self.store.roles)
        return barrier is None or barrier.stage != a.stage

    def deepen(self, mem: Memories, items: Sequence[tuple[int, tuple[str, ...] | None]]
               ) -> None:
        """One batched scan for the probes that get fixes, at the analysis depth (10,000 rows
        or the table): their fix searches then read one pool each, not a deep search each.
        A probe the shortcut proved below the min score is scanned at its fetch's own depth:
        its fix search tries no deeper fetch (the stages the shortcut covers are row-wise, so
        `expect.depth_free` proves none returns it), only the changes of its score."""
        self._deep, self._mem = {}, mem
        if self._refusal() is not None or not items:
            return
        reqs = {i: r for i, s in items if isinstance(r := self._request(mem, i, s), Request)
                and r.params.mode != "fts"}
        if not reqs:
            return
        purposes = {i: "params" if i in self._proved_below else "exhaustive" for i in reqs}
        legs = self._scan(mem, reqs, purposes)
        self._deep = {i: (r, legs.pop(n), purposes[i]) for n, (i, r) in enumerate(reqs.items())}

    def _deep_pool(self, i: int | None) -> None:
        got = self._deep.pop(i, None) if i is not None else None
        if got is not None and got[1] is not None:
            self._warm(got[0], got[1], got[2])

    @_own_searches
    def fix(self, a: Answer, rid: str, i: int | None = None) -> dict[str, Any]:
        """The smallest change that returns the probe's memory, and the alternatives, each
        run (`inspector query --expect ID`'s `fix`, `alternatives`, `tried`, `no_fix`)."""
        from inspector.core.engine.flow.insight.expect import explain

        self._deep_pool(i)
        mem = self._mem  # the memory's columns as read, so its scope is not read again
        values = {c: col[i].as_py() for c, col in mem.kept.items()} \
            if mem is not None and i is not None else None
        e = explain(a.runs.run(), rid, a.runs, values=values)
        return {k: e[k] for k in ("fix", "alternatives", "tried", "no_fix", "proved")
                if k in e}

    @_own_searches
    def diagnosis(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> list[str]:
        """What the engine's diagnosis of the probe's run offers (each fix run), as
        `inspector query`'s `diagnosis.fixes` labels: the probe run again (its pool the deep
        one), so an audit holds no run of a probe it has answered."""
        from inspector.core.engine.flow.insight.diagnosis import diagnose

        self._deep_pool(i)
        runs = self._runs(mem, i, scopes)
        trace = runs.run()
        fc = self._facet(trace, runs, count=False)
        d = diagnose(trace, runs, index_lost=fc is not None and bool(fc.lost_final))
        return [f.label for f in d.fixes]

    # -- other probers ------------------------------------------------------------------------
    def pushed(self) -> Prober | None:
        """The same pipeline with every prefilter flag of its query and fetch stages on (the
        scope pushed into the search); None when every one already is, or it has none."""
        from inspector.core.engine.flow.registry import kind_of

        sets = {}
        for route in self.spec.routes:
            for st in route.stages:
                kind = kind_of(st.kind)
                p = kind.resolve(st.params, st.name)
                if kind.role in ("query", "fetch"):
                    sets.update({f"{st.name}.{d.name}": True for d in kind.params
                                 if d.effect == "prefilter" and d.type == "bool"
                                 and not p[d.name]})
        return self.changed(sets) if sets else None

    def changed(self, sets: dict[str, Any]) -> Prober:
        from inspector.core.engine.flow.spec import apply_set

        return Prober(self.store, apply_set(self.spec, sets), self.limit, self.now_ms,
                      self.scan, self.facet_mode)

    def method(self) -> dict[str, Any]:
        batched = self._why is None and \
            self.scanned + self.shortcut + self.below + self.outside > 0
        why = self._why or "some passes fell back to per-query search"
        if batched and not self.searched:
            why = "; ".join(x for x in (
                "the scope rule put some probes' memories outside their asked scope"
                if self.outside else "",
                "the outrank shortcut found some probes" if self.shortcut else "",
                "it proved some below the min score" if self.below else "",
                "one pass over the vectors gave the others their vector legs"
                if self.scanned else "") if x)
        return {"batched": batched, "scanned": self.scanned, "per_query": self.searched,
                "shortcut": self.shortcut, "shortcut_below": self.below,
                "outside_scope": self.outside,
                "pipeline_runs": self.runs,
                "shortcut_refused": dict(self._short.refused.most_common()),
                "shortcut_checked": self._short.checked, "index_unchecked": self.unfaceted,
                "why": why}


def _crowded(trace: Any, mem: Memories) -> dict[str, int]:
    """The rows a scope filter removed (drop code out_of_scope, any stage), by their own
    scope."""
    pos = mem.position
    by = Counter(str(mem.scopes[pos[d.id]]) if d.id in pos else "?"
                 for st in trace.stages for d in st.dropped if d.code == "out_of_scope")
    return dict(by.most_common())
