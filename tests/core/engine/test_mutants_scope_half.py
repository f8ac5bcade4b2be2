""""More than half the raw candidates out of scope": exactly half is not a scope problem (no
`scope_dominated`, no deeper probe), one more than half is. Two predicates say it: the
diagnosis (`diagnosis.diagnose`) and the run's decision to probe deeper for the hint
(`pipeline.scope_miss`)."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.engine import pipeline
from inspector.core.engine.diagnosis import diagnose
from inspector.core.engine.params import Params
from inspector.core.engine.pipeline import run, scope_miss
from inspector.core.engine.pool import Query
from inspector.core.stores.opening import open_store

N = 30
LIMIT = 10


def _counters(raw: int, filtered: int) -> dict[str, int]:
    return {"rawCandidates": raw, "scopedCandidates": raw - filtered,
            "filteredByScope": filtered, "belowMinScore": 0, "returned": raw - filtered}


@pytest.mark.parametrize(("raw", "filtered", "miss"), [
    (10, 5, False), (10, 6, True), (9, 4, False), (9, 5, True), (1, 0, False), (2, 1, False),
    (0, 0, False),
])
def test_scope_miss_needs_strictly_more_than_half_out_of_scope(raw, filtered, miss):
    assert scope_miss(_counters(raw, filtered)) is miss


@pytest.mark.parametrize(("raw", "filtered", "code"), [
    (10, 5, "ok"), (10, 6, "scope_dominated"), (9, 4, "ok"), (9, 5, "scope_dominated"),
])
def test_diagnosis_calls_a_scope_dominated_pool_only_past_half(raw, filtered, code):
    assert diagnose(_counters(raw, filtered), Params(limit=LIMIT, scope="a")).code == code


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


def _query() -> Query:
    return Query(text="alpha", vector=np.array([1, 0, 0, 0], np.float32), source="vector")


def test_exactly_half_the_raw_candidates_out_of_scope_is_ok(make_store):
    store = _half_store(make_store, HALF)
    t = run(store, _query(), Params(limit=LIMIT, scope="a"))
    assert (t.counters["rawCandidates"], t.counters["filteredByScope"]) == (10, 5)
    assert t.diagnosis.code == "ok"
    assert t.diagnosis.message == "5 results from 5 in-scope of 10 raw candidates."
    assert t.diagnosis.fixes == ()


def test_one_more_than_half_out_of_scope_is_scope_dominated_with_a_probed_fix(make_store):
    store = _half_store(make_store, HALF_AND_ONE)
    p = Params(limit=LIMIT, scope="a")
    t = run(store, _query(), p)
    assert (t.counters["rawCandidates"], t.counters["filteredByScope"]) == (10, 6)
    assert t.diagnosis.code == "scope_dominated"
    assert t.diagnosis.message.startswith("6 of 10 raw candidates are outside scope 'a'")
    # the deeper probe placed the 10th in-scope row at global rank 16 (ranks 2, 4, 6, 8, 11..16)
    assert "A full page of 10 in scope needs over-fetch 1.6 (depth 16)" in t.diagnosis.message
    assert [f.label for f in t.diagnosis.fixes] == ["Apply over-fetch 1.6", "Try pushdown"]
    fixed = run(store, _query(), p.with_(**dict(t.diagnosis.fixes[0].changes)))
    assert fixed.counters["returned"] == LIMIT


@pytest.mark.parametrize(("out", "probes"), [(HALF, 0), (HALF_AND_ONE, 1)])
def test_a_run_probes_deeper_only_when_more_than_half_is_out_of_scope(make_store, monkeypatch,
                                                                     out, probes):
    """A full-text query fetches its pool first and the deeper diagnosis probe only on a
    scope miss: exactly half out of scope costs no second search."""
    store = _half_store(make_store, out)
    calls = []
    real = pipeline.fetch_probe

    def spy(*args, **kwargs):
        calls.append(args[2])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "fetch_probe", spy)
    t = run(store, _query(), Params(mode="fts", limit=LIMIT, scope="a"))
    assert t.ids("raw") == [f"r{i:02d}" for i in range(LIMIT)]  # the ranking the store intends
    assert t.counters["filteredByScope"] == len(out)
    assert len(calls) == probes
    assert t.diagnosis.code == ("ok" if probes == 0 else "scope_dominated")
