"""A sweep of a pipeline whose route has column forms answers its cells, curve, truths and
safe depth over columns (`Runs.final_ids`, `Runs.outline_once`), checked on two runs of each
query over rows: the same sweep as over rows, field for field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspector.core.analysis import grid as G
from inspector.core.analysis.judgments import Judgments
from inspector.core.analysis.sweep import cases_from_judgments, run_sweep
from inspector.core.engine import pools
from inspector.core.engine.flow import registry, runs
from inspector.core.engine.flow.columns import Columns
from inspector.core.engine.flow.question import Question, resolve
from inspector.core.stores.opening import open_store
from tests.storekit import snapshot, write_tuning_store


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(write_tuning_store(tmp_path_factory.mktemp("cols") / "s", n=700, dim=24))


def _examples(n: int) -> Judgments:
    out = Judgments()
    for i in range(n):
        out = out.with_query(f"example m{i * 41:04d}", f"repo{i % 5}",
                             vector_of=f"m{i * 41:04d}")
    return out


def _sweep(folder: str, monkeypatch: pytest.MonkeyPatch, columns: bool,
           preset: str = "lancedb", **sets: Any) -> tuple[dict[str, Any], int]:
    """The sweep's JSON (without its times and run counts) and the runs made over rows."""
    pools.SOURCE.clear()
    made = []
    real = runs.run
    with monkeypatch.context() as m:
        m.setattr(runs, "run", lambda *a, **k: made.append(1) or real(*a, **k))
        if not columns:
            m.setattr(runs, "outline", lambda *a, **k: None)
        store = open_store(folder)
        base = Question(store=folder, preset=preset, limit=5,
                        set={"scope_rule.strategy": "column", "scope_rule.column": "repo",
                             **sets})
        axes = G.parse_grid(resolve(base)[0], ["fetch.overfetch=1,2,4,8",
                                               "blend.weight=0,0.3,0.6,1"])
        got = run_sweep(store, base, cases_from_judgments(base, _examples(6), store),
                        axes).to_json()
    for key in ("seconds", "runs"):
        got.pop(key)
    for q in got["queries"]:
        q.pop("runs")
    return got, len(made)


@pytest.mark.parametrize(("preset", "sets"), [("lancedb", {}),
                                             ("memory-plugin", {"min_score.min": 0.02}),
                                             ("docs-before-fix", {})])
def test_a_sweep_over_columns_is_the_sweep_over_rows(folder: str, preset: str,
                                                     sets: dict[str, Any],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    before = snapshot(Path(folder))
    cols, by_cols = _sweep(folder, monkeypatch, True, preset, **sets)
    rows, by_rows = _sweep(folder, monkeypatch, False, preset, **sets)
    assert cols == rows
    assert any(any(v is not None and v < 1 for v in q["values"]["scoped_recall"])
               for q in cols["queries"])  # cells that miss rows, and others: a real grid
    assert all(not q["notes"] for q in cols["queries"])  # no query fell back to rows
    # over rows: every cell, truth and curve point, and the safe depth's search; over
    # columns: the two runs of each query that check them
    assert by_cols == 2 * 6 < by_rows
    assert snapshot(Path(folder)) == before


def test_a_query_whose_columns_disagree_is_swept_over_rows_and_says_so(
        folder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows, _ = _sweep(folder, monkeypatch, False)
    kind = registry.KINDS["limit"]

    def wrong(ctx: Any, cols: Columns, p: dict[str, Any]) -> Columns:  # one row off
        return Columns(cols.pool, cols.at[1:ctx.limit + 1], cols.score[1:ctx.limit + 1])

    monkeypatch.setitem(registry.KINDS, "limit", registry.replace(kind, columns=wrong))
    cols, _ = _sweep(folder, monkeypatch, True)
    for q in cols["queries"]:
        assert any("column form" in n for n in q.pop("notes"))
    for q in rows["queries"]:
        assert not q.pop("notes")
    assert cols == rows


def test_a_sweep_applies_each_cells_settings_once_for_all_its_queries(
        folder: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The questions of a sweep run one pipeline: each set of changes (a cell, a depth its
    safe-depth search tries) is applied to it once (`sweep.SharedSpecs`), not once a query,
    and the sweep is the sweep whose queries each apply their own."""
    from inspector.core.analysis import sweep as SW

    def swept(shared: bool) -> tuple[dict[str, Any], int]:
        applied = []
        real = runs.apply_set
        with monkeypatch.context() as m:
            m.setattr(runs, "apply_set", lambda *a: applied.append(a[1]) or real(*a))
            if not shared:
                m.setattr(SW.SharedSpecs, "share", lambda self, r: None)
            got, _ = _sweep(folder, monkeypatch, True, "memory-plugin")
        return got, len(applied)

    one, once = swept(True)
    each, every = swept(False)
    assert one == each
    assert 16 <= once < every / 3  # the 4 x 4 cells at least, for 6 queries


def test_runs_adopt_only_the_pipeline_they_run(folder: str) -> None:
    from inspector.core.engine.flow.question import runs_for
    from inspector.core.engine.pools import Lru

    base = Question(store=folder, preset="lancedb", limit=5, vector_of="m0041",
                    set={"blend.weight": 0.2})
    store = open_store(folder)
    mine = runs_for(base, store)[0]
    same = runs_for(base, store)[0].spec
    assert same is not mine.spec
    shared = Lru(8, None)
    mine.adopt(same, shared)
    assert mine.spec is same
    other = resolve(Question(store=folder, preset="lancedb", limit=5, vector_of="m0041",
                             set={"blend.weight": 0.5}))[0]
    with pytest.raises(ValueError):
        mine.adopt(other, shared)
