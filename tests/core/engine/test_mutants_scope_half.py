"""A scope that drops half or more of the raw candidates starves the page, and the one
engine's diagnosis finds the depth at which the page fills: the deeper search places the 10th
in-scope row (ranks 2, 4, 6, 8, 11.. out of scope) and the smallest over-fetch reaching it is
the system's own fix (beside pushdown); running it returns a full page. (The former fixed engine's
"more than half out of scope" rule, `scope_dominated` and its `scope_miss` probe trigger,
went with it: the one engine probes deeper whenever a filter after a cut starves the page,
tests/core/engine/flow/test_diagnosis_fixes.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.stores.opening import open_store
from tests.askkit import ask

N = 30
LIMIT = 10


def _half_store(make_store, out: set[int]):
    """N rows ranked 0..N-1 by both legs (distance and BM25 grow with the index, no ties);
    the rows in `out` are in repo b, every other row in repo a."""
    vec = np.zeros((N, 4), np.float32)
    vec[:, 0] = 1.0 + 0.1 * np.arange(1, N + 1)
    repo = ["b" if i in out else "a" for i in range(N)]
    return open_store(str(make_store({
        "id": [f"r{i:02d}" for i in range(N)],
        "text": ["alpha" + " pad" * i for i in range(N)],  # longer: lower BM25
        "vector": vec, "repo": repo, "path": [f"{r}/{i}.md" for i, r in enumerate(repo)]})))


HALF = {0, 2, 4, 6, 8}  # 5 of the top 10 out of scope
HALF_AND_ONE = HALF | {9}  # 6 of the top 10
QUERY = {"text": "alpha", "vector": np.array([1, 0, 0, 0], np.float32)}


@pytest.mark.parametrize(("out", "depth"), [(HALF, 15), (HALF_AND_ONE, 16)])
@pytest.mark.parametrize("mode", ["vector", "fts"])
def test_a_scope_dropping_half_the_raw_candidates_gets_the_over_fetch_that_fills_the_page(
        make_store, out, depth, mode):
    store = _half_store(make_store, out)
    a = ask(store, **QUERY, mode=mode, limit=LIMIT, scope="a", fixes=True)
    t, d = a.trace, a.diagnosis
    assert t.stage("fetch").ids == [f"r{i:02d}" for i in range(LIMIT)]  # the store's ranking
    assert len(t.stage("scope").dropped) == len(out)
    assert len(t.final.rows) == LIMIT - len(out)
    assert d.code == "filter_after_cut" and d.stage == "scope"
    assert d.page_at == depth
    (over,) = [f for f in d.fixes if f.kind == "own" and f.change.sets[0][0] == "fetch.overfetch"]
    assert over.change.sets == (("fetch.overfetch", depth / LIMIT),)
    assert over.full and over.returns == LIMIT
    assert any(f.change.sets == (("scope_rule.pushdown", True),) and f.full for f in d.fixes)
    fixed = ask(store, **QUERY, mode=mode, limit=LIMIT, scope="a", overfetch=depth / LIMIT)
    assert len(fixed.trace.final.rows) == LIMIT
