"""Plain data between stages: a memory as read, a scored candidate, a drop and its reason,
and the run's context (query, scopes, clock, limit, the legs fetched so far)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Row:
    """One stored memory, its values read as the system reads them (see legs.read_row)."""

    id: str
    text: str
    vector: np.ndarray | None = field(compare=False)  # float64; None when unusable
    scope: str | None
    importance: float
    timestamp: float  # epoch ms
    metadata: dict[str, Any] = field(compare=False)
    columns: dict[str, Any] = field(compare=False)  # every non-vector column as stored
    rowid: int = -1
    # no importance stored (NULL, or not a number): a default applies; a stored NaN is not
    # missing (the real formulas keep it, and NaN scores pass no threshold)
    importance_missing: bool = False


class _RowId:
    """`Scored.id`: the row's id, kept in the object's own dict once read (a non-data
    descriptor: later reads are plain attribute reads; functools.cached_property takes a
    lock on every first read in Python 3.11, which a re-rank pays once per row)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__["id"] = obj.row.id
        return value


@dataclass(frozen=True)
class Scored:
    """A candidate in a stage's list: its row, its current score and what fed that score."""

    row: Row
    score: float
    inputs: tuple[tuple[str, float], ...] = ()  # e.g. (("vector", 0.90), ("bm25", 0.96))

    id = _RowId()  # the row's id: the views read it per row per stage, every tick

    def rescored(self, score: float, **inputs: float) -> Scored:
        # dataclasses.replace costs ~2 us a row on every re-rank, the constructor ~0.5
        return scored(self.row, score, self.inputs + tuple(inputs.items()))

    def input(self, name: str, default: float | None = None) -> float | None:
        for k, v in reversed(self.inputs):
            if k == name:
                return v
        return default


_new = object.__new__


def scored(row: Row, score: float, inputs: tuple[tuple[str, float], ...],
           rid: str | None = None) -> Scored:
    """Scored(row, score, inputs), made without the frozen dataclass's __init__ (it sets each
    field through object.__setattr__, ~0.5 us; this ~0.2): a re-rank makes one per row per
    stage it re-scores. The same object in every way (tests/core/engine/flow/test_rows.py);
    its id is read now, as every view reads it (`rid`: the row's id, known without reading
    the row: a deep fetch's rows are mostly out of the processor's caches)."""
    s = _new(Scored)
    d = s.__dict__
    d["row"] = row
    d["score"] = score
    d["inputs"] = inputs
    d["id"] = row.id if rid is None else rid
    return s


def row(rid: str, text: str, vector: np.ndarray | None, scope: str | None, importance: float,
        timestamp: float, metadata: dict[str, Any], columns: dict[str, Any], rowid: int = -1,
        importance_missing: bool = False) -> Row:
    """Row(...) without the frozen dataclass's __init__ (see `scored`): a deep pool reads
    thousands of rows at once."""
    r = _new(Row)
    r.__dict__.update(id=rid, text=text, vector=vector, scope=scope, importance=importance,
                      timestamp=timestamp, metadata=metadata, columns=columns, rowid=rowid,
                      importance_missing=importance_missing)
    return r


def drop(rid: str, code: str, detail: tuple[tuple[str, Any], ...] = ()) -> Drop:
    """Drop(rid, code, detail) without the frozen dataclass's __init__ (see `scored`): a
    limit or window cut makes one per row past it."""
    d = _new(Drop)
    f = d.__dict__
    f["id"] = rid
    f["code"] = code
    f["detail"] = detail
    return d


@dataclass(frozen=True)
class Drop:
    """Why a row left a stage, in the one vocabulary every view renders (never sentences).

    code: below_min_score | expired | inactive | outside_window | past_limit | noise |
    must_contain | out_of_scope | category | no_vector | metadata_filter |
    private | blank_text | idle | duplicate
    """

    id: str
    code: str
    detail: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "code": self.code, **dict(self.detail)}


class CutDrops(Sequence["Drop"]):
    """The Drops of the rows past a cut at n (a window's, a limit's), each
    `drop(id, code, (("rank", its rank), (cut, n)))`, made when first read.

    A deep run's cut drops thousands of rows, and most runs never read them: a sweep's cells
    and truths read the final ids, and a live tick shows the few a table scrolls to. It is
    a sequence of exactly those Drops in every way a reader sees (length, index, slice,
    iteration, equality with a tuple of them, hash, `+`), and a reader that wants the ids
    alone (`ids`) gets them without a Drop made."""

    __slots__ = ("_rest", "_start", "_code", "_detail", "_made")

    def __init__(self, rows: Sequence[Scored], n: int, code: str, cut: str) -> None:
        self._rest = rows[n:]  # the rows past the cut (Scored never change)
        self._start = n + 1  # the first one's rank
        self._code = code
        self._detail = (cut, n)
        self._made: tuple[Drop, ...] | None = None

    @property
    def code(self) -> str:
        """The one code every Drop here has."""
        return self._code

    def ids(self) -> list[str]:
        """Each dropped row's id, in order, no Drop made."""
        return list(map(_SCORED_ID, self._rest))

    def covers(self, rows: Sequence[Scored], n: int) -> bool:
        """Whether these are the Drops of exactly rows[n:] (the very rows)."""
        rest = self._rest
        return len(rest) == len(rows) - n and all(map(is_, rest, rows[n:]))

    def same(self, other: CutDrops) -> bool:
        """Whether both are the Drops of the very same rows past the same cut (equal Drops,
        told without making them)."""
        return (self._code, self._detail, self._start) == \
            (other._code, other._detail, other._start) and len(self._rest) == \
            len(other._rest) and all(map(is_, self._rest, other._rest))

    def _all(self) -> tuple[Drop, ...]:
        made = self._made
        if made is None:
            ranks = zip(repeat("rank"), range(self._start, self._start + len(self._rest)))
            made = self._made = tuple(map(drop, map(_SCORED_ID, self._rest),
                                          repeat(self._code),
                                          zip(ranks, repeat(self._detail))))
        return made

    def __len__(self) -> int:
        return len(self._rest)

    def _one(self, at: int) -> Drop:
        return drop(self._rest[at].id, self._code, (("rank", self._start + at), self._detail))

    def __getitem__(self, i: Any) -> Any:
        if self._made is not None:
            return self._made[i]
        if isinstance(i, slice):  # the Drops asked for alone (a view shows the first few)
            return tuple(map(self._one, range(len(self._rest))[i]))
        return self._one(range(len(self._rest))[i])  # IndexError as a tuple's

    def find(self, rid: str) -> Drop | None:
        """The Drop of the first row with id `rid` (None: none), the others left unmade."""
        try:
            return self._one(self.ids().index(rid))
        except ValueError:
            return None

    def __iter__(self) -> Iterator[Drop]:
        return iter(self._all())

    def __bool__(self) -> bool:
        return bool(self._rest)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CutDrops):
            return self._all() == other._all()
        if isinstance(other, tuple):
            return self._all() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __add__(self, other: Any) -> Any:
        return self._all() + tuple(other) if isinstance(other, (tuple, CutDrops)) \
            else NotImplemented

    def __radd__(self, other: Any) -> Any:
        return tuple(other) + self._all() if isinstance(other, tuple) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> Any:  # pickled as the tuple it stands for
        return tuple, (self._all(),)


_SCORED_ID = attrgetter("id")


def find_drop(dropped: Sequence[Drop], rid: str) -> Drop | None:
    """The first Drop of row `rid` among a stage's drops (None: none); a cut's Drops are not
    all made to find one."""
    if isinstance(dropped, CutDrops):
        return dropped.find(rid)
    return next((d for d in dropped if d.id == rid), None)


def same_drops(a: Sequence[Drop], b: Sequence[Drop]) -> bool:
    """Whether two stage runs dropped the very same Drops (two cuts' CutDrops: the same rows
    past the same cut), told without making a cut's Drops."""
    if isinstance(a, CutDrops) and isinstance(b, CutDrops):
        return a is b or a.same(b)
    return len(a) == len(b) and all(map(is_, a, b))


def dropped_ids(dropped: Sequence[Drop]) -> list[str]:
    """The ids of a stage's drops, in order (a cut's without a Drop made)."""
    return dropped.ids() if isinstance(dropped, CutDrops) else list(map(_SCORED_ID, dropped))


DROP_LABELS = {
    "below_min_score": "below the stage's min score",
    "expired": "expired (valid_until passed)",
    "inactive": "inactive (not yet valid, or superseded)",
    "outside_window": "outside the window",
    "past_limit": "past the limit",
    "noise": "matched a noise pattern",
    "must_contain": "lacks a required tag",
    "out_of_scope": "out of scope",
    "no_vector": "has no usable vector",
    "category": "lacks every asked category",
    "metadata_filter": "metadata does not match the filter",
    "private": "private to another source",
    "blank_text": "its text is blank",
    "idle": "an idle node",
    "duplicate": "repeats an earlier row's content",
}


@dataclass(frozen=True)
class Tie:
    """Rows with equal scores at a fetch cut whose order the system leaves to LanceDB."""

    stage: str
    ids: tuple[str, ...]  # the tied rows this run kept
    value: float
    measure: str  # bm25 | distance
    cut: int  # the depth the leg asked LanceDB for
    beyond: int  # tied rows past the cut (at least); 0 when the tie ends inside
    arbitrary: bool
    at_cut: bool = True
    near: bool = False  # scores a few float32 units apart, which clients order differently
    members: tuple[str, ...] = ()  # every row of the tie that was seen, past the cut too
    order: str = ""  # how the system orders the group, where it is determined

    def to_json(self) -> dict[str, Any]:
        if self.order:
            order = self.order
        elif self.at_cut:
            order = ("arbitrary: LanceDB's full-text search keeps any subset of the rows tied "
                     "at its limit (its Node and Python clients keep different ones); the "
                     "lowest row ids are shown")
        elif self.near:
            order = ("arbitrary: BM25 scores this close are ordered differently by LanceDB's "
                     "Node and Python clients (measured); shown by score, then row id")
        else:
            order = ("arbitrary: LanceDB orders equal BM25 scores arbitrarily (its clients "
                     "differ); shown by row id")
        return {"stage": self.stage, "ids": list(self.ids), "score": self.value,
                "measure": self.measure, "at_cut": self.at_cut, "cut": self.cut,
                "beyond": self.beyond, "arbitrary": self.arbitrary, "near": self.near,
                "members": list(self.members), "order": order}


@dataclass
class Context:
    """What one run knows besides the candidate list. Stages read it; legs add to it."""

    store: Any
    text: str | None
    vector: np.ndarray | None
    scopes: tuple[str, ...] | None  # None: unscoped; (): deny everything
    limit: int
    now_ms: float
    settings: dict[str, Any]
    bm25_text: str | None = None
    legs: dict[str, list[Scored]] = field(default_factory=dict)
    ties: list[Tie] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    inexact: list[str] = field(default_factory=list)  # why the answer is not the system's
    rows_read: int = 0
    # what query stages decided that shapes the fetches (depths, allowlists, the text sent);
    # part of every fetch's cache key, so a change of it searches again
    request: dict[str, Any] = field(default_factory=dict)
    # what-ifs (never the system's own behaviour): vector legs bypass the index; a stage keeps
    # at least this many rows (a fetch asks for at least that many)
    exact: bool = False
    widen: dict[str, int] = field(default_factory=dict)
    stage: str = ""  # the stage running now (set by the runner)
    # the outcome whose rows the running stage was handed, unchanged (the runner's copy of
    # its list; None past a query stage): a stage may answer from what it remembers of it
    handed: Outcome | None = None
    # one question's memo, shared by its runs (Runs.stage_memo; None: a run of its own): a
    # stage keeps what each of its rows gave under its parameters, so a live tick or a sweep's
    # cell makes again only the rows new to it, and nothing outlives the question
    memo: dict[str, Any] | None = None

    def wide(self, n: int) -> int:
        """The depth the running stage uses: its own, or deeper where a what-if widens it."""
        return max(n, self.widen.get(self.stage, 0))


@dataclass(frozen=True)
class Outcome:
    """What a stage returns: its output list, the rows it dropped and why, and a note."""

    rows: list[Scored]
    dropped: Sequence[Drop] = ()  # a tuple, or a cut's CutDrops
    note: str = ""
    deferred: tuple[str, ...] = ()  # ids moved to the end without a re-sort (MMR)
    facts: dict[str, Any] = field(default_factory=dict)  # what else it computed (JSON-ready)
    # what the rows were made from, for a later stage that can answer from it (the classic
    # fetch: its pool and each row's position in it); never shown, never compared
    source: Any = field(default=None, compare=False, repr=False)
