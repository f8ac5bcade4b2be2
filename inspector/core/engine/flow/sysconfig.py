"""A system's own configuration file turned into `--set` assignments, through the mapping its
pipeline file declares; every key is accounted for: applied, changes nothing here (and why),
or not reproduced (which makes the answer inexact)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from inspector.core.engine.flow.spec import MAX_FILE_BYTES, PipelineSpec
from inspector.core.errors import InspectorError
from inspector.core.jsonio import parse_json, read_text


@dataclass(frozen=True)
class Applied:
    assignments: dict[str, Any]
    notes: tuple[str, ...]  # keys that change nothing in this path, and why
    inexact: tuple[str, ...]  # keys whose effect the inspector does not reproduce
    unknown: tuple[str, ...]
    sources: dict[str, str] = field(default_factory=dict)  # assignment -> the config key


def _flatten(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out[key] = v
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _root(data: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    for path in roots:
        node: Any = data
        for part in _split_root(path):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            return node
    return data


def _split_root(path: str) -> list[str]:
    # "plugins.entries.memory-lancedb-pro.config": entry names may hold dots only as here
    return path.split(".")


def _convert(value: Any, conv: str) -> Any:
    """`not_none`, `present`; `int_in:LO:HI:FALLBACK`: a JSON number floored and clamped to
    [LO, HI], anything else FALLBACK (a JavaScript plugin's normalizeNumberInRange over a
    typeof-number check); `one_of:A|B|C:FALLBACK`: the value if it is one of them, else
    FALLBACK; `object`: a JSON object, anything else an empty one."""
    name, _, args = conv.partition(":")
    if name == "not_none":
        return value != "none"
    if name == "present":
        return bool(value)
    if name == "int_in":
        lo, hi, fallback = (int(x) for x in args.split(":"))
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            return fallback
        return max(lo, min(hi, math.floor(value)))
    if name == "object":
        return value if isinstance(value, dict) else {}
    if name == "one_of":
        choices, _, fallback = args.rpartition(":")
        return value if isinstance(value, str) and value in choices.split("|") else fallback
    raise InspectorError(f"Unknown conversion {conv} in a pipeline's system_config map.")


def from_config(spec: PipelineSpec, data: Any, where: str = "") -> Applied:
    sc = spec.system_config
    if sc is None:
        raise InspectorError(f"Pipeline {spec.name} reads no system configuration.")
    if not isinstance(data, dict):
        raise InspectorError("A system configuration file must hold a JSON object.")
    root = _root(data, sc.roots)
    for top in sorted({k.split(".")[0] for k in sc.map if "." in k}):
        if top in root and not isinstance(root[top], dict):
            raise InspectorError(f"The system configuration file {where}: {top} must be an "
                                 f"object ({{...}}), not {_short(root[top])}.")
    flat = _flatten(root)
    assignments: dict[str, Any] = {}
    sources: dict[str, str] = {}
    notes: list[str] = []
    inexact: list[str] = []
    unknown: list[str] = []
    tops = {k.split(".")[0] for k in sc.map}
    tables = tuple(k + "." for k in sc.map if isinstance(flat.get(k), dict))
    for key, value in flat.items():
        if key.startswith(tables):
            continue  # inside a table the map takes whole (e.g. a scope map)
        if key in sc.map:
            for target in sc.map[key]:
                name, _, conv = target.partition("=")
                assignments[name] = _convert(value, conv) if conv else value
                sources[name] = key
        elif key in sc.unmodelled:
            if value not in (False, None, 0, ""):
                inexact.append(f"{key}: {sc.unmodelled[key]}")
        elif key in sc.ignored:
            notes.append(f"{key}: {sc.ignored[key]}")
        elif key.split(".")[0] in sc.ignored:
            top = key.split(".")[0]
            notes.append(f"{top}: {sc.ignored[top]}")
        elif not isinstance(value, dict) and key.split(".")[0] in tops:
            unknown.append(key)
    return Applied(assignments, tuple(dict.fromkeys(notes)), tuple(inexact), tuple(unknown),
                   sources)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_config(path: str) -> Any:
    text = read_text(path, "The system configuration file", MAX_FILE_BYTES)
    return parse_json(text, "The system configuration file", path)
