"""A sweep's grid: its axes, each a declared stage parameter (`STAGE.PARAM`) and the values it
takes, for any pipeline.

By default the axes are read from what the stage kinds declare: a depth-like parameter
(effect "depth", preferring one a live session answers from its cached fetches, e.g. the
classic fetch.overfetch) by a weight-like one (effect "weight", e.g. blend.weight), each with
a ladder from its declared range and step: a depth at 1 to 10 times its current value, a
weight over its range in about ten steps, the current value always among them. `--grid
STAGE.PARAM=SPEC` names the axes instead ('a,b,c' or 'start:stop:step', true,false for a
flag); the classic grid options (`--grid-overfetch`, `--grid-blend`, ...) name the parameter
of the stage that holds that option, as the query options do (`spec.held_options`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.engine.flow.registry import ParamDecl, kind_of
from inspector.core.engine.flow.spec import (
    OPTION_ALSO,
    OPTION_PARAMS,
    PipelineSpec,
    held_options,
)
from inspector.core.errors import InspectorError

MAX_AXIS = 200  # values per axis
MAX_AXES = 3
MAX_CELLS = 2_000
DEPTH_TIMES = 10  # a depth's default ladder: 1 to 10 times its current value
WEIGHT_STEPS = 10  # a weight's default ladder: its range in about this many steps
INDEX_LADDER = (0, 5, 10, 20, 40, 80)  # an index knob's (0: the library's own default)
GRID_OPTIONS = {"grid_overfetch": "overfetch", "grid_blend": "blend",
                "grid_min_score": "min_score", "grid_nprobes": "nprobes"}


@dataclass(frozen=True)
class Axis:
    """One swept parameter: its values in order, what it does, and its value as configured."""

    key: str  # STAGE.PARAM
    values: tuple[Any, ...]
    effect: str
    live: bool
    current: Any

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "values": list(self.values), "effect": self.effect,
                "live": self.live, "current": self.current}


def parse_axis(spec: str, what: str) -> tuple[float, ...]:
    """'1,2,4' or 'start:stop:step' (inclusive) -> sorted unique finite floats. The number of
    values is known before any is built, so a tiny step fails at once instead of allocating."""
    bad = InspectorError(f"The {what} grid must be 'a,b,c' or 'start:stop:step' with finite "
                         f"numbers, not {spec[:80]!r}.")
    too_many = InspectorError(f"The {what} grid needs between 1 and {MAX_AXIS} values.")
    try:
        if ":" in spec:
            a, b, s = (float(x) for x in spec.split(":"))
            if not all(np.isfinite((a, b, s))) or s <= 0 or b < a:
                raise bad
            n = (b - a) / s + 1e-9
            if not np.isfinite(n) or n >= MAX_AXIS:
                raise too_many
            vals = [round(a + i * s, 10) for i in range(int(np.floor(n)) + 1)]
        else:
            items = spec.split(",")
            if len(items) > MAX_AXIS:
                raise too_many
            vals = [float(x) for x in items if x.strip()]
    except ValueError:
        raise bad from None
    if not all(np.isfinite(vals)):
        raise bad
    if not vals or len(vals) > MAX_AXIS:
        raise too_many
    return tuple(sorted(set(vals)))


def declared(spec: PipelineSpec) -> dict[str, tuple[ParamDecl, Any]]:
    """Every STAGE.PARAM of the pipeline, in pipeline order: its declaration and its value as
    configured (a stage in several routes counted once)."""
    out: dict[str, tuple[ParamDecl, Any]] = {}
    for route in spec.routes:
        for st in route.stages:
            kind = kind_of(st.kind)
            values = kind.resolve(st.params, st.name)
            for d in kind.params:
                out.setdefault(f"{st.name}.{d.name}", (d, values[d.name]))
    return out


def _round(decl: ParamDecl, v: float) -> Any:
    if decl.type == "int":
        return int(math.ceil(v - 1e-9))
    if decl.step:
        v = round(v / decl.step) * decl.step
    return float(round(v, 10))


def _clip(decl: ParamDecl, values: list[Any]) -> tuple[Any, ...]:
    lo = -math.inf if decl.lo is None else decl.lo
    hi = math.inf if decl.hi is None else decl.hi
    return tuple(sorted({v for v in values if lo <= v <= hi}))


def ladder(decl: ParamDecl, current: Any) -> tuple[Any, ...]:
    """The default values of one parameter, from what it declares (see the module's text)."""
    if decl.type == "bool":
        return (False, True)
    if decl.type not in ("int", "float"):
        return (current,)
    cur = float(current)
    if decl.effect == "index":
        return _clip(decl, [*INDEX_LADDER, current])
    if decl.effect == "depth":
        base = cur if cur > 0 else float(decl.step or 1)
        return _clip(decl, [current, *(_round(decl, base * m)
                                        for m in range(1, DEPTH_TIMES + 1))])
    lo = decl.lo if decl.lo is not None else cur - 1.0
    hi = decl.hi if decl.hi is not None else cur + 1.0
    step = float(decl.step or (hi - lo) / WEIGHT_STEPS or 1.0)
    spacing = step * max(1, math.ceil((hi - lo) / step / WEIGHT_STEPS - 1e-9))
    n = int(math.floor((hi - lo) / spacing + 1e-9))
    return _clip(decl, [current, *(_round(decl, lo + i * spacing) for i in range(n + 1))])


def _axis(key: str, decl: ParamDecl, current: Any, values: tuple[Any, ...]) -> Axis:
    return Axis(key, values, decl.effect, decl.live,
                list(current) if isinstance(current, tuple) else current)


def default_axes(spec: PipelineSpec) -> list[Axis]:
    """A depth-like parameter by a weight-like one, each preferring a live one (the first in
    pipeline order); either alone when the pipeline declares no other."""
    decls = declared(spec)
    out = []
    for effect in ("depth", "weight"):
        found = [(k, d, v) for k, (d, v) in decls.items()
                 if d.effect == effect and d.type in ("int", "float")]
        found.sort(key=lambda x: not x[1].live)  # stable: pipeline order within each
        if found:
            key, decl, value = found[0]
            out.append(_axis(key, decl, value, ladder(decl, value)))
    if not out:
        raise InspectorError(f"Pipeline {spec.name} declares no depth or weight parameter to "
                             f"sweep by default; name one with --grid STAGE.PARAM=SPEC (see "
                             f"`inspector pipeline show {spec.name}`).")
    return out


def _values(key: str, decl: ParamDecl, text: str) -> tuple[Any, ...]:
    where = key.partition(".")[0]
    if decl.type == "bool":
        vals = []
        for v in text.split(","):
            word = v.strip().lower()
            if word not in ("true", "false"):
                raise InspectorError(f"--grid {key}: a flag takes true,false, not {v!r}.")
            vals.append(word == "true")
        return tuple(dict.fromkeys(vals))
    if decl.type not in ("int", "float"):
        raise InspectorError(f"--grid {key}: only numbers and flags can be swept.")
    nums = parse_axis(text, key)
    vals = tuple(int(v) if decl.type == "int" else v for v in nums)
    for v in vals:
        decl.check(v, where)
    return tuple(dict.fromkeys(vals))


def parse_grid(spec: PipelineSpec, items: list[str]) -> list[Axis]:
    """`STAGE.PARAM=SPEC` each, checked against the pipeline's declared parameters."""
    if len(items) > MAX_AXES:
        raise InspectorError(f"A sweep takes at most {MAX_AXES} grid axes.")
    decls = declared(spec)
    axes: list[Axis] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or key not in decls:
            raise InspectorError(f"--grid {item!r}: name a parameter as STAGE.PARAM=SPEC; "
                                 f"pipeline {spec.name} has e.g. "
                                 f"{', '.join(list(decls)[:6])}.")
        if any(a.key == key for a in axes):
            raise InspectorError(f"--grid {key} is given twice.")
        decl, current = decls[key]
        axes.append(_axis(key, decl, current, _values(key, decl, text)))
    return axes


def option_items(spec: PipelineSpec, given: dict[str, str]) -> list[str]:
    """The classic grid options (`grid_overfetch` -> its SPEC) as `STAGE.PARAM=SPEC` items
    over the parameter of every stage that holds the option; an option no stage holds is
    refused in one sentence."""
    out = []
    for arg, spec_text in given.items():
        option = GRID_OPTIONS[arg]
        held = held_options(spec, {option: 1}).get(option, {})
        keys = [k for k in held if "." in k and _holds(spec, k, option)]
        if not keys:
            flag = "--" + arg.replace("_", "-")
            raise InspectorError(f"{flag}: pipeline {spec.name} has no stage that takes the "
                                 f"{option.replace('_', ' ')}; name its parameters with "
                                 f"--grid STAGE.PARAM=SPEC (see `inspector pipeline show "
                                 f"{spec.name}`).")
        out += [f"{k}={spec_text}" for k in keys]
    return out


def _holds(spec: PipelineSpec, key: str, option: str) -> bool:
    """True when STAGE.PARAM is the parameter an option sets (not one it also clears)."""
    stage, _, param = key.partition(".")
    kinds = {st.kind for r in spec.routes for st in r.stages if st.name == stage}
    return any(k in kinds and p == param for k, p in OPTION_PARAMS.get(option, ()))


def companions(spec: PipelineSpec, axes: list[Axis]) -> dict[str, Any]:
    """What setting an axis also sets, as the option that holds it does: an explicit
    over-fetch replaces the over-fetch a scoped query would derive (`spec.OPTION_ALSO`)."""
    out: dict[str, Any] = {}
    for ax in axes:
        stage, _, param = ax.key.partition(".")
        kinds = {st.kind for r in spec.routes for st in r.stages if st.name == stage}
        for option, also in OPTION_ALSO.items():
            if any(k in kinds and p == param for k, p in OPTION_PARAMS.get(option, ())):
                for (kind, other), value in also.items():
                    if kind in kinds:
                        out[f"{stage}.{other}"] = value
    return out


def check_size(axes: list[Axis]) -> int:
    cells = math.prod(len(a.values) for a in axes)
    if cells > MAX_CELLS:
        raise InspectorError(f"The grid has {cells:,} cells; at most {MAX_CELLS:,}.")
    return cells


def cells(axes: list[Axis]) -> Iterator[dict[str, Any]]:
    """Every cell of the grid as {STAGE.PARAM: value}, the last axis varying fastest."""
    for combo in itertools.product(*(a.values for a in axes)):
        yield dict(zip((a.key for a in axes), combo, strict=True))
