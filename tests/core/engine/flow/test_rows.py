"""The fast makers of a stage's rows (`row`, `scored`, `drop`) make the very objects the frozen
dataclasses' constructors make: equal, equally hashed, equally printed and compared, still
frozen, and with the same id."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from inspector.core.engine.flow.rows import Drop, Row, Scored, drop, row, scored


def _row(rid: str = "m1") -> Row:
    return Row(id=rid, text="postgres pool", vector=np.ones(3), scope="global",
               importance=0.7, timestamp=1.0, metadata={}, columns={"id": rid})


def test_scored_makes_what_the_constructor_makes() -> None:
    row, inputs = _row(), (("vector", 0.9), ("importance", 0.7))
    fast, slow = scored(row, 0.63, inputs), Scored(row, 0.63, inputs)
    assert type(fast) is Scored
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert all(getattr(fast, f.name) is getattr(slow, f.name)
               for f in dataclasses.fields(Scored))
    assert fast.id == slow.id == "m1" and fast.input("importance") == 0.7
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert scored(row, 0.5, inputs) != slow  # the score is compared
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.score = 1.0  # type: ignore[misc]
    assert slow.rescored(0.4, decay=0.5) == Scored(row, 0.4, (*inputs, ("decay", 0.5)))


def test_drop_makes_what_the_constructor_makes() -> None:
    detail = (("rank", 51), ("limit", 50))
    fast, slow = drop("m1", "past_limit", detail), Drop("m1", "past_limit", detail)
    assert type(fast) is Drop
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert fast.to_json() == slow.to_json() == {"id": "m1", "code": "past_limit",
                                                 "rank": 51, "limit": 50}
    assert drop("m1", "noise") == Drop("m1", "noise")
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.code = "noise"  # type: ignore[misc]


def test_row_makes_what_the_constructor_makes() -> None:
    cols = {"id": "m1", "repo": "atlas"}
    args = ("m1", "postgres pool", None, "atlas", 0.7, 1.0, {}, cols)
    fast, slow = row(*args, rowid=4, importance_missing=True), \
        Row(*args, rowid=4, importance_missing=True)
    assert type(fast) is Row
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert all(getattr(fast, f.name) is getattr(slow, f.name)
               for f in dataclasses.fields(Row))
    assert row(*args) == Row(*args) and row(*args).rowid == -1
    assert row(*args) != slow  # rowid and importance_missing are compared
    assert pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.text = "other"  # type: ignore[misc]


def test_a_stage_run_made_fast_is_what_the_constructor_makes() -> None:
    from inspector.core.engine.flow.runner import StageRun, _stage_run

    s = scored(_row(), 0.5, ())
    values = ("fetch", "lancedb_pool", "fetch", {"cap": 50}, (), (s,),
              (drop("m2", "past_limit"),), "depth 50", ("x",), {"depth": 50})
    fast, slow = _stage_run(*values), StageRun(*values)
    assert type(fast) is StageRun
    assert fast == slow and repr(fast) == repr(slow) and fast.ids == ["m1"]
    assert all(getattr(fast, f.name) is getattr(slow, f.name)
               for f in dataclasses.fields(StageRun))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.note = "other"  # type: ignore[misc]
    with pytest.raises(ValueError):  # every field is given, in order
        _stage_run(*values[:-1])
