"""The stage registry: every stage kind a pipeline file may name, with its declared parameters.

A stage kind is a plain function over the candidate list (see `rows.py`) registered with
`@stage(...)`. Its parameters are declared once, here, with type, range, default and whether a
change can be answered exactly from the rows the run already fetched (`live`); pipeline files,
`--set`, `--system-config` and `inspector pipeline show` all read these declarations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from inspector.core.errors import InspectorError

ROLES = ("query", "fetch", "fusion", "filter", "transform", "cut", "diversity")
TYPES = ("float", "int", "bool", "str", "list", "table")
# What a parameter does to the rows a run keeps, for the diagnosis, the fix search, expected
# rows and sweeps (none: it shapes something else). The direction that keeps more rows:
#   depth      rows fetched or kept before a later stage (a k, an over-fetch, a window): raise
#              it (a flag: true)
#   prefilter  a flag: true puts a filter inside the search, before its cut
#   threshold  a score a row must reach: lower it
#   gate       a flag: true drops rows (a filter switched on): false keeps them
#   index      an ANN search knob (nprobes, refine factor, ef): raise it
#   weight     a re-scoring weight: moves rows, keeps as many
EFFECTS = ("", "depth", "prefilter", "threshold", "gate", "index", "weight")


@dataclass(frozen=True)
class ParamDecl:
    """One declared parameter of a stage kind."""

    name: str
    type: str  # one of TYPES; "list" is a list of strings, "table" a JSON object
    default: Any
    doc: str
    lo: float | None = None
    hi: float | None = None
    live: bool = True  # a change is answered exactly from the fetched rows, without a search
    choices: tuple[str, ...] = ()
    effect: str = ""  # one of EFFECTS
    step: float | None = None  # the finest change worth trying (a slider's step); None: any
    zero: float | None = None  # what 0 stands for (the library's default): where a raise starts

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise ValueError(f"unknown parameter effect {self.effect!r}")

    def helps(self) -> str:
        """The direction that keeps more rows: raise | lower | true | false | "" (none)."""
        if self.effect in ("depth", "index"):
            return "true" if self.type == "bool" else "raise"
        if self.effect == "prefilter":
            return "true"
        if self.effect == "gate":
            return "false"
        if self.effect == "threshold":
            return "lower"
        return ""

    def check(self, value: Any, where: str) -> Any:
        """The value as this parameter's type, or one sentence saying why it cannot be."""
        if self.type in ("float", "int"):
            return self._number(value, where)
        what = f"{where}.{self.name}"
        if self.type == "bool":
            if not isinstance(value, bool):
                raise InspectorError(f"{what} must be true or false, not {value!r}.")
            return value
        if self.type == "str":
            if not isinstance(value, str):
                raise InspectorError(f"{what} must be text, not {value!r}.")
            if self.choices and value not in self.choices:
                raise InspectorError(f"{what} must be one of {', '.join(self.choices)}, "
                                     f"not {value!r}.")
            return value
        if self.type == "list":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise InspectorError(f"{what} must be a list of texts, not {value!r}.")
            return tuple(value)
        if not isinstance(value, dict):
            raise InspectorError(f"{what} must be a table (a JSON object), not {value!r}.")
        return value

    def _number(self, value: Any, where: str) -> float | int:
        """A number of this parameter's type within its range, or one sentence naming the
        parameter, its allowed values and what was given (inf, NaN, 1e999, a 400-digit
        integer or a text included: never an OverflowError). The sentence is made only when
        it is said: a sweep checks tens of thousands of good values."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                isinstance(value, float) and not math.isfinite(value) or \
                self.type == "int" and isinstance(value, float) and not value.is_integer() or \
                self.lo is not None and value < self.lo or \
                self.hi is not None and value > self.hi:
            kind = "a whole number" if self.type == "int" else "a finite number"
            allowed = kind if self.lo is None and self.hi is None else \
                f"{kind} in [{_num(self.lo, '-inf')}, {_num(self.hi, 'inf')}]"
            raise InspectorError(f"{where}.{self.name} must be {allowed}, not "
                                 f"{_shown(value)}.")
        return int(value) if self.type == "int" else float(value)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "default": _jsonable(
            self.default), "live": self.live, "doc": self.doc}
        if self.lo is not None or self.hi is not None:
            out["range"] = [self.lo, self.hi]
        if self.choices:
            out["choices"] = list(self.choices)
        if self.effect:
            out["effect"] = self.effect
        return out


def _num(x: float | None, unbounded: str) -> str:
    if x is None:
        return unbounded
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _shown(value: Any) -> str:
    """A given value, as a sentence may quote it (a 400-digit number shortened)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@dataclass(frozen=True)
class StageKind:
    kind: str
    role: str
    fn: Callable[..., Any]
    params: tuple[ParamDecl, ...]
    doc: str
    by_name: dict[str, ParamDecl] = field(default_factory=dict, compare=False)
    # honours a what-if depth (Context.wide): a fetch asks for at least that many rows, a cut
    # keeps at least that many
    widens: bool = False
    # a vector leg: honours Context.exact (the index bypassed) and carries index knobs
    vector: bool = False
    # reads the columns by the store's roles (detected, or named by --column when it opens)
    store_roles: bool = False
    # row-wise (under these parameters): a row's fate here, kept or dropped and the score it
    # leaves with, is a function of that row and the score it came with alone; never of the
    # other rows, their number or order, nor a depth asked (a fetch: the score a row is
    # fetched with is its own at any depth). A query stage that reads no rows is row-wise.
    # What the fix search proves from (`expect.depth_free`); tests/core/engine/flow/
    # test_rowwise.py runs each declared kind over lists that differ around a row.
    rowwise: bool | Callable[[dict[str, Any]], bool] = False
    # the same stage over columns (`runner.outline`, registered with `@columns`): a function
    # (ctx, columns.Columns, params) -> Columns, or None where these parameters need the rows
    columns: Callable[..., Any] | None = None

    def is_rowwise(self, params: dict[str, Any]) -> bool:
        """True when a run of this kind with these (resolved) parameters is row-wise."""
        return bool(self.rowwise(params)) if callable(self.rowwise) else self.rowwise

    def resolve(self, given: dict[str, Any], where: str) -> dict[str, Any]:
        """Every parameter's effective value: the declared default unless given, checked."""
        unknown = sorted(set(given) - set(self.by_name))
        if unknown:
            raise InspectorError(f"{where} ({self.kind}) has no parameter "
                                 f"{', '.join(unknown)}; it takes "
                                 f"{', '.join(self.by_name) or 'none'}.")
        return {p.name: p.check(given[p.name], where) if p.name in given else p.default
                for p in self.params}


KINDS: dict[str, StageKind] = {}


def stage(kind: str, role: str, *params: ParamDecl, widens: bool = False,
          vector: bool = False, store_roles: bool = False,
          rowwise: bool | Callable[[dict[str, Any]], bool] = False
          ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a stage function under `kind`; its docstring's first line is its description.
    `widens`: the function reads its depth through `ctx.wide` (a what-if can deepen it);
    `vector`: a vector leg that reads `ctx.exact` and its index knobs; `rowwise`: each row's
    fate is its own (StageKind.rowwise; a function of the parameters where they decide)."""
    if role not in ROLES:
        raise ValueError(f"unknown stage role {role}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if kind in KINDS:
            raise ValueError(f"stage kind {kind} registered twice")
        doc = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
        KINDS[kind] = StageKind(kind, role, fn, params, doc, {p.name: p for p in params},
                                widens, vector, store_roles, rowwise)
        return fn

    return register


def columns(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the column form of a registered stage kind: the same rows kept in the same
    order with the same scores as its function, over a pool's columns (`flow.columns`)."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if kind not in KINDS or KINDS[kind].columns is not None:
            raise ValueError(f"stage kind {kind} is not registered, or has columns already")
        KINDS[kind] = replace(KINDS[kind], columns=fn)
        return fn

    return register


def kind_of(kind: str) -> StageKind:
    """The registered kind (callers import `flow.stages` first, which registers them all)."""
    try:
        return KINDS[kind]
    except KeyError:
        raise InspectorError(f"Unknown stage kind '{kind}'; the registry has "
                             f"{', '.join(sorted(KINDS))}.") from None
