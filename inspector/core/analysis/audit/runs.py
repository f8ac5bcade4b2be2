"""The audits over a prober: can each memory be recalled by its own vector and text
(`recall_audit`), what one change does across those probes (`change_audit`), and whether
scopes leak or starve (`scope_audit`). Each probe is one ordinary run of the pipeline:
`inspector query --vector-of ID --text TEXT` in the same scope gives the same verdict, and
the fixes the audit lists are that query's (`--expect ID`'s fix, the diagnosis's fixes), each
run (tests compare them)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from inspector.core import batch_gc
from inspector.core.analysis.audit.memories import Memories
from inspector.core.analysis.audit.probes import CUT_CODES, Answer, Prober

SHADOW_COSINE = 0.85  # a returned row this similar is the near-duplicate that shadows a probe
# the classes, in the order a reader meets them
CLASSES = ("found", "shadowed", "below_threshold", "crowded_out", "lost_to_index",
           "out_of_scope", "noise", "expired", "inactive", "must_contain", "no_vector", "other")
_BY_CODE = {"below_min_score": "below_threshold", "noise": "noise", "expired": "expired",
            "inactive": "inactive", "must_contain": "must_contain", "no_vector": "no_vector",
            "past_limit": "crowded_out", "outside_window": "crowded_out",
            "not_fetched": "crowded_out", "lost_to_index": "lost_to_index",
            "out_of_scope": "out_of_scope"}


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
    from inspector.core.engine import js

    return float(js.cosine(a.astype(np.float64), b.astype(np.float64)))


def classify(a: Answer, mem: Memories, i: int) -> ProbeResult:
    """The probe's class: found, shadowed by a returned near-duplicate, or the drop's class."""
    rid, scope = mem.ids[i], mem.scopes[i]
    if a.code == "returned":
        return ProbeResult(rid, scope, "found", a.detail.get("rank"), None, a.code,
                           dict(a.detail))
    vec = mem.vector(i)
    if vec is not None and a.code in CUT_CODES:
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


@batch_gc.batch
def recall_audit(prober: Prober, *, own_scope: bool = True,
                 scopes: tuple[str, ...] | None = None, sample: int | None = None,
                 seed: int = 0, progress: Callable[[int, int], bool] | None = None,
                 fixes: int = 0, only_scope: str | None = None) -> dict[str, Any]:
    """Every memory probed with its own vector (and text); `progress(done, total)` returning
    False cancels and returns what was probed so far. The first `fixes` never-recalled
    memories a change may return get the smallest change that returns each (`--expect ID`'s
    search, each change run; a memory outside its asked scope gets none: no change returns
    it). `only_scope`: only the memories of that scope (then a sample of them)."""
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
    pending: list[tuple[int, int, tuple[str, ...] | None, Answer]] = []  # to get fixes
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
            if r.cls != "found" and len(pending) < fixes and prober.fixable(a):
                pending.append((len(results), i, s, a))
            results.append(r)
        if progress is not None and progress(n, len(mem.picked)) is False:
            cancelled = True
            break
    if not cancelled:
        cancelled = _fixes(prober, mem, results, pending, progress)
    counts = Counter(r.cls for r in results)
    by_scope: dict[str, Counter[str]] = {}
    for r in results:
        by_scope.setdefault(str(r.scope), Counter())[r.cls] += 1
    method = prober.method()
    return {"kind": "recall-audit", "pipeline": prober.name,
            "probes": len(results), "of": len(mem.picked), "rows": len(mem.ids),
            "sampled": len(mem.picked) < len(mem.ids), "cancelled": cancelled,
            "only_scope": only_scope,
            "scope": "own" if own_scope else (list(scopes) if scopes is not None else None),
            "limit": limit, "fixes": sum("fix" in r.detail for r in results),
            "counts": {c: counts.get(c, 0) for c in CLASSES},
            "by_scope": {s: {c: n for c, n in sorted(cnt.items())}
                         for s, cnt in sorted(by_scope.items())},
            "never_recallable": [r.to_json() for r in results if r.cls != "found"],
            "found": [r.to_json() for r in results if r.cls == "found"],
            "method": method_line(method), "scan": method}


def _fixes(prober: Prober, mem: Memories, results: list[ProbeResult],
           pending: list[tuple[int, int, tuple[str, ...] | None, Answer]],
           progress: Callable[[int, int], bool] | None) -> bool:
    """Each pending probe's fix, in `detail["fix"]`, from one deep pool per probe (one scan
    for them all, `Prober.deepen`); True when `progress` cancels."""
    prober.deepen(mem, [(i, s) for _, i, s, _ in pending])
    for at, i, _, a in pending:
        r = results[at]
        results[at] = replace(r, detail={**r.detail, "fix": prober.fix(a, r.id, i)})
        if progress is not None and progress(len(mem.picked), len(mem.picked)) is False:
            return True
    return False


def method_line(m: dict[str, Any]) -> str:
    """What served the probes, in one line (`scan` in JSON has the counts)."""
    outside = f"{m['outside_scope']} probes outside their asked scope by its rule (no run)" \
        if m.get("outside_scope") else ""
    if m.get("batched"):
        tail = "" if not m.get("per_query") else \
            f"; {m['per_query']} probes searched one by one ({m['why']})"
        short = (f"{m['shortcut']} probes found among the rows within their outrank radius "
                 "(one bounded pass over the vectors)") if m.get("shortcut") else ""
        low = (f"{m['shortcut_below']} probes dropped by the min score, their own score below "
               "it with their row fetched (the same pass, no run)") \
            if m.get("shortcut_below") else ""
        scan = (f"one batched scan over the vectors for {m['scanned']} probes' vector legs, "
                "then each probe's stages") if m.get("scanned") or not (short or outside or low) \
            else ""
        line = "; ".join(x for x in (outside, short, low, scan) if x) + tail
    else:
        line = "; ".join(x for x in (outside, "one pipeline run per" + (
            " other" if outside else "") + f" probe, no batched scan: {m['why']}") if x)
    if m.get("index_unchecked"):
        line += (f"; {m['index_unchecked']} probes not found were not compared with an exact "
                 "search (a large indexed table: --index-facet on compares them)")
    return line


@batch_gc.batch
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
    return {"kind": "change-audit", "pipeline": base.name, "set": sets,
            "probes": len(mem.picked), "improved": len(improved), "hurt": len(hurt),
            "improved_ids": improved[:worst], "hurt_ids": hurt[:worst],
            "rows_gained": sum(gained.values()), "rows_lost": sum(lost.values()),
            "most_gained": gained.most_common(worst), "most_lost": lost.most_common(worst),
            "method": method_line(base.method())}


@batch_gc.batch
def scope_audit(prober: Prober, *, per_scope: int = 10, seed: int = 0,
                fixes: int = 0) -> dict[str, Any]:
    """For every scope value in the store, up to `per_scope` of its memories as queries in
    that scope alone: rows of other scopes returned (leaks, as a scope x scope matrix), and
    probes that come back short of the limit although the scope holds enough rows
    (starvation), with whether pushing the scope into the query ends it and, for the first
    `fixes` examples, what the engine's diagnosis offers (each fix run)."""
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
    short: dict[int, Answer] = {}  # the short probes' answers (without their runs)
    pos = mem.position
    for scope, chosen in picked.items():
        for i in chosen:
            a = prober.ask(mem, i, (scope,))
            for x in a.ids:
                other = str(mem.scopes[pos[x]]) if x in pos else "?"
                if other != scope:
                    leaks.setdefault(scope, Counter())[other] += 1
            if len(a.ids) < min(a.limit, len(by_scope[scope])):
                short[i] = replace(a, runs=None, facet=None)  # what the report reads
    better = _pushed(pushed, mem, short)
    report = []
    for scope, chosen in picked.items():
        mine = [i for i in chosen if i in short]
        examples = [{"id": mem.ids[i], "returned": len(short[i].ids), "limit": short[i].limit,
                     "with_pushdown": better.get(i), "dropped_at": short[i].stage,
                     "fixes": None, "crowded_by": short[i].crowded} for i in mine[:3]]
        report.append({"scope": scope, "memories": len(by_scope[scope]),
                       "probes": len(chosen), "short": len(mine),
                       "ended_by_pushdown": sum(better.get(i) is not None
                                                and better[i] > len(short[i].ids)
                                                for i in mine),
                       "examples": examples,
                       "short_ids": [{"id": mem.ids[i], "returned": len(short[i].ids),
                                      "limit": short[i].limit} for i in mine],
                       "leaked_in": dict(leaks.get(scope, {}))})
    worst = starved_first(report)  # the examples that get fixes: each scope's first, then
    wanted = [(pos[row["examples"][n]["id"]], row["scope"]) for n in range(3)  # its second..
              for row in worst if n < len(row["examples"])][:fixes]
    _offered(prober, mem, wanted, report)
    return {"kind": "scope-audit", "pipeline": prober.name,
            "per_scope": per_scope, "pushdown_available": pushed is not None,
            "scopes": report, "leaks": {s: dict(c) for s, c in leaks.items()},
            "leak_total": sum(sum(c.values()) for c in leaks.values()),
            "method": method_line(prober.method())}


def starved_first(report: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A scope audit's scopes, the most starved first (the share of short probes; then the
    smaller scope)."""
    return sorted(report, key=lambda s: (-s["short"] / max(1, s["probes"]), s["memories"],
                                         s["scope"]))


def _pushed(pushed: Prober | None, mem: Memories, short: dict[int, Answer]) -> dict[int, int]:
    """How many rows each short probe returns with the scope pushed into the search (its
    vector legs from one batched scan, as the audit's)."""
    if pushed is None or not short:
        return {}
    todo = list(short)
    scopes = [(str(mem.scopes[i]),) for i in todo]
    pushed.prepare(mem, todo, scopes)
    return {i: len(pushed.ask(mem, i, s).ids) for i, s in zip(todo, scopes, strict=True)}


def _offered(prober: Prober, mem: Memories, wanted: list[tuple[int, str]],
             report: list[dict[str, Any]]) -> None:
    """The diagnosis's fixes of each wanted example (one deep pool each, from one scan)."""
    prober.deepen(mem, [(i, (s,)) for i, s in wanted])
    by_id = {e["id"]: e for row in report for e in row["examples"]}
    for i, s in wanted:
        by_id[mem.ids[i]]["fixes"] = prober.diagnosis(mem, i, (s,))
