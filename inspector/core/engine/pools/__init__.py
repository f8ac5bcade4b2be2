"""The one pool source: every candidate pool of the classic pipeline is asked of it, and only it
runs `pool.fetch_pool` (tests/core/engine/test_pools.py scans the package to prove it).

It owns three things. The depth policy (`depth_for`): how deep each purpose searches, with
every depth constant beside it. One cache (`SOURCE`), keyed by everything that shapes a fetched
pool: the open store (that object, at its pinned version), the query, the parameters the
search reads (`pool_key`) and each leg's depth; bounded by `Lru`'s one eviction rule (least
recently used out past CACHE_ENTRIES pools or CACHE_ROWS candidate rows), and a store's pools
leave with the store. And the one rule for whether a pool answers parameters exactly
(`cannot_answer`): a deeper pool answers a shallower depth only where the search is
prefix-exact (flat search; an ANN index never, see index_rule) or the deeper one ran out of rows.
The flow engine's fetch cache (`flow.runner.PoolCache`) is an `Lru` too: one eviction rule.
Many queries at once (a sweep's, an audit's probes) ask `vector_legs`: on a flat table one
batched scan (`batched`) answers every vector leg, and each pool is then fetched here with
its leg; one query's deep vector leg is scanned here too where LanceDB's own leg of that query
checks the scan (`PoolSource._scanned`); nothing else starts a scan.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from inspector.core.engine.index_rule import prefix_exact
from inspector.core.engine.params import ANALYSIS_DEPTH, Params, depths, pool_depth
from inspector.core.engine.pool import Pool, Query, fetch_pool, search_knobs
from inspector.core.engine.pools import batched
from inspector.core.stores.store import Store


# ---- answering from the cache alone ------------------------------------------------------------
class WouldSearch(Exception):  # noqa: N818 - what would happen, as Cancelled says
    """A pool or order not cached was asked for inside `cached_only`: no search ran."""


_cached_only = threading.local()


class cached_only:  # noqa: N801 - used as a `with` block, like contextlib's
    """Within this block, on this thread, a pool or full-text order the source has not
    cached raises WouldSearch instead of searching the store: a window answers a tick in the
    tick itself only when no search is needed, else in a job."""

    def __enter__(self) -> None:
        self.was = getattr(_cached_only, "on", False)
        _cached_only.on = True

    def __exit__(self, *_exc: object) -> None:
        _cached_only.on = self.was


def _may_search() -> None:
    if getattr(_cached_only, "on", False):
        raise WouldSearch("this answer needs a search")


_searched_only = threading.local()


class searched_only:  # noqa: N801 - used as a `with` block, like cached_only
    """Within this block, on this thread, every vector leg is LanceDB's own search: no deep
    leg is scanned (`PoolSource._scanned`). What a caller asks with its scan turned off (an
    audit's --no-scan searches each probe on its own)."""

    def __enter__(self) -> None:
        self.was = getattr(_searched_only, "on", False)
        _searched_only.on = True

    def __exit__(self, *_exc: object) -> None:
        _searched_only.on = self.was


# ---- the depth policy --------------------------------------------------------------------------
MAX_OVERFETCH = 20.0  # the over-fetch slider's top: one live fetch serves every slider position
EXHAUSTIVE_MAX = ANALYSIS_DEPTH  # deepest ranking fetched for truth and expected-row analysis
# how deep a what-if searches for the rows a filter would pass (the diagnosis's probe, the
# expected-row ladder, the truth): PROBE_DEPTH rows, or the whole table when smaller
PROBE_DEPTH = 10_000
# a vector leg at least this deep is scanned, not searched, where LanceDB's own leg of the same
# query is at hand to check the scan against (PoolSource._scanned)
SCAN_LEG_MIN = 1_000
PURPOSES = ("params", "live", "exhaustive", "sweep")


def depth_for(purpose: str, store: Store, p: Params, *, max_overfetch: float | None = None,
              max_limit: int | None = None, depth: int | None = None) -> tuple[int, int]:
    """(vector depth, full-text depth) a purpose searches for p:
    params: p's own depths, widened to max_overfetch / max_limit when given; live: the classic
    fetch stage's, deep enough for every over-fetch up to MAX_OVERFETCH (past it, up to twice
    p's) where the search is prefix-exact, else p's own depth; exhaustive: the ranking to
    `depth` (EXHAUSTIVE_MAX) or the whole table; sweep: deep enough for the truth (`depth`)
    and every cell up to max_overfetch."""
    rows = int(store.rows)
    if purpose == "live":
        # one deep fetch serves every over-fetch up to MAX_OVERFETCH; past it, twice the asked
        # over-fetch, so a slider moved beyond searches once per doubling, not once per tick
        top = max_overfetch or MAX_OVERFETCH
        deep = (top if p.overfetch <= top else 2.0 * p.overfetch) \
            if prefix_exact(getattr(store, "vector_index", None), p) else None
        return depth_for("params", store, p, max_overfetch=deep)
    if purpose == "params":
        wide = p.with_(overfetch=max(p.overfetch, max_overfetch or p.overfetch),
                       limit=max(p.limit, max_limit or p.limit))
        d = depths(wide)
        return d.vec_k, d.fts_k
    if purpose == "exhaustive":
        e = max(1, min(rows, depth or EXHAUSTIVE_MAX))
        return e, e
    if purpose == "sweep":
        need = max(pool_depth(p.limit, max_overfetch or 1.0, 0), p.vec_k, p.fts_k)
        e = max(1, min(rows, max(EXHAUSTIVE_MAX if depth is None else depth, need)))
        return e, e
    raise ValueError(f"unknown pool purpose {purpose!r}; one of {', '.join(PURPOSES)}")


# ---- LanceDB's own full-text order at a system's k ---------------------------------------------
def fts_order(store: Store, text: str, k: int, p: Params) -> tuple[Any, ...]:
    """The ids LanceDB's full-text search returns at exactly k, in its own order
    (`pool.native_fts_ids`), one search per store, text, k and scope (`SOURCE.fts_order`)."""
    return SOURCE.fts_order(store, text, k, p)


# ---- the one rule ------------------------------------------------------------------------------
def cannot_answer(pool: Pool, p: Params) -> str | None:
    """The one rule: None when this pool answers p exactly as a fresh `run` would (same
    fetched ranking, deep enough), else the reason a new query is needed."""
    if (pool.mode, pool.distance, pool.placement) != (p.mode, p.distance, p.filter):
        return "mode, distance or filter placement changed since the pool was fetched"
    if pool.scope != p.scope_spec():
        return "the scope changed since the pool was fetched"
    if pool.vec_leg is not None and _knob_key(pool.index, pool.knobs or search_knobs(Params())) \
            != _knob_key(pool.index, search_knobs(p)):
        return "the vector index knobs (nprobes, refine factor, ef, exact) changed"
    d = depths(p)
    for leg, need in ((pool.vec_leg, d.vec_k), (pool.fts_leg, d.fts_k)):
        if need and (leg is None or (need > leg.depth and not leg.exhausted)):
            have = leg.depth if leg is not None else 0
            return f"depth {need} is deeper than the cached pool ({have})"
    vec = pool.vec_leg
    if d.vec_k and vec is not None and d.vec_k != vec.depth and not prefix_exact(pool.index, p) \
            and not (vec.exhausted and d.vec_k > vec.depth):
        # An approximate search at depth k is not the first k rows of a deeper one, even when
        # the deeper one came back short (exhausted): a shallower search refines only k x R
        # candidates and stops probing partitions once it has k rows (min/max nprobes), so it
        # can return other rows (tests/core/engine/test_live_index.py, issue 21). Deeper than
        # an exhausted search is the same search: every partition it may probe was probed and
        # every candidate refined.
        return (f"the {pool.index.type} index answers depth {d.vec_k} differently from the "
                f"cached depth {vec.depth}")
    return None


def answers(pool: Pool, p: Params) -> bool:
    return cannot_answer(pool, p) is None


def _knob_key(index: object, knobs: tuple | list) -> tuple:
    """What the knobs change about a vector search: nothing on a flat table, everything but
    the index's knobs with --exact (the last of search_knobs)."""
    knobs = tuple(knobs)
    if knobs and knobs[-1]:
        return ("exact",)
    return knobs[:-1] if index is not None else ()


# ---- the one eviction rule ---------------------------------------------------------------------
CACHE_ENTRIES = 64  # pools (or flow fetch results) held at most
# candidate rows held at most: a few exhaustive pools' worth, so a sweep's memory stays bounded
# by about one query's pools whatever the number of queries (issue 21, test_sweep_memory). One
# pool's worth was too few: a scoped miss's diagnosis fetches the question's pool, its deep
# probe (an exhaustive pool) and the pushed-down fix's pool, and the third put evicted the deep
# one, so every depth the fix search then tried was a new LanceDB search (11 flat searches of a
# 1M-row table for one diagnosis, where the deep pool answers them all)
CACHE_ROWS = 3 * EXHAUSTIVE_MAX


class Lru:
    """A bounded cache, least recently used out once it holds more than `max_entries` values
    or more than `max_rows` rows (`weigh`; None: no row bound); the newest value always stays.
    `group` (a key's group, optional): the keys of each group are kept apart too, in the order
    of use, so `in_group` lists one group's values without reading every key. Thread-safe."""

    def __init__(self, max_entries: int = CACHE_ENTRIES, max_rows: int | None = CACHE_ROWS,
                 weigh: Callable[[Any], int] = lambda _: 0,
                 group: Callable[[Any], Any] | None = None) -> None:
        self.max_entries, self.max_rows, self.weigh = max_entries, max_rows, weigh
        self.entries: OrderedDict[Any, Any] = OrderedDict()
        self.rows = 0
        self.hits = self.misses = 0
        self.group = group
        self.groups: dict[Any, dict[Any, None]] = {}  # group -> its keys, least recent first
        self._lock = threading.Lock()

    def _grouped(self, key: Any) -> None:  # the key is the newest of its group
        if self.group is not None:
            keys = self.groups.setdefault(self.group(key), {})
            keys.pop(key, None)
            keys[key] = None

    def _pop(self, key: Any) -> None:
        self.rows -= self.weigh(self.entries.pop(key))
        if self.group is not None:
            g = self.group(key)
            keys = self.groups.get(g)
            if keys is not None:
                keys.pop(key, None)
                if not keys:
                    del self.groups[g]

    def get(self, key: Any) -> Any | None:
        with self._lock:
            got = self.entries.get(key)
            if got is not None:
                self.hits += 1
                self.entries.move_to_end(key)
                self._grouped(key)
            return got

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self.misses += 1
            if key in self.entries:
                self._pop(key)
            self.entries[key] = value
            self.rows += self.weigh(value)
            self._grouped(key)
            while len(self.entries) > 1 and (
                    len(self.entries) > self.max_entries
                    or self.max_rows is not None and self.rows > self.max_rows):
                self._pop(next(iter(self.entries)))

    def values(self) -> list[Any]:
        """Most recently used first."""
        with self._lock:
            return list(reversed(self.entries.values()))

    def in_group(self, group: Any) -> list[Any]:
        """The values of one group's keys, most recently used first (as `values` lists them)."""
        with self._lock:
            return [self.entries[k] for k in reversed(self.groups.get(group, {}))]

    def drop(self, keep: Callable[[Any], bool]) -> None:
        with self._lock:
            for key in [k for k in self.entries if not keep(k)]:
                self._pop(key)

    def clear(self) -> None:
        self.drop(lambda _: False)


# ---- the pool source ---------------------------------------------------------------------------
def pool_key(p: Params) -> tuple[Any, ...]:
    """Every parameter `fetch_pool` reads: mode, distance, filter placement, the scope and the
    vector search's knobs. Live knobs, limit, cap and the legs' floors only set the depths,
    which are keyed on their own. The scope by its fields: a plain tuple hashes in C, a
    dataclass's generated __hash__ in Python (~1 us), and the cache hashes every key it holds
    each time it lists them (OrderedDict iteration)."""
    s = p.scope_spec()
    return (p.mode, p.distance, p.filter, (s.scope, s.strategy, s.scope_map, s.column),
            search_knobs(p))


def _query_key(query: Query) -> tuple[Any, ...]:
    vec = None if query.vector is None else np.asarray(query.vector)
    return (query.text, query.source,
            None if vec is None else (str(vec.dtype), vec.shape, vec.tobytes()))


class PoolSource:
    """The pools fetched so far, and the only caller of `fetch_pool`."""

    def __init__(self, max_entries: int = CACHE_ENTRIES, max_rows: int = CACHE_ROWS) -> None:
        # grouped by everything but the legs' depths (`_base`): `answering` reads one
        # question's pools, not every pool cached (64 keys compared a query before)
        self.cache = Lru(max_entries, max_rows, weigh=lambda e: e[1].size,
                         group=lambda key: key[:-2])
        self.orders = Lru(max_entries, None)  # LanceDB's own full-text order at a k
        self.fetches = 0  # fetch_pool calls: LanceDB searched
        self.scanned = 0  # of them, with the vector leg from a scan (`_scanned`)
        self._tokens: dict[int, int] = {}  # id(store) -> its token while the store lives
        self._count = itertools.count()
        self._dead: list[tuple[int, int]] = []  # stores garbage-collected since the last ask
        self._lock = threading.Lock()
        # id(pool) -> the pool, for pools whose vector leg LanceDB searched (not a scan): the
        # references a deep leg's scan is checked against; each leaves with its pool
        self._searched: dict[int, weakref.ref[Pool]] = {}

    def _token(self, store: Store) -> int | None:
        """A number for this store object while it lives (None: it cannot be tracked, so its
        pools are not cached); its pools leave the cache when it is garbage."""
        with self._lock:
            token = self._tokens.get(id(store))
            if token is None:
                token = next(self._count)
                try:
                    weakref.finalize(store, self._forget, id(store), token)
                except TypeError:
                    return None
                self._tokens[id(store)] = token
            return token

    def token(self, store: Store) -> int | None:
        """The number this source knows the store object by while it lives (None: it cannot
        be tracked); what every cache of its searches keys on."""
        self._purge()
        return self._token(store)

    def _forget(self, store_id: int, token: int) -> None:
        # called by the garbage collector, maybe inside a lock: only note it (an atomic append)
        self._dead.append((store_id, token))

    def _purge(self) -> None:
        while self._dead:
            store_id, token = self._dead.pop()
            with self._lock:
                if self._tokens.get(store_id) == token:
                    del self._tokens[store_id]
            self.cache.drop(lambda k, t=token: k[0] != t)
            self.orders.drop(lambda k, t=token: k[0] != t)

    def _base(self, store: Store, query: Query, p: Params) -> tuple[Any, ...]:
        self._purge()
        return (self._token(store), store.table_name, store.version, _query_key(query),
                pool_key(p))

    def pool(self, store: Store, query: Query, p: Params, vec_k: int, fts_k: int,
             vec_leg: tuple[Any, bool, float] | None = None, fresh: bool = False,
             order_ahead: bool = False) -> Pool:
        """The pool a fresh `fetch_pool` at these depths returns: cached, or fetched now.
        `vec_leg`: the vector leg already fetched by a batched scan (see pool.fetch_pool);
        `fresh`: search the store even when cached (a query the user runs again, so a version
        removed under an open store is said, not answered from memory); `order_ahead`: the
        caller (the classic fetch stage) asks LanceDB's own full-text order at p's k where the
        leg ties there, so it is searched beside the vector leg (`fts_order`)."""
        key = (*self._base(store, query, p), int(vec_k), int(fts_k))
        got = self.cache.get(key) if key[0] is not None and not fresh else None
        if got is not None:
            return got[1]
        _may_search()
        ahead = None
        text = query.text
        if order_ahead and key[0] is not None and p.mode in ("fts", "hybrid") and \
                p.tie_rule == "lancedb" and text:
            k = depths(p).fts_k
            ahead = (k, lambda: self.fts_order(store, text, k, p))
        scanned = None
        if vec_leg is None and key[0] is not None:
            scanned = vec_leg = self._scanned(store, query, p, vec_k, key[:-2])
        pool = fetch_pool(store, query, p, vec_k=vec_k, fts_k=fts_k, vec_leg=vec_leg,
                          fts_order=ahead)
        self.fetches += 1
        if vec_leg is None and pool.vec_leg is not None and pool.rowids is not None:
            at = id(pool)
            self._searched[at] = weakref.ref(pool, lambda _r: self._searched.pop(at, None))
        if scanned is not None:
            self.scanned += 1
        if key[0] is not None:
            self.cache.put(key, (key, pool))
        return pool

    def _scanned(self, store: Store, query: Query, p: Params, vec_k: int,
                 base: tuple[Any, ...]) -> batched.Leg | None:
        """A deep vector leg from a batched scan of this one query, not LanceDB's flat search
        (None: LanceDB searches it): a leg at least SCAN_LEG_MIN deep of a table the scan
        takes (flat, local), where a cached pool of this query and these parameters holds
        LanceDB's own vector leg. The scan is used only when it equals that leg row for row
        (row ids and distances, `batched._agrees`), so no search of its own checks it.

        The same leg as LanceDB's search (`batched`: its flat search bit for bit, ties by row
        id): the diagnosis's deep probe after the question's own fetch, the expected-row
        ladder, a fix's search. LanceDB's flat search keeps more of the table in memory the
        deeper it is asked: on 1M x 384 rows a 10,000-deep search alone peaked 909-1,000 MB
        above the process's start, the scan ~160 MB above what the process held, in ~0.7x
        the time (by hand)."""
        if vec_k < SCAN_LEG_MIN or p.mode not in ("vector", "hybrid") or \
                getattr(_searched_only, "on", False):
            return None
        ref = None
        for _, pool in self.cache.in_group(base):
            known = self._searched.get(id(pool))
            if known is not None and known() is pool:
                ref = pool
                break
        if ref is None:
            return None
        leg = ref.vec_leg  # a leg and row ids, as marked in `pool`
        assert leg is not None and ref.rowids is not None
        n = min(len(leg.rows), vec_k)  # a flat leg's prefix is its search at that depth
        past = float(leg.values[n]) if len(leg.values) > n else leg.next_value
        reference = (ref.rowids[leg.rows[:n]], leg.values[:n], past)
        legs = batched.scan_legs(store, [_Leg(query, p)], p, lambda _c: vec_k,
                                 reference=reference)
        return legs.pop(0)

    def fts_order(self, store: Store, text: str, k: int, p: Params) -> tuple[Any, ...]:
        """LanceDB's own full-text order at k, cached like a pool (it leaves with the store)."""
        from inspector.core.engine.pool import native_fts_ids

        key = (*self._base(store, Query(text=text), p), "fts_order", int(k))
        got = self.orders.get(key) if key[0] is not None else None
        if got is None:
            _may_search()
            got = native_fts_ids(store, text, k, p)
            if key[0] is not None:
                self.orders.put(key, got)
        return got

    def answering(self, store: Store, query: Query, p: Params) -> Pool | None:
        """A cached pool of this store and query that answers p exactly (`cannot_answer`),
        deepest first; None if none does. For callers that derive stages from the pool."""
        base = self._base(store, query, p)
        if base[0] is None:
            return None
        found = [(key, pool) for key, pool in self.cache.in_group(base) if answers(pool, p)]
        if not found:
            return None
        key, pool = max(found, key=lambda e: e[1].size)
        self.cache.get(key)  # used now
        return pool

    def clear(self) -> None:
        """Forget every pool and full-text order fetched: the next ask searches again."""
        self.cache.clear()
        self.orders.clear()


class _Leg:
    """One query's vector leg as `batched.scan_legs` takes a case."""

    def __init__(self, query: Query, p: Params) -> None:
        self.query, self._p = query, p

    def params(self, base: Params) -> Params:
        return self._p


SOURCE = PoolSource()  # the one owner of fetched pools in this process


# ---- what the engine and its clients ask for ---------------------------------------------------
def fetch(store: Store, query: Query, p: Params, vec_k: int, fts_k: int,
          vec_leg: tuple[Any, bool, float] | None = None, fresh: bool = False,
          order_ahead: bool = False) -> Pool:
    """The pool at exactly these depths (see PoolSource.pool)."""
    return SOURCE.pool(store, query, p, vec_k, fts_k, vec_leg, fresh, order_ahead)


def vector_legs(store: Store, cases: Any, base: Params, depth_of: Callable[[Any], int],
                plan: batched.ScanPlan = batched.AUTO, source: batched.Source | None = None,
                per_pass: int | None = None) -> batched.Legs:
    """Every scannable case's vector leg at the depth `depth_of(case)` gives, from one batched
    scan per pass where the table allows it (`batched.scan_legs`); the caller hands each to
    `fetch(..., vec_leg=legs.pop(i))`, so each pool is still this source's."""
    return batched.scan_legs(store, cases, base, depth_of, plan, source, per_pass)


def fetch_for(store: Store, query: Query, p: Params, max_overfetch: float | None = None,
              max_limit: int | None = None, order_ahead: bool = False) -> Pool:
    """A pool deep enough for p and for any over-fetch up to max_overfetch."""
    return fetch(store, query, p, *depth_for("params", store, p, max_overfetch=max_overfetch,
                                             max_limit=max_limit), order_ahead=order_ahead)


def answering(store: Store, query: Query, p: Params) -> Pool:
    """A pool that answers p exactly: a cached one where the one rule allows, else p's own."""
    return SOURCE.answering(store, query, p) or fetch_for(store, query, p)


__all__ = ["PoolSource", "SOURCE", "WouldSearch", "answering", "answers", "cached_only",
           "cannot_answer", "depth_for", "fetch", "fetch_for", "searched_only", "vector_legs"]
