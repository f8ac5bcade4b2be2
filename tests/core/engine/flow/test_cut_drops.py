"""A cut's Drops (`rows.CutDrops`: a window's, a limit's, the docs engine's and OpenClaw's caps)
are made when first read: a deep run reads its final ids, a summary its counts, a view the
few Drops it shows, and none of them makes the thousands of Drops past the cut. Read any way,
they are the very Drops the cut made eagerly before: the same tuple, the same JSON, the same
counts."""

from __future__ import annotations

import math
import pickle
import random
from pathlib import Path
from typing import Any

import pytest

from inspector.core.engine.flow import rows as rows_mod
from inspector.core.engine.flow.rows import (
    CutDrops,
    Drop,
    Row,
    Scored,
    drop,
    dropped_ids,
    find_drop,
    same_drops,
)
from inspector.core.engine.flow.runner import StageRun
from inspector.core.engine.flow.summary import summarise
from tests.core.engine.flow.test_summary_counts import _by_definition
from tests.storekit import write_random_store


def _rows(ids: list[int], scores: list[float] | None = None) -> list[Scored]:
    return [Scored(Row(f"r{i}", "text", None, None, 0.5, 0.0, {}, {}),
                   scores[k] if scores else 1.0 - k / 1000) for k, i in enumerate(ids)]


def _eager(rows: list[Scored], n: int, code: str, cut: str) -> tuple[Drop, ...]:
    """The Drops as cuts made them before, one by one: the definition."""
    return tuple(Drop(s.id, code, (("rank", i + 1), (cut, n)))
                 for i, s in enumerate(rows[n:], start=n))


@pytest.mark.parametrize("size,n", [(0, 0), (5, 0), (5, 2), (5, 5), (5, 9), (40, 7)])
def test_a_cuts_drops_read_every_way_are_the_eager_tuple(size: int, n: int) -> None:
    rows = _rows(list(range(size)))
    want = _eager(rows, n, "past_limit", "limit")
    got = CutDrops(rows, n, "past_limit", "limit")
    assert len(got) == len(want) and bool(got) == bool(want)
    assert [got[i] for i in range(len(want))] == list(want)  # one at a time, none made
    assert [got[-i] for i in range(1, len(want) + 1)] == [want[-i] for i in
                                                          range(1, len(want) + 1)]
    for sl in (slice(None), slice(0, 3), slice(2, None), slice(-2, None), slice(None, None, 2),
               slice(5, 1, -1)):
        assert got[sl] == want[sl]
    for bad in (len(want), -len(want) - 1):
        with pytest.raises(IndexError):
            got[bad]
    assert got._made is None  # nothing above needed every Drop
    assert got.ids() == dropped_ids(want) == [d.id for d in want]
    for d in want:
        assert find_drop(got, d.id) == d == find_drop(want, d.id)
    assert find_drop(got, "nobody") is None
    assert got._made is None
    assert list(got) == list(want)
    assert got == want and want == got and not (got != want)
    assert got == CutDrops(rows, n, "past_limit", "limit")
    assert hash(got) == hash(want)
    assert got + (drop("x", "noise"),) == want + (drop("x", "noise"),)
    assert (drop("x", "noise"),) + got == (drop("x", "noise"),) + want
    assert repr(got) == repr(want)
    assert pickle.loads(pickle.dumps(got)) == want
    assert [d.to_json() for d in got] == [d.to_json() for d in want]
    if want:
        assert got != want[:-1] and got != list(want)


def test_a_deep_run_makes_no_drop_past_its_limit_until_one_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """memory-plugin's pipeline over a real LanceDB table of 1,500 rows, 1,000 fetched and 5
    returned: the run, its final ids and its stages' summaries make none of the 995 Drops
    past the limit (the cut made them all before); one asked for is made alone, and the
    whole list when the JSON is written, equal to a list made eagerly."""
    from inspector.core.engine.flow.question import Question, run_question
    from inspector.core.engine.flow.runner import PoolCache
    from inspector.core.engine.flow.stages import cuts
    from inspector.core.stores.opening import open_store

    made = {"n": 0}
    real = rows_mod.drop

    def counted(*a: Any) -> Drop:
        made["n"] += 1
        return real(*a)

    monkeypatch.setattr(rows_mod, "drop", counted)
    monkeypatch.setattr(cuts, "drop", counted)  # the eager cut made its Drops through this
    path = write_random_store(tmp_path / "db", n=1500, dim=8, seed=34)
    q = Question(store=str(path), preset="memory-plugin", text="keys", vector=[0.1] * 8,
                 limit=5, set={"fetch.overfetch": 200.0, "min_score.min": -1e9})
    trace = run_question(q, open_store(str(path)), PoolCache()).trace
    final = trace.final
    assert final.name == "final" and len(final.rows_in) == 1000 and len(final.ids) == 5
    for st in trace.stages:
        summarise(st)
    assert summarise(final).drops == (("past_limit", 995),)
    assert made["n"] == 0
    sixth = final.rows_in[5].id
    assert find_drop(final.dropped, sixth) == Drop(sixth, "past_limit",
                                                    (("rank", 6), ("limit", 5)))
    assert made["n"] == 1
    assert [d.to_json() for d in final.dropped] == [
        d.to_json() for d in _eager(list(final.rows_in), 5, "past_limit", "limit")]
    assert made["n"] == 1 + 995


def test_a_cut_stages_counts_are_their_definitions() -> None:
    """Summaries of cut stages whose drops are a CutDrops: duplicate ids, NaN scores, cuts
    past the end, and a cut whose rows are not the very rows that came in."""
    rng = random.Random(3401)
    for _ in range(3000):
        size = rng.randint(0, 40)
        ids = [rng.randint(0, 30) for _ in range(size)]
        scores = [rng.choice([0.1, 0.2, math.nan, rng.random()]) for _ in range(size)]
        rows_in = _rows(ids, scores)
        n = rng.randint(0, size + 3)
        source = rows_in if rng.random() < 0.8 else _rows(ids, scores)  # equal, not the same
        code, cut = rng.choice([("past_limit", "limit"), ("outside_window", "window")])
        dropped = CutDrops(source, n, code, cut)
        st = StageRun(name="s", kind="limit", role="cut", params={}, rows_in=tuple(rows_in),
                      rows=tuple(rows_in[:n]), dropped=dropped, note="")
        got = summarise(st)
        assert dropped._made is None  # counted without a Drop made
        assert (got.drops, got.cut, got.rescored, got.moved) == _by_definition(st)
        eager = StageRun(name="s", kind="limit", role="cut", params={},
                         rows_in=tuple(rows_in), rows=tuple(rows_in[:n]),
                         dropped=_eager(source, n, code, cut), note="")
        assert summarise(eager) == got


def test_two_cuts_of_the_very_same_rows_are_told_the_same_without_a_drop_made() -> None:
    """A tick that leaves a cut's tail as it was (the same rows past the same cut) leaves the
    stage's table as it was: `same_drops` says so from the rows, no Drop made; any other cut,
    code or row is not the same."""
    rows = _rows(list(range(30)))
    a, b = CutDrops(rows, 10, "past_limit", "limit"), CutDrops(list(rows), 10, "past_limit",
                                                               "limit")
    assert same_drops(a, b) and a._made is None and b._made is None
    other_rows = rows[:15] + _rows(list(range(15, 30)))  # equal ids, other objects
    for c in (CutDrops(rows, 11, "past_limit", "limit"),
              CutDrops(rows, 10, "outside_window", "window"),
              CutDrops(other_rows, 10, "past_limit", "limit")):
        assert not same_drops(a, c)
    made = tuple(a)
    assert same_drops(made, made) and not same_drops(made, tuple(b))  # other Drop objects
