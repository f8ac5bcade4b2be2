"""Cuts and filters: thresholds, expiry, windows, limits, noise and tag requirements. They
keep the order they are given."""

from __future__ import annotations

from itertools import compress, repeat
from operator import attrgetter, ge, not_
from typing import Any

from inspector.core.engine import js
from inspector.core.engine.flow.columns import Columns
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import columns, stage
from inspector.core.engine.flow.rows import Context, CutDrops, Drop, Outcome, Scored, drop
from inspector.core.engine.flow.stages.meta import expired_at


@stage("min_score", "cut",
       P("min", "float", 0.3, "keep score >= min", -1e9, 1e9, effect="threshold", step=0.01),
       P("drop_expired", "bool", False, "also drop rows whose valid_until has passed"),
       rowwise=True)
def min_score(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep rows scoring at least `min` (then, optionally, drop expired rows)."""
    least = p["min"]
    ok = list(map(ge, map(_SCORE, rows), repeat(least)))  # a NaN is below every threshold
    if not p["drop_expired"]:  # a deep run's threshold drops thousands: made by map
        gone = list(compress(rows, map(not_, ok)))
        return Outcome(list(compress(rows, ok)), tuple(map(
            drop, map(_ID, gone), repeat("below_min_score"),
            zip(zip(repeat("score"), map(_SCORE, gone)), repeat(("min", least))))))
    keep, dropped = [], []
    for s, fine in zip(rows, ok, strict=True):
        if not fine:
            dropped.append(Drop(s.id, "below_min_score", (("score", s.score), ("min", least))))
        elif expired_at(s.row, ctx.now_ms):  # drop_expired: the path above returned
            dropped.append(Drop(s.id, "expired", (("valid_until",
                                                  s.row.metadata.get("valid_until")),)))
        else:
            keep.append(s)
    return Outcome(keep, tuple(dropped))


@columns("min_score")
def min_score_columns(ctx: Context, cols: Columns, p: dict[str, Any]) -> Columns | None:
    """The threshold over columns (a NaN is below it); expiry reads each row: the rows."""
    if p["drop_expired"]:
        return None
    return cols.keep(cols.score >= p["min"])


@stage("unexpired", "filter")
def unexpired(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Drop rows whose valid_until has passed."""
    out = min_score(ctx, rows, {"min": float("-inf"), "drop_expired": True})
    return out


@stage("window", "cut",
       P("per_limit", "float", 2.0, "keep the first per_limit * limit rows", 0, 1000,
         effect="depth", step=0.5),
       P("enabled", "bool", True, "memory-lancedb-pro: on unless rerank is 'none'",
         effect="gate"), widens=True)
def window(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first per_limit * limit rows; the rest are gone for good."""
    if not p["enabled"]:
        return Outcome(rows, note="window off")
    n = ctx.wide(int(p["per_limit"] * ctx.limit))
    return Outcome(rows[:n], CutDrops(rows, n, "outside_window", "window"))


@stage("limit", "cut", widens=True)
def limit(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep the first `limit` rows."""
    n = ctx.wide(ctx.limit)
    return Outcome(rows[:n], CutDrops(rows, n, "past_limit", "limit"))


@columns("limit")
def limit_columns(ctx: Context, cols: Columns, p: dict[str, Any]) -> Columns:
    return cols.head(ctx.wide(ctx.limit))


_ID = attrgetter("id")
_SCORE = attrgetter("score")


@stage("noise_filter", "filter",
       P("enabled", "bool", True, "filterNoise", effect="gate"),
       P("min_length", "int", 5, "a trimmed text shorter than this (UTF-16 units) is noise",
         0, 10_000, effect="threshold"),
       P("patterns", "table", {}, "groups: {name: [[pattern, flags], ...]} (JavaScript regex "
         "literals); a text matching any is noise"))
def noise(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Drop rows whose text is too short or matches a noise pattern."""
    if not p["enabled"]:
        return Outcome(rows, note="noise filter off")
    rule = (p["min_length"], tuple((g, tuple((pat, flags) for pat, flags in pats))
                                   for g, pats in p["patterns"].items()))
    memo = _NOISE.setdefault(rule, {})
    compiled: list[tuple[str, str, Any]] | None = None
    keep, dropped = [], []
    for s in rows:
        text = s.row.text.strip()
        why = memo.get(text, memo)
        if why is memo:  # a text not decided under this rule yet
            if compiled is None:
                compiled = [(g, pat, js.js_regex(pat, flags)) for g, pats in rule[1]
                            for pat, flags in pats]
            why = _noise_of(text, rule[0], compiled)
            _NOISE_COUNT[0] += 1
            if _NOISE_COUNT[0] > NOISE_TEXTS_MAX:
                _NOISE.clear()
                _NOISE_COUNT[0] = 1
                memo = _NOISE.setdefault(rule, {})
            memo[text] = why
        if why is None:
            keep.append(s)
        else:
            dropped.append(Drop(s.id, "noise", why))
    return Outcome(keep, tuple(dropped))


# (min length, patterns) -> text -> why it is noise (None: kept). A slider tick re-runs the
# filter on the same texts: each is matched against the patterns once. Bounded: past
# NOISE_TEXTS_MAX texts, start again.
_NOISE: dict[Any, dict[str, Any]] = {}
_NOISE_COUNT = [0]
NOISE_TEXTS_MAX = 50_000


def _noise_of(text: str, min_length: int, compiled: list[tuple[str, str, Any]]
              ) -> tuple[tuple[str, str], ...] | None:
    """Why a trimmed text is noise (the drop's details), or None."""
    if js.length(text) < min_length:
        return (("group", "too_short"),)
    hit = next(((g, pat) for g, pat, rx in compiled if rx.search(text)), None)
    return None if hit is None else (("group", hit[0]), ("pattern", hit[1]))


@stage("must_contain_tags", "filter")
def must_contain(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Keep rows whose lower-cased text holds every tag token of the query."""
    tags = ctx.settings.get("_tags", ())
    keep, dropped = [], []
    for s in rows:
        low = s.row.text.lower()
        missing = [t for t in tags if t.lower() not in low]
        if missing:
            dropped.append(Drop(s.id, "must_contain", (("missing", missing[0]),)))
        else:
            keep.append(s)
    return Outcome(keep, tuple(dropped))
