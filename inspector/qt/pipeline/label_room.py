"""The rank-shift chart's rows: how many ranks it shows, and which get a text label when
rows are closer than a line of text (the rows that matter most first, then every other row
with a line of room from those kept). Plain arithmetic on ranks and pixels, so the chart
re-runs it on every resize."""

from __future__ import annotations

from collections.abc import Iterable

STEPS = (1, 2, 5)  # round rank steps: 1, 2, 5, 10, 20, 50, ...


def spaced(ranks: Iterable[int], pitch: float, need: float) -> list[int]:
    """The ranks, taken in the order given, whose labels stay at least `need` pixels from
    every label kept before them, rows being `pitch` pixels apart; sorted."""
    kept: list[int] = []
    for r in ranks:
        if r not in kept and all(abs(r - k) * pitch >= need for k in kept):
            kept.append(r)
    return sorted(kept)


def labelled_ranks(top: int, pitch: float, need: float,
                   selected: int | None = None) -> list[int]:
    """The ranks to label: rank 1, the selected rank (if any), then ranks 2..top in order,
    each only where its line of text clears the ones kept."""
    first = [1, selected] if selected is not None else [1]
    return spaced([*first, *range(2, top + 1)], pitch, need) if top > 0 else []


def round_step(pitch: float, need: float, most: int) -> int:
    """The smallest round step (1, 2, 5, 10, ...) whose rows are `need` pixels apart;
    `most` when even that is too close."""
    scale = 1
    while scale <= most:
        for s in STEPS:
            if s * scale * pitch >= need:
                return min(s * scale, most)
        scale *= 10
    return most


def rank_ticks(shown: int, pitch: float, need: float) -> list[int]:
    """Rank-axis ticks from 1 to `shown` whose labels do not touch: 1 always, then a round
    step (odd ranks at step 2; multiples of the step from 5 up)."""
    step = round_step(pitch, need, max(shown, 1))
    if step <= 2:
        return list(range(1, shown + 1, step))
    return spaced([1, *range(step, shown + 1, step)], pitch, need)


def shown_ranks(n: int, limit: int) -> int:
    """How many ranks the rank-shift chart shows: all of them when there are few, else
    twice the limit (at least 12)."""
    return n if n <= 20 else min(n, max(2 * limit, 12))
