"""What each stage of a run did, in one line of the engine's own words (rows dropped, with the
drop codes' labels; re-ordered; re-scored), which stage matters most for a reader, and whether
a pipeline reads the clock. Every view of a flow trace renders these; none recounts them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from operator import attrgetter, is_, ne
from typing import Any

from inspector.core.engine.flow.insight.expect import where_dropped
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.rows import DROP_LABELS, CutDrops
from inspector.core.engine.flow.runner import FlowTrace, StageRun
from inspector.core.engine.flow.spec import PipelineSpec

# stage kinds whose answer depends on the clock (`now`): always, or when the flag is on
CLOCK_KINDS = {"unexpired": None, "recency_boost": None, "time_decay": None,
               "lifecycle_decay": None, "min_score": "drop_expired",
               "lancedb_vector": "exclude_inactive", "lancedb_fts": "exclude_inactive"}


@dataclass(frozen=True)
class StageSummary:
    """Counts of one stage run: what came in, what left and why, what changed order or score."""

    name: str
    kind: str
    role: str
    count_in: int | None  # None for a fetch (its rows come from the store)
    count: int
    drops: tuple[tuple[str, int], ...]  # (code, rows), most first
    cut: int  # rows that left without a recorded drop
    rescored: int
    moved: int  # kept rows whose rank changed
    deferred: int
    line: str


def _label(code: str) -> str:
    return DROP_LABELS.get(code, code.replace("_", " "))


_ID = attrgetter("id")
_SCORE = attrgetter("score")


def summarise(st: StageRun) -> StageSummary:
    """The stage run's summary, kept by the run once counted: a run never changes, and a
    slider that comes back to a value gets the run it had there (the question's memo of
    answers), so its stages are not counted again. Kept in the run's own __dict__ (as
    rows.Scored keeps its id), outside its fields: equality, replace and JSON never see it."""
    got = st.__dict__.get("_summary")
    if got is None:
        got = st.__dict__["_summary"] = _summarise(st)
    return got


# The rows the last stage counted, their ids, the set of them and how many NaN scores they
# have (None: not counted yet), read and never changed. One slot: a window counts a run's
# stages in turn, so each list of rows is read once, not once per stage that holds it.
_LAST: list[tuple[tuple[Any, ...], list[str], set[str], int | None]] = [((), [], set(), 0)]


def _counts(st: StageRun) -> tuple[tuple[tuple[str, int], ...], int, int, int]:
    """(drops, cut, rescored, moved) of one stage run. A window counts each stage a slider's
    tick changed, over up to thousands of rows, so each list is walked once by C-level maps;
    a stage that kept its input's own rows in their order (a filter that dropped none, a cut
    of a tail) is seen by identity."""
    rows, rows_in, dropped = st.rows, st.rows_in, st.dropped
    came = _LAST[0]  # the rows counted last: a run's stages are counted in turn, and each
    # comes in with the very rows the one before it kept
    if not (len(came[0]) == len(rows_in) and all(map(is_, came[0], rows_in))):
        came = None
    same = came is not None and len(rows) == len(rows_in) and all(map(is_, rows, rows_in))
    if same:  # the same rows: the same ids and scores (a Scored never changes)
        ids, kept, nans = came[1], came[2], came[3]  # type: ignore[index]
    else:
        ids = list(map(_ID, rows))
        kept, nans = set(ids), None
    _LAST[0] = (rows, ids, kept, nans)
    if isinstance(dropped, CutDrops):  # one code; counted from the ids, no Drop made
        dropped_ids = dropped.ids()
        out = len(dropped_ids) - sum(map(kept.__contains__, dropped_ids))
        drops: tuple[tuple[str, int], ...] = ((dropped.code, out),) if out else ()
    else:
        dropped_ids = list(map(_ID, dropped))
        drops = tuple(Counter([d.code for d in dropped if d.id not in kept]).most_common())
    if not rows_in or st.role == "fusion":  # a fusion's input is every leg
        return drops, 0, 0, 0
    n = len(rows)
    if len(kept) == n <= len(rows_in) and (same or all(map(is_, rows, rows_in))):
        # the input's head, untouched, each id once: nothing moved; an id repeated past the
        # head would give its score to the dict below, so that case takes the long way
        covered = isinstance(dropped, CutDrops) and dropped.covers(rows_in, n)
        tail = dropped_ids if covered else list(map(_ID, rows_in[n:]))
        if kept.isdisjoint(tail):
            if nans is None:  # a NaN score differs from itself, as the comparison below counts
                scores = list(map(_SCORE, rows))
                nans = sum(map(ne, scores, scores))
                _LAST[0] = (rows, ids, kept, nans)
            if covered or not tail:  # every row past the head has its Drop: none cut
                cut = 0
            else:
                gone = kept.union(dropped_ids)
                cut = len(tail) - sum(map(gone.__contains__, tail))
            return drops, cut, nans, 0
    recorded = set(dropped_ids)
    ids_in = came[1] if came is not None else list(map(_ID, rows_in))
    gone = kept | recorded if recorded else kept
    cut = len(ids_in) - sum(map(gone.__contains__, ids_in))
    before = dict(zip(ids_in, map(_SCORE, rows_in), strict=True))  # the last of an id
    was = list(map(before.get, ids))  # None: a row the stage added
    rescored = sum(map(ne, map(_SCORE, rows), was)) - was.count(None)
    # every id that came in was kept (none dropped, none cut): the filter would keep them all
    kept_in = ids_in if not recorded and not cut else filter(kept.__contains__, ids_in)
    moved = sum(map(ne, kept_in, ids))  # zip: the shorter's length
    return drops, cut, rescored, moved


def _summarise(st: StageRun) -> StageSummary:
    drops, cut, rescored, moved = _counts(st)
    n_in = None if st.role == "fetch" else len(st.rows_in)
    parts: list[str] = []
    if st.role == "query":
        line = st.note or "shapes the query; rows pass through"
    else:
        if st.role == "fetch":
            parts.append(f"fetched {len(st.rows)}")
        elif st.role == "fusion":  # its input is every leg, not the list before it
            rescored = moved = cut = 0
            n_in = None
            parts.append(f"fused {len(st.rows)} from the legs")
        else:
            parts.append(f"kept {len(st.rows)} of {len(st.rows_in)}")
        if drops:
            total = sum(n for _, n in drops)
            parts.append(f"dropped {total}: " + ", ".join(f"{n} {_label(c)}" for c, n in drops))
        if cut:
            parts.append(f"{cut} cut")
        if rescored:
            parts.append(f"re-scored {rescored}")
        if moved:
            parts.append(f"re-ordered ({moved} moved)")
        if st.deferred:
            parts.append(f"deferred {len(st.deferred)} to the end")
        if st.role not in ("fetch", "fusion") and len(parts) == 1:
            parts.append("unchanged")
        line = " · ".join(parts)
    return StageSummary(st.name, st.kind, st.role, n_in, len(st.rows), drops, cut, rescored,
                        moved, len(st.deferred), line)


def stage_that_matters(t: FlowTrace, expected: list[str] | tuple[str, ...] = ()) -> int | None:
    """The index of the stage a reader should see open: where the first expected row that is
    not returned fell, else the stage that removed the most rows (None: nothing removed)."""
    names = [s.name for s in t.stages]
    for rid in expected:
        fall = where_dropped(t, rid)
        if fall.stage is not None and fall.stage in names:
            return names.index(fall.stage)
    best, most = None, 0
    for i, st in enumerate(t.stages):
        if st.role in ("fetch", "query"):
            continue
        lost = len(st.rows_in) - len(st.rows)
        if lost > most:
            best, most = i, lost
    return best


def uses_clock(spec: PipelineSpec) -> bool:
    """True when any stage of any route reads the clock with its effective parameters."""
    for route in spec.routes:
        for st in route.stages:
            if st.kind not in CLOCK_KINDS:
                continue
            flag = CLOCK_KINDS[st.kind]
            if flag is None:
                return True
            params = kind_of(st.kind).resolve(st.params, st.name)
            if params.get(flag):
                return True
    return False
