"""The recall audit's outrank shortcut gives every probe the verdict its whole pipeline gives
(`--no-scan`, one LanceDB search and one pipeline run per probe), and falls back to that
pipeline wherever it cannot prove its answer: on a table of three fragments with deleted rows,
exact duplicates (equal scores: the pool's row-id order decides), near-duplicates inside and
around the outrank radius, a cluster larger than the pool, NULL, NaN and out-of-range
importance, an own score exactly at the min score, and scoped probes (the scope pushed down or
a post-filter, each probe in its own scope or all in one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from inspector.core.analysis.audit import Prober, outrank, runs
from inspector.core.engine.flow.spec import load_shipped
from inspector.core.stores.opening import open_store
from inspector.core.stores.vectorscan import kernels as LM
from inspector.core.stores.vectorscan import near as NR
from tests.clikit import cli_json
from tests.storekit import snapshot, vectors_column, write_fragments

DIM = 24
NOW = 1.79e12
ORDER = np.random.default_rng(1).permutation(600)  # ids in another order than row ids


def _vectors(n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[Any]]:
    """Random rows, then planted groups: exact twins, a crowd of 14 copies, a cluster of 36
    (more than the pool of 30), and near-duplicates from well inside to past the radius."""
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    imp: list[Any] = list(rng.uniform(0, 1, n))
    v[1:4] = v[0]  # four exact twins
    imp[0:4] = [0.9, 0.9, 0.2, None]  # a tie at 0.95, 0.6, NULL: the default 0.7 (0.85)
    v[5:19] = v[4]  # a crowd of 15 copies: the least important is past the limit
    imp[4:19] = [0.05] + [0.8] * 14
    v[20:56] = v[19] + rng.normal(scale=0.01, size=(36, DIM)).astype(np.float32)
    for j, scale in enumerate((0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)):  # d ~ 24 scale^2
        base = 60 + 3 * j
        v[base + 1:base + 3] = v[base] + rng.normal(scale=scale, size=(2, DIM))
    imp[80:86] = [float("nan"), 1.5, -0.3, 0.0, None, 0.6]  # NaN, clamped, exactly 0
    v[81] = v[80]  # a NaN-score twin of a clamped row
    return v, imp


def _table(start: int, n: int, rng: np.random.Generator) -> pa.Table:
    v, imp = _vectors(n, rng)
    ids = [f"m{ORDER[i]:04d}" for i in range(start, start + n)]
    return pa.table({"id": ids, "text": [f"memory {i}" for i in range(start, start + n)],
                     "importance": pa.array(imp, pa.float64()),
                     "agentId": [f"agent-{i % 3}" for i in range(start, start + n)],
                     "vector": vectors_column(v)})


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outrank") / "db"
    rng = np.random.default_rng(7)
    write_fragments(path, [_table(start, n, rng) for start, n in ((0, 200), (200, 150),
                                                                   (350, 250))],
                    f"id IN ('m{ORDER[1]:04d}', 'm{ORDER[30]:04d}', 'm{ORDER[210]:04d}', "
                    f"'m{ORDER[400]:04d}')")
    return path


def _audit(store: Any, sets: dict[str, Any], limit: int, scan: bool, own: bool
           ) -> dict[str, Any]:
    prober = Prober(store, load_shipped("importance-blend"), limit, NOW, scan=scan)
    if sets:
        prober = prober.changed(sets)
    return runs.recall_audit(prober, own_scope=own)


VERDICTS = ("counts", "by_scope", "never_recallable", "found")


def _same(a: Any, b: Any) -> bool:
    """Equal, a NaN score equal to a NaN score (as the JSON output writes both)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_fixes_of_probes_proved_below_read_their_own_pool_and_equal_their_runs(
        store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory proved below the min score gets a fix search that tries no deeper fetch
    (every stage the shortcut covers is row-wise: `expect.depth_free`), so its leg is scanned
    at the fetch's own depth, not 10,000 rows deep; its fix equals the scan-off audit's, where
    the probe ran and its fix searched every depth, and says what it proved."""
    from inspector.core.engine import pool, pools
    from inspector.core.engine.pools import batched

    store = open_store(str(store_path), "memories")
    taken: list[int] = []
    searched: list[Any] = []
    real_take, real_leg = batched._take, pool._vector_leg

    def take(store: Any, rowids: Any, columns: Any) -> Any:
        taken.append(len(rowids))
        return real_take(store, rowids, columns)

    def leg(*a: Any, **k: Any) -> Any:
        searched.append(a[2])
        return real_leg(*a, **k)

    sets = {"min_score.min": 0.8}
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW).changed(sets)
    monkeypatch.setattr(batched, "_take", take)
    monkeypatch.setattr(pool, "_vector_leg", leg)
    pools.SOURCE.clear()
    fast = runs.recall_audit(prober, own_scope=False, fixes=4)
    monkeypatch.undo()
    slow = runs.recall_audit(Prober(store, load_shipped("importance-blend"), 10, NOW,
                                    scan=False).changed(sets), own_scope=False, fixes=4)
    below = [r for r in fast["never_recallable"] if "fix" in r["detail"]]
    assert len(below) == 4 and fast["scan"]["shortcut_below"] > 200
    assert all(r["code"] == "below_min_score" for r in below)
    for r in below:
        fix = r["detail"]["fix"]
        assert fix["fix"] is not None
        assert "no deeper search returns it" in fix["proved"][0]
    for key in VERDICTS:  # fixes included
        assert _same(fast[key], slow[key]), key
    # the fixes' scan (the last; the first gave the probes the shortcut refused their legs)
    # took the rows of each probe's own pool of 30, not the table's 596
    assert len(taken) == 2 and taken[-1] <= 4 * 30
    assert searched == []  # and no LanceDB search for any change the fixes tried


@pytest.mark.parametrize(("limit", "sets"), [(10, {}), (3, {}), (1, {}),
                                             (10, {"min_score.min": 0.8}),
                                             (10, {"blend.weight": 0.3})])
def test_the_shortcut_gives_every_verdict_the_whole_pipeline_gives(
        store_path: Path, limit: int, sets: dict[str, Any]) -> None:
    store = open_store(str(store_path), "memories")
    before = snapshot(store_path)
    fast = _audit(store, sets, limit, True, own=False)
    slow = _audit(store, sets, limit, False, own=False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    assert how["shortcut"] > 200
    assert how["scanned"] + how["shortcut"] + how["shortcut_below"] == fast["probes"]
    if sets.get("min_score.min"):  # a memory below the min score with its own vector: its
        # verdict proved, not run (each equal to the run's above, its score to the bit)
        assert fast["counts"]["below_threshold"] >= how["shortcut_below"] > 200
    else:
        assert how["shortcut_below"] == 0
    assert how["shortcut_checked"]  # twins' ranks read their distances: LanceDB checked them
    assert not how["per_query"] and sum(how["shortcut_refused"].values()) == how["scanned"]
    assert "its own score is NaN or not positive" in how["shortcut_refused"]
    if limit > 1:  # at limit 1 a twin outranked is past the limit: the pipeline answers it
        ranks = {r["rank"] for r in fast["found"]}
        assert {1, 2} <= ranks  # the tie of equal scores ranked by row id
    assert snapshot(store_path) == before


def test_each_shortcut_verdict_is_what_a_single_query_gives(
        store_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`inspector query --preset importance-blend --vector-of ID --expect ID` returns each
    memory the shortcut found at the rank it gave (every rank above 1, a sample of the rest)."""
    store = open_store(str(store_path), "memories")
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW)
    mem = prober.read(None, 0)
    prober.prepare(mem, mem.picked, [None] * len(mem.picked), own_only=True)
    ranks = {mem.ids[i]: r for i, r in prober._short.ranks.items()}
    assert len(ranks) > 400
    picked = [x for x, r in ranks.items() if r > 1] + sorted(ranks)[::60]
    assert len(picked) > 12
    for rid in picked:
        out = cli_json(capsys, "query", str(store_path), "--preset", "importance-blend",
                       "--vector-of", rid, "--limit", "10", "--expect", rid, "--json")
        ids = [c["id"] for c in out["stages"][-1]["candidates"]]
        assert ids.index(rid) + 1 == ranks[rid], rid
        assert out["expect"][0]["dropped_at"] is None


def test_probes_the_shortcut_cannot_prove_run_their_pipeline(store_path: Path) -> None:
    store = open_store(str(store_path), "memories")
    refused = _audit(store, {"min_score.min": 0.8}, 10, True, own=False)["scan"][
        "shortcut_refused"]
    assert {"more rows within the outrank radius than the pool holds",
            "rows near it outrank it past the limit",
            "its own score is NaN or not positive"} <= set(refused)


def _scoped(store: Any, sets: dict[str, Any], scan: bool, **kw: Any) -> dict[str, Any]:
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW, scan=scan)
    return runs.recall_audit(prober.changed(sets) if sets else prober, **kw)


@pytest.mark.parametrize("sets", [{}, {"min_score.min": 0.8}, {"scope_rule.pushdown": False},
                                  {"scope_rule.pushdown": False, "blend.weight": 0.3}])
@pytest.mark.parametrize("where", [{"own_scope": True},
                                   {"own_scope": False, "scopes": ("agent-1",)}])
def test_scoped_probes_get_the_verdict_their_pipeline_gives(
        store_path: Path, sets: dict[str, Any], where: dict[str, Any]) -> None:
    """Each probe in its own scope, or every probe in one (two in three then outside it: the
    scope rule says so without a run, the verdict each run gives): the shortcut ranks a probe
    among the rows near it that its pool can hold (the scope pushed down: the agent's rows; a
    post-filter: every row, the cluster of 36 past the pool of 30) and the scope filter keeps,
    and gives the verdict the whole pipeline gives."""
    store = open_store(str(store_path), "memories")
    fast = _scoped(store, sets, True, **where)
    slow = _scoped(store, sets, False, **where)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    refused = how["shortcut_refused"]
    assert how["shortcut"] > (150 if where["own_scope"] else 50)
    assert how["scanned"] + how["shortcut"] + how["shortcut_below"] + how["outside_scope"] \
        == fast["probes"]
    assert not how["per_query"] and how["pipeline_runs"] == how["scanned"]
    assert (how["shortcut_below"] > 0) == ("min_score.min" in sets)
    assert how["shortcut_checked"]
    if not where["own_scope"]:  # the other agents' memories: outside by the rule, not run
        assert how["outside_scope"] == fast["counts"]["out_of_scope"] > 150
        assert "its own row is outside its scope" not in refused
    else:
        assert how["outside_scope"] == 0
    if sets.get("scope_rule.pushdown") is False:
        assert "more rows within the outrank radius than the pool holds" in refused


def test_a_scoped_check_searches_the_probe_s_scope(store_path: Path) -> None:
    """The check of a scoped probe compares LanceDB's search in its scope (the pushed-down
    predicate) with the rows near it its pool can hold: all of them, not the other scopes'."""
    from lancedb.expr import col, lit

    store = open_store(str(store_path), "memories")
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW)
    mem = prober.read(None, 0)
    i = mem.position[f"m{ORDER[19]:04d}"]  # the cluster of 36, 12 of them this agent's
    p = prober._request(mem, i, (str(mem.scopes[i]),)).outrank
    rows, dist = NR.Rows(mem.vectors).within(np.array([i]), np.array([2.0]))[0]
    assert len(rows) > 30
    where = col("agentId").isin([lit(str(mem.scopes[i]))])
    mine = np.array([mem.scopes[r] == mem.scopes[i] for r in rows])
    assert 5 < mine.sum() < 20
    assert outrank._agrees(store, mem, i, p, (rows[mine], dist[mine]), 2.0, where)
    assert not outrank._agrees(store, mem, i, p, (rows, dist), 2.0, where)
    assert not outrank._agrees(store, mem, i, p, (rows[mine][1:], dist[mine][1:]), 2.0, where)


@pytest.fixture(scope="module")
def repo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows in repos whose pushed-down allowlist (exact case) and post-filter (lower-cased
    repo, or a path under the scope) disagree: `Repo-A` and rows of repo-b filed under
    `repo-a/` are in scope repo-a for the filter but outside LanceDB's predicate; clusters of
    near-duplicates cut across the repos."""
    from tests.storekit import write_table

    rng = np.random.default_rng(11)
    n = 480
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    for c in range(0, 240, 24):  # ten clusters of 24 (pool 30: all fit, until a post-filter
        v[c + 1:c + 24] = v[c] + rng.normal(scale=0.03, size=(23, DIM))  # sees three)
    v[300:340] = v[299] + rng.normal(scale=0.02, size=(40, DIM))
    repos = [("repo-a", "Repo-A", "repo-b", "repo-c")[i % 4] for i in range(n)]
    paths = [("repo-a/x" if i % 8 == 2 else f"{repos[i].lower()}/f{i}") for i in range(n)]
    path = tmp_path_factory.mktemp("repos") / "db"
    write_table(path, {
        "id": [f"r{ORDER[i % 600]:04d}-{i}" for i in range(n)],
        "text": [f"memory {i}" for i in range(n)], "repo": repos, "path": paths,
        "importance": rng.uniform(0, 1, n), "vector": v})
    return path


@pytest.mark.parametrize("pushdown", [True, False])
@pytest.mark.parametrize("where", [{"own_scope": True},
                                   {"own_scope": False, "scopes": ("repo-a",)}])
def test_a_repo_scope_s_pool_and_filter_are_each_their_own(
        repo_store: Path, pushdown: bool, where: dict[str, Any]) -> None:
    """Under a repo scope the pool holds LanceDB's predicate's rows and the filter keeps the
    rule's (a superset here): the shortcut reads both, and its verdicts are the pipeline's."""
    store = open_store(str(repo_store), "memories")
    sets = {"scope_rule.strategy": "repo_prefix", "scope_rule.column": "",
            "scope_rule.pushdown": pushdown}
    before = snapshot(repo_store)
    fast = _scoped(store, sets, True, **where)
    slow = _scoped(store, sets, False, **where)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    assert how["shortcut"] > 100 and how["shortcut_checked"]
    assert how["scanned"] + how["shortcut"] + how["shortcut_below"] + how["outside_scope"] \
        == fast["probes"]
    assert not how["per_query"]
    # the other repos' memories: outside repo-a by the rule (its lower-cased repo and path)
    assert (how["outside_scope"] > 100) is (not where["own_scope"])
    assert snapshot(repo_store) == before


@pytest.mark.parametrize("sets", [{}, {"min_score.min": 0.8}])
def test_a_failed_check_against_lancedb_sends_every_probe_to_its_pipeline(
        store_path: Path, monkeypatch: pytest.MonkeyPatch, sets: dict[str, Any]) -> None:
    store = open_store(str(store_path), "memories")
    monkeypatch.setattr(outrank, "_agrees", lambda *a: False)
    fast = _audit(store, sets, 10, True, own=False)
    assert fast["scan"]["shortcut"] == fast["scan"]["shortcut_below"] == 0
    assert "the shortcut's check against LanceDB's own search failed" in \
        fast["scan"]["shortcut_refused"]
    slow = _audit(store, sets, 10, False, own=False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key


def test_a_probe_below_the_min_score_behind_a_full_pool_of_copies_runs(tmp_path: Path) -> None:
    """41 copies of one vector, each too unimportant for the min score: by row id the first
    30 fill the pool (each fetched, then dropped by the min score: proved, no run), the last
    11 are never fetched, which only their runs say. Five lone rows below the min score are
    proved too, and one of them is checked against LanceDB (the copies cannot be: LanceDB's
    search returns 31 of the 41 rows at their distance)."""
    from tests.storekit import write_table

    rng = np.random.default_rng(3)
    v = rng.normal(size=(300, DIM)).astype(np.float32)
    v[100:140] = v[99]
    imp = rng.uniform(0.7, 1, 300)
    imp[99:140] = 0.1  # own score 1 x (0.5 + 0.5 x 0.1) = 0.55 < 0.8
    imp[0:5] = 0.2
    write_table(tmp_path / "db", {"id": [f"r{i:03d}" for i in range(300)],
                                  "importance": imp, "vector": v})
    store = open_store(str(tmp_path / "db"), "memories")
    fast = _audit(store, {"min_score.min": 0.8}, 10, True, own=False)
    slow = _audit(store, {"min_score.min": 0.8}, 10, False, own=False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key
    how = fast["scan"]
    assert how["shortcut_refused"]["rows before its own fill the pool"] == 11
    codes = {r["id"]: r["code"] for r in fast["never_recallable"]}
    assert [codes[f"r{i:03d}"] for i in range(99, 140)] == \
        ["below_min_score"] * 30 + ["not_fetched"] * 11
    assert how["scanned"] == 11 and how["shortcut_below"] == 35 and how["shortcut_checked"]


def test_probes_alone_within_their_radius_need_no_check(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Random rows: every probe is alone even a rounding margin past its radius, so its rank
    (1) reads no other row's distance and no LanceDB search is spent on checking it."""
    from tests.storekit import write_table

    rng = np.random.default_rng(2)
    write_table(tmp_path / "db", {"id": [f"r{i}" for i in range(300)],
                                  "importance": rng.uniform(0, 1, 300),
                                  "vector": rng.normal(size=(300, DIM)).astype(np.float32)})
    store = open_store(str(tmp_path / "db"), "memories")

    def no_search(*a: Any) -> bool:
        raise AssertionError("a LanceDB search was spent on the check")

    monkeypatch.setattr(outrank, "_agrees", no_search)
    fast = _audit(store, {}, 10, True, own=False)
    assert fast["scan"]["shortcut"] == 300 and not fast["scan"]["shortcut_checked"]
    monkeypatch.undo()
    slow = _audit(store, {}, 10, False, own=False)
    for key in VERDICTS:
        assert _same(fast[key], slow[key]), key


def test_the_check_agrees_with_lancedb_on_this_table(store_path: Path) -> None:
    """The check itself passes on a table whose kernels match LanceDB's (it is what lets the
    shortcut answer at all), and fails when a row near the probe is missing."""
    store = open_store(str(store_path), "memories")
    prober = Prober(store, load_shipped("importance-blend"), 10, NOW)
    mem = prober.read(None, 0)
    i = mem.position[f"m{ORDER[0]:04d}"]  # three twins at distance 0
    p = prober._request(mem, i, None).outrank
    near = NR.Rows(mem.vectors).within(np.array([i]), np.array([0.5]))[0]
    assert len(near[0]) == 3
    assert outrank._agrees(store, mem, i, p, near, 0.5)
    assert not outrank._agrees(store, mem, i, p, (near[0][:2], near[1][:2]), 0.5)


@pytest.mark.parametrize(("rank", "step"), [(40, 1_024), (8, 1_024), (40, 7)])
def test_within_is_every_row_inside_the_radius(rank: int, step: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound keeps every row whose exact (LanceDB) distance is at most the radius, each
    probe's k-th distance being its radius (rows right at it). Rows in an 8-dimension
    subspace far from the origin: the projection holds the whole distance, so only the
    rounding slack keeps the rows at the radius. Probes 7 at a time: the same rows."""
    monkeypatch.setattr(NR, "PROBES", step)
    rng = np.random.default_rng(3)
    basis = rng.normal(size=(rank, 40))
    centres = rng.normal(size=(20, rank)) * 30
    x = (centres[rng.integers(0, 20, 3_000)] + rng.normal(scale=0.5, size=(3_000, rank)))
    x = (x @ basis / np.sqrt(rank) + (300.0 if rank < 40 else 0.0)).astype(np.float32)
    x[100:110] = x[99]
    probes = np.arange(0, 3_000, 37)
    exact = [LM.rows(x, x[i], "l2") for i in probes]
    table = NR.Rows(x)
    for k in (1, 2, 5, 12, 40):
        radii = np.array([np.sort(d)[k - 1] for d in exact], np.float64)
        got = table.within(probes, radii)
        for (rows, dist), d, r in zip(got, exact, radii, strict=True):
            want = np.flatnonzero(d.astype(np.float64) <= r)
            assert np.array_equal(np.sort(rows), want)
            assert np.array_equal(dist[np.argsort(rows)], d[want])


def test_the_shortcut_is_refused_where_its_proof_does_not_hold() -> None:
    """The rows within a probe's radius decide its rank only for a vector pipeline on squared
    L2, no active scope, and LanceDB's tie rule: under the id rule equal scores go by id, not
    by the pool's order, so the shortcut must not read them (it once accepted `id` and then
    failed an assertion)."""
    from inspector.core.engine.blend import outrank_refusal
    from inspector.core.engine.params import Params

    assert outrank_refusal(Params()) is None
    assert "by id" in (outrank_refusal(Params(tie_rule="id")) or "")
    assert "fused" in (outrank_refusal(Params(mode="hybrid")) or "")
    assert "squared L2" in (outrank_refusal(Params(distance="cosine")) or "")
