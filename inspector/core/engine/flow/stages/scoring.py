"""Score transforms: each re-scores every row it is given and re-sorts stably (descending)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from inspector.core.engine import js
from inspector.core.engine.flow.registry import ParamDecl as P
from inspector.core.engine.flow.registry import stage
from inspector.core.engine.flow.rows import Context, Outcome, Scored
from inspector.core.engine.flow.stages.meta import access_history, lifecycle

DAY_MS = 86_400_000


def _exempt(s: Scored, prefix: str) -> bool:
    return bool(prefix) and s.id.startswith(prefix)


def _rescore(rows: list[Scored], exempt_prefix: str,
             one: Callable[[Scored], Scored]) -> Outcome:
    """`one` applied to every row whose id is not exempt, then the stable descending sort."""
    return Outcome(js.sort_desc([s if _exempt(s, exempt_prefix) else one(s) for s in rows]))


@stage("rerank", "transform",
       P("mode", "str", "cross-encoder", "rerank: none | lightweight | cross-encoder",
         choices=("none", "lightweight", "cross-encoder")),
       P("api_key_set", "bool", False, "rerankApiKey given: the cross-encoder service is "
         "called (not reproducible offline)", live=False),
       P("fused_weight", "float", 0.7, "cosine blend: weight of the current score", 0, 1,
         effect="weight", step=0.05),
       P("cosine_weight", "float", 0.3, "cosine blend: weight of cos(query, row)", 0, 1,
         effect="weight", step=0.05))
def rerank(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Cosine blend clamp01(0.7 * score + 0.3 * cos(q, v)) (the plugin's fallback and its
    no-key default); a configured cross-encoder cannot be called offline."""
    if p["mode"] == "none":
        return Outcome(rows, note="rerank off")
    note = "cosine blend (no cross-encoder key)"
    if p["mode"] == "cross-encoder" and p["api_key_set"]:
        ctx.inexact.append("the rerank stage calls a cross-encoder service, which the "
                           "inspector cannot call offline: the cosine blend it falls back to "
                           "on failure is shown instead")
        note = "cross-encoder configured: not reproducible offline; the fallback blend shown"
    out = []
    for s in rows:
        cos = js.cosine(ctx.vector, s.row.vector) if s.row.vector is not None \
            and ctx.vector is not None and len(s.row.vector) == len(ctx.vector) else math.nan
        combined = s.score * p["fused_weight"] + cos * p["cosine_weight"]
        out.append(s.rescored(js.clamp01(combined, s.score), cosine=cos))
    return Outcome(js.sort_desc(out), note=note)


@stage("recency_boost", "transform",
       P("half_life_days", "float", 14.0, "recencyHalfLifeDays (0 = off)", 0, 1e6),
       P("weight", "float", 0.1, "recencyWeight (0 = off)", 0, 10, effect="weight", step=0.05))
def recency(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """score + weight * exp(-age_days / half_life), clamped to [0, 1]."""
    hl, w = p["half_life_days"], p["weight"]
    if not hl or hl <= 0 or not w:
        return Outcome(rows, note="off")
    out = []
    for s in rows:
        ts = s.row.timestamp if s.row.timestamp > 0 else ctx.now_ms
        boost = math.exp(-((ctx.now_ms - ts) / DAY_MS) / hl) * w
        out.append(s.rescored(js.clamp01(s.score + boost, s.score), recency=boost))
    return Outcome(js.sort_desc(out))


@stage("importance_weight", "transform",
       P("base", "float", 0.7, "score * (base + (1 - base) * importance)", 0, 1,
         effect="weight", step=0.05))
def importance_weight(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """score * (base + (1 - base) * importance)."""
    b = p["base"]
    out = [s.rescored(js.clamp01(s.score * (b + (1 - b) * s.row.importance), s.score * b),
                      importance=s.row.importance) for s in rows]
    return Outcome(js.sort_desc(out))


@stage("length_norm", "transform",
       P("anchor", "float", 500.0, "lengthNormAnchor (0 = off)", 0, 1e9),
       P("strength", "float", 0.5, "f = 1 / (1 + strength * log2(max(len / anchor, 1)))", 0,
         100),
       P("exempt_prefix", "str", "corpus:", "ids starting with this are not normalised"))
def length_norm(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Long texts lose score: * 1 / (1 + 0.5 * log2(max(len / anchor, 1)))."""
    anchor = p["anchor"]
    if not anchor or anchor <= 0:
        return Outcome(rows, note="off")

    def one(s: Scored) -> Scored:
        f = 1 / (1 + p["strength"] * math.log2(max(js.length(s.row.text) / anchor, 1)))
        return s.rescored(js.clamp01(s.score * f, s.score * 0.3), length_factor=f)

    return _rescore(rows, p["exempt_prefix"], one)


@stage("time_decay", "transform",
       P("half_life_days", "float", 60.0, "timeDecayHalfLifeDays (0 = off)", 0, 1e6),
       P("reinforcement", "float", 0.5, "reinforcementFactor: recalls stretch the half-life",
         0, 100),
       P("max_multiplier", "float", 3.0, "maxHalfLifeMultiplier", 0, 1000),
       P("exempt_prefix", "str", "corpus:", "ids starting with this do not decay"))
def time_decay(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """score * (0.5 + 0.5 * exp(-age / HL)), HL stretched by access reinforcement."""
    hl = p["half_life_days"]
    if not hl or hl <= 0:
        return Outcome(rows, note="off")

    def one(s: Scored) -> Scored:
        ts = s.row.timestamp if s.row.timestamp > 0 else ctx.now_ms
        age = (ctx.now_ms - ts) / DAY_MS
        base = hl / 3 if lifecycle(s.row).temporal_type == "dynamic" else hl
        count, last = access_history(s.row)
        eff = base
        if p["reinforcement"] != 0 and count > 0:
            since = max(0.0, (ctx.now_ms - last) / DAY_MS)
            fresh = math.exp(-since * (math.log(2) / 30))
            eff = min(base + base * p["reinforcement"] * math.log1p(count * fresh),
                      base * p["max_multiplier"])
        f = 0.5 + 0.5 * math.exp(-age / eff)
        return s.rescored(js.clamp01(s.score * f, s.score * 0.5), decay=f)

    return _rescore(rows, p["exempt_prefix"], one)


_DECAY = (
    P("half_life_days", "float", 30.0, "decay.recencyHalfLifeDays (> 0)", 1e-6, 1e6),
    P("recency_weight", "float", 0.4, "decay.recencyWeight", 0, 10, effect="weight",
      step=0.05),
    P("frequency_weight", "float", 0.3, "decay.frequencyWeight", 0, 10),
    P("intrinsic_weight", "float", 0.3, "decay.intrinsicWeight", 0, 10),
    P("boost_min", "float", 0.3, "decay.searchBoostMin: the least multiplier", 0, 1),
    P("importance_modulation", "float", 1.5, "decay.importanceModulation: HL * exp(mu * imp)",
      -100, 100),
    P("beta_core", "float", 0.8, "decay.betaCore", 0, 10),
    P("beta_working", "float", 1.0, "decay.betaWorking", 0, 10),
    P("beta_peripheral", "float", 1.3, "decay.betaPeripheral", 0, 10),
    P("floor_core", "float", 0.9, "decay.coreDecayFloor", 0, 1),
    P("floor_working", "float", 0.7, "decay.workingDecayFloor", 0, 1),
    P("floor_peripheral", "float", 0.5, "decay.peripheralDecayFloor", 0, 1),
    P("exempt_prefix", "str", "corpus:", "ids starting with this do not decay"),
)


@stage("lifecycle_decay", "transform", *_DECAY)
def lifecycle_decay(ctx: Context, rows: list[Scored], p: dict[str, Any]) -> Outcome:
    """Weibull recency, access frequency and importance x confidence, with tier floors:
    score * clamp(min + (1 - min) * max(tier floor, composite, recency), min, 1)."""
    def one(s: Scored) -> Scored:
        mult = decay_multiplier(s, ctx.now_ms, p)
        return s.rescored(js.clamp01(s.score * mult, s.score * 0.3), decay=mult)

    return _rescore(rows, p["exempt_prefix"], one)


def decay_multiplier(s: Scored, now_ms: float, p: dict[str, Any]) -> float:
    lc = lifecycle(s.row)
    created = s.row.timestamp
    last = lc.last_accessed_at or created
    imp = s.row.importance
    active = last if lc.access_count > 0 else created
    days = max(0.0, (now_ms - active) / DAY_MS)
    hl = p["half_life_days"] / 3 if lc.temporal_type == "dynamic" else p["half_life_days"]
    eff = hl * math.exp(p["importance_modulation"] * imp)
    r = math.exp(-(math.log(2) / eff) * days ** p["beta_" + lc.tier])
    f = 1 - math.exp(-lc.access_count / 5)
    if lc.access_count > 1:
        span = max(1.0, (active - created) / DAY_MS)
        gap = span / max(lc.access_count - 1, 1)
        f *= 0.5 + 0.5 * math.exp(-gap / 30)
    i = imp * lc.confidence
    composite = p["recency_weight"] * r + p["frequency_weight"] * f + p["intrinsic_weight"] * i
    floor = max(p["floor_" + lc.tier], composite, r)
    m = p["boost_min"] + (1 - p["boost_min"]) * floor
    return min(1.0, max(p["boost_min"], m))
