"""Fuzzing the command line (issue 12): random arguments, scope strings, vector files, checks,
judgments and scope-map files, and store schemas. Every run must end with exit 0 (or 1 for a
failed check) or exit 2 with exactly one line on stderr, never a traceback, and leave the store
byte-identical. Commands run in-process, so the whole module stays fast."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from inspector.cli.main import main
from tests.storekit import snapshot, write_tuning_store

SCALE = float(os.environ.get("INSPECTOR_FUZZ_SCALE", "1"))  # e.g. 10 for a long local run
FUZZ = settings(max_examples=int(30 * SCALE), deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tuning_store(tmp_path_factory.mktemp("fuzz") / "store", n=120, dim=8)


def _check_outcome(code: int, err: str, allowed: tuple[int, ...] = (0, 2)) -> None:
    assert code in allowed, err
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("inspector: ") and err.count("\n") == 1, err
        assert "failed unexpectedly" not in err, err  # the last resort is not an answer


def _run(capsys: pytest.CaptureFixture[str], argv: list[str],
         allowed: tuple[int, ...] = (0, 2)) -> int:
    code = main(argv)
    _out, err = capsys.readouterr()
    _check_outcome(code, err, allowed)
    return code


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
number = st.one_of(st.integers(-10**12, 10**12).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.sampled_from(["0", "1", "-1", "1e308", "nan", "inf", "", "x", "1:1:0",
                                    "0:1:1e-9", "3", "0.5"]), text)
OPTIONS = {"--limit": number, "--overfetch": number, "--cap": number, "--fts-k": number,
           "--vec-k": number, "--rrf-k": number, "--blend": number, "--min-score": number,
           "--default-importance": number, "--scope": text, "--text": text,
           "--mode": st.sampled_from(["vector", "fts", "hybrid", "bogus"]),
           "--preset": st.sampled_from(["docs-overfetch", "docs-pushdown", "openclaw",
                                        "openclaw-search-defaults", "importance-blend",
                                        "engine-memory", "nope"]),
           "--scope-strategy": st.sampled_from(["repo_prefix", "path_prefix", "none", "column",
                                                "agent_scope", "map", "x"]),
           "--filter": st.sampled_from(["post", "pushdown", "?"]),
           "--distance": st.sampled_from(["l2", "cosine", "dot", "x"]),
           "--vector": st.one_of(text, st.lists(st.floats(), max_size=10).map(json.dumps)),
           "--vector-of": text, "--expect": text, "--column": text, "--as-of": number,
           "--storage-option": text, "--table": text, "--embedder": text,
           "--grid-overfetch": number, "--grid-blend": number, "--grid-min-score": number,
           "--k": number}


@st.composite
def argv(draw: st.DrawFn, command: str, store: Path) -> list[str]:
    out = [command, str(store)]
    for opt in draw(st.lists(st.sampled_from(sorted(OPTIONS)), max_size=6)):
        if command == "query" and opt.startswith(("--grid", "--k")):
            continue
        out += [opt, draw(OPTIONS[opt])]
    if draw(st.booleans()):
        out += ["--vector", json.dumps([0.5] * 8)]
    return out


@FUZZ
@given(data=st.data(), command=st.sampled_from(["query", "sweep"]))
def test_random_arguments_give_an_answer_or_one_line(capsys, store, data, command):
    before = snapshot(store)
    args = data.draw(argv(command, store))
    if command == "sweep":
        args += ["--grid-overfetch", "1,2", "--grid-blend", "0,0.5"] \
            if "--grid-overfetch" not in args else []
    _run(capsys, args)
    assert snapshot(store) == before


@FUZZ
@given(scope=text, strategy=st.sampled_from(["repo_prefix", "path_prefix", "none", "column",
                                             "agent_scope"]),
       placement=st.sampled_from(["post", "pushdown"]))
def test_random_scope_strings_never_break_a_query(capsys, store, scope, strategy, placement):
    before = snapshot(store)
    args = ["query", str(store), "--vector", json.dumps([1.0] * 8), "--scope", scope,
            "--scope-strategy", strategy, "--filter", placement, "--json"]
    if strategy == "column":
        args += ["--scope-column", "repo"]
    _run(capsys, args)
    assert snapshot(store) == before


json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(), text),
    lambda kids: st.one_of(st.lists(kids, max_size=4),
                           st.dictionaries(text, kids, max_size=4)), max_leaves=12)


@FUZZ
@given(content=st.one_of(json_value.map(json.dumps), st.binary(max_size=64).map(repr),
                         st.binary(max_size=64)))
def test_random_vector_files(capsys, store, tmp_path, content):
    f = tmp_path / "v.json"
    f.write_bytes(content if isinstance(content, bytes) else content.encode())
    _run(capsys, ["query", str(store), "--vector", f"@{f}"])


check_entry = st.fixed_dictionaries(
    {"text": st.one_of(st.just("keys"), json_value)},
    optional={"params": st.one_of(json_value, st.dictionaries(
        st.sampled_from(["limit", "overfetch", "blend", "scope_map", "mode", "cap", "bogus"]),
        json_value, max_size=3)),
        "assert": st.one_of(json_value, st.lists(st.one_of(
            st.sampled_from(["returned > 0", "returned > NaN", "recall@5 >= 1", "mrr > 0",
                             "id m0001 in top 3", "diagnosis == ok", "scoped_recall >= 0"]),
            json_value), max_size=3)),
        "scope": json_value, "preset": json_value, "relevant": json_value,
        "vector_of": json_value, "name": json_value})


@FUZZ
@given(doc=st.one_of(json_value, st.fixed_dictionaries(
    {"checks": st.lists(check_entry, max_size=2)},
    optional={"store": json_value, "table": json_value, "defaults": json_value,
              "judgments": json_value})))
def test_random_checks_files(capsys, store, tmp_path, doc):
    f = tmp_path / "checks.json"
    f.write_text(json.dumps(doc))
    before = snapshot(store)
    _run(capsys, ["check", str(f), "--store", str(store)], allowed=(0, 1, 2))
    assert snapshot(store) == before


@FUZZ
@given(doc=json_value, kind=st.sampled_from(["judgments", "scope-map"]),
       csv=st.booleans())
def test_random_judgments_and_scope_map_files(capsys, store, tmp_path, doc, kind, csv):
    f = tmp_path / (f"{kind}.csv" if csv and kind == "judgments" else f"{kind}.json")
    f.write_text(json.dumps(doc) if not f.suffix == ".csv" else str(doc))
    vec = json.dumps([1.0] * 8)
    if kind == "judgments":
        args = ["sweep", str(store), "--queries", str(f), "--vector", vec,
                "--grid-overfetch", "1,2", "--grid-blend", "0"]
    else:
        args = ["query", str(store), "--vector", vec, "--scope", "repo1",
                "--scope-strategy", "map", "--scope-map", str(f)]
    _run(capsys, args)


ARROW_TYPES = [pa.int8(), pa.int64(), pa.float16(), pa.float32(), pa.float64(), pa.utf8(),
               pa.bool_(), pa.binary(), pa.decimal128(6, 2), pa.timestamp("ms"),
               pa.list_(pa.float32()), pa.list_(pa.float32(), 4), pa.list_(pa.float64(), 4),
               pa.list_(pa.int32(), 4), pa.struct([("a", pa.int32())])]
COLUMN_NAMES = ["id", "text", "vector", "importance", "scope", "repo", "path", "agentId",
                "category", "createdAt", "we`ird", "ü", "embedding"]


@settings(max_examples=int(12 * SCALE), deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(columns=st.dictionaries(st.sampled_from(COLUMN_NAMES), st.sampled_from(ARROW_TYPES),
                               min_size=1, max_size=6), seed=st.integers(0, 10))
def test_random_store_schemas(capsys, tmp_path_factory, columns, seed):
    path = tmp_path_factory.mktemp("schema") / "s"
    n = 5
    rng = np.random.default_rng(seed)
    data = {name: _values(t, n, rng) for name, t in columns.items()}
    table = pa.table(data, schema=pa.schema([pa.field(k, t) for k, t in columns.items()]))
    try:
        lancedb.connect(str(path)).create_table("memories", table)
    except (ValueError, RuntimeError):
        reject()  # LanceDB itself refuses this table (e.g. ragged lists named `vector`)
    before = snapshot(path)
    _run(capsys, ["tables", str(path), "--json"])
    for mode in ("vector", "fts", "hybrid"):
        _run(capsys, ["query", str(path), "--mode", mode, "--text", "keys", "--vector",
                      "[1, 0, 0, 0]", "--json"])
    assert snapshot(path) == before


def _values(t: pa.DataType, n: int, rng: np.random.Generator) -> pa.Array:
    """n arbitrary values of type t (some NULL), as a real store might hold."""
    mask = rng.random(n) < 0.2
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t):
        size = t.list_size if pa.types.is_fixed_size_list(t) else 3
        vals = [None if m else [int(x) if pa.types.is_integer(t.value_type) else float(x)
                                for x in rng.integers(0, 3, size)] for m in mask]
        return pa.array(vals, t)
    if pa.types.is_struct(t):
        return pa.array([None if m else {"a": 1} for m in mask], t)
    if pa.types.is_decimal(t):
        from decimal import Decimal
        return pa.array([None if m else Decimal("0.50") for m in mask], t)
    if pa.types.is_string(t):
        return pa.array([None if m else f"keys {i}" for i, m in enumerate(mask)], t)
    if pa.types.is_binary(t):
        return pa.array([None if m else b"\xff\x00" for m in mask], t)
    if pa.types.is_boolean(t):
        return pa.array([None if m else bool(i % 2) for i, m in enumerate(mask)], t)
    if pa.types.is_timestamp(t):
        return pa.array([None if m else i * 1000 for i, m in enumerate(mask)], pa.int64()).cast(t)
    if pa.types.is_floating(t):
        return pa.array([None if m else float(i) / n for i, m in enumerate(mask)], pa.float64()
                        ).cast(t)
    return pa.array([None if m else i for i, m in enumerate(mask)], t)


URI_KEY, URI_SECRET = "AKIAFUZZKEY", "Fuzz5ecret"
_URI_PIECES = ["bucket", "b", "Z", ".", "-", "_", ":", "9000", "99999", "0", "x", " ", "/", "?",
               "#", "%", "%2F", "\\", "|", "^", "[", "]", "é", "\t", "+"]
uri_part = st.lists(st.sampled_from(_URI_PIECES), max_size=5).map("".join)


@FUZZ
@given(scheme=st.sampled_from(["s3", "gs", "az", "abfs", "S3"]),
       secret=st.one_of(st.none(), st.lists(st.sampled_from([*_URI_PIECES, "@"]),
                                            max_size=4).map("".join)),
       host=uri_part, path=uri_part)
def test_random_object_store_uris_create_nothing(capsys, tmp_path, monkeypatch, scheme, secret,
                                                 host, path):
    """A URI LanceDB cannot parse as a URL becomes a local folder inside LanceDB (issue 21).
    Refused URIs: one line, exit 2, the secret masked, nothing created. Accepted ones: LanceDB
    parses them as URLs, checked on the abfs:// scheme, which parses as s3/gs/az do (no
    special scheme in the URL standard) and which LanceDB refuses at once."""
    import tempfile

    from inspector.core.errors import InspectorError
    from inspector.core.stores.safety.object_uri import check_object_uri

    cwd = Path(tempfile.mkdtemp(dir=tmp_path))
    monkeypatch.chdir(cwd)
    creds = f"{URI_KEY}:{URI_SECRET}{secret}@" if secret is not None else ""
    rest = f"{creds}{host}/{path}"
    try:
        check_object_uri(f"{scheme}://{rest}")
    except InspectorError:
        code = main(["tables", f"{scheme}://{rest}"])
        _out, err = capsys.readouterr()
        _check_outcome(code, err, allowed=(2,))
        assert URI_KEY not in err and URI_SECRET not in err, err
    else:
        with contextlib.suppress(Exception):
            lancedb.connect(f"abfs://{rest}", storage_options={})
    assert list(cwd.iterdir()) == [], f"{scheme}://{rest}"


@FUZZ
@given(kind=st.sampled_from(["vector", "queries", "checks", "scope-map", "judgments"]),
       shape=st.sampled_from(["folder", "device", "link to device", "link to folder", "large",
                              "empty", "binary"]),
       content=st.binary(max_size=32))
def test_random_input_file_kinds_are_read_or_refused_in_one_line(capsys, store, tmp_path,
                                                                 kind, shape, content):
    """Every input file goes through jsonio.read_input (issue 21): whatever the path names, the
    answer is one line or a result, never a blocked or unbounded read. (Pipes and /dev/zero,
    which would hang or exhaust memory on a regression, are tests/cli/test_input_files_cli.)"""
    import tempfile

    from inspector.core.jsonio import MAX_INPUT_BYTES

    base = Path(tempfile.mkdtemp(dir=tmp_path))
    f = base / "input.json"
    if shape == "folder":
        f.mkdir()
    elif shape in ("device", "link to device"):
        if not os.path.exists("/dev/null"):
            reject()
        f = Path("/dev/null") if shape == "device" else f
        if shape == "link to device":
            f.symlink_to("/dev/null")
    elif shape == "link to folder":
        f.symlink_to(base)
    elif shape == "large":
        with open(f, "wb") as fh:
            fh.truncate(MAX_INPUT_BYTES + 1 + len(content))
    else:
        f.write_bytes(b"" if shape == "empty" else content)
    vec = json.dumps([1.0] * 8)
    argv = {"vector": ["query", str(store), "--vector", f"@{f}"],
            "queries": ["sweep", str(store), "--queries", str(f), "--grid-overfetch", "1",
                        "--grid-blend", "0"],
            "checks": ["check", str(f), "--store", str(store)],
            "scope-map": ["query", str(store), "--vector", vec, "--scope", "repo1",
                          "--scope-strategy", "map", "--scope-map", str(f)],
            "judgments": ["sweep", str(store), "--vector", vec, "--judgments", str(f),
                          "--grid-overfetch", "1", "--grid-blend", "0"]}[kind]
    code = _run(capsys, argv, allowed=(0, 1, 2))
    if shape not in ("empty", "binary"):
        assert code == 2


@settings(max_examples=int(12 * SCALE), deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), mode=st.sampled_from(["vector", "fts"]))
def test_random_deleted_files_are_named_as_damage(capsys, tmp_path_factory, data, mode):
    """A file deleted from a store (issue 21): one line; "removed by a cleanup" only when the
    version asked for is really no longer listed, else damage naming the file."""
    from tests.storekit import versioned_store

    path = versioned_store(tmp_path_factory.mktemp("damaged") / "v")
    files = sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_file())
    gone = data.draw(st.sampled_from(files))
    (path / gone).unlink()
    as_of = data.draw(st.sampled_from([None, "1", "2"]))
    args = ["query", str(path), "--mode", mode, "--text", "memory", "--vector", "[1, 0, 0, 0]"]
    code = main(args + (["--as-of", as_of] if as_of else []))
    err = capsys.readouterr().err
    _check_outcome(code, err)
    if code == 2 and "removed by a cleanup" in err:
        listed = [v["version"] for v in
                  lancedb.connect(str(path)).open_table("memories").list_versions()]
        assert as_of is not None and int(as_of) not in listed, (gone, err)
