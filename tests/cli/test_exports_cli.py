"""`inspector query --export DIR` and `inspector run-trec`: the files say what `inspector query
--json` says, row for row and line for line, and nothing is written where it was not asked
(never into the store, never over a file without --force)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from inspector.cli.main import main
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot

NOW = "1796113038032"
QUERY = "rotate the signing keys"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def query_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run(capsys, "query", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("exports"))


def _flow_args(fx: Path) -> list[str]:
    return [str(fx / "store"), "--preset", "memory-lancedb-pro", "--vector",
            f"@{fx / 'q_pg.json'}", "--text", "postgres connection pool size", "--scope",
            "agent:main", "--now", NOW]


def _flat(row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, Mapping):
            out.update({f"{k}.{k2}": v2 for k2, v2 in v.items()})
        else:
            out[k] = v
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".csv":
        table = pa_csv.read_csv(path, convert_options=pa_csv.ConvertOptions(
            strings_can_be_null=True))
    else:
        table = pq.read_table(path)
    return table.to_pylist()


def _same(got: Any, want: Any, csv: bool) -> bool:
    if csv and want == "":
        want = None  # CSV writes an empty text and a null alike
    if isinstance(want, float) and isinstance(got, (int, float)):
        return got == want or (math.isnan(want) and math.isnan(got))
    return got == want


def _check_rows(got: list[dict[str, Any]], stage: dict[str, Any], csv: bool) -> None:
    """Each file row is the stage's candidate (every field, nested ones as key.sub), in
    order, then its dropped rows (fate: the drop code, detail.*)."""
    want = [_flat(c) for c in stage["candidates"]]
    dropped = stage.get("dropped") or []
    assert len(got) == len(want) + len(dropped)
    for row, cand in zip(got, want, strict=False):
        assert row["stage"] == stage["name"]
        for key, value in cand.items():
            assert _same(row[key], value, csv), (stage["name"], cand["id"], key)
    for row, drop in zip(got[len(want):], dropped, strict=True):
        assert (row["id"], row["fate"], row["rank"], row["score"]) == \
            (drop["id"], drop["code"], None, None)
        for key, value in drop.items():
            if key not in ("id", "code"):
                assert _same(row[f"detail.{key}"], value, csv)


CASES = {
    "classic-scoped": lambda demo, fx: [str(demo), "--text", QUERY, "--preset",
                                        "docs-overfetch", "--scope", "vault-agent",
                                        "--now", NOW],
    "classic-min-score": lambda demo, fx: [str(demo), "--text", QUERY, "--preset",
                                           "importance-blend", "--min-score", "0.55",
                                           "--now", NOW],
    "flow": lambda demo, fx: _flow_args(fx),
}


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_stage_files_read_back_equal_the_json_stage_tables(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_path: Path, fx: Path,
        case: str, fmt: str) -> None:
    args = CASES[case](demo_path, fx)
    answer = query_json(capsys, *args)
    code, out, err = run(capsys, "query", *args, "--json", "--export", str(tmp_path / "x"),
                         "--format", fmt)
    assert code == 0, err
    assert json.loads(out) == answer  # the export changes nothing on stdout
    assert json.loads((tmp_path / "x" / "answer.json").read_text()) == answer
    stages = answer["stages"]
    files = sorted((tmp_path / "x").glob(f"*.{fmt}"))
    assert [f.name for f in files] == [f"{n:02d}-{s['name']}.{fmt}"
                                       for n, s in enumerate(stages, 1)] + [f"results.{fmt}"]
    assert answer["schema"] == 3
    fates: set[str] = set()
    for n, (st, path) in enumerate(zip(stages, files, strict=False)):
        got = _read(path)
        _check_rows(got, st, fmt == "csv")
        fates.update(row["fate"] for row in got)
        for row in got[:len(st["candidates"])]:
            if n + 1 == len(stages):
                assert row["fate"] == "returned"
            else:
                assert row["fate"] == ("deferred" if row["id"] in st["deferred"] else "kept")
    assert len(fates) >= 2, fates  # the case exercises more than one fate
    final = _read(files[-1])
    assert [(r["rank"], r["id"], r["score"]) for r in final] == \
        [(c["rank"], c["id"], c["score"]) for c in stages[-1]["candidates"]]


def test_an_export_never_writes_into_the_store_nor_over_a_file(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, fx: Path) -> None:
    store = fx / "store"
    before = snapshot(store)
    target = tmp_path / "out"
    code, _, err = run(capsys, "query", *_flow_args(fx), "--export", str(target))
    assert code == 0, err
    first = (target / "13-final.csv").read_bytes()
    (target / "13-final.csv").write_text("mine")
    code, out, err = run(capsys, "query", *_flow_args(fx), "--export", str(target))
    assert code == 2 and out == ""  # refused before any answer is printed
    assert "exists" in err and "--force" in err and len(err.strip().splitlines()) == 1
    assert (target / "13-final.csv").read_text() == "mine"
    code, _, err = run(capsys, "query", *_flow_args(fx), "--export", str(target), "--force")
    assert code == 0, err
    assert (target / "13-final.csv").read_bytes() == first
    for inside in (store, store / "exports"):
        code, _, err = run(capsys, "query", *_flow_args(fx), "--export", str(inside))
        assert code == 2 and "inside the store" in err
    code, _, err = run(capsys, "query", *_flow_args(fx), "--format", "parquet")
    assert code == 2 and "--export" in err
    assert snapshot(store) == before
    assert not (store / "exports").exists()


def _query_set(path: Path, queries: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"queries": queries}))
    return path


def _trec(line: str) -> tuple[str, str, str, int, float, str]:
    qid, q0, docid, rank, score, tag = line.split(" ")
    return qid, q0, docid, int(rank), float(score), tag


def test_trec_run_lines_equal_each_querys_final_list(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_path: Path, fx: Path) -> None:
    fixed = [{"query": QUERY, "scope": "vault-agent", "judgments": {"x1": 1, "x2": 0.5}},
             {"query": "deploy the api", "name": "deploy"}, {"query": "database migration"}]
    flow = [{"query": "postgres connection pool size", "vector_of": "a1", "scope": "agent:main",
             "name": "pg"}, {"query": "kafka consumer lag alert", "vector_of": "a9"}]
    for store, preset, queries, extra in (
            (demo_path, "docs-overfetch", fixed, []),
            (fx / "store", "memory-lancedb-pro", flow, ["--now", NOW])):
        qs = _query_set(tmp_path / f"{preset}.json", queries)
        run_file, qrels = tmp_path / f"{preset}.run", tmp_path / f"{preset}.qrels"
        code, out, err = run(capsys, "run-trec", str(store), "--preset", preset, *extra,
                             "--queries", str(qs), "--out", str(run_file), "--qrels", str(qrels))
        assert code == 0, err
        lines = [_trec(ln) for ln in run_file.read_text().splitlines()]
        want = []
        for n, q in enumerate(queries, 1):
            args = [str(store), "--preset", preset, *extra, "--text", q["query"]]
            args += ["--vector-of", q["vector_of"]] if "vector_of" in q else []
            args += ["--scope", q["scope"]] if "scope" in q else []
            final = query_json(capsys, *args)["stages"][-1]["candidates"]
            want += [(q.get("name", str(n)), "Q0", c["id"], c["rank"], c["score"], preset)
                     for c in final]
        assert lines == want and len(want) > len(queries)
        judged = [(q.get("name", str(n)), rid, g) for n, q in enumerate(queries, 1)
                  for rid, g in sorted(q.get("judgments", {}).items())]
        assert [tuple(ln.split(" ")) for ln in qrels.read_text().splitlines()] == \
            [(qid, "0", rid, str(g)) for qid, rid, g in judged]
        code, _, err = run(capsys, "run-trec", str(store), "--preset", preset, *extra,
                           "--queries", str(qs), "--out", str(run_file), "--score", "rank",
                           "--tag", "mine", "--force")
        assert code == 0, err
        by_rank = [_trec(ln) for ln in run_file.read_text().splitlines()]
        assert [(q, d, r, t) for q, _, d, r, _, t in by_rank] == \
            [(q, d, r, "mine") for q, _, d, r, _, _ in want]
        for qid in {x[0] for x in by_rank}:
            scores = [x[4] for x in by_rank if x[0] == qid]
            assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)


def test_trec_evals_measures_of_the_run_equal_the_inspectors_own(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, demo_path: Path) -> None:
    """The documented evaluation (exports-and-mcp.md): `ir_measures docs.qrels docs.run
    nDCG@10`, trec_eval's own code through its Python binding, reads run-trec's files and
    gives, query by query, the nDCG@10 the inspector's metrics give the same final lists:
    graded and unreturned judgments, a query with none (not scored by trec_eval)."""
    from inspector.core.analysis.metrics import ndcg_at_k, precision_at_k

    texts = [(QUERY, "vault-agent"), ("deploy the api", None), ("database migration", None)]
    finals = []
    for text, scope in texts:
        args = [str(demo_path), "--preset", "docs-overfetch", "--text", text]
        finals.append([c["id"] for c in query_json(
            capsys, *args, *(["--scope", scope] if scope else []))["stages"][-1]["candidates"]])
    assert all(len(f) >= 5 for f in finals[:2]), finals
    grades = [{finals[0][1]: 2, finals[0][4]: 1, "not-returned": 3},
              {finals[1][0]: 1, finals[1][-1]: 2}, {}]
    queries = [{"query": t, "name": f"q{n}", **({"scope": s} if s else {}),
                **({"judgments": g} if g else {})}
               for n, ((t, s), g) in enumerate(zip(texts, grades, strict=True))]
    code, _, err = run(capsys, "run-trec", str(demo_path), "--preset", "docs-overfetch",
                       "--queries", str(_query_set(tmp_path / "queries.json", queries)),
                       "--out", str(tmp_path / "docs.run"), "--qrels",
                       str(tmp_path / "docs.qrels"))
    assert code == 0, err
    tool = Path(sys.executable).with_name("ir_measures")
    done = subprocess.run([str(tool), "docs.qrels", "docs.run", "nDCG@10", "P@5", "-q", "-p", "6"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = {(q, m): float(v) for q, m, v in (ln.split("\t") for ln in
                                               done.stdout.splitlines()) if q != "all"}
    ours = {}
    for n, (f, g) in enumerate(zip(finals, grades, strict=True)):
        if g:
            ours[(f"q{n}", "nDCG@10")] = ndcg_at_k(f, g, 10)
            ours[(f"q{n}", "P@5")] = precision_at_k(f, g, 5)
    assert theirs.keys() == ours.keys() and len(ours) == 4
    assert all(abs(theirs[k] - ours[k]) < 5e-6 for k in ours), (theirs, ours)
    assert all(0 < ours[(q, "nDCG@10")] < 1 for q in ("q0", "q1"))  # neither ideal, both scored


def test_run_trec_refuses_what_it_cannot_write_or_read(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, fx: Path) -> None:
    store = fx / "store"
    before = snapshot(store)
    qs = _query_set(tmp_path / "q.json", [{"query": "postgres", "vector_of": "a1"}])
    base = ["run-trec", str(store), "--preset", "memory-lancedb-pro", "--now", NOW,
            "--queries", str(qs)]
    existing = tmp_path / "run.txt"
    existing.write_text("mine")
    for extra, said in ((["--out", str(existing)], "exists"),
                        (["--out", str(store / "run.txt")], "inside the store"),
                        (["--out", str(tmp_path / "r"), "--text", "x"], "--queries"),
                        (["--out", str(tmp_path / "r"), "--tag", "my run"], "whitespace")):
        code, out, err = run(capsys, *base, *extra)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert existing.read_text() == "mine" and not (tmp_path / "r").exists()
    dup = _query_set(tmp_path / "d.json", [{"query": "a", "name": "x"}, {"query": "b",
                                                                        "name": "x"}])
    code, _, err = run(capsys, "run-trec", str(store), "--preset", "memory-lancedb-pro",
                       "--queries", str(dup), "--out", str(tmp_path / "r"))
    assert code == 2 and "unique" in err
    assert snapshot(store) == before


def test_a_query_name_with_spaces_is_one_trec_id_and_two_alike_are_refused() -> None:
    """formats.md's own query set names its query "key rotation": the run and the qrels say
    `key_rotation`; two names that become one id are refused, naming both."""
    from types import SimpleNamespace

    from inspector.core.errors import InspectorError
    from inspector.core.evidence import exports

    q = lambda name: SimpleNamespace(name=name)  # noqa: E731
    assert exports.query_ids([q("key rotation"), q(None), q(" tabs\tand  spaces ")]) == \
        ["key_rotation", "2", "tabs_and_spaces"]
    with pytest.raises(InspectorError, match="'key rotation' and 'key_rotation'"):
        exports.query_ids([q("key rotation"), q("key_rotation")])
