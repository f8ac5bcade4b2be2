"""Every file a command writes goes through the one guarded writer: a link planted at any
output (to the store's manifest, its version hint, a data file) is never followed, with
--force too; an output aimed inside the store is refused by any name the store is given (a
plain or relative path, a file:// URI, a link to it, a link to it inside the output's path,
`..`); each refusal is exit 2 and one sentence naming the path and the store, and the
store's bytes never change."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import inspector
from inspector.cli.main import main
from inspector.core.errors import InspectorError
from tests.storekit import snapshot, write_tuning_store

Q = ["--vector-of", "m0001", "--limit", "3"]
GRID = ["--grid-overfetch", "1,2", "--grid-blend", "0"]


def _queries(tmp: Path) -> str:
    path = tmp / "queries.json"
    path.write_text(json.dumps({"queries": [{"query": "one", "vector_of": "m0001",
                                             "judgments": {"m0001": 1}}]}))
    return str(path)


# command -> (its arguments for STORE and OUT, the files it writes for OUT)
Files = Callable[[Path], list[Path]]
COMMANDS: dict[str, tuple[Callable[[str, str, Path], list[str]], Files]] = {
    "export": (lambda s, o, t: ["query", s, *Q, "--export", o, "--force"],
               lambda o: [o / "answer.json", o / "results.csv", o / "02-fetch.csv"]),
    "export-flow": (lambda s, o, t: ["query", s, "--preset", "langchain-lancedb", *Q,
                                     "--export", o, "--force", "--format", "parquet"],
                    lambda o: [o / "01-fetch.parquet", o / "answer.json"]),
    "report": (lambda s, o, t: ["report", s, *Q, "--out", o, "--no-map", *GRID],
               lambda o: [o.with_suffix(".json"), o.with_suffix(".html")]),
    "report-flow": (lambda s, o, t: ["report", s, "--preset", "langchain-lancedb", *Q,
                                     "--out", o],
                    lambda o: [o.with_suffix(".json"), o.with_suffix(".html")]),
    "sweep": (lambda s, o, t: ["sweep", s, *Q, *GRID, "--out", o], lambda o: [o]),
    "sweep-flow": (lambda s, o, t: ["sweep", s, "--preset", "langchain-lancedb", *Q,
                                    "--grid", "fetch.depth_factor=1,2", "--out", o],
                   lambda o: [o]),
    "run-trec": (lambda s, o, t: ["run-trec", s, "--queries", _queries(t), "--out", o,
                                  "--qrels", f"{o}.qrels", "--force"],
                 lambda o: [o, Path(f"{o}.qrels")]),
    "shot": (lambda s, o, t: ["shot", s, *Q, "--out", o], lambda o: [o]),
}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return write_tuning_store(tmp_path / "store", n=60)


def _store_files(store: Path) -> list[Path]:
    """The files a planted link aims at: a version manifest, the version hint, a data file."""
    table = store / "memories.lance"
    return [next((table / "_versions").glob("*.manifest")),
            table / "_versions" / "latest_version_hint.json",
            next((table / "data").glob("*.lance"))]


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], path: str,
             store: str) -> None:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (argv, err)
    assert "inside the store" in lines[0] and path in lines[0] and store in lines[0], lines[0]


CASES = [(cmd, i) for cmd, (_, files) in COMMANDS.items()
         for i in range(len(files(Path("o"))))]


@pytest.mark.parametrize(("command", "nth"), CASES)
def test_a_link_planted_at_any_output_is_refused_and_the_store_kept(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path, command: str,
        nth: int) -> None:
    args, files = COMMANDS[command]
    out = tmp_path / "out" / "result"
    if command.startswith("export"):
        out = tmp_path / "out"
    out.parent.mkdir(parents=True, exist_ok=True)
    if command.startswith("export"):
        out.mkdir()
    victim = _store_files(store)[nth % 3]
    planted = files(out)[nth]
    planted.symlink_to(victim)
    before = snapshot(store)
    _refused(capsys, args(str(store), str(out), tmp_path), str(planted), str(store))
    assert snapshot(store) == before
    assert planted.is_symlink() and planted.resolve() == victim


FORMS = ("plain", "relative", "file-uri", "link-to-store", "link-in-output", "dotdot")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_inside_the_store_is_refused_by_any_name(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path,
        monkeypatch: pytest.MonkeyPatch, command: str, form: str) -> None:
    args, _ = COMMANDS[command]
    link = tmp_path / "link"
    link.symlink_to(store)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    named, out = {
        "plain": (str(store), str(store / "out")),
        "relative": ("store", "store/memories.lance/out"),
        "file-uri": (store.as_uri(), str(store / "out")),
        "link-to-store": (str(link), str(store / "out")),
        "link-in-output": (str(store), str(link / "out")),
        "dotdot": (str(store), str(tmp_path / "elsewhere" / ".." / "store" / "out")),
    }[form]
    before = snapshot(store)
    _refused(capsys, args(named, out, tmp_path), out, named)
    assert snapshot(store) == before


@pytest.mark.parametrize("command", ["export", "sweep", "run-trec"])
def test_a_hard_link_at_an_output_is_replaced_never_written_through(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path,
        command: str) -> None:
    args, files = COMMANDS[command]
    out = tmp_path / ("out" if command == "export" else "result")
    if command == "export":
        out.mkdir()
    before = snapshot(store)
    for f in files(out):
        os.link(_store_files(store)[0], f)
    capsys.readouterr()
    assert main(args(str(store), str(out), tmp_path)) == 0, capsys.readouterr().err
    assert snapshot(store) == before
    for f in files(out):
        assert f.stat().st_ino != _store_files(store)[0].stat().st_ino


def test_the_api_export_refuses_links_into_the_store_with_force(tmp_path: Path,
                                                                store: Path) -> None:
    r = inspector.open(store).query(vector_of="m0001", limit=3)
    out = tmp_path / "api"
    out.mkdir()
    before = snapshot(store)
    for victim in _store_files(store):
        (out / "answer.json").unlink(missing_ok=True)
        (out / "answer.json").symlink_to(victim)
        for write in (r.to_csv, r.to_parquet):
            with pytest.raises(InspectorError, match="answer.json is inside the store"):
                write(out, force=True)
    with pytest.raises(InspectorError, match="inside the store"):
        r.to_csv(store / "exports", force=True)
    assert snapshot(store) == before


def test_the_cache_folder_is_never_inside_an_opened_store(
        capsys: pytest.CaptureFixture[str], store: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECTOR_CACHE_DIR", str(store / "cache"))
    before = snapshot(store)
    capsys.readouterr()
    code = main(["query", str(store), "--mode", "fts", "--text", "rotate keys"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cache folder" in err[0] and str(store) in err[0]
    assert snapshot(store) == before
