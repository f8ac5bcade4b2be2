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


def shown(monkeypatch: pytest.MonkeyPatch, argv: list[str], out: Path) -> Any:
    """`inspector shot ARGV --out OUT`: the window as it was saved (its exit code checked)."""
    seen: list[Any] = []
    real = MainWindow.export_png

    def spy(self: MainWindow, path: str) -> None:
        seen.append((self.flow.session.trace if self.flow.active else None, self.vm.trace,
                     self.vm.query))
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
    trace, _, _ = shown(monkeypatch, ask, tmp_path / "mine.png")
    doc = query_json(capsys, ask)
    assert [s["name"] for s in doc["stages"]] == ["vector_leg", "floor", "final"]
    assert trace.spec.name == "mine" and trace.stage("floor").params["min"] == 0.1
    for st, want in zip(trace.stages, doc["stages"], strict=True):
        assert (st.name, len(st.rows)) == (want["name"], want["count"])
        assert [r.id for r in st.rows] == [c["id"] for c in want["candidates"]]
        assert [r.score for r in st.rows] == pytest.approx(
            [c["score"] for c in want["candidates"]], abs=1e-12)
    assert doc["stages"][-1]["count"] == 6
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
    _, trace, _ = shown(monkeypatch, ask, tmp_path / "fixed.png")
    doc = query_json(capsys, ask)
    assert trace.params.overfetch == doc["params"]["overfetch"] == 2.5
    for st, want in zip(trace.stages, doc["stages"], strict=True):
        assert [str(i) for i in trace.ids(st.name)] == [c["id"] for c in want["candidates"]]
    assert trace.ids("final")


def test_shot_of_a_hybrid_with_a_given_vector_is_what_query_returns(
        demo_path: str, tmp_path: Path, monkeypatch, isolated, capsys) -> None:
    """The fixed pipeline's `shot --vector V --text T` (hybrid: the text drives full-text, the
    vector drives the vector leg) was refused ("not both"); every stage, its ids in order and
    scores are query's, and the vector leg is the given vector's, not the text's embedding."""
    from inspector.core.stores.opening import open_store

    text = [demo_path, "--mode", "hybrid", "--text", "rotate the signing keys", "--limit",
            "6", "--blend", "0.3"]
    text_only = query_json(capsys, text)
    far = text_only["stages"][0]["candidates"][-1]["id"]  # the vector: another row's
    vec = open_store(demo_path, None).vector_of(far)
    ask = [*text, "--vector", json.dumps(vec.tolist())]
    _, trace, query = shown(monkeypatch, ask, tmp_path / "hybrid.png")
    assert (query.source, query.text) == ("vector", "rotate the signing keys")
    doc = query_json(capsys, ask)
    assert doc["stages"][-1]["candidates"] != text_only["stages"][-1]["candidates"]
    got = json.loads(dumps(trace.to_json()))
    assert [s["name"] for s in got["stages"]] == [s["name"] for s in doc["stages"]]
    for mine, want in zip(got["stages"], doc["stages"], strict=True):
        assert [c["id"] for c in mine["candidates"]] == [c["id"] for c in want["candidates"]]
        assert [c["score"] for c in mine["candidates"]] == pytest.approx(
            [c["score"] for c in want["candidates"]], abs=1e-12)


def test_the_window_opens_a_pipeline_file_and_says_what_is_wrong_with_a_bad_one(
        fx: Path, tmp_path: Path, qtbot, isolated) -> None:
    """File › Open pipeline file… (and the command palette, which lists every action): the
    file's stages run on the open store; a bad file is one sentence in the error bar and the
    view stays as it was; the preset list names the file, and picking a shipped preset
    leaves it."""
    win = MainWindow(restore=False, persist=False)
    qtbot.addWidget(win)
    win.show()
    win.vm.open_store(str(fx / "store"), None, then="none")
    win.vm.jobs.wait_idle(30)
    assert win.action("pipeline_file").text().replace("&", "") == "Open pipeline file…"
    bad = tmp_path / "bad.toml"
    bad.write_text("this is [not toml")
    assert not win.open_pipeline_file(str(bad))
    assert win.error_bar.isVisible() and "bad.toml" in win.error_bar.label.text()
    assert not win.flow.active
    mine = tmp_path / "mine.toml"
    mine.write_text(MINE)
    win.query_bar.text.setText("postgres")
    win.flow.session.vector = json.loads((fx / "q_pg.json").read_text())  # no embedder here
    assert win.open_pipeline_file(str(mine))
    win.vm.jobs.wait_idle(30)
    s = win.flow.session
    assert win.flow.active and s.error is None and s.trace is not None
    assert [st.name for st in s.trace.stages] == ["vector_leg", "floor", "final"]
    assert win.query_bar.preset.currentText() == "mine (file)"
    win.query_bar.preset_picked.emit("docs-before-fix")
    win.vm.jobs.wait_idle(30)
    assert not win.flow.active and s.pipeline_file is None
    fixed = tmp_path / "fixed.toml"
    from inspector.core.engine.flow.shipped import shipped_dir

    fixed.write_text(shipped_dir().joinpath("docs-pushdown.toml").read_text())
    assert not win.open_pipeline_file(str(fixed))
    assert "fixed-pipeline file" in win.error_bar.label.text()
