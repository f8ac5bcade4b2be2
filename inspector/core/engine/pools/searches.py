"""LanceDB vector searches of the stage engine's legs, answered from a deeper search of the
same query wherever that is exact, so a diagnosis that tries many depths (or a sweep) asks
LanceDB once: a flat search's first k rows (distance, then row id: LanceDB's own order) are
the first k of any deeper one; a post-filter's rows at depth k are the rows of a deeper
post-filtered search that lie within the unfiltered top k, which one unfiltered search as
deep tells. A search through an ANN index is never a prefix of a deeper one (index_rule):
it is answered only at the depth it was run. Held under the pool source's one eviction rule.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine.pools import CACHE_ENTRIES, CACHE_ROWS, SOURCE, Lru


@dataclass(frozen=True)
class Done:
    """One search as run: its rows in LanceDB's order, the depth asked, and whether fewer
    came back than asked (every deeper ask returns the same rows)."""

    table: pa.Table
    depth: int
    exhausted: bool


def canonical(tbl: pa.Table) -> pa.Table:
    """Distance ascending, equal distances by row id: LanceDB's flat order."""
    if not tbl.num_rows:
        return tbl
    d = tbl.column("_distance").to_numpy(zero_copy_only=False).astype(np.float64)
    rowid = tbl.column("_rowid").to_numpy(zero_copy_only=False)
    return tbl.take(pa.array(np.lexsort((rowid, d))))


class Searches:
    def __init__(self) -> None:
        self.cache = Lru(CACHE_ENTRIES, CACHE_ROWS, weigh=lambda d: d.table.num_rows)
        self.runs = 0  # LanceDB searches made

    def _deepest(self, key: Hashable, k: int, prefix: bool, ran_out: bool = True
                 ) -> Done | None:
        """The search at depth k, or (prefix-exact) the deepest one that answers it: deeper,
        or (`ran_out`: not a post-filter) one that returned fewer rows than it asked."""
        got: Done | None = self.cache.get((key, k))
        if got is not None or not prefix:
            return got
        found = [d for _, d in self._entries(key) if d.depth >= k or ran_out and d.exhausted]
        if not found:
            return None
        best = max(found, key=lambda d: d.depth)
        self.cache.get((key, best.depth))  # used now
        return best

    def _entries(self, key: Hashable) -> list[tuple[tuple[Hashable, int], Done]]:
        with self.cache._lock:
            return [(k, v) for k, v in self.cache.entries.items() if k[0] == key]

    def _run(self, key: Hashable, k: int, run: Callable[[int], pa.Table]) -> Done:
        self.runs += 1
        tbl = canonical(run(max(k, 1)))
        done = Done(tbl, k, tbl.num_rows < k)
        self.cache.put((key, k), done)
        return done

    def search(self, key: Hashable, k: int, run: Callable[[int], pa.Table], prefix: bool,
               unfiltered: tuple[Hashable, Callable[[int], pa.Table]] | None = None
               ) -> pa.Table:
        """The rows a search at depth k returns. `key`: everything that shapes the search but
        its depth; `prefix`: the search is flat (a deeper one's first rows are its own);
        `unfiltered`: for a post-filter, the same search without its filter (key, run)."""
        if key is None:  # a store that cannot be told apart from another: nothing is kept
            self.runs += 1
            return canonical(run(max(k, 1))).slice(0, k)
        hit = self._deepest(key, k, prefix, ran_out=unfiltered is None)
        if hit is None:
            return self._run(key, k, run).table.slice(0, k)
        if hit.depth == k:
            return hit.table
        if unfiltered is None:  # a flat search (or a prefilter): the deeper one's prefix
            return hit.table.slice(0, k)
        ukey, urun = unfiltered  # a post-filter: the deeper rows within the unfiltered top k
        top = self._deepest(ukey, hit.depth, True) or self._run(ukey, hit.depth, urun)
        if top.table.num_rows < k:  # every row is within the top k
            return hit.table
        d = top.table.column("_distance").to_numpy(zero_copy_only=False)[k - 1]
        r = top.table.column("_rowid").to_numpy(zero_copy_only=False)[k - 1]
        hd = hit.table.column("_distance").to_numpy(zero_copy_only=False)
        hr = hit.table.column("_rowid").to_numpy(zero_copy_only=False)
        within = (hd < d) | ((hd == d) & (hr <= r))
        return hit.table.filter(pa.array(within))


SEARCHES = Searches()


def store_key(store: Any) -> Hashable | None:
    """What identifies the store's table as searched: the object while it lives (the pool
    source's token), its table and pinned version; None when it cannot be tracked."""
    token = SOURCE.token(store)
    return None if token is None else (token, store.table_name, store.version)
