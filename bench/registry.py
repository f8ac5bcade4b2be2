"""Where benchmark figures register themselves, and the row format every figure returns.

A benchmark file `bench/NAME_bench.py` is found and imported by `bench/run.py`; it registers
its figures with one line each:

    register("index", bench_index, item="2", what="IVF_PQ query vs bare LanceDB")

`bench_index(quick: bool) -> list[dict]` returns rows. Each row is made with `row(...)`: the
raw numbers plus `result` (what the docs' table shows), `target` and `met` (True, False, or None
when the figure has no target). `bench/readme_table.py` turns results.json into the docs'
table; nothing there is typed by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Bench = Callable[[bool], list[dict[str, Any]]]


@dataclass(frozen=True)
class Figure:
    name: str  # for --only
    run: Bench
    item: str  # the issue item it measures ("1", "3", ...)
    what: str  # one line for the benchmarks table
    slow: bool = False  # skipped by --quick unless named with --only


FIGURES: dict[str, Figure] = {}


def register(name: str, run: Bench, *, item: str, what: str, slow: bool = False) -> None:
    """Add a figure; the order of registration is the order of the table."""
    if name in FIGURES:
        raise ValueError(f"benchmark figure {name!r} is registered twice")
    FIGURES[name] = Figure(name, run, item, what, slow)


def row(bench: str, result: str, target: str = "", met: bool | None = None,
        **numbers: Any) -> dict[str, Any]:
    """One line of results: the table's text plus every raw number behind it."""
    fig = FIGURES.get(bench)
    return {"bench": bench, "item": fig.item if fig else "", "what": fig.what if fig else "",
            "result": result, "target": target, "met": met, **numbers}


def ms(samples: list[float]) -> dict[str, float]:
    """Median and p95 in milliseconds of samples in seconds."""
    a = np.asarray(samples) * 1e3
    return {"median_ms": float(np.median(a)), "p95_ms": float(np.percentile(a, 95)),
            "n": len(a)}


def timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def interleaved(a: Callable[[], Any], b: Callable[[], Any],
                repeat: int) -> tuple[list[float], list[float]]:
    """a and b once a round, `repeat` rounds (after one warm-up each), the order alternating
    round by round: load drifts hit both, and neither always runs on the caches the other
    left (the issue's measure: interleaved, the order alternating)."""
    a(), b()
    sa, sb = [], []
    for i in range(repeat):
        if i % 2:
            sb.append(timed(b))
            sa.append(timed(a))
        else:
            sa.append(timed(a))
            sb.append(timed(b))
    return sa, sb
