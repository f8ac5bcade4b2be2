"""A generator for each class of issue 21, driving the real command line in-process: object-store
URIs holding secrets (from every command), index knobs past their bounds on real indexed
tables, hostile and oversized input files of every kind, damaged stores, receipts with wrong
types or injected markup, and stores holding NaN/inf vectors. The property is the issue's:
exit 0 (1 for a failed check) or exit 2 with one line and no traceback, nothing created, no
secret printed, the store byte-identical. Derandomized and bounded, so CI runs the same cases
every time in modest time (INSPECTOR_FUZZ_SCALE=10 for a longer local run)."""

from __future__ import annotations

import contextlib
import copy
import json
import tempfile
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.cli.main import main
from tests.fuzz.test_fuzz_cli import (
    _URI_PIECES,
    SCALE,
    URI_KEY,
    URI_SECRET,
    _check_outcome,
    json_value,
    uri_part,
)
from tests.storekit import snapshot, vectors_column, versioned_store, write_tuning_store


def _fuzz(examples: int) -> settings:
    return settings(max_examples=int(examples * SCALE), deadline=None, database=None,
                    derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


VEC = json.dumps([0.5] * 8)
GRID = ["--grid-overfetch", "1,2", "--grid-blend", "0,0.5"]


def _outcome(capsys: pytest.CaptureFixture[str], argv: list[str],
             allowed: tuple[int, ...] = (0, 2)) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    _check_outcome(code, err, allowed)
    return code, out, err


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tuning_store(tmp_path_factory.mktemp("rel") / "store", n=120, dim=8)


# ---- object-store URIs holding secrets, from every command ----------------------------------
@_fuzz(25)
@given(scheme=st.sampled_from(["s3", "gs", "az", "abfs"]),
       secret=st.lists(st.sampled_from([*_URI_PIECES, "@"]), max_size=4).map("".join),
       host=uri_part, path=uri_part,
       command=st.sampled_from(["tables", "query", "sweep", "report", "versions", "check"]))
def test_secret_uris_from_every_command_create_nothing_and_print_no_secret(
        capsys, tmp_path, monkeypatch, scheme, secret, host, path, command):
    from inspector.core.errors import InspectorError
    from inspector.core.stores.safety.object_uri import check_object_uri

    uri = f"{scheme}://{URI_KEY}:{URI_SECRET}{secret}@{host}/{path}"
    try:
        check_object_uri(uri)
    except InspectorError:
        pass
    else:
        return  # a URL LanceDB parses: it would go to the network (the other test covers it)
    cwd = Path(tempfile.mkdtemp(dir=tmp_path))
    monkeypatch.chdir(cwd)
    out_prefix = str(cwd / "r")
    argv = {"tables": ["tables", uri], "versions": ["versions", uri],
            "query": ["query", uri, "--vector", VEC],
            "sweep": ["sweep", uri, "--vector", VEC, *GRID],
            "report": ["report", uri, "--vector", VEC, "--out", out_prefix],
            "check": ["check", str(cwd / "c.json")]}[command]
    if command == "check":
        (cwd / "c.json").write_text(json.dumps({"store": uri, "checks": [
            {"vector": [0.5] * 8, "assert": ["returned > 0"]}]}))
    code, out, err = _outcome(capsys, argv, allowed=(2,))
    assert URI_KEY not in out + err and URI_SECRET not in out + err, err
    assert sorted(p.name for p in cwd.iterdir()) == (["c.json"] if command == "check" else [])


# ---- index knobs past their bounds, on real indexed tables ----------------------------------
@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small IVF_PQ and IVF_HNSW_SQ tables (600 rows: enough to train, quick to build)."""
    from lancedb.index import HnswSq, IvfPq

    rng = np.random.default_rng(5)
    out = {}
    for kind, config in (("IVF_PQ", IvfPq(num_partitions=4, num_sub_vectors=2)),
                         ("IVF_HNSW_SQ", HnswSq(num_partitions=2, m=8, ef_construction=40))):
        path = tmp_path_factory.mktemp("knobs") / kind
        vecs = rng.normal(size=(600, 8)).astype(np.float32)
        t = lancedb.connect(str(path)).create_table("memories", pa.table({
            "id": [f"m{i:04d}" for i in range(600)], "text": ["note"] * 600,
            "vector": vectors_column(vecs), "importance": rng.uniform(0, 1, 600)}))
        t.create_index("vector", config=config)
        out[kind] = path
    return out


# 0 is each knob's "not set" (LanceDB's default), -1 max_nprobes' default: both within
PAST = {"--nprobes": [-1, 1_000_001, 2**31, 2**63], "--min-nprobes": [-3, 1_000_001],
        "--max-nprobes": [-2, 1_000_001, 2**40], "--refine-factor": [-1, 10**9, 2**62],
        "--ef": [-1, 10_000_001, 10**12]}
WITHIN = {"--nprobes": [0, 1, 2, 4, 64], "--min-nprobes": [0, 1, 2],
          "--max-nprobes": [-1, 0, 4, 64], "--refine-factor": [0, 1, 2, 10],
          "--ef": [0, 1, 16, 500]}


@_fuzz(30)
@given(kind=st.sampled_from(["IVF_PQ", "IVF_HNSW_SQ"]),
       knobs=st.dictionaries(st.sampled_from(sorted(PAST)), st.booleans(), min_size=1,
                             max_size=3),
       data=st.data(), command=st.sampled_from(["query", "sweep", "report"]))
def test_knob_values_past_their_bounds_are_one_line(capsys, indexed, tmp_path, kind, knobs,
                                                    data, command):
    """`--refine-factor 1000000000` aborted natively (exit 134): every knob has a bound
    LanceDB honours, and a value past it is one line, exit 2, before LanceDB sees it."""
    path = indexed[kind]
    before = snapshot(path)
    argv = [command, str(path), "--vector-of", "m0007"]
    past = False
    for opt, beyond in knobs.items():
        value = data.draw(st.sampled_from(PAST[opt] if beyond else WITHIN[opt]))
        argv += [opt, str(value)]
        past |= beyond
    argv += GRID if command == "sweep" else \
        ["--out", str(Path(tempfile.mkdtemp(dir=tmp_path)) / "r")] if command == "report" else []
    code, _, err = _outcome(capsys, argv)
    if past:
        assert code == 2 and any(o.strip("-").replace("-", "_") in err
                                 or o.strip("-") in err for o in knobs), err
    assert snapshot(path) == before


# ---- hostile and oversized input files, of every kind ---------------------------------------
def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


hostile_text = st.one_of(
    json_value.map(json.dumps), st.binary(max_size=64).map(lambda b: b.decode("latin-1")),
    st.integers(1, 200_000).map(_nested), st.sampled_from(
        ["1e999", "-1e999", "NaN", '{"a": Infinity}', "\ufeff[1]", "[1" * 5000, '"\\ud800"',
         "x = 1\n[[routes]]\nstages = 7", "a = [" * 3000, "\x00" * 64, "[]", "{}"]))
KINDS = ("vector", "queries", "judgments", "checks", "scope-map", "pipeline", "system-config")


@_fuzz(40)
@given(kind=st.sampled_from(KINDS), content=hostile_text,
       shape=st.sampled_from(["file", "file", "file", "large", "folder", "empty"]))
def test_hostile_input_files_of_every_kind_are_read_or_refused(capsys, store, tmp_path, kind,
                                                               content, shape):
    from inspector.core.jsonio import MAX_INPUT_BYTES

    base = Path(tempfile.mkdtemp(dir=tmp_path))
    f = base / ("input.toml" if kind == "pipeline" and shape == "file" else "input.json")
    if shape == "folder":
        f.mkdir()
    elif shape == "large":
        with open(f, "wb") as fh:  # sparse: past every bound, no disk used
            fh.truncate(MAX_INPUT_BYTES + 1)
    else:
        f.write_text("" if shape == "empty" else content, encoding="utf-8", errors="surrogatepass")
    s = str(store)
    argv = {"vector": ["query", s, "--vector", f"@{f}"],
            "queries": ["sweep", s, "--queries", str(f), *GRID],
            "judgments": ["sweep", s, "--vector", VEC, "--judgments", str(f), *GRID],
            "checks": ["check", str(f), "--store", s],
            "scope-map": ["query", s, "--vector", VEC, "--scope", "repo1", "--scope-strategy",
                          "map", "--scope-map", str(f)],
            "pipeline": ["query", s, "--text", "keys", "--pipeline", str(f)],
            "system-config": ["query", s, "--text", "keys", "--preset", "memory-lancedb-pro",
                              "--system-config", str(f)]}[kind]
    code, _, _ = _outcome(capsys, argv, allowed=(0, 1, 2))
    if shape in ("large", "folder"):
        assert code == 2
    assert sorted(p.name for p in base.iterdir()) == [f.name]  # nothing written beside it


# ---- damaged stores --------------------------------------------------------------------------
@_fuzz(20)
@given(data=st.data(), damage=st.sampled_from(["truncate", "garble", "empty", "delete"]),
       command=st.sampled_from(["tables", "query", "versions", "sweep"]))
def test_damaged_stores_are_one_line(capsys, tmp_path_factory, data, damage, command):
    """A store with one file truncated, garbled, emptied or deleted: one line naming damage
    (or an answer, where LanceDB never reads the file), and the damaged store left as it is."""
    path = versioned_store(tmp_path_factory.mktemp("damage") / "v")
    # data files have random names: order by where and how large, so draws replay alike
    files = sorted((f for f in path.rglob("*") if f.is_file()),
                   key=lambda f: (str(f.parent.relative_to(path)), f.suffix, f.stat().st_size))
    # draws never depend on the store (its file names and sizes vary), so examples replay
    f = files[data.draw(st.integers(0, 10**6)) % len(files)]
    blob = f.read_bytes()
    at = int(data.draw(st.floats(0, 1)) * max(0, len(blob) - 1))
    if damage == "delete":
        f.unlink()
    elif damage == "empty":
        f.write_bytes(b"")
    elif damage == "truncate":
        f.write_bytes(blob[:at])
    else:
        junk = data.draw(st.binary(min_size=1, max_size=16))
        f.write_bytes(blob[:at] + junk + blob[at + len(junk):])
    before = snapshot(path)
    argv = {"tables": ["tables", str(path)], "versions": ["versions", str(path)],
            "query": ["query", str(path), "--vector", "[1, 0, 0, 0]", "--json"],
            "sweep": ["sweep", str(path), "--vector", "[1, 0, 0, 0]", *GRID]}[command]
    _outcome(capsys, argv)
    assert snapshot(path) == before


# ---- receipts with wrong types or injected markup --------------------------------------------
MARKUP = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>',
          "</script><script>alert(1)</script>", "<!--", "]]>", "javascript:alert(1)"]
wrong = st.one_of(json_value, st.sampled_from(MARKUP),
                  st.dictionaries(st.sampled_from(MARKUP + ["a"]), st.integers(), max_size=2),
                  st.lists(st.sampled_from(MARKUP), max_size=3))


@pytest.fixture(scope="module")
def receipt(store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("receipt") / "r"
    assert main(["report", str(store), "--vector", VEC, "--scope", "repo1", "--against",
                 "filter=pushdown", "--out", str(out)]) == 0
    return json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))


def _paths(node: object, prefix: tuple = (), depth: int = 0) -> list[tuple]:
    out = [prefix] if prefix else []
    if depth < 4 and isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k), depth + 1)
    elif depth < 4 and isinstance(node, list):
        for i, v in enumerate(node[:3]):
            out += _paths(v, (*prefix, i), depth + 1)
    return out


@_fuzz(40)
@given(data=st.data())
def test_receipts_with_wrong_types_or_markup_load_or_say_so_and_render_inert(
        capsys, receipt, tmp_path, data):
    """A hand-edited receipt: `receipt.load` (the window's reader) gives one sentence or the
    receipt checked; whatever the edit, the HTML page gets no element from it."""
    from inspector.core.errors import InspectorError
    from inspector.core.evidence import receipt as receipts
    from inspector.core.evidence.html import render_html
    from tests.core.evidence.test_html_hostile import _assert_inert

    doc = copy.deepcopy(receipt)
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.sampled_from(_paths(doc)))
        node = doc
        for key in where[:-1]:
            node = node[key]
        node[where[-1]] = data.draw(wrong)
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "edited.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        loaded = receipts.load(path)
    except InspectorError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
    else:
        assert loaded.verdict.before.limit >= 1  # what the window reads back has its shape
    with contextlib.suppress(InspectorError):
        _assert_inert(render_html(doc), str(path))


# ---- NaN / inf vectors: stored (LanceDB stores inf, refuses NaN) and asked ------------------
stored_float = st.sampled_from([float("inf"), float("-inf"), 3.0e38, -3.0e38, 1e-45, 0.0])
asked_vector = st.one_of(
    st.none(), st.lists(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e39", "0", "1"]),
                        min_size=4, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"))


@_fuzz(20)
@given(rows=st.dictionaries(st.integers(0, 29), st.lists(stored_float, min_size=1, max_size=4),
                            min_size=1, max_size=6),
       asked=asked_vector, command=st.sampled_from(["query", "sweep", "report", "tables"]),
       distance=st.sampled_from(["l2", "cosine"]))
def test_nan_or_inf_vectors_answer_or_say_so(capsys, tmp_path_factory, rows, asked, command,
                                             distance):
    """`report` on inf vectors raised LinAlgError (issue 21); a NaN or inf query vector, or a
    stored row of them queried by example, is an answer or one line, never a traceback."""
    rng = np.random.default_rng(len(rows))
    vecs = rng.normal(size=(30, 4)).astype(np.float32)
    for r, values in rows.items():
        vecs[r, : len(values)] = values
    path = tmp_path_factory.mktemp("inf") / "s"
    lancedb.connect(str(path)).create_table("memories", pa.table({
        "id": [f"m{i:02d}" for i in range(30)], "text": [f"note {i}" for i in range(30)],
        "vector": vectors_column(vecs), "importance": rng.uniform(0, 1, 30)}))
    before = snapshot(path)
    query = ["--vector-of", f"m{min(rows):02d}"] if asked is None else ["--vector", asked]
    out = Path(tempfile.mkdtemp(dir=path.parent)) / "r"
    argv = {"tables": ["tables", str(path)],
            "query": ["query", str(path), *query, "--distance", distance, "--json"],
            "sweep": ["sweep", str(path), *query, "--distance", distance, *GRID],
            "report": ["report", str(path), *query, "--distance", distance,
                       "--out", str(out)]}[command]
    code, text_out, _ = _outcome(capsys, argv)
    if code == 0 and command == "query":
        json.loads(text_out, parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))
    if asked is not None and any(x in asked for x in ("NaN", "Infinity", "1e39")) \
            and command != "tables":
        assert code == 2
    assert snapshot(path) == before
