"""The index facet of any pipeline: where a vector leg searches through an ANN index, the same
stages run with the index bypassed (LanceDB's exact flat search) give the answer the user
would have got without it; per vector leg, the rows the index lost at the leg's depth and its
recall at the limit, and the final rows the exact run returns that the indexed one does not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change, Runs

AUTO_MAX_ROWS = 20_000  # `auto` compares with an exact search up to this many rows
MODES = ("auto", "on", "off")


@dataclass(frozen=True)
class LegFacet:
    stage: str
    depth: int  # rows the indexed leg returned (both lists are cut there)
    lost: tuple[str, ...]  # rows of the exact leg the index did not return, in exact order
    recall: float | None  # |exact top L & indexed top L| / |exact top L|

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "depth": self.depth, "lost": list(self.lost),
                "ann_recall": self.recall}


@dataclass(frozen=True)
class IndexFacet:
    index_type: str
    metric: str | None
    legs: tuple[LegFacet, ...]
    exact_final: tuple[str, ...]
    lost_final: tuple[str, ...]  # returned by the exact run, not by the indexed one
    knobs: dict[str, Any]

    @property
    def lost(self) -> int:
        return sum(len(leg.lost) for leg in self.legs)

    def to_json(self) -> dict[str, Any]:
        return {"index_type": self.index_type, "metric": self.metric,
                "legs": [leg.to_json() for leg in self.legs], "lostToIndex": self.lost,
                "exact_final": list(self.exact_final), "lost_final": list(self.lost_final),
                "knobs": self.knobs}


def indexed_legs(t: FlowTrace, index: Any) -> list[str]:
    """The vector legs of this run that search through the table's ANN index (`index`, the
    store's): not bypassed, and with the index's metric (another makes LanceDB scan flat)."""
    if t.exact or index is None:
        return []
    out = []
    for st in t.stages:
        kind = kind_of(st.kind)
        if not kind.vector or st.role != "fetch" or st.params.get("mode") == "fts":
            continue
        distance = st.params.get("distance", "l2")
        if index.metric is None or index.metric == distance:
            out.append(st.name)
    return out


def wanted(rows: int | None, mode: str) -> bool:
    """on: always; off: never; auto: while the table is small enough that an exact flat search
    costs about what the indexed one does."""
    return mode == "on" or (mode == "auto" and int(rows or 0) <= AUTO_MAX_ROWS)


def facet(t: FlowTrace, runs: Runs, index: Any) -> IndexFacet | None:
    """The exact run beside this one (None: no leg searched through an index)."""
    legs = indexed_legs(t, index)
    if not legs:
        return None
    exact = runs.try_run(Change(exact=True))
    if exact is None:
        return None
    out = []
    for name in legs:
        approx, ex = t.stage(name).ids, exact.stage(name).ids[: len(t.stage(name).ids)]
        have = set(approx)
        top = ex[: t.limit]
        recall = len(set(top) & set(approx[: t.limit])) / len(top) if top else None
        out.append(LegFacet(name, len(approx), tuple(x for x in ex if x not in have), recall))
    returned = set(t.final.ids)
    knobs = {k: v for name in legs for k, v in t.stage(name).params.items()
             if k in ("nprobes", "min_nprobes", "max_nprobes", "refine_factor", "ef")}
    return IndexFacet(index.type, index.metric, tuple(out), tuple(exact.final.ids),
                      tuple(x for x in exact.final.ids if x not in returned), knobs)
