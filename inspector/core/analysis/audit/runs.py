"""The audits over a prober (either engine): can each memory be recalled by its own vector
and text (`recall_audit`), what one change does across those probes (`change_audit`), and
whether scopes leak or starve (`scope_audit`). Each probe is one ordinary run of the
pipeline: `inspector query --vector-of ID --text TEXT` in the same scope gives the same
verdict (tests compare them)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from inspector.core.analysis.audit.memories import Memories
from inspector.core.analysis.audit.probes import Answer, Prober

SHADOW_COSINE = 0.85  # a returned row this similar is the near-duplicate that shadows a probe
# the classes, in the order a reader meets them
CLASSES = ("found", "shadowed", "below_threshold", "crowded_out", "lost_to_index",
           "out_of_scope", "noise", "expired", "inactive", "must_contain", "no_vector", "other")
_BY_CODE = {"below_min_score": "below_threshold", "noise": "noise", "expired": "expired",
            "inactive": "inactive", "must_contain": "must_contain", "no_vector": "no_vector",
            "past_limit": "crowded_out", "outside_window": "crowded_out",
            "not_fetched": "crowded_out", "lost_to_index": "lost_to_index",
            "out_of_scope": "out_of_scope"}
_CUT = ("past_limit", "outside_window", "not_fetched")  # codes a near-duplicate may explain


@dataclass(frozen=True)
class ProbeResult:
    id: str
    scope: Any
    cls: str
    rank: int | None  # in the final list
    stage: str | None  # where it fell
    code: str
    detail: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scope": self.scope, "class": self.cls, "rank": self.rank,
                "stage": self.stage, "code": self.code, "detail": self.detail}


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    from inspector.core.engine.flow import js

    return float(js.cosine(a.astype(np.float64), b.astype(np.float64)))


def classify(a: Answer, mem: Memories, i: int) -> ProbeResult:
    """The probe's class: found, shadowed by a returned near-duplicate, or the drop's class."""
    rid, scope = mem.ids[i], mem.scopes[i]
    if a.code == "returned":
        return ProbeResult(rid, scope, "found", a.detail.get("rank"), None, a.code,
                           dict(a.detail))
    vec = mem.vector(i)
    if vec is not None and a.code in _CUT:
        pos = mem.position
        twins = [(_cosine(vec, mem.vectors[pos[x]]), x) for x in a.ids
                 if x != rid and x in pos and mem.vector(pos[x]) is not None]
        twin = max(twins, default=None)
        if twin is not None and twin[0] > SHADOW_COSINE:
            return ProbeResult(rid, scope, "shadowed", None, a.stage, a.code,
                               {**a.detail, "by": twin[1], "cosine": twin[0]})
    return ProbeResult(rid, scope, _BY_CODE.get(a.code, "other"), None, a.stage, a.code,
                       dict(a.detail))


def _scopes_for(mem: Memories, i: int, own: bool, given: tuple[str, ...] | None
                ) -> tuple[str, ...] | None:
    if not own:
        return given
    s = mem.scopes[i]
    return None if s is None else (str(s),)


def recall_audit(prober: Prober, *, own_scope: bool = True,
                 scopes: tuple[str, ...] | None = None, sample: int | None = None,
                 seed: int = 0, progress: Callable[[int, int], bool] | None = None,
                 fix: Callable[[Memories, int, tuple[str, ...] | None], Any] | None = None,
                 fixes: int = 20, only_scope: str | None = None) -> dict[str, Any]:
    """Every memory probed with its own vector (and text); `progress(done, total)` returning
    False cancels and returns what was probed so far. `fix` (when given) names the smallest
    single change that returns a never-recalled memory, for the first `fixes` of them.
    `only_scope`: only the memories of that scope (then a sample of them)."""
    mem = prober.read(None if only_scope is not None else sample, seed)
    if only_scope is not None:
        mine = [i for i in mem.picked if str(mem.scopes[i]) == only_scope]
        if sample is not None and sample < len(mine):
            mine = sorted(random.Random(seed).sample(mine, sample))
        mem = replace(mem, picked=tuple(mine))
    asked = [_scopes_for(mem, i, own_scope, scopes) for i in mem.picked]
    prober.prepare(mem, [i for i in mem.picked if mem.vector(i) is not None],
                   [s for i, s in zip(mem.picked, asked, strict=True)
                    if mem.vector(i) is not None], own_only=True)
    results: list[ProbeResult] = []
    limit = None
    cancelled = False
    for n, (i, s) in enumerate(zip(mem.picked, asked, strict=True), 1):
        if mem.vector(i) is None:
            results.append(ProbeResult(mem.ids[i], mem.scopes[i], "no_vector", None, None,
                                       "no_vector", {}))
        else:
            a = prober.ask(mem, i, s)
            limit = a.limit
            r = classify(a, mem, i)
            if fix is not None and r.cls != "found" and fixes > 0:
                fixes -= 1
                r = ProbeResult(r.id, r.scope, r.cls, r.rank, r.stage, r.code,
                                {**r.detail, "fix": fix(mem, i, s)})
            results.append(r)
        if progress is not None and progress(n, len(mem.picked)) is False:
            cancelled = True
            break
    counts = Counter(r.cls for r in results)
    by_scope: dict[str, Counter[str]] = {}
    for r in results:
        by_scope.setdefault(str(r.scope), Counter())[r.cls] += 1
    method = prober.method()
    return {"kind": "recall-audit", "pipeline": prober.name, "engine": prober.engine,
            "probes": len(results), "of": len(mem.picked), "rows": len(mem.ids),
            "sampled": len(mem.picked) < len(mem.ids), "cancelled": cancelled,
            "only_scope": only_scope,
            "scope": "own" if own_scope else (list(scopes) if scopes is not None else None),
            "limit": limit, "counts": {c: counts.get(c, 0) for c in CLASSES},
            "by_scope": {s: {c: n for c, n in sorted(cnt.items())}
                         for s, cnt in sorted(by_scope.items())},
            "never_recallable": [r.to_json() for r in results if r.cls != "found"],
            "found": [r.to_json() for r in results if r.cls == "found"],
            "method": method_line(method), "scan": method}


def method_line(m: dict[str, Any]) -> str:
    if m.get("batched"):
        tail = "" if not m.get("per_query") else \
            f"; {m['per_query']} probes searched one by one ({m['why']})"
        short = (f"{m['shortcut']} probes found among the rows within their outrank radius "
                 "(one bounded pass over the vectors)") if m.get("shortcut") else ""
        scan = (f"one batched scan over the vectors for {m['scanned']} probes' vector legs, "
                "then each probe's stages") if m.get("scanned") or not short else ""
        return "; ".join(x for x in (short, scan) if x) + tail
    return f"one pipeline run per probe, no batched scan: {m['why']}"


def change_audit(base: Prober, changed: Prober, sets: dict[str, Any], *,
                 own_scope: bool = True, scopes: tuple[str, ...] | None = None,
                 sample: int | None = None, seed: int = 0, worst: int = 10) -> dict[str, Any]:
    """One change over the recallability probe set: memories whose own probe gains or loses
    recall, and rows gained and lost across all probes."""
    mem = base.read(sample, seed)
    todo = [i for i in mem.picked if mem.vector(i) is not None]
    asked = [_scopes_for(mem, i, own_scope, scopes) for i in todo]
    for p in (base, changed):
        p.prepare(mem, todo, asked)
    improved, hurt, gained, lost = [], [], Counter(), Counter()
    for i, s in zip(todo, asked, strict=True):
        rid = mem.ids[i]
        a, b = list(base.ask(mem, i, s).ids), list(changed.ask(mem, i, s).ids)
        before, after = rid in a, rid in b
        if after and not before:
            improved.append({"id": rid, "rank": b.index(rid) + 1})
        elif before and not after:
            hurt.append({"id": rid, "was_rank": a.index(rid) + 1})
        gained.update(x for x in b if x not in a)
        lost.update(x for x in a if x not in b)
    return {"kind": "change-audit", "pipeline": base.name, "engine": base.engine, "set": sets,
            "probes": len(mem.picked), "improved": len(improved), "hurt": len(hurt),
            "improved_ids": improved[:worst], "hurt_ids": hurt[:worst],
            "rows_gained": sum(gained.values()), "rows_lost": sum(lost.values()),
            "most_gained": gained.most_common(worst), "most_lost": lost.most_common(worst),
            "method": method_line(base.method())}


def scope_audit(prober: Prober, *, per_scope: int = 10, seed: int = 0) -> dict[str, Any]:
    """For every scope value in the store, up to `per_scope` of its memories as queries in
    that scope alone: rows of other scopes returned (leaks, as a scope x scope matrix), and
    probes that come back short of the limit although the scope holds enough rows
    (starvation), with whether pushing the scope into the query ends it and what the
    engine's diagnosis offers."""
    pushed = prober.pushed()
    mem = prober.read(None, seed)
    by_scope: dict[str, list[int]] = {}
    for i in mem.picked:
        if mem.scopes[i] is not None and mem.vector(i) is not None:
            by_scope.setdefault(str(mem.scopes[i]), []).append(i)
    rng = random.Random(seed)
    picked = {s: m if len(m) <= per_scope else rng.sample(m, per_scope)
              for s, m in sorted(by_scope.items())}
    todo = [(i, s) for s, m in picked.items() for i in m]
    prober.prepare(mem, [i for i, _ in todo], [(s,) for _, s in todo])
    leaks: dict[str, Counter[str]] = {}
    report = []
    pos = mem.position
    for scope, chosen in picked.items():
        short = fixed = 0
        examples, short_ids = [], []
        for i in chosen:
            a = prober.ask(mem, i, (scope,))
            for x in a.ids:
                other = str(mem.scopes[pos[x]]) if x in pos else "?"
                if other != scope:
                    leaks.setdefault(scope, Counter())[other] += 1
            need = min(a.limit, len(by_scope[scope]))
            if len(a.ids) < need:
                short += 1
                short_ids.append({"id": mem.ids[i], "returned": len(a.ids), "limit": a.limit})
                better = len(pushed.ask(mem, i, (scope,)).ids) if pushed else None
                fixed += int(better is not None and better > len(a.ids))
                if len(examples) < 3:
                    examples.append({"id": mem.ids[i], "returned": len(a.ids),
                                     "limit": a.limit, "with_pushdown": better,
                                     "dropped_at": a.stage, "fixes": list(a.fixes),
                                     "crowded_by": a.crowded})
        report.append({"scope": scope, "memories": len(by_scope[scope]),
                       "probes": len(chosen), "short": short, "ended_by_pushdown": fixed,
                       "examples": examples, "short_ids": short_ids,
                       "leaked_in": dict(leaks.get(scope, {}))})
    return {"kind": "scope-audit", "pipeline": prober.name, "engine": prober.engine,
            "per_scope": per_scope, "pushdown_available": pushed is not None,
            "scopes": report, "leaks": {s: dict(c) for s, c in leaks.items()},
            "leak_total": sum(sum(c.values()) for c in leaks.values()),
            "method": method_line(prober.method())}
