"""Issue 23 item 5, what limits the recall audit: each idea measured on the bench store.

`audit_design`: the recall audit of 1,000 memories (100k x 384, importance-blend) as it runs
now (the outrank shortcut: each probe found among the rows within its outrank radius, which a
16-dimension projection bound finds for all probes in one pass; the vectors read apart by
row-id ranges) interleaved with the design before it on the same probes (h23s: one search
reads every column, every probe's vector leg from the batched scan and its own pipeline run:
`_previous` restores it), both with the same verdicts; then where the time goes (read, the
shortcut, the scan of the probes it leaves, the per-probe stages) and, for scale, one float32
matrix product of the 1,000 probes by the 100k vectors (the floor of the scan design).
`audit_bounds`: how many of the 100k rows a cheap provable lower bound of the distance
(norms, a 16- or 64-dimension orthogonal projection) rules out, at the radius the pool needs
(each probe's 30th distance) and at the radius a row needs to outrank the probe under
importance-blend (score 1 / (1 + d) times at most 1: d < 1).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from audit_bench import PRESET, _setup
from registry import register, row, timed


@contextlib.contextmanager
def _previous() -> Iterator[None]:
    """The audit as it was before the outrank shortcut (h23s): the store read in one search,
    every probe's vector leg from the batched scan and its own pipeline run."""
    from inspector.core.analysis.audit import memories, outrank, probes

    saved = probes.shortcut, memories._read_apart
    probes.shortcut = lambda *a, **k: outrank.Shortcut()
    memories._read_apart = lambda *a, **k: None
    try:
        yield
    finally:
        probes.shortcut, memories._read_apart = saved


def _rounds(ways: dict[str, Any], repeat: int) -> dict[str, list[float]]:
    """Each way once to warm up, then `repeat` rounds of every way in turn (load drifts hit
    all of them)."""
    for fn in ways.values():
        fn()
    times: dict[str, list[float]] = {w: [] for w in ways}
    for _ in range(repeat):
        for w, fn in ways.items():
            times[w].append(timed(fn))
    return times


def _run(store: Any, spec: Any, probes: int, seed: int) -> dict[str, Any]:
    from inspector.core.analysis.audit import Prober, runs

    return runs.recall_audit(Prober(store, spec, None, 0.0), sample=probes, seed=seed)


def _verdicts(res: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted((r["id"], r["class"], r["rank"]) for r in res["found"] +
                  res["never_recallable"])


def _parts(store: Any, spec: Any, probes: int) -> dict[str, float]:
    """Seconds in each part of one audit: read, the shortcut, the scan of the probes it
    leaves (the rest of `prepare`), and the per-probe stages (`ask`)."""
    from inspector.core.analysis.audit import Prober, runs
    from inspector.core.analysis.audit import probes as P

    spent = {"read": 0.0, "shortcut": 0.0, "prepare": 0.0, "stages": 0.0}
    prober = Prober(store, spec, None, 0.0)

    def clocked(name: str, fn: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t
        return run

    prober.read = clocked("read", prober.read)  # type: ignore[method-assign]
    prober.prepare = clocked("prepare", prober.prepare)  # type: ignore[method-assign]
    prober.ask = clocked("stages", prober.ask)  # type: ignore[method-assign]
    saved = P.shortcut
    P.shortcut = clocked("shortcut", saved)
    try:
        runs.recall_audit(prober, sample=probes, seed=5)
    finally:
        P.shortcut = saved
    spent["scan"] = spent.pop("prepare") - spent["shortcut"]
    return spent


def bench_audit_design(quick: bool) -> list[dict[str, Any]]:
    store, spec, probes = _setup(quick)
    got: dict[str, Any] = {}
    calls: dict[str, int] = {}

    def audit(way: str) -> None:  # the n-th run of every way probes the same sample
        calls[way] = calls.get(way, -1) + 1
        got[way] = _run(store, spec, probes, calls[way])

    def now() -> None:
        audit("now")

    def before() -> None:
        with _previous():
            audit("before")

    times = _rounds({"now": now, "before": before}, 1 if quick else 3)
    a, b = times["now"], times["before"]
    same = _verdicts(got["now"]) == _verdicts(got["before"])
    took = got["now"]["scan"]
    parts = _parts(store, spec, probes)
    x = np.random.default_rng(3).normal(size=(store.rows, 384)).astype(np.float32)
    q = x[:probes].copy()
    gemm = float(np.median([_timed_gemm(q, x) for _ in range(3)]))
    n, p = float(np.median(a)), float(np.median(b))
    k = 1_000 / probes
    return [row("audit_design", f"now {n * k:.2f} s, before {p * k:.2f} s per 1,000 probes "
                                f"({p / n:.1f}x; same verdicts: {same}; "
                                f"{took['shortcut']} found by the shortcut, "
                                f"{took['scanned']} scanned); read {parts['read'] * k:.2f} s, "
                                f"shortcut {parts['shortcut'] * k:.2f} s, scan "
                                f"{parts['scan'] * k:.2f} s, stages {parts['stages'] * k:.2f} s;"
                                f" the matrix product alone {gemm * k:.2f} s",
                rows=store.rows, probes=probes, now_samples_s=a, before_samples_s=b,
                same_verdicts=same, parts_s=parts, gemm_s=gemm, preset=PRESET,
                shortcut=took["shortcut"], scanned=took["scanned"],
                shortcut_refused=took["shortcut_refused"])]


def _timed_gemm(q: np.ndarray, x: np.ndarray) -> float:
    t = time.perf_counter()
    for s in range(0, len(x), 8_192):
        q @ x[s:s + 8_192].T
    return time.perf_counter() - t


def bench_audit_bounds(quick: bool) -> list[dict[str, Any]]:
    store, _, _ = _setup(quick)
    x = (store.table.search().select([store.roles.vector]).limit(store.rows).to_arrow()
         .column(store.roles.vector).combine_chunks().values.to_numpy().reshape(-1, store.dim)
         .astype(np.float64))
    rng = np.random.default_rng(23)
    probes = x[rng.choice(len(x), 20 if quick else 50, replace=False)]
    sq, psq = np.einsum("ij,ij->i", x, x), np.einsum("ij,ij->i", probes, probes)
    d = sq[None, :] - 2 * probes @ x.T + psq[:, None]
    pool_r = np.sort(d, axis=1)[:, 29][:, None]  # the 30th distance: depth 30
    out: dict[str, Any] = {}
    norm_lb = (np.sqrt(sq)[None, :] - np.sqrt(psq)[:, None]) ** 2
    out["norms"] = (float(np.mean(norm_lb > pool_r)), float(np.mean(norm_lb >= 1)))
    _, _, vt = np.linalg.svd(x[:20_000] - x[:20_000].mean(0), full_matrices=False)
    for m in (16, 64):
        px, pq = x @ vt[:m].T, probes @ vt[:m].T
        lb = (np.einsum("ij,ij->i", px, px)[None, :] - 2 * pq @ px.T
              + np.einsum("ij,ij->i", pq, pq)[:, None])
        out[f"projection {m}"] = (float(np.mean(lb > pool_r)), float(np.mean(lb >= 1)))
    text = "; ".join(f"{k}: {a:.1%} at the pool's radius, {b:.1%} at the outrank radius"
                     for k, (a, b) in out.items())
    return [row("audit_bounds", "rows a bound rules out: " + text, rows=store.rows,
                probes=len(probes), pool_radius_median=float(np.median(pool_r)),
                ruled_out=out)]


register("audit_design", bench_audit_design, item="23.5",
         what="recall audit: now vs the previous design, same probes, and where the time goes",
         slow=True)
register("audit_bounds", bench_audit_bounds, item="23.5",
         what="how much of the store a provable distance bound rules out", slow=True)
