"""`inspector audit recall|change` over a real system's pipeline, on the store
memory-lancedb-pro wrote: it finds what the store was built to hide, and each probe's verdict,
and the fix it lists, is what a single `inspector query --expect ID` gives for that memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy

NOW = "1796113038032"


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("audit"))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def recall(fx: Path) -> dict[str, Any]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["audit", "recall", str(fx / "store"), "--preset", "memory-lancedb-pro",
                     "--limit", "5", "--now", NOW, "--json"]) == 0
    return json.loads(buf.getvalue())


def test_recall_audit_finds_the_rows_the_store_hides(recall: dict[str, Any]) -> None:
    never = {r["id"]: r for r in recall["never_recallable"]}
    assert recall["probes"] == 297 and recall["counts"]["found"] == 297 - len(never)
    assert never["a7"]["class"] == "expired"  # valid_until passed
    assert never["a8"]["class"] == "inactive"  # superseded
    assert {r["class"] for r in never.values()} <= {"expired", "inactive", "noise"}
    assert sum(recall["counts"].values()) == 297
    noisy = [r for r in never.values() if r["class"] == "noise"]
    assert noisy and all(r["detail"]["fix"]["fix"]["argv"] == [
        "--set", "noise_filter.enabled=false"] for r in noisy)  # its own gate, run
    assert "search LanceDB themselves" in recall["method"]  # why no batched scan


def test_each_probe_agrees_with_a_single_query(fx: Path, recall: dict[str, Any],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow.compute as pc

    from inspector.core.stores.opening import open_store

    tbl = open_store(str(fx / "store"), "memories").table.to_arrow()
    probes = recall["never_recallable"] + recall["found"][::60]
    for p in probes:
        row = tbl.filter(pc.equal(tbl["id"], p["id"])).to_pylist()[0]
        out = run(capsys, "query", str(fx / "store"), "--preset", "memory-lancedb-pro",
                  "--vector-of", p["id"], "--text", row["text"], "--limit", "5", "--now", NOW,
                  "--scope-list", json.dumps([row["scope"]]), "--expect", p["id"], "--json")
        ids = [c["id"] for c in out["stages"][-1]["candidates"]]
        if p["class"] == "found":
            assert ids.index(p["id"]) + 1 == p["rank"]
            continue
        assert p["id"] not in ids
        stages = {s["name"]: s for s in out["stages"]}
        drops = {d["id"]: d["code"] for d in stages[p["stage"]]["dropped"]}
        assert drops[p["id"]] == p["code"]
        e, fix = out["expect"][0], p["detail"]["fix"]
        assert (fix["fix"], fix["alternatives"]) == (e["fix"], e["alternatives"])


def test_change_audit_counts_probes_improved_and_hurt(fx: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    common = [str(fx / "store"), "--preset", "memory-lancedb-pro", "--limit", "5", "--now",
              NOW, "--sample", "120", "--seed", "3", "--json"]
    change = ["--set", "noise_filter.enabled=false"]
    res = run(capsys, "audit", "change", *common, *change)
    before = run(capsys, "audit", "recall", *common)
    after = run(capsys, "audit", "recall", *common, *change)
    found_before = {r["id"] for r in before["found"]}
    found_after = {r["id"] for r in after["found"]}
    assert res["probes"] == before["probes"] == 120
    assert {x["id"] for x in res["improved_ids"]} == found_after - found_before
    assert {x["id"] for x in res["hurt_ids"]} == found_before - found_after
    none = run(capsys, "audit", "change", str(fx / "store"), "--preset", "memory-lancedb-pro",
               "--limit", "5", "--now", NOW, "--set", "mmr.threshold=0.85", "--sample", "40",
               "--json")
    assert none["improved"] == none["hurt"] == none["rows_gained"] == none["rows_lost"] == 0


def test_noise_filter_off_makes_the_noise_rows_recallable(fx: Path, recall: dict[str, Any],
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    on = recall
    off = run(capsys, "audit", "recall", str(fx / "store"), "--preset", "memory-lancedb-pro",
              "--limit", "5", "--now", NOW, "--set", "noise_filter.enabled=false", "--json")
    noisy = {r["id"] for r in on["never_recallable"] if r["class"] == "noise"}
    assert noisy and not noisy & {r["id"] for r in off["never_recallable"]}


def test_audits_refuse_what_they_cannot_run(fx: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    capsys.readouterr()
    assert main(["audit", "recall", str(fx / "store"), "--preset", "docs-before-fix",
                 "--scope", "a", "--scope", "b"]) == 2
    assert "takes one scope" in capsys.readouterr().err  # the scope rule's own refusal
    assert main(["audit", "change", str(fx / "store"), "--preset", "memory-lancedb-pro"]) == 2
    assert "needs the change" in capsys.readouterr().err


def test_scope_audit_on_the_plugins_store_finds_no_leak(fx: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    res = run(capsys, "audit", "scopes", str(fx / "store"), "--preset", "memory-lancedb-pro",
              "--limit", "5", "--now", NOW, "--per-scope", "5", "--json")
    assert res["leak_total"] == 0 and not res["pushdown_available"]
    assert {s["scope"] for s in res["scopes"]} == {"agent:main", "agent:ops", "global",
                                                   "reflection:agent:main"}


def test_scope_audit_finds_a_scope_starved_by_a_global_cut(make_store: Any,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    """300 rows of a big scope sit nearer every small-scope row than its siblings do: with
    the scope applied after the cut, a small row's probe returns it alone, and pushing the
    scope into the search returns the whole page."""
    import numpy as np

    rng = np.random.default_rng(5)
    centre = np.zeros(16, np.float32)
    centre[0] = 1
    big = centre + rng.normal(0, 0.01, (300, 16)).astype(np.float32)
    small = np.stack([centre + (0.3 * (i + 1)) * np.eye(16, dtype=np.float32)[i + 1]
                      for i in range(6)])
    vecs = np.concatenate([big, small])
    n = len(vecs)
    path = make_store({"id": [f"b{i:03d}" for i in range(300)] + [f"s{i}" for i in range(6)],
                       "text": [f"memory number {i} about things" for i in range(n)],
                       "vector": vecs, "scope": ["big"] * 300 + ["small"] * 6,
                       "importance": [0.7] * n, "timestamp": [1.79e12] * n,
                       "metadata": ["{}"] * n})
    argv = ["audit", "scopes", str(path), "--preset", "memory-lancedb-pro", "--limit", "5",
            "--now", NOW, "--per-scope", "6", "--json"]
    post = run(capsys, *argv, "--set", "vector_search.prefilter=false", "--set",
               "hard_min_score.min=0", "--set", "noise_filter.enabled=false")
    small_row = next(s for s in post["scopes"] if s["scope"] == "small")
    assert small_row["short"] == 6 and small_row["ended_by_pushdown"] == 6
    assert post["leak_total"] == 0  # the plugin double-checks every row's scope
    pre = run(capsys, *argv, "--set", "hard_min_score.min=0", "--set",
              "noise_filter.enabled=false")
    assert next(s for s in pre["scopes"] if s["scope"] == "small")["short"] == 0
