"""The fixed pipeline (the eight fixed presets) as an audit's prober: each probe is the run
`inspector query --preset P --vector-of ID --text TEXT --scope S --expect ID` makes, and its
memory's fate is read off the trace in the trace's own words (`Trace.outcome`: not_fetched,
out_of_scope, below_min_score, past_limit) at the stage `--expect` names (raw, scoped, final).

On a flat table every probe's vector leg comes from one batched scan (`engine.pools.batched`),
exactly as LanceDB's search returns it; the scan says why when it cannot (an index, LanceDB
Cloud, a failed self-check) and the probes search one by one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.analysis.audit.memories import Memories, read_memories
from inspector.core.analysis.audit.outrank import Shortcut, shortcut
from inspector.core.analysis.audit.probes import Answer
from inspector.core.engine.params import Params
from inspector.core.engine.pool import Query
from inspector.core.errors import InspectorError

PER_PASS = 1024  # probes a scan pass: the bench's 1,000 in one pass, one self-check
_ANSWERED = {False: "one pass over the vectors answered every probe's vector leg",
             True: "the outrank shortcut found some probes, one pass over the vectors gave "
                   "the others their vector legs"}
_STAGE = {"not_fetched": "raw", "out_of_scope": "scoped", "below_min_score": "final",
          "past_limit": "final", "lost_to_index": "raw"}


@dataclass(frozen=True)
class _Case:
    """A probe as `engine.pools.batched` takes a sweep's case."""

    query: Query
    p: Params

    def params(self, base: Params) -> Params:
        return self.p


class FixedProber:
    """A fixed-pipeline preset (or file) over one store; `scan` False searches per probe."""

    engine = "fixed"

    def __init__(self, store: Any, spec: Any, limit: int | None, scan: bool = True,
                 filter_: str | None = None) -> None:
        from inspector.core.engine.presets import from_spec

        self.store, self.spec, self.scan, self.filter = store, spec, scan, filter_
        self.preset = from_spec(spec)
        self.name = spec.name
        self.limit = limit or spec.limit.default
        self._params: dict[str | None, Params] = {}
        self.base = self.params(None)
        self._legs: Any = None
        self._why: str | None = "not prepared"
        self.scanned = self.searched = self.shortcut = 0
        self._short = Shortcut()

    def params(self, scope: str | None) -> Params:
        if scope not in self._params:  # frozen: one per scope, not one per probe
            p = self.preset.params(self.limit, scope)
            self._params[scope] = p.with_(filter=self.filter) if self.filter else p
        return self._params[scope]

    # -- the memories and their own scope ------------------------------------------------
    def _scope_column(self) -> str | None:
        roles, p = self.store.roles, self.base
        if p.scope_strategy == "none":
            return None
        if p.scope_strategy in ("column", "column_global", "agent_scope"):
            return p.scope_column or roles.scope or roles.agent
        return roles.repo or roles.path

    def read(self, sample: int | None, seed: int) -> Memories:
        roles = self.store.roles
        col = self._scope_column()
        by_path = col is not None and col == roles.path and col != roles.repo

        def own(row: dict[str, Any]) -> Any:
            v = row.get(col) if col else None
            if v is None:
                return None
            return str(v).strip("/").split("/")[0] if by_path else v

        return read_memories(self.store, roles.id, roles.text, roles.vector, own,
                             (col,) if col else (), sample, seed,
                             keep=(roles.importance,) if roles.importance else ())

    # -- probing ---------------------------------------------------------------------------
    def _query(self, mem: Memories, i: int) -> Query:
        return Query(text=mem.texts[i], vector=mem.vector(i), source=f"example:{mem.ids[i]}")

    def _scope(self, scopes: tuple[str, ...] | None) -> str | None:
        if scopes is not None and len(scopes) > 1:
            raise InspectorError(f"{self.name} takes one scope; the pipelines of stages take "
                                 "several.")
        return None if not scopes else str(scopes[0])

    def prepare(self, mem: Memories, positions: Sequence[int],
                scopes: Sequence[tuple[str, ...] | None], own_only: bool = False) -> None:
        """Where the table allows it: with `own_only`, the outrank shortcut for the probes it
        proves found (`outrank`), then one batched scan for the other probes' vector legs."""
        from inspector.core.engine.pipeline import first_depths
        from inspector.core.engine.pools import vector_legs
        from inspector.core.engine.pools.batched import Source, scannable

        self._legs, self._why, self._short = None, None, Shortcut()
        if not self.scan:
            self._why = "the batched scan was turned off"
        elif self.base.mode == "fts":
            self._why = "a full-text pipeline has no vector leg"
        else:
            self._why = scannable(self.store)
        if self._why is not None:
            return
        if own_only:
            given = dict(zip(positions, scopes, strict=True))
            self._short = shortcut(self.store, mem, positions,
                                   lambda i: self.params(self._scope(given[i])))
            rest = [n for n, i in enumerate(positions) if i not in self._short.ranks]
            positions, scopes = [positions[n] for n in rest], [scopes[n] for n in rest]
            if not positions:
                return
        cases = [_Case(self._query(mem, i), self.params(self._scope(s)))
                 for i, s in zip(positions, scopes, strict=True)]
        source = None if mem.rowids is None else Source(mem.vectors, mem.rowids)
        self._legs = vector_legs(self.store, cases, self.base,
                                 lambda c: first_depths(self.store, c.p)[0], source=source,
                                 per_pass=PER_PASS)
        self._slot = {i: n for n, i in enumerate(positions)}
        if not len(self._legs):
            self._why = "the scan could not reproduce LanceDB's search on this table"

    def ask(self, mem: Memories, i: int, scopes: tuple[str, ...] | None) -> Answer:
        from inspector.core.engine.ann import facet as index_facet
        from inspector.core.engine.pipeline import run

        rid = mem.ids[i]
        p = self.params(self._scope(scopes))
        if i in self._short.ranks:
            self.shortcut += 1
            return Answer((), p.limit, None, "returned", {"rank": self._short.ranks.pop(i)},
                          own_only=True)
        q = self._query(mem, i)
        leg = self._legs.pop(self._slot[i]) if self._legs is not None and i in self._slot \
            else None
        if leg is None and self._legs is not None and self._why is None:
            self._why = "the scan's self-check against LanceDB failed for a pass"
        self.scanned += leg is not None
        self.searched += leg is None
        trace = index_facet.attach(self.store, q, run(self.store, q, p, vec_leg=leg), "auto")
        ids = tuple(str(x) for x in trace.ids("final"))
        fixes = tuple(f.label for f in trace.diagnosis.fixes)
        crowded = _crowded(trace, mem)
        row = trace.row_of(rid)
        if rid in ids:
            return Answer(ids, p.limit, None, "returned", {"rank": ids.index(rid) + 1}, fixes,
                          crowded)
        code = "not_fetched" if row is None else trace.outcome(row)
        facet = trace.index_facet
        if facet is not None and rid in {str(x) for x in facet.lost_final}:
            code = "lost_to_index"
        return Answer(ids, p.limit, _STAGE[code], code, _detail(trace, row, code, crowded),
                      fixes, crowded)

    def pushed(self) -> FixedProber | None:
        """The same preset with the scope pushed into the search (None: it already is, or
        its scope rule has no pushdown)."""
        from inspector.core.engine.scope import pushdown

        if self.base.filter == "pushdown" or self.base.scope_strategy in ("none",
                                                                           "path_prefix"):
            return None
        probe = FixedProber(self.store, self.spec, self.limit, self.scan, "pushdown")
        return probe if pushdown(probe.params("x").scope_spec(), self.store.roles).expr \
            is not None else None

    def changed(self, sets: dict[str, Any]) -> FixedProber:
        from inspector.core.engine.flow.spec import apply_set

        return FixedProber(self.store, apply_set(self.spec, sets), self.limit, self.scan,
                           self.filter)

    def method(self) -> dict[str, Any]:
        batched = self._why is None and self.scanned + self.shortcut > 0
        return {"engine": "fixed", "batched": batched, "scanned": self.scanned,
                "per_query": self.searched, "shortcut": self.shortcut,
                "shortcut_refused": dict(self._short.refused.most_common()),
                "shortcut_checked": self._short.checked,
                "why": _ANSWERED[bool(self.shortcut)] if batched and not self.searched
                else (self._why or "some passes fell back to per-query search")}


def _crowded(trace: Any, mem: Memories) -> dict[str, int]:
    """The raw pool's rows the scope filter removed, counted by their own scope."""
    raw = trace.stage("raw").rows
    pos = mem.position
    by = Counter(str(mem.scopes[pos[str(x)]]) if str(x) in pos else "?"
                 for x, keep in zip(trace.pool.ids[raw], trace.pool.in_scope[raw], strict=True)
                 if not keep)
    return dict(by.most_common())


def _detail(trace: Any, row: int | None, code: str, crowded: dict[str, int]
            ) -> dict[str, Any]:
    """What the trace says about the probe's own memory, at the stage that dropped it."""
    p, d = trace.params, trace.depths
    if code == "below_min_score":
        s = float(trace.score[row])
        return {"score": s, "min_score": p.min_score, "short_by": p.min_score - s}
    if code == "out_of_scope":
        return {"rule": trace.pool.scope_rule[row]}
    if code == "lost_to_index":
        return {"index": trace.index_facet.index_type}
    out: dict[str, Any] = {"depth": d.pool, "raw": len(trace.stage("raw").rows)}
    if code == "past_limit":
        out["blended_rank"] = int(trace.rank_after[row])
        out["limit"] = p.limit
    if crowded:
        out["crowded_by"] = crowded
    return out
