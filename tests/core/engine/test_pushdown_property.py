"""Pushdown returns exactly the top of the exhaustive ranking of the rows its predicate keeps."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.engine.scope import normalize_scope, scope_key
from inspector.core.stores.opening import open_store
from tests.askkit import ask

NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00/:"), min_size=0,
                max_size=8)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(repos=st.lists(NAMES, min_size=1, max_size=5, unique=True), seed=st.integers(0, 10**6),
       pick=st.integers(0, 4), limit=st.integers(1, 15))
def test_pushdown_equals_brute_force_over_the_predicate(make_store, repos, seed, pick, limit):
    rng = np.random.default_rng(seed)
    n = 60
    vec = rng.normal(size=(n, 4)).astype(np.float32)
    repo = [repos[int(rng.integers(len(repos)))] for _ in range(n)]
    path = make_store({"id": [f"r{i:02d}" for i in range(n)], "text": ["t"] * n, "vector": vec,
                       "repo": pa.array(repo, pa.utf8()), "path": [f"{r}/f" for r in repo]})
    store = open_store(str(path))
    scope = repos[pick % len(repos)]
    q = rng.normal(size=4).astype(np.float32)
    t = ask(store, vector=q, limit=limit, scope=scope, filter="pushdown").trace
    key = scope_key(normalize_scope(scope))
    if normalize_scope(scope) in ("", "global"):
        keep = np.ones(n, bool)  # no scope: nothing is pushed down
    else:  # the predicate is repo IN (key), exact; the post-filter then lower-cases
        keep = np.array([r == key for r in repo])
    d = ((vec.astype(np.float64) - q) ** 2).sum(axis=1)
    order = [i for i in np.argsort(d, kind="stable") if keep[i]]
    want = [f"r{i:02d}" for i in order[:limit]]
    fetched = t.stage("fetch")
    assert fetched.ids == want
    assert np.allclose([dict(s.inputs)["distance"] for s in fetched.rows], d[order[:limit]],
                       rtol=1e-5)
