"""The classic pipeline (scope rule, LanceDB's legs fused into a pool, scope post-filter,
importance blend, min score, limit) runs as ordinary stages of the one engine and gives the
answers the former fixed engine gave: 240 random cases over every classic preset and its
options (over-fetch, cap, blend, min score, mode, filter placement), on two stores with integer
and text ids, missing and NaN importance, twins, mixed-case repos and global scopes, recorded
from that engine (run in inspector/core/engine/pipeline.py at c436ee3, since deleted) in
data/classic_answers.json."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data" / "classic_answers.json"
CASES = json.loads(DATA.read_text(encoding="utf-8"))["cases"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from inspector.core.stores.opening import open_store
    from tests.storekit import write_mixed_store

    base = tmp_path_factory.mktemp("classic")
    return {name: open_store(str(write_mixed_store(base / name, 300, intid, seed)), None)
            for name, intid, seed in (("ints", True, 1), ("texts", False, 2))}


def _answer(store: Any, case: dict[str, Any]) -> tuple[list[str], list[float | None], str]:
    from inspector.core.engine.flow.question import Question, ask
    from inspector.core.engine.flow.spec import held_options, load_shipped

    spec = load_shipped(case["preset"])
    sets = {k: v for one in held_options(spec, case["options"]).values()
            for k, v in one.items()}
    q = Question(store=store.uri, preset=case["preset"], text=case["text"],
                 vector_of=case["vector_of"], limit=case["limit"],
                 scopes=None if case["scope"] is None else [case["scope"]], set=sets)
    trace, _ = ask(q, store)
    distance = next(st.params["distance"] for st in trace.stages if st.role == "fetch")
    return trace.final.ids, [s.score if math.isfinite(s.score) else None
                             for s in trace.final.rows], distance


def _same_scores(got: list[float | None], want: list[float | None], distance: str) -> bool:
    """Equal, bit for bit. LanceDB's cosine depends on the processor (AVX-512 or not,
    `kernels.reproduced`): its float32 cosine distances differ between them in the last
    bit, so on a machine other than the one these answers were recorded on, a cosine score
    may differ by that much (a relative 1e-6 is about eight float32 steps), never more."""
    if got == want:
        return True
    return distance == "cosine" and len(got) == len(want) and all(
        a is None and b is None or a is not None and b is not None and
        math.isclose(a, b, rel_tol=1e-6) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("n", range(0, len(CASES), 20), ids=lambda n: f"cases{n}")
def test_the_classic_presets_answer_as_the_fixed_engine_did(stores: dict[str, Any],
                                                            n: int) -> None:
    for case in CASES[n:n + 20]:
        ids, scores, distance = _answer(stores[case["store"]], case)
        assert ids == case["ids"], case
        assert _same_scores(scores, case["scores"], distance), (case, scores)


def test_the_recorded_cases_reach_every_rule() -> None:
    """Not only easy answers: starved scopes, min-score cuts, every mode and placement."""
    short = [c for c in CASES if len(c["ids"]) < c["limit"]]
    assert len(short) > 100 and any(c["ids"] for c in short)
    assert {c["options"].get("mode") for c in CASES} >= {"vector", "fts", "hybrid"}
    assert {c["options"].get("filter") for c in CASES} >= {"post", "pushdown"}
    assert sum(c["options"].get("blend", 0) > 0 or c["preset"] in ("importance-blend",
                                                                    "other-plugin")
               for c in CASES) > 50  # blended, where NaN and missing importance differ


def test_a_former_fixed_pipeline_file_reads_as_the_classic_shape(tmp_path: Path) -> None:
    """A file written for the former fixed engine (engine = "fixed", fixed_* stages) loads as
    the classic stages with the same parameters; an unknown parameter is named."""
    from inspector.core.engine.flow.spec import load_file
    from inspector.core.errors import InspectorError

    old = tmp_path / "mine.toml"
    old.write_text('name = "mine"\ntitle = "t"\nengine = "fixed"\n[[routes]]\nname = "fixed"\n'
                   '[[routes.stages]]\nname = "f"\nkind = "fixed_fetch"\nmode = "hybrid"\n'
                   'overfetch = 2.5\n[[routes.stages]]\nname = "s"\nkind = "fixed_scope"\n'
                   'filter = "pushdown"\n[[routes.stages]]\nname = "b"\nkind = "fixed_blend"\n'
                   'weight = 0.4\n[[routes.stages]]\nname = "c"\nkind = "fixed_cut"\n'
                   'min_score = 0.2\n', encoding="utf-8")
    spec = load_file(str(old))
    stages = {st.kind: st.params for st in spec.routes[0].stages}
    assert [st.kind for st in spec.routes[0].stages] == [
        "scope_rule", "lancedb_pool", "scope_filter", "importance_blend", "min_score", "limit"]
    assert stages["lancedb_pool"]["overfetch"] == 2.5 and stages["lancedb_pool"]["mode"] == \
        "hybrid"
    assert stages["scope_rule"]["pushdown"] is True
    assert stages["importance_blend"]["weight"] == 0.4 and stages["min_score"]["min"] == 0.2
    old.write_text(old.read_text().replace("weight = 0.4", "wieght = 0.4"))
    with pytest.raises(InspectorError, match="fixed_blend.wieght"):
        load_file(str(old))


def test_rrf_ties_put_vector_results_first_whatever_the_pool_order() -> None:
    """LanceDB's RRFReranker merges the vector results first, then the full-text-only rows;
    equal float32 scores keep that merge order (a stable sort). Row 0 here is full-text only
    at rank 2, row 1 vector only at rank 2: equal scores, and the vector row comes first even
    though the pool lists the other one first (the docs engine's rule breaks the tie by id)."""
    import numpy as np

    from inspector.core.engine.flow.stages.classic import fuse
    from inspector.core.engine.params import Params

    class Ids:
        id_order = np.array([1, 0])  # row 1's id sorts first

    vr, fr = np.array([0, 2]), np.array([2, 0])
    order, fused = fuse(Ids(), Params(mode="hybrid", tie_rule="lancedb"), vr, fr)
    assert fused[0] == fused[1] and order.tolist() == [1, 0]
    order, _ = fuse(Ids(), Params(mode="hybrid", tie_rule="id"), vr, fr)
    assert order.tolist() == [1, 0]
    Ids.id_order = np.array([0, 1])
    order, _ = fuse(Ids(), Params(mode="hybrid", tie_rule="id"), vr, fr)
    assert order.tolist() == [0, 1]
