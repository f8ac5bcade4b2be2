"""What a memory's JSON metadata says about its lifecycle, read as memory-lancedb-pro reads it
(its smart-metadata normalisation): validity window, expiry, tier, access history."""

from __future__ import annotations

import math
from dataclasses import dataclass

from inspector.core.engine import js
from inspector.core.engine.flow.rows import Row

TIERS = ("core", "working", "peripheral")


@dataclass(frozen=True)
class Lifecycle:
    valid_from: float
    invalidated_at: float | None
    valid_until: float | None
    tier: str
    access_count: int
    confidence: float
    last_accessed_at: float
    temporal_type: str | None


def _timestamp(v: object, fallback: float) -> float:
    n = js.number(v)
    return fallback if not math.isfinite(n) or n <= 0 else float(math.floor(n))


def _optional_timestamp(v: object) -> float | None:
    n = js.number(v)
    return None if not math.isfinite(n) or n <= 0 else float(math.floor(n))


def _count(v: object, fallback: float) -> float:
    n = js.number(v)
    return fallback if not math.isfinite(n) or n < 0 else float(math.floor(n))


def lifecycle(row: Row) -> Lifecycle:
    m = row.metadata
    ts = row.timestamp
    valid_from = _timestamp(m.get("valid_from", js.MISSING), ts)
    inv = _optional_timestamp(m.get("invalidated_at", js.MISSING))
    conf = js.number(m.get("confidence", js.MISSING))
    tier = m.get("tier")
    temporal = m.get("memory_temporal_type")
    return Lifecycle(
        valid_from=valid_from,
        invalidated_at=inv if inv and inv >= valid_from else None,
        valid_until=_optional_timestamp(m.get("valid_until", js.MISSING)),
        tier=tier if isinstance(tier, str) and tier in TIERS else "working",
        access_count=int(_count(m.get("access_count", js.MISSING), 0)),
        confidence=min(1.0, max(0.0, conf)) if math.isfinite(conf) else 0.7,
        last_accessed_at=_count(m.get("last_accessed_at", js.MISSING), ts),
        temporal_type=temporal if temporal in ("static", "dynamic") else None)


def active_at(row: Row, now_ms: float) -> bool:
    """Valid already, and not superseded (invalidated) by now."""
    lc = lifecycle(row)
    if lc.valid_from > now_ms:
        return False
    return not lc.invalidated_at or lc.invalidated_at > now_ms


def expired_at(row: Row, now_ms: float) -> bool:
    lc = lifecycle(row)
    return lc.valid_until is not None and lc.valid_until <= now_ms


def access_history(row: Row) -> tuple[int, float]:
    """(access count, last access ms) as the access tracker parses them: camelCase first,
    count floored and clamped to [0, 10000], a bad last-access time read as 0."""
    m = row.metadata

    def first(*keys: str) -> object:
        for k in keys:
            v = m.get(k)
            if v is not None:
                return v
        return 0

    count = js.number(first("accessCount", "access_count"))
    count = 0 if not math.isfinite(count) else min(10_000, max(0, math.floor(count)))
    last = js.number(first("lastAccessedAt", "last_accessed_at"))
    return int(count), last if math.isfinite(last) and last >= 0 else 0.0
