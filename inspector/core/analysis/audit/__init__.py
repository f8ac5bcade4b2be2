"""Store-wide audits over any pipeline: can each memory be recalled at all, do scopes leak or
starve, and what does one parameter change do across every probe.

One prober (`probes.Prober`) runs each probe as one ordinary run of the pipeline and reports
where the memory fell in the audit's vocabulary; `runs` classifies and counts. On a flat
table the pool source's fetch takes each probe's vector leg from one batched scan, and the
outrank shortcut finds the probes its proof covers (`plan`) without a run; the output's
`method` says when and why probes fall back to one search each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.core.analysis.audit import runs
from inspector.core.analysis.audit.probes import Answer, Prober
from inspector.core.analysis.audit.runs import CLASSES, SHADOW_COSINE, ProbeResult
from inspector.core.analysis.audit.text import format_change, format_recall, format_scopes

# probes given fixes by default: each is the engine's whole search (every parameter that can
# return the row, the limit, a deeper search; 50 to 160 pipeline runs), so a store-wide audit
# asks for a few; `--fixes N` asks for more
FIXES = 5

__all__ = ["CLASSES", "FIXES", "SHADOW_COSINE", "Answer", "ProbeResult", "Prober", "change_audit",
           "format_change", "format_recall", "format_scopes", "prober_for", "recall_audit",
           "scope_audit"]


def prober_for(store: Any, question: Any, now_ms: float, scan: bool = True,
               facet_mode: str = "auto") -> Prober:
    """The prober of the question's pipeline (preset or file, its system config, column roles
    and --set applied) at its limit."""
    from inspector.core.engine.flow.question import resolve

    spec, _, _ = resolve(question)
    return Prober(store, spec, question.limit, now_ms, scan, facet_mode)


def _given(question: Any) -> tuple[str, ...] | None:
    return None if question.scopes is None else tuple(question.scopes)


def _notes(question: Any, now_ms: float) -> dict[str, Any]:
    from inspector.core.engine.flow.question import resolve

    _, _, inexact = resolve(question)
    return {"now": now_ms, "inexact": list(inexact)}


def recall_audit(store: Any, question: Any, now_ms: float, *, own_scope: bool = True,
                 sample: int | None = None, seed: int = 0,
                 progress: Callable[[int, int], bool] | None = None, scan: bool = True,
                 fixes: int = FIXES, only_scope: str | None = None,
                 facet_mode: str = "auto") -> dict[str, Any]:
    """Every memory probed with its own vector (and text), in its own scope (or the
    question's scopes); `progress(done, total)` returning False cancels. The first `fixes`
    never-recalled memories get the smallest change that returns each (as `inspector query
    --expect ID`)."""
    prober = prober_for(store, question, now_ms, scan, facet_mode)
    res = runs.recall_audit(prober, own_scope=own_scope, scopes=_given(question),
                            sample=sample, seed=seed, progress=progress, fixes=fixes,
                            only_scope=only_scope)
    return {**res, **_notes(question, now_ms)}


def change_audit(store: Any, question: Any, now_ms: float, sets: dict[str, Any], *,
                 own_scope: bool = True, sample: int | None = None, seed: int = 0,
                 worst: int = 10, scan: bool = True, facet_mode: str = "auto"
                 ) -> dict[str, Any]:
    """One change (`--set` assignments) over the recallability probe set."""
    base = prober_for(store, question, now_ms, scan, facet_mode)
    return runs.change_audit(base, base.changed(sets), sets, own_scope=own_scope,
                             scopes=_given(question), sample=sample, seed=seed, worst=worst)


def scope_audit(store: Any, question: Any, now_ms: float, *, per_scope: int = 10,
                seed: int = 0, scan: bool = True, fixes: int = FIXES,
                facet_mode: str = "auto") -> dict[str, Any]:
    """Leaks and starvation, scope by scope (see `runs.scope_audit`); the first `fixes` short
    examples get the diagnosis's fixes."""
    return runs.scope_audit(prober_for(store, question, now_ms, scan, facet_mode),
                            per_scope=per_scope, seed=seed, fixes=fixes)
