"""A stage summary's counts (drops by code, rows cut without a recorded drop, rows re-scored,
rows that changed rank) equal their plain definitions, written here the slow and obvious way,
on random stage runs: duplicate ids in a list, NaN scores, rows a stage adds, every role."""

from __future__ import annotations

import math
import random
from collections import Counter

from inspector.core.engine.flow.rows import Drop, Row, Scored
from inspector.core.engine.flow.runner import StageRun
from inspector.core.engine.flow.summary import summarise


def _by_definition(st: StageRun) -> tuple[object, ...]:
    kept = [s.id for s in st.rows]
    drops = Counter(d.code for d in st.dropped if d.id not in kept).most_common()
    if st.role == "fusion":  # its input is every leg: nothing is cut, re-scored or moved
        return tuple(drops), 0, 0, 0
    recorded = [d.id for d in st.dropped]
    cut = len([s for s in st.rows_in if s.id not in kept and s.id not in recorded])
    last_score_in = {}
    for s in st.rows_in:  # a duplicate id: its last score in the list that came in
        last_score_in[s.id] = s.score
    rescored = 0
    for s in st.rows:
        if s.id in last_score_in:
            b = last_score_in[s.id]
            same = s.score == b and not (math.isnan(s.score) or math.isnan(b))
            rescored += not same
    order_in = [s.id for s in st.rows_in if s.id in kept]
    moved = len([1 for a, b in zip(order_in, kept, strict=False) if a != b])
    return tuple(drops), cut, rescored, moved


def _row(i: int) -> Row:
    return Row(f"r{i}", "text", None, None, 0.5, 0.0, {}, {})


def test_a_summarys_counts_are_their_definitions() -> None:
    rng = random.Random(34)
    roles = ("transform", "cut", "filter", "fusion", "fetch", "query")
    for _ in range(3000):
        rows_in = tuple(Scored(_row(rng.randint(0, 40)),
                               rng.choice([0.1, 0.2, math.nan, rng.random()]))
                        for _ in range(rng.randint(0, 50)))
        kept = [s for s in rows_in if rng.random() < 0.6]
        if rng.random() < 0.5:
            rng.shuffle(kept)
        rows = tuple(s if rng.random() < 0.5 else
                     Scored(s.row, rng.choice([s.score, rng.random(), math.nan])) for s in kept)
        rows += tuple(Scored(_row(100 + k), 0.3) for k in range(rng.randint(0, 3)))
        dropped = tuple(Drop(s.id, rng.choice(["past_limit", "out_of_scope", "below_min_score"]))
                        for s in rows_in if rng.random() < 0.3)
        st = StageRun(name="s", kind="k", role=rng.choice(roles), params={}, rows_in=rows_in,
                      rows=rows, dropped=dropped, note="")
        got = summarise(st)
        assert (got.drops, got.cut, got.rescored, got.moved) == _by_definition(st), st.role


def test_a_stage_that_keeps_its_inputs_head_counts_by_the_same_definitions() -> None:
    # a filter that dropped none or a cut of a tail hands on its input's own objects: the
    # counts are still the definitions, with ids repeated in the head, past it, and NaN scores
    rng = random.Random(3434)
    seen_fast = 0
    for _ in range(3000):
        span = rng.choice([8, 40, 400])
        rows_in = tuple(Scored(_row(rng.randint(0, span)),
                               rng.choice([0.1, math.nan, rng.random()]))
                        for _ in range(rng.randint(0, 40)))
        head = rows_in[:rng.randint(0, len(rows_in))]
        dropped = tuple(Drop(s.id, rng.choice(["past_limit", "noise"]))
                        for s in rows_in[len(head):] if rng.random() < 0.7)
        st = StageRun(name="s", kind="k", role=rng.choice(("cut", "filter", "transform")),
                      params={}, rows_in=rows_in, rows=head, dropped=dropped, note="")
        got = summarise(st)
        assert (got.drops, got.cut, got.rescored, got.moved) == _by_definition(st)
        ids = {s.id for s in head}
        seen_fast += len(ids) == len(head) and ids.isdisjoint(s.id for s in rows_in[len(head):])
    assert seen_fast > 500  # the untouched head with each id once was drawn often


def test_a_runs_stages_counted_in_turn_are_their_definitions() -> None:
    """A window counts a run's stages in turn, and each stage comes in with the very rows the
    one before it kept (new tuples of the same objects, as the runner makes them): the ids
    read for one stage serve the next. Chains of pass-throughs, filters, re-orders, re-scores
    and cuts, with duplicate ids and NaN scores, counted in order, out of order and twice."""
    from inspector.core.engine.flow.rows import CutDrops

    rng = random.Random(3402)
    for _ in range(600):
        rows = [Scored(_row(rng.randint(0, 30)), rng.choice([0.1, math.nan, rng.random()]))
                for _ in range(rng.randint(0, 40))]
        runs = []
        for _ in range(rng.randint(1, 6)):
            op = rng.choice(["same", "filter", "shuffle", "rescore", "cut"])
            dropped: object = ()
            if op == "same":
                out = list(rows)
            elif op == "filter":
                out = [s for s in rows if rng.random() < 0.7]
                dropped = tuple(Drop(s.id, "out_of_scope") for s in rows if s not in out)
            elif op == "shuffle":
                out = list(rows)
                rng.shuffle(out)
            elif op == "rescore":
                out = [Scored(s.row, rng.random()) if rng.random() < 0.5 else s for s in rows]
                out.sort(key=lambda s: -s.score if s.score == s.score else 0.0)
            else:
                n = rng.randint(0, len(rows) + 2)
                out, dropped = rows[:n], CutDrops(rows, n, "past_limit", "limit")
            runs.append(StageRun(name=op, kind="k", role="cut" if op == "cut" else "filter",
                                 params={}, rows_in=tuple(rows), rows=tuple(out),
                                 dropped=dropped, note=""))  # type: ignore[arg-type]
            rows = out
        order = list(range(len(runs)))
        if rng.random() < 0.3:
            rng.shuffle(order)
        for i in order + order[:2]:
            st = runs[i]
            st.__dict__.pop("_summary", None)  # counted again, not read back
            got = summarise(st)
            assert (got.drops, got.cut, got.rescored, got.moved) == _by_definition(st)
