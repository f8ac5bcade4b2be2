"""A row outside the asked scope, as `--expect ID` and the recall audit explain it: the scope
filter's own rule applied to the row (read from the store where the run never fetched it), and
no change searched, since none returns it. What that rests on is run here too: deeper, exact
and pushed-down or not, the row never comes back in that scope, and it does without one. A row
in scope that was not fetched still gets its search, and so does a row whose pipeline has no
scope filter after its fetch (turning the pushdown off could return it there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.core.analysis.audit import Prober, runs
from inspector.core.engine.flow.insight.expect import explain, where_dropped
from inspector.core.engine.flow.runs import Change, Runs
from inspector.core.engine.flow.spec import apply_set, load_file, load_shipped
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot, write_table

NOW = 1.79e12
DIM = 16
N = 160
REPO = {"scope_rule.strategy": "repo_prefix", "scope_rule.column": ""}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """160 random rows in two repos (even rows repo-a, odd rows Repo-B), importance 0.2-1."""
    rng = np.random.default_rng(5)
    path = tmp_path_factory.mktemp("outside") / "db"
    return write_table(path, {
        "id": [f"m{i:03d}" for i in range(N)], "text": [f"memory {i}" for i in range(N)],
        "repo": ["repo-a" if i % 2 == 0 else "Repo-B" for i in range(N)],
        "importance": rng.uniform(0.2, 1.0, N),
        "vector": rng.normal(size=(N, DIM)).astype(np.float32)})


def _runs(store: Any, spec: Any, rid: str, scopes: tuple[str, ...] | None) -> Runs:
    vec = store.vector_of(rid).astype(np.float64)
    return Runs(store, spec, None, vec, scopes, 10, NOW, f"example:{rid}")


@pytest.mark.parametrize("pushdown", [True, False])
def test_another_repos_row_is_out_of_scope_and_no_change_is_searched(
        store_path: Path, pushdown: bool) -> None:
    store = open_store(str(store_path), "memories")
    before = snapshot(store_path)
    spec = apply_set(load_shipped("importance-blend"), {**REPO, "scope_rule.pushdown": pushdown})
    rid = "m001"  # Repo-B's, asked with its own vector in repo-a
    q = _runs(store, spec, rid, ("repo-a",))
    trace = q.run()
    # pushed down, the run never fetched it (the rule is applied to the row read from the
    # store); as a post-filter it was fetched (its own vector) and the filter dropped it
    assert where_dropped(trace, rid).code == ("not_fetched" if pushdown else "out_of_scope")
    e = explain(trace, rid, q)
    assert (e["reason"], e["dropped_at"], e["fix"], e["alternatives"], e["tried"]) == \
        ("out_of_scope", "scope", None, [], 0)
    assert e["detail"] == {"rule": "repo 'repo-b' != 'repo-a'", "scope": "Repo-B"}
    assert "repo 'repo-b' != 'repo-a'" in e["no_fix"] and "no change" in e["no_fix"]
    # what the claim rests on, run: every fetch and cut as deep as the table, exactly, with
    # the pushdown turned either way, it is never returned in repo-a
    for change in (Change(widen=(("fetch", N), ("limit", N))), Change(exact=True),
                   Change().with_sets(**{"scope_rule.pushdown": not pushdown}),
                   Change(limit=N)):
        assert rid not in q.run(change).final.ids, change
    # and without the scope the same question returns it first
    assert _runs(store, spec, rid, None).run().final.ids[0] == rid
    assert snapshot(store_path) == before  # the store's row was read, nothing written


def test_a_row_in_scope_that_was_not_fetched_still_gets_its_search(store_path: Path) -> None:
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"),
                     {**REPO, "scope_rule.pushdown": True, "min_score.min": 0.0})
    q = _runs(store, spec, "m000", ("repo-a",))
    trace = q.run()
    fetched = set(trace.stage("fetch").ids)
    rid = next(f"m{i:03d}" for i in range(0, N, 2) if f"m{i:03d}" not in fetched)
    e = explain(trace, rid, q)
    assert e["reason"] == "not_fetched" and e["tried"] > 0
    assert e["fix"] is not None and e["fix"]["rank"] >= 1  # the change that returns it, run


NO_FILTER = """schema = 1
name = "pushdown-only"
title = "The scope pushed into the fetch, with no post-filter after it"

[limit]
default = 10
min = 1
max = 1000

[[routes]]
name = "vector"

[[routes.stages]]
name = "rule"
kind = "scope_rule"
strategy = "repo_prefix"
pushdown = true

[[routes.stages]]
name = "fetch"
kind = "lancedb_pool"
mode = "vector"

[[routes.stages]]
name = "top"
kind = "limit"
"""


def test_without_a_scope_filter_the_row_is_not_fetched_and_searched_for(
        store_path: Path, tmp_path: Path) -> None:
    """No post-filter: the pushdown alone keeps the other repo out (turned off, the row comes
    back), so nothing proves it outside for good and the search runs."""
    store = open_store(str(store_path), "memories")
    f = tmp_path / "pushdown-only.toml"
    f.write_text(NO_FILTER)
    spec = load_file(str(f))
    rid = "m001"
    q = _runs(store, spec, rid, ("repo-a",))
    e = explain(q.run(), rid, q)
    assert e["reason"] == "not_fetched" and e["tried"] > 0
    assert rid in q.run(Change().with_sets(**{"rule.pushdown": False})).final.ids


def test_a_crowded_audit_says_out_of_scope_as_the_query_does_and_fixes_the_others(
        store_path: Path) -> None:
    """Every memory asked in repo-a: Repo-B's are outside it without a run, in the words
    `--expect ID` gives; the fixes go to never-recalled memories a change can return."""
    store = open_store(str(store_path), "memories")
    spec = apply_set(load_shipped("importance-blend"),
                     {**REPO, "scope_rule.pushdown": True, "min_score.min": 0.9})
    got = runs.recall_audit(Prober(store, spec, 10, NOW), own_scope=False,
                            scopes=("repo-a",), fixes=3)
    out = [r for r in got["never_recallable"] if r["class"] == "out_of_scope"]
    assert sorted(r["id"] for r in out) == [f"m{i:03d}" for i in range(1, N, 2)]
    assert got["scan"]["outside_scope"] == len(out) == N // 2
    how = got["scan"]  # Repo-B's memories were not run; repo-a's were (or the shortcut's)
    assert how["pipeline_runs"] + how["shortcut"] == N // 2
    assert got["method"].startswith(f"{N // 2} probes outside their asked scope by its rule")
    for r in out[:4]:
        q = _runs(store, spec, r["id"], ("repo-a",))
        e = explain(q.run(), r["id"], q)
        assert (e["dropped_at"], e["reason"], e["detail"]) == \
            (r["stage"], r["code"], r["detail"])
    fixed = [r for r in got["never_recallable"] if "fix" in r["detail"]]
    others = [r for r in got["never_recallable"] if r["class"] != "out_of_scope"]
    assert others and len(fixed) == got["fixes"] == min(3, len(others))
    assert all(r["class"] != "out_of_scope" for r in fixed)
