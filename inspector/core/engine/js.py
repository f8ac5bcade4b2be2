"""JavaScript's number and string semantics, for systems written in it (Number(), String
length in UTF-16 code units, clamp helpers), so a stage computes exactly what their code does."""

from __future__ import annotations

import math
import re
from typing import Any

MISSING = object()  # a key absent from a JSON object (JavaScript's undefined)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|infinity)", re.I)


def number(v: Any) -> float:
    """JavaScript's Number(v): null 0, undefined NaN, booleans 0/1, numeric text parsed."""
    if v is MISSING:
        return math.nan
    if v is None:
        return 0.0
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        s = v.strip()
        if not s:
            return 0.0
        if re.fullmatch(r"0x[0-9a-f]+", s, re.I):
            return float(int(s, 16))
        if _NUMBER.fullmatch(s):
            return float(s.replace("Infinity", "inf").replace("infinity", "inf"))
        return math.nan
    if isinstance(v, list):
        return number(v[0]) if len(v) == 1 else (0.0 if not v else math.nan)
    return math.nan


# String.prototype.trim and /\s/: WhiteSpace and LineTerminator (Python's isspace differs:
# it strips U+001C..U+001F and U+0085, and keeps U+FEFF)
SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_TRIM = re.compile(f"^[{SPACE}]+|[{SPACE}]+\\Z")


def trim(text: str) -> str:
    """String.prototype.trim."""
    return _TRIM.sub("", text)


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def clamp01(value: float, fallback: float) -> float:
    """[0, 1]; a non-finite value becomes the fallback (or 0), as the plugins' clamp01 does."""
    if not finite(value):
        return fallback if finite(fallback) else 0.0
    return min(1.0, max(0.0, value))


def length(text: str) -> int:
    """String.prototype.length: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def cosine(a: Any, b: Any) -> float:
    """The plugins' cosineSimilarity: sums in order, 0 for a zero norm."""
    dot = na = nb = 0.0
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        dot += x * y
        na += x * x
        nb += y * y
    norm = math.sqrt(na) * math.sqrt(nb)
    return 0.0 if norm == 0 else dot / norm


def sort_desc(items: list[Any]) -> list[Any]:
    """Array.prototype.sort((a, b) => b.score - a.score): stable, descending."""
    return sorted(items, key=lambda r: -r.score)


def js_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """A JavaScript regex literal's behaviour in Python: `\\b`, `\\w`, `\\d` are ASCII-only in
    JavaScript (without the u flag), so patterns using them compile with re.ASCII."""
    f = 0
    if "i" in flags:
        f |= re.IGNORECASE
    if "m" in flags:
        f |= re.MULTILINE
    if re.search(r"\\[bBwWdD]", pattern) and pattern.isascii():
        f |= re.ASCII
    return re.compile(pattern, f)
