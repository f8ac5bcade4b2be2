"""The inspector's bounds, one copy of each: what it fetches, reads and accepts at most. The
engine, the stores, the command line and the window import them from here."""

from __future__ import annotations

# the deepest candidate list ever fetched: a limit, a cap, a leg's k (LanceDB 0.40 honours
# it, tests/core/engine/test_knob_bounds); also the largest limit a question asks for
MAX_CANDIDATES = 1_000_000
# the most rows one search can be asked for (every row of any table): where limit x
# over-fetch (F = 1e308 is a finite number) saturates; never a bound a caller may ask up to
MAX_SEARCH_ROWS = 2**31 - 1
# the deepest refetch spent on completing a tie at a leg's cut (BM25 ties at the top k)
TIE_FETCH_MAX = 20_000
# the largest vector dimension read: a store's declared dimension, a query vector's length
MAX_DIM = 65_536
# a --vector @FILE larger than this is refused unread
MAX_VECTOR_BYTES = 64 * 1024 * 1024
