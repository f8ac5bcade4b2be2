"""Importance blending, the one place its formula lives (the window's plots call it too)."""

from __future__ import annotations

import numpy as np


def importance_used(importance: np.ndarray, missing: np.ndarray, default: float) -> np.ndarray:
    """clamp(importance ?? default, 0, 1): missing rows take the default; a stored NaN stays
    NaN, as `??` keeps it in the real systems."""
    return np.clip(np.where(missing, default, importance), 0.0, 1.0)


def multiplier(used: np.ndarray, w: float) -> np.ndarray:
    """(1 - w) + w * importance. At w = 0 it is exactly 1: today's ranking never reads
    importance, not even a NaN one."""
    if not w:
        return np.ones(len(used))
    return (1.0 - w) + w * used


def vector_score(dist: np.ndarray) -> np.ndarray:
    """A vector pipeline's base score, 1 / (1 + _distance): the row's own, at most 1."""
    return 1.0 / (1.0 + dist)


def blend_scores(base: np.ndarray, importance: np.ndarray, missing: np.ndarray, default: float,
            w: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(importance used, multiplier, blended score) per row: base * ((1 - w) + w * imp)."""
    used = importance_used(importance, missing, default)
    mult = multiplier(used, w)
    return used, mult, base * mult


def iso_base(level: float, w: float, used: np.ndarray) -> np.ndarray:
    """The base score that blends to `level` at each importance: the iso-score line the
    window draws (NaN where the multiplier is 0, i.e. w = 1 at importance 0)."""
    mult = multiplier(np.asarray(used, np.float64), w)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = level / mult
    return np.where(np.isfinite(out), out, np.nan)
