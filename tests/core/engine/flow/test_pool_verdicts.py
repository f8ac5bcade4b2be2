"""The scope filter decides a fetch's candidates once a pool over the pool's own columns, and
each row's verdict is the one it gets decided alone: whatever rows it is decided with (a whole
pool, a batch of rows new to the filter), in whatever order, and whatever was decided before.
A repeated filter of the fetch's candidates (a truth or a cell that changes a later stage) is
answered from memory, as a fresh filter answers it."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from inspector.core.engine import scope as scopes
from inspector.core.engine.flow.question import Question, runs_for
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import PoolCache
from inspector.core.engine.flow.runs import Change
from inspector.core.engine.flow.stages import classic, scoping
from inspector.core.stores.opening import open_store
from inspector.core.stores.roles import Roles
from tests.core.engine.flow.test_live_flow import shape
from tests.storekit import vectors_column, write_table

ODD = [None, "", " repo1 ", "repo1", "REPO1", "repo1/", "repo1/docs/x.md", "[scope:repo1]",
       "répo1", "a/b:c", "repo2", "main", "agent:main", "main/agent:main"]
FLOATS = [0, 1, True, False, 0.0, -0.0, 1.0, float("nan"), 2.5, -7, None, "0.0"]
NUMBERS = [*FLOATS, Decimal("1.0"), Decimal("1.00")]
ROLES = Roles(id="id", repo="repo", path="path", scope="scope", agent="agentId")
SPECS = [scopes.ScopeSpec("repo1", "column", column="repo"),
         scopes.ScopeSpec("0.0", "column", column="weight"),
         scopes.ScopeSpec("0.0", "column", column="plain"),
         scopes.ScopeSpec("0", "column", column="scope"),
         scopes.ScopeSpec("repo1", "column_global", column="repo"),
         scopes.ScopeSpec("main/agent:main", "agent_scope"),
         scopes.ScopeSpec("repo1", "repo_prefix"),
         scopes.ScopeSpec("repo1/docs", "path_prefix"),
         scopes.make_scope("team", "map", {"team": ["repo1", "a/b"]})]


def _values(rng: random.Random, n: int, pool: list[Any]) -> list[Any]:
    return [rng.choice(pool) for _ in range(n)]


def test_a_rows_verdict_is_its_own_whatever_rows_it_is_decided_with() -> None:
    """0.0 == -0.0 (and Decimal 1.0 == 1.00) as memo keys, yet a row's words show the value
    it had: the verdict of a batch is each row's verdict alone, in any order."""
    rng = random.Random(5)
    n = 300
    cols = {"repo": _values(rng, n, ODD + NUMBERS), "path": _values(rng, n, ODD),
            "scope": _values(rng, n, ODD + NUMBERS + [[1], {"a": 1}]),
            "agentId": _values(rng, n, ODD), "weight": _values(rng, n, NUMBERS),
            "plain": _values(rng, n, FLOATS)}
    for spec in SPECS:
        alone = []
        for i in range(n):
            scopes._DOC_RULES.clear()  # nothing decided before
            alone.append(scopes.evaluate(spec, ROLES, {c: [v[i]] for c, v in cols.items()}, 1))
        want = [tuple(part[0] for part in one) for one in alone]
        for order in range(3):
            at = list(range(n))
            rng.shuffle(at)
            if order == 0:
                at.sort()
            got = scopes.evaluate(spec, ROLES, {c: [v[i] for i in at] for c, v in cols.items()},
                                  n)
            assert [(got[0][k], got[1][k], got[2][k]) for k in range(n)] == \
                [want[i] for i in at], spec


def _store(path: Path, n: int = 400) -> Path:
    rng = np.random.default_rng(3)
    pick = random.Random(9)
    write_table(path, {
        "id": [f"m{i:04d}" for i in range(n)], "text": [f"note {i} keys" for i in range(n)],
        "vector": vectors_column(rng.normal(size=(n, 8)).astype(np.float32)),
        "importance": pa.array([float(x) for x in rng.uniform(0, 1, n)], pa.float64()),
        "repo": _values(pick, n, ODD), "path": _values(pick, n, ODD),
        "agentId": _values(pick, n, ["main", "ops", None]),
        "scope": _values(pick, n, ["agent:main", "", None, "agent:ops"]),
        "weight": pa.array(_values(pick, n, [0.0, -0.0, float("nan"), None, 1.5]),
                           pa.float64())})
    return path


def _runs(path: Path, **sets: Any):  # noqa: ANN202 - a Runs
    q = Question(store=str(path), preset="lancedb", text="keys", vector=[0.1] * 8, limit=4,
                 scopes=["0.0"], set={"scope_rule.strategy": "column",
                                      "scope_rule.column": "weight", "fetch.overfetch": 100,
                                      "fetch.cap": 0, **sets})
    runs, _, _ = runs_for(q, open_store(str(path)), PoolCache())
    return runs


def _fresh() -> None:
    scoping._FILTERED.clear()
    scoping._VERDICTS.clear()
    classic._READ.clear()
    scopes._DOC_RULES.clear()


def test_a_pools_verdicts_are_its_rows_verdicts(tmp_path: Path) -> None:
    """The fetch's candidates filtered by their pool's verdicts (the rule the pool was
    fetched with, or any other, over its columns) keep and drop what each row decided alone
    keeps and drops, with the same words."""
    _fresh()
    runs = _runs(_store(tmp_path / "s"))
    runs.run()
    fetched = [got[0] for got in runs.cache.values()]
    assert len(fetched) == 1 and fetched[0].source is not None
    out = fetched[0]
    rows = list(out.rows)
    assert len(rows) == 400
    specs = [*SPECS, scopes.ScopeSpec("-0.0", "column", column="weight"),
             scopes.ScopeSpec(None, "column", column="repo")]
    for roles in (ROLES, runs.store.roles):  # the store's: the pool's own verdict for its rule
        for spec in specs:
            want = [scoping._scope_verdicts(spec, roles, [s.row])[0] for s in rows]
            scoping._VERDICTS.clear()
            for _ in range(2):  # decided, then answered from the pool's memo
                got = scoping._scope_filter(spec, roles, rows, out.source)
                assert [id(s) for s in got.rows] == \
                    [id(s) for s, w in zip(rows, want, strict=True) if w is None]
                assert got.dropped == tuple(w for w in want if w is not None), spec
    assert {repr(s.row.columns["weight"]) for s in rows} >= {"0.0", "-0.0", "nan", "None"}


def test_a_repeated_filter_of_the_fetchs_candidates_is_a_fresh_filter(tmp_path: Path) -> None:
    """Runs that change only a later stage hand the filter the fetch's very outcome (and a
    stage after a query stage, which is given the list itself, nothing); the filter answers
    it from memory, as a fresh process (no memo) answers each run."""
    path = _store(tmp_path / "s")
    _fresh()
    runs = _runs(path)
    handed: dict[str, list[Any]] = {"lancedb_pool": [], "scope_filter": []}
    kinds = {k: kind_of(k) for k in handed}
    real = {k: kind.fn for k, kind in kinds.items()}

    def spy(name: str) -> Any:
        def fn(ctx, rows, p):  # noqa: ANN001, ANN202 - the stage's own signature
            handed[name].append((ctx.handed, list(rows)))
            return real[name](ctx, rows, p)
        return fn

    for k, kind in kinds.items():
        object.__setattr__(kind, "fn", spy(k))
    try:
        got = {w: runs.run(Change().with_sets(**{"blend.weight": w})) for w in (0.2, 0.9)}
    finally:
        for k, kind in kinds.items():
            object.__setattr__(kind, "fn", real[k])
    assert [given for given, _ in handed["lancedb_pool"]] == [None]  # after scope_rule
    (one, rows_one), (two, rows_two) = handed["scope_filter"]
    assert one is two is next(iter(runs.cache.values()))[0]  # the fetch's cached outcome
    assert all(a is b for a, b in zip(one.rows, rows_two, strict=True))
    assert all(a is b for a, b in zip(rows_one, rows_two, strict=True))
    assert scoping._FILTERED.hits >= 1
    for w, t in got.items():
        kept = t.stage("scope")
        assert kept.rows_in and len(kept.dropped) == len(kept.rows_in) - len(kept.rows)
        _fresh()
        want = _runs(path).run(Change().with_sets(**{"blend.weight": w}))
        assert shape(t) == shape(want)
        assert kept.facts == want.stage("scope").facts and kept.note == want.stage("scope").note
        dropped = {d.id: dict(d.detail) for d in kept.dropped}
        assert {v["scope"] for v in dropped.values()} >= {"0.0", "-0.0", "NULL"}
        for s in kept.rows_in:
            if s.id in dropped:
                assert dropped[s.id]["scope"] == scopes.had(s.row.columns["weight"])
