"""Store-wide audits over any pipeline: can each memory be recalled at all, do scopes leak or
starve, and what does one parameter change do across every probe.

One audit serves both engines: a prober (`probes.FlowProber` for pipelines of stages,
`fixed.FixedProber` for the fixed presets) runs each probe and reports where the memory fell
in the audit's vocabulary; `runs` classifies and counts. On a flat table the fixed pipeline's
probes take their vector legs from one batched scan; the output's `method` says when and why
probes fall back to one search each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.core.analysis.audit import runs
from inspector.core.analysis.audit.fixed import FixedProber
from inspector.core.analysis.audit.probes import Answer, FlowProber, Prober
from inspector.core.analysis.audit.runs import CLASSES, SHADOW_COSINE, ProbeResult
from inspector.core.analysis.audit.text import format_change, format_recall, format_scopes

__all__ = ["CLASSES", "SHADOW_COSINE", "Answer", "FixedProber", "FlowProber", "ProbeResult",
           "Prober", "change_audit", "format_change", "format_recall", "format_scopes",
           "prober_for", "recall_audit", "scope_audit"]


def prober_for(store: Any, question: Any, now_ms: float, scan: bool = True) -> Prober:
    """The prober for the question's pipeline: the fixed engine for a fixed preset or file,
    the flow engine for a pipeline of stages."""
    from inspector.core.engine.flow.question import resolve

    spec, _, _ = resolve(question)
    if spec.engine == "fixed":
        return FixedProber(store, spec, question.limit, scan=scan)
    return FlowProber(store, spec, question.limit, now_ms)


def _given(question: Any) -> tuple[str, ...] | None:
    return None if question.scopes is None else tuple(question.scopes)


def _notes(question: Any, now_ms: float, prober: Prober) -> dict[str, Any]:
    from inspector.core.engine.flow.question import resolve

    _, _, inexact = resolve(question)
    return {"now": now_ms if prober.engine == "flow" else None, "inexact": list(inexact)}


def recall_audit(store: Any, question: Any, now_ms: float, *, own_scope: bool = True,
                 sample: int | None = None, seed: int = 0,
                 progress: Callable[[int, int], bool] | None = None, scan: bool = True,
                 fixes: int = 20, only_scope: str | None = None) -> dict[str, Any]:
    """Every memory probed with its own vector (and text), in its own scope (or the
    question's scopes); `progress(done, total)` returning False cancels. For the fixed
    pipeline the first `fixes` never-recalled memories get the smallest depth that returns
    them (as `inspector query --expect ID`)."""
    prober = prober_for(store, question, now_ms, scan)
    fix = _fixed_fix(prober) if isinstance(prober, FixedProber) else None
    res = runs.recall_audit(prober, own_scope=own_scope, scopes=_given(question),
                            sample=sample, seed=seed, progress=progress, fix=fix, fixes=fixes,
                            only_scope=only_scope)
    return {**res, **_notes(question, now_ms, prober)}


def _fixed_fix(prober: FixedProber) -> Callable[..., Any]:
    def fix(mem: Any, i: int, scopes: tuple[str, ...] | None) -> dict[str, Any]:
        from inspector.core.engine.expect import analyse
        from inspector.core.engine.pipeline import run

        q = prober._query(mem, i)
        p = prober.params(prober._scope(scopes))
        e = analyse(prober.store, q, run(prober.store, q, p), [mem.ids[i]])[0]
        return {"reason": e.reason, "min_depth": e.min_depth,
                "min_overfetch": e.min_overfetch, "exhaustive_rank": e.exhaustive_rank}

    return fix


def change_audit(store: Any, question: Any, now_ms: float, sets: dict[str, Any], *,
                 own_scope: bool = True, sample: int | None = None, seed: int = 0,
                 worst: int = 10, scan: bool = True) -> dict[str, Any]:
    """One change (`--set` assignments) over the recallability probe set."""
    base = prober_for(store, question, now_ms, scan)
    return runs.change_audit(base, base.changed(sets), sets, own_scope=own_scope,
                             scopes=_given(question), sample=sample, seed=seed, worst=worst)


def scope_audit(store: Any, question: Any, now_ms: float, *, per_scope: int = 10,
                seed: int = 0, scan: bool = True) -> dict[str, Any]:
    """Leaks and starvation, scope by scope (see `runs.scope_audit`)."""
    return runs.scope_audit(prober_for(store, question, now_ms, scan), per_scope=per_scope,
                            seed=seed)
