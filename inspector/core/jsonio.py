"""JSON in and out: stored values made JSON-ready, and JSON files read with one clear error."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.errors import InspectorError


def plain(v: Any) -> Any:
    """A stored value as JSON: numpy scalars unwrapped, NaN/inf as null, bytes as hex,
    dates as ISO text, decimals as floats."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, Decimal):  # decimal columns: shown as numbers (JSON has no decimals)
        v = float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return v


def finite(v: Any) -> Any:
    """v with every NaN or infinite float (at any depth) as null: strict JSON, whatever
    the data held (a stored vector of inf gives inf distances and scores)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [finite(x) for x in v]
    if isinstance(v, np.floating):
        return finite(float(v))
    return v


def dumps(v: Any, indent: int | None = None) -> str:
    """Strict JSON text of v (non-finite floats as null, UTF-8 kept as is)."""
    return json.dumps(finite(v), allow_nan=False, ensure_ascii=False, indent=indent)


def read_text(path: str | Path, what: str) -> str:
    """A text file's content, or one sentence naming `what` it was meant to be."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InspectorError(f"{what} {p} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InspectorError(f"Cannot read {what.lower()} {p}: {exc}.") from None


def read_json(path: str | Path, what: str) -> Any:
    """A JSON file's content, or one sentence naming `what` it was meant to be."""
    text = read_text(path, what)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InspectorError(f"{what} {path} is not valid JSON: {exc}.") from None
