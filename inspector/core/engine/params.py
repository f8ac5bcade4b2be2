"""The pipeline's parameters, the candidate depths they imply, and JSON in and out."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from inspector.core.engine.scope import STRATEGIES, ScopeSpec, make_scope
from inspector.core.errors import InspectorError
from inspector.core.stores.ann.indexes import DEFAULT_NPROBES
from inspector.core.stores.safety.bounds import MAX_CANDIDATES, MAX_SEARCH_ROWS

MODES = ("vector", "fts", "hybrid")
DISTANCES = ("l2", "cosine")
FILTERS = ("post", "pushdown")
# How tied scores are ordered (see ties.py): LanceDB's own order, or ties by id ascending.
TIE_RULES = ("lancedb", "id")
ANN_KNOBS = ("nprobes", "min_nprobes", "max_nprobes", "refine_factor", "ef")

# Bounds LanceDB 0.40 honours (measured on indexed tables, tests/core/engine/test_knob_bounds):
# past them it aborts the process natively or refuses the search with a type-conversion error.
MAX_NPROBES = 1_000_000  # partitions probed: more than any IVF index has (u32 in LanceDB)
# LanceDB reserves memory up front for depth x refine factor candidates (16 bytes each) and
# for ef entries (8 bytes each), whatever the table's size: refine 1e9 at depth 10 asks for
# 160 GB and aborts. At these bounds it reserves at most 800 MB and 80 MB of address space.
MAX_REFINED = 50_000_000  # depth x refine factor: MAX_CANDIDATES x the ladder's top (50)
MAX_EF = 10_000_000
ANALYSIS_DEPTH = 10_000  # = expect.EXHAUSTIVE_MAX: the analysis searches this deep with p's knobs


@dataclass(frozen=True)
class Params:
    """Every knob of the retrieval pipeline. Frozen: derive a changed copy with `replace`."""

    mode: str = "vector"
    distance: str = "l2"
    limit: int = 10
    overfetch: float = 1.0
    cap: int = 50
    fts_k: int = 0
    vec_k: int = 0
    rrf_k: int = 60
    scope: str | None = None
    scope_strategy: str = "repo_prefix"
    scope_map: tuple[tuple[str, tuple[str, ...]], ...] = ()
    scope_column: str | None = None
    filter: str = "post"
    blend: float = 0.0
    default_importance: float = 0.7
    min_score: float = 0.0
    tie_rule: str = "lancedb"
    # ANN search knobs (None: LanceDB's default, as the real systems pass none); exact = flat
    nprobes: int | None = None
    min_nprobes: int | None = None
    max_nprobes: int | None = None
    refine_factor: int | None = None
    ef: int | None = None
    exact: bool = False

    def __post_init__(self) -> None:
        _check_choice("mode", self.mode, MODES)
        _check_choice("distance", self.distance, DISTANCES)
        _check_choice("filter", self.filter, FILTERS)
        _check_choice("tie rule", self.tie_rule, TIE_RULES)
        _check_choice("scope strategy", self.scope_strategy, STRATEGIES)
        _check_int("limit", self.limit, 1)
        _check_int("cap", self.cap, 0)
        _check_int("fts_k", self.fts_k, 0)
        _check_int("vec_k", self.vec_k, 0)
        _check_int("rrf_k", self.rrf_k, 0)
        for what, value in (("limit", self.limit), ("cap", self.cap), ("fts_k", self.fts_k),
                            ("vec_k", self.vec_k)):
            _check_at_most(what, value, MAX_CANDIDATES, "the deepest candidate list the "
                           "inspector fetches")
        for knob in ANN_KNOBS:
            if getattr(self, knob) is not None:
                _check_int(knob, getattr(self, knob), 0 if knob == "max_nprobes" else 1)
        self._check_ann_bounds()
        if not isinstance(self.exact, bool):
            raise InspectorError(f"exact must be true or false, not {self.exact!r}.")
        if not _finite(self.overfetch) or self.overfetch < 1:
            raise InspectorError(f"Over-fetch must be a number >= 1, not {self.overfetch!r}.")
        if not _finite(self.blend) or not 0 <= self.blend <= 1:
            raise InspectorError(f"Blend weight must be between 0 and 1, not {self.blend!r}.")
        if not _finite(self.default_importance):
            raise InspectorError("Default importance must be a finite number.")
        if not _finite(self.min_score):
            raise InspectorError("Min score must be a finite number.")

    def _check_ann_bounds(self) -> None:
        """Every ANN knob within what LanceDB can honour, alone and together."""
        for knob in ("nprobes", "min_nprobes", "max_nprobes"):
            _check_at_most(knob, getattr(self, knob), MAX_NPROBES,
                           "more partitions than any IVF index has")
        _check_at_most("ef", self.ef, MAX_EF, "the largest candidate list an HNSW search "
                       "is given")
        lo = self.min_nprobes or self.nprobes or DEFAULT_NPROBES
        hi = self.max_nprobes if self.max_nprobes is not None else \
            (self.nprobes or DEFAULT_NPROBES)
        if hi and lo > hi:
            given = "LanceDB's default" if self.max_nprobes is None and self.nprobes is None \
                else "given"
            raise InspectorError(f"min_nprobes {lo:,} is above the maximum nprobes {hi:,} "
                                 f"({given}); LanceDB needs the minimum at most the maximum "
                                 "(set max_nprobes too, 0 for no maximum).")
        if self.mode == "fts" or (self.refine_factor is None and self.ef is None):
            return
        k = depths(self).vec_k
        if self.refine_factor is not None:
            deep = max(k, ANALYSIS_DEPTH)
            most = MAX_REFINED // deep
            if self.refine_factor > most:
                limit = f"is above {most:,}, the most" if most else "is more than"
                raise InspectorError(
                    f"refine_factor {self.refine_factor:,} {limit} LanceDB can honour for "
                    f"searches {deep:,} deep (it reserves depth x refine factor candidates up "
                    f"front, at most {MAX_REFINED:,}).")
        if self.ef is not None and self.ef < k:
            raise InspectorError(f"ef {self.ef:,} is below the vector search depth {k:,}; "
                                 "LanceDB's HNSW search needs ef >= the depth.")

    def scope_spec(self) -> ScopeSpec:
        return make_scope(self.scope, self.scope_strategy, dict(self.scope_map),
                          self.scope_column)

    def with_(self, **changes: Any) -> Params:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["scope_map"] = {k: list(v) for k, v in self.scope_map}
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Params:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InspectorError(f"Unknown parameter(s): {', '.join(unknown)}.")
        data = dict(data)
        if isinstance(data.get("scope_map"), dict):
            data["scope_map"] = freeze_map(data["scope_map"])
        return cls(**data)


def freeze_map(m: dict[str, Any]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(sorted((str(k), tuple(v)) for k, v in m.items()))


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_choice(what: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise InspectorError(f"Unknown {what} '{value}'; choose one of {', '.join(choices)}.")


def _check_int(what: str, value: Any, lowest: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
        raise InspectorError(f"{what} must be a whole number >= {lowest}, not {value!r}.")


def _check_at_most(what: str, value: int | None, highest: int, why: str) -> None:
    if value is not None and value > highest:
        raise InspectorError(f"{what} {value:,} is above {highest:,}, {why}.")


@dataclass(frozen=True)
class Depths:
    """Candidate depths for one run: the raw pool cut and each leg's k (1-based counts)."""

    pool: int
    vec_k: int
    fts_k: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def pool_depth(limit: int, overfetch: float, cap: int) -> int:
    """ceil(limit * F), capped (cap 0 = none). The epsilon absorbs float noise in F = D/limit.
    A product past MAX_SEARCH_ROWS (F = 1e308 is a finite number) asks for every row."""
    want = limit * overfetch
    depth = max(1, math.ceil(want - 1e-9)) if want < MAX_SEARCH_ROWS else MAX_SEARCH_ROWS
    return min(depth, cap) if cap else depth


def depths(p: Params) -> Depths:
    """Depths as the real engines compute them. Without over-fetch (F = 1) a leg with a
    configured k fetches exactly that (the docs engine before its fix); with over-fetch every
    leg widens with the pool but never drops below its floor (the fix)."""
    pool = pool_depth(p.limit, p.overfetch, p.cap)

    def leg(floor: int) -> int:
        k = floor if (floor and p.overfetch == 1) else max(pool, floor)
        return min(k, p.cap) if p.cap else k

    if p.mode == "vector":
        return Depths(pool=pool, vec_k=pool, fts_k=0)
    if p.mode == "fts":
        return Depths(pool=pool, vec_k=0, fts_k=pool)
    return Depths(pool=pool, vec_k=leg(p.vec_k), fts_k=leg(p.fts_k))
