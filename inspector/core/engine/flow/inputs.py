"""A query vector as typed (a JSON array, or @FILE holding one), read into numbers within the
inspector's bounds (`stores.bounds`)."""

from __future__ import annotations

import json

import numpy as np

from inspector.core.errors import InspectorError
from inspector.core.jsonio import read_text
from inspector.core.stores.safety.bounds import MAX_DIM, MAX_VECTOR_BYTES

_F32_MAX = float(np.finfo(np.float32).max)


def _vector_text(spec: str) -> str:
    """The JSON text of a --vector argument: itself, or the content of @FILE (a regular file
    of at most MAX_VECTOR_BYTES, UTF-8; see jsonio.read_input)."""
    if not spec.startswith("@"):
        return spec
    return read_text(spec[1:], "The vector file", MAX_VECTOR_BYTES)


def parse_vector(spec: str) -> np.ndarray:
    """A JSON array of numbers, or @FILE holding one; every value must fit a float32."""
    text = _vector_text(spec)
    if len(text) > MAX_VECTOR_BYTES:
        raise InspectorError("The query vector is too long.")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise InspectorError("The query vector must be a JSON array of numbers, "
                             "e.g. [0.1, 0.2].") from None
    if not isinstance(data, list) or not data or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in data):
        raise InspectorError("The query vector must be a non-empty JSON array of numbers.")
    if len(data) > MAX_DIM:
        raise InspectorError(f"The query vector has {len(data):,} values; at most {MAX_DIM:,}.")
    try:
        vec = np.asarray(data, np.float64)
    except OverflowError:  # an integer beyond float64
        raise InspectorError("The query vector holds a number too large for a float.") from None
    if not np.all(np.isfinite(vec)):
        raise InspectorError("The query vector contains NaN or infinite values.")
    if np.any(np.abs(vec) > _F32_MAX):
        raise InspectorError("The query vector holds a value beyond float32's range "
                             f"(about {_F32_MAX:.3g}).")
    return vec.astype(np.float32)
