"""Issue 21: `inspector shot` honours every option `inspector query` takes. What the saved
window shows is compared with `inspector query --json` for the same arguments, stage by stage;
a table over query's own parser fails when a new query option is neither honoured by shot nor
refused by it in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspector.cli.main import main
from inspector.core.jsonio import dumps
from inspector.qt.window import MainWindow
from tests.core.engine.flow.fixtures import fixture_copy
from tests.storekit import snapshot

# a pipeline of stages of one's own: no preset has these stages, nor this minimum score
MINE = ('schema = 1\nname = "mine"\ntitle = "vector leg, a floor, the cut"\n'
        '[limit]\ndefault = 4\nmin = 1\nmax = 20\n'
        '[[routes]]\nname = "v"\n'
        '[[routes.stages]]\nname = "vector_leg"\nkind = "lancedb_vector"\n'
        '[[routes.stages]]\nname = "floor"\nkind = "min_score"\nmin = 0.05\n'
        '[[routes.stages]]\nname = "final"\nkind = "limit"\n')


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("shot-options"))


BAR: dict[str, Any] = {}  # what the pipeline view's query bar said as the window was saved


def shown(monkeypatch: pytest.MonkeyPatch, argv: list[str], out: Path) -> Any:
    """`inspector shot ARGV --out OUT` (exit 0): what the window held as it was saved, as
    (the run on screen, its answer, the question the window asked)."""
    seen: list[Any] = []
    real = MainWindow.export_png
    BAR.clear()

    def spy(self: MainWindow, path: str) -> None:
        vm = self.vm
        seen.append((vm.trace, vm.answer, vm.question.plain().model_dump(mode="json",
                                                                          by_alias=True)))
        bar = self.question_bar
        BAR["vector"] = (bar.vector.text(), bar.vector.placeholderText())
        real(self, path)

    monkeypatch.setattr(MainWindow, "export_png", spy)
    assert main(["shot", *argv, "--size", "1000x700", "--out", str(out)]) == 0
    assert out.exists()
    (got,) = seen
    return got


def query_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["query", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_shot_runs_a_pipeline_file_as_query_runs_it(fx: Path, tmp_path: Path, monkeypatch,
                                                    isolated, capsys) -> None:
    """`shot --pipeline FILE --set ...` was refused ("The window and `inspector shot` take
    --preset NAME"); the window it saves holds every stage `query --pipeline FILE` returns:
    names, counts, ids in order and scores, from a file no shipped preset matches."""
    mine = tmp_path / "mine.toml"
    mine.write_text(MINE)
    before = snapshot(fx / "store")
    ask = [str(fx / "store"), "--pipeline", str(mine), "--vector", f"@{fx / 'q_pg.json'}",
           "--text", "postgres", "--limit", "6", "--set", "floor.min=0.1"]
    trace, *_ = shown(monkeypatch, ask, tmp_path / "mine.png")
    doc = query_json(capsys, ask)
    assert [s["name"] for s in doc["stages"]] == ["vector_leg", "floor", "final"]
    assert trace.spec.name == "mine" and trace.stage("floor").params["min"] == 0.1
    for st, want in zip(trace.stages, doc["stages"], strict=True):
        assert (st.name, len(st.rows)) == (want["name"], want["count"])
        assert [r.id for r in st.rows] == [c["id"] for c in want["candidates"]]
        assert [r.score for r in st.rows] == pytest.approx(
            [c["score"] for c in want["candidates"]], abs=1e-12)
    assert doc["stages"][-1]["count"] == 6
    assert BAR["vector"] == ("", "the given vector (32 dims)")  # the bar says what it used
    assert snapshot(fx / "store") == before


def test_shot_runs_a_fixed_pipeline_file_as_query_runs_it(demo_path: str, tmp_path: Path,
                                                          monkeypatch, isolated,
                                                          capsys) -> None:
    """A fixed-pipeline file (engine = "fixed") with --set, as query runs it: the same
    parameters and final list (the window shows it as a custom pipeline)."""
    from inspector.core.engine.flow.shipped import shipped_dir

    mine = tmp_path / "docs-mine.toml"
    mine.write_text(shipped_dir().joinpath("docs-before-fix.toml").read_text()
                    .replace('name = "docs-before-fix"', 'name = "docs-mine"', 1))
    ask = [demo_path, "--pipeline", str(mine), "--set", "fetch.overfetch=2.5", "--scope",
           "vault-agent", "--text", "how do I rotate the signing keys for service tokens"]
    trace, *_ = shown(monkeypatch, ask, tmp_path / "fixed.png")
    doc = query_json(capsys, ask)
    assert trace.stage("fetch").params["overfetch"] == \
        doc["params"]["stages"]["fetch"]["overfetch"] == 2.5
    for st, want in zip(trace.stages, doc["stages"], strict=True):
        assert st.ids == [c["id"] for c in want["candidates"]]
    assert trace.final.ids


def test_shot_of_a_hybrid_with_a_given_vector_is_what_query_returns(
        demo_path: str, tmp_path: Path, monkeypatch, isolated, capsys) -> None:
    """The fixed pipeline's `shot --vector V --text T` (hybrid: the text drives full-text, the
    vector drives the vector leg) was refused ("not both"); every stage, its ids in order and
    scores are query's, and the vector leg is the given vector's, not the text's embedding."""
    from inspector.core.engine.flow.answer import to_json
    from inspector.core.stores.opening import open_store

    text = [demo_path, "--preset", "docs-before-fix", "--mode", "hybrid", "--text",
            "rotate the signing keys", "--limit", "6", "--blend", "0.3"]
    text_only = query_json(capsys, text)
    fetched = next(st for st in text_only["stages"] if st["role"] == "fetch")
    far = fetched["candidates"][-1]["id"]  # the vector: another row's
    vec = open_store(demo_path, None).vector_of(far)
    ask = [*text, "--vector", json.dumps(vec.tolist())]
    trace, _, _ = shown(monkeypatch, ask, tmp_path / "hybrid.png")
    assert (trace.query_source, trace.text) == ("vector", "rotate the signing keys")
    doc = query_json(capsys, ask)
    assert doc["stages"][-1]["candidates"] != text_only["stages"][-1]["candidates"]
    got = json.loads(dumps(to_json(trace)))
    assert [s["name"] for s in got["stages"]] == [s["name"] for s in doc["stages"]]
    for mine, want in zip(got["stages"], doc["stages"], strict=True):
        assert [c["id"] for c in mine["candidates"]] == [c["id"] for c in want["candidates"]]
        assert [c["score"] for c in mine["candidates"]] == pytest.approx(
            [c["score"] for c in want["candidates"]], abs=1e-12)


def test_the_window_opens_a_pipeline_file_and_says_what_is_wrong_with_a_bad_one(
        fx: Path, tmp_path: Path, qtbot, isolated) -> None:
    """File › Open pipeline file… (and the command palette, which lists every action): the
    file's stages run on the open store; a bad file is one sentence in the error bar and the
    question stays as it was; the preset list names the file, and picking a shipped preset
    leaves it."""
    win = MainWindow(restore=False, persist=False)
    qtbot.addWidget(win)
    win.show()
    win.vm.open_store(str(fx / "store"), None)
    win.vm.jobs.wait_idle(30)
    assert win.action("pipeline_file").text().replace("&", "") == "Open pipeline file…"
    bad = tmp_path / "bad.toml"
    bad.write_text("this is [not toml")
    before = win.vm.question.plain()
    assert not win.open_pipeline_file(str(bad))
    assert win.error_bar.isVisible() and "bad.toml" in win.error_bar.label.text()
    assert win.vm.question.plain() == before
    mine = tmp_path / "mine.toml"
    mine.write_text(MINE)
    win.vm.put(text="postgres", vector=json.loads((fx / "q_pg.json").read_text()))
    assert win.open_pipeline_file(str(mine))
    win.vm.jobs.wait_idle(30)
    vm = win.vm
    assert vm.error is None and vm.trace is not None
    assert [st.name for st in vm.trace.stages] == ["vector_leg", "floor", "final"]
    assert win.query_bar.preset.currentText() == "mine (file)"
    win.query_bar.preset_picked.emit("docs-before-fix")
    win.vm.jobs.wait_idle(30)
    assert vm.question.pipeline_file is None and vm.question.preset == "docs-before-fix"


# ---- every option `inspector query` takes, and what shot does with it ----
# options of query's output that a picture has nothing of: refused in one line, exit 2
NOT_IN_A_PICTURE = {"json": ["--json"], "rows": ["--rows", "5"], "export": ["--export", "X"],
                    "format": ["--format", "csv"], "force": ["--force"],
                    "index_facet": ["--index-facet", "off"], "fixes": ["--fixes", "off"]}
# how the store is opened: the window opens it with the OpenOptions query opens it with
OPENING = ("table", "storage_option", "as_of", "docs_model", "column")
_TEXT = "how do I rotate the signing keys for service tokens"
# the fixed pipeline's answer, compared with query's JSON (store, roles, query, parameters,
# every stage's ids and scores, expected rows); each value differs from its default
FIXED = {
    "hybrid": ["--text", _TEXT, "--vector", "@VEC", "--mode", "hybrid", "--limit", "7",
               "--overfetch", "2", "--cap", "40", "--fts-k", "12", "--vec-k", "14", "--rrf-k",
               "30", "--blend", "0.35", "--default-importance", "0.5", "--min-score", "0.01",
               "--tie-rule", "id", "--scope", "vault-agent", "--filter", "pushdown",
               "--expect", "@ID", "--distance", "cosine", "--embedder", "hash-v1",
               "--scope-strategy", "path_prefix"],
    "preset-set": ["--text", _TEXT, "--preset", "docs-before-fix", "--set",
                   "fetch.overfetch=3", "--scope-map", "@MAP", "--scope-strategy", "map",
                   "--scope", "vault-agent"],
    "column": ["--text", _TEXT, "--scope-strategy", "column", "--scope-column", "agentId",
               "--scope", "vault-agent"],
    "ivf": ["--table", "memories_indexed", "--vector-of", "mem-02540", "--nprobes", "5",
            "--refine-factor", "2", "--ef", "30"],
    "ivf-dynamic": ["--table", "memories_indexed", "--vector-of", "mem-02540",
                    "--min-nprobes", "2", "--max-nprobes", "9"],
    "exact": ["--table", "memories_indexed", "--vector-of", "mem-02540", "--exact"],
}
# a pipeline of stages: the question the window asks (its session's) equals query's
FLOW = {
    "mlp": ["--preset", "memory-lancedb-pro", "--text", "postgres", "--vector", "@PG",
            "--scope", "global", "--scope", "agent:main", "--now", "1767225600000",
            "--limit", "5", "--set", "hard_min_score.min=0.3", "--system-config", "@CFG",
            "--expect", "a1", "--widen", "vector_leg=30"],
    "mlp-example": ["--preset", "memory-lancedb-pro", "--text", "postgres", "--vector-of",
                    "a1", "--scope-list", '["global"]', "--now", "1767225600000",
                    "--limit", "4"],
    "where": ["--preset", "langchain-lancedb", "--vector", "@PG", "--where", "id != 'a1'",
              "--now", "1767225600000", "--limit", "3"],
    "file": ["--pipeline", "@MINE", "--vector", "@PG", "--limit", "5", "--now", "1"],
}

# what query refuses, shot refuses with the same line (an ignored option would not be refused;
# the only offline embedder is the demo's own, so a wrong name shows --embedder is read)
REFUSED_ALIKE = [["--text", "x", "--embedder", "nope"]]


def _query_options() -> set[str]:
    from inspector.cli.main import parser

    sub = next(a for a in parser()._actions if a.dest == "command")
    q = sub.choices["query"]
    return {a.dest for a in q._actions if a.option_strings and a.dest != "help"}


def _dests(argv: list[str]) -> set[str]:
    return {a[2:].replace("-", "_") for a in argv if a.startswith("--")}


def test_every_query_option_is_honoured_by_shot_or_refused_in_one_line(
        demo_path: str, fx: Path, tmp_path: Path, monkeypatch, isolated, capsys) -> None:
    """The table covers every option of query's own parser: a new query option that shot
    silently ignores fails here until the table says what shot does with it."""
    from inspector.cli.main import parser
    from inspector.cli.options import open_options
    from inspector.core.engine.flow.answer import to_json
    from inspector.core.stores.opening import open_store
    from inspector.qt.viewmodel import Inspector

    covered = set(NOT_IN_A_PICTURE) | set(OPENING)
    for argv in (*FIXED.values(), *FLOW.values(), *REFUSED_ALIKE):
        covered |= _dests(argv)
    assert _query_options() - covered == set(), "query options shot's table does not cover"

    for name, argv in NOT_IN_A_PICTURE.items():
        capsys.readouterr()
        assert main(["shot", demo_path, "--text", "x", *argv, "--out",
                     str(tmp_path / "no.png")]) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and argv[0] in err and "run `inspector query`" in err
    for argv in REFUSED_ALIKE:
        said = []
        for cmd in (["shot", "--out", str(tmp_path / "no.png")], ["query"]):
            capsys.readouterr()
            assert main([*cmd, demo_path, *argv]) == 2, argv
            said.append(capsys.readouterr().err)
        assert said[0] == said[1] and said[0].count("\n") == 1, said
    assert not (tmp_path / "no.png").exists()

    opened: list[tuple[Any, Any]] = []
    real_open = Inspector.open_store

    def spy_open(self: Any, uri: Any, table: Any = None, then: Any = None,
                 options: Any = None) -> None:
        opened.append((table, options))
        real_open(self, uri, table, then=then, options=options)

    monkeypatch.setattr(Inspector, "open_store", spy_open)
    cfg_file, map_file, mine = tmp_path / "cfg.json", tmp_path / "map.json", tmp_path / "m.toml"
    cfg_file.write_text("{}")
    map_file.write_text(json.dumps({"vault-agent": ["vault"]}))
    mine.write_text(MINE)
    first = next(st for st in query_json(capsys, [demo_path, "--text", _TEXT])["stages"]
                 if st["role"] == "fetch")["candidates"]
    vec = tmp_path / "vec.json"
    vec.write_text(json.dumps(open_store(demo_path, None).vector_of(first[-1]["id"]).tolist()))
    fill = {"@VEC": f"@{vec}", "@ID": first[2]["id"], "@MAP": str(map_file),
            "@PG": f"@{fx / 'q_pg.json'}", "@CFG": str(cfg_file), "@MINE": str(mine)}
    opening = ["--storage-option", "region=nowhere", "--as-of", "2", "--docs-model", "m",
               "--column", "importance=importance"]
    for name, argv in {**FIXED, **FLOW}.items():
        ask = [demo_path if name in FIXED else str(fx / "store"),
               *[fill.get(x, x) for x in argv], *(opening if name in FIXED else opening[:2])]
        opened.clear()
        trace, _, asked = shown(monkeypatch, ask, tmp_path / f"{name}.png")
        doc = query_json(capsys, ask)
        a = parser().parse_args(["query", *ask])
        assert opened[-1] == (a.table, open_options(a)), name
        got = json.loads(dumps(to_json(trace)))
        for key in ("pipeline", "query", "params"):
            if "--now" not in ask:  # the clock is each run's own
                for d in (got, doc):
                    d["params"].pop("now", None)
                    d["params"].pop("now_iso", None)
            assert got[key] == doc[key], (name, key)
        for key, value in doc["question"].items():
            if key not in ("store", "table", "columns", "now"):  # the opening's, above
                assert asked[key] == value, (name, key)
        for mine_st, want in zip(got["stages"], doc["stages"], strict=True):
            assert [c["id"] for c in mine_st["candidates"]] == \
                [c["id"] for c in want["candidates"]], (name, want["name"])
            assert [c["score"] for c in mine_st["candidates"]] == pytest.approx(
                [c["score"] for c in want["candidates"]], abs=1e-12), (name, want["name"])


def test_the_window_launched_on_a_pipeline_file_shows_it(fx: Path, tmp_path: Path, qtbot,
                                                         capsys) -> None:
    """`inspector STORE --pipeline FILE`: the window opens the store, then the file in its
    pipeline view; a bad or fixed-pipeline file is one line before any window opens."""
    from inspector.qt import app as qt_app

    mine = tmp_path / "mine.toml"
    mine.write_text(MINE)
    win = qt_app.start_window(str(fx / "store"), None, None, str(mine))
    qtbot.addWidget(win)
    qtbot.waitUntil(lambda: win.vm.question.pipeline_file == str(mine), timeout=30_000)
    assert win.query_bar.preset.currentText() == "mine (file)"
    win.vm.jobs.cancel_all()
    bad = tmp_path / "bad.toml"
    bad.write_text("this is [not toml")
    for path, said in ((bad, "bad.toml"),):
        capsys.readouterr()
        assert main([str(fx / "store"), "--pipeline", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err, err
