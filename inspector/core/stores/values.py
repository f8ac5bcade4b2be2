"""Stored values of any Arrow type turned into what the engine computes with.

Importance may be stored as a float, an integer, a decimal or a numeric string; each is read
as its number. A value that is none of these (an unparseable string) counts as missing, and
the caller is told how many there were so it can warn instead of silently using the default.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import numpy as np


def _number(v: Any) -> float | None:
    """The number a stored value stands for, or None when it stands for none."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float, Decimal, np.number)):
        try:
            return float(v)
        except (OverflowError, ValueError):
            return None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        return x if not math.isinf(x) else None
    return None


def importance_values(values: list[Any]) -> tuple[np.ndarray, np.ndarray, int]:
    """(importance as float64, which rows have none, how many non-null values were unreadable).
    NULL and unreadable values are missing (the default applies); a stored NaN stays NaN."""
    out = np.full(len(values), np.nan)
    missing = np.ones(len(values), bool)
    unreadable = 0
    for i, v in enumerate(values):
        x = _number(v)
        if x is None:
            unreadable += v is not None
            continue
        out[i] = x
        missing[i] = False
    return out, missing, unreadable
