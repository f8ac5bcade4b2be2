"""The one view on a real system's pipeline (memory-lancedb-pro on the store the plugin wrote):
every stage in order with its count and line, the stage that matters open, sliders from the
live parameters re-ranking through LiveFlow in a worker, and exactly the engine's numbers."""

from __future__ import annotations

import json
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QCoreApplication

from inspector.cli.main import main
from inspector.core.engine.flow import runner
from inspector.core.engine.flow.answer import to_json
from inspector.core.engine.flow.live import LiveFlow
from inspector.core.engine.flow.question import Question
from inspector.core.engine.flow.summary import summarise
from inspector.core.stores.opening import open_for_browsing
from tests.core.engine.flow.fixtures import fixture_copy

TEXT = "postgres connection pool size"
SCOPES = ["global", "agent:main", "reflection:agent:main"]
NOW = 1796113042582.0



@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy: the committed fixture is never opened in place."""
    return fixture_copy("memory-lancedb-pro", tmp_path_factory.mktemp("mlp"))


@pytest.fixture(scope="module")
def flow_win(qapp, fixture_dir: Path) -> Iterator[Any]:
    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    win.resize(1366, 768)
    win.show()
    win.vm.open_store(str(fixture_dir / "store"), "memories")
    win.vm.jobs.wait_idle(60)
    yield win
    win.vm.jobs.cancel_all()
    win.vm.jobs.wait_idle(30)
    win.close()
    win.deleteLater()
    QCoreApplication.processEvents()


def pick_preset(win: Any, name: str) -> None:
    qb = win.query_bar
    i = qb.preset.findData(name)
    assert i >= 0, f"{name} is offered"
    qb.preset.setCurrentIndex(i)
    qb.preset.activated.emit(i)


def type_into(edit: Any, text: str) -> None:
    edit.setFocus()
    edit.setText(text)
    edit.editingFinished.emit()


@pytest.fixture
def win(flow_win: Any, fixture_dir: Path) -> Any:
    """The window on memory-lancedb-pro with the pg question, as a user sets it up."""
    w = flow_win
    w.resize(1366, 768)
    QCoreApplication.processEvents()  # the layout follows the size before anything is decided
    pick_preset(w, "docs-before-fix")  # another pipeline, so every test enters afresh
    w.vm.jobs.wait_idle(30)
    w.vm.put(text=TEXT)
    pick_preset(w, "memory-lancedb-pro")
    bar = w.question_bar
    type_into(bar.vector, str(fixture_dir / "q_pg.json"))
    type_into(bar.scopes, ", ".join(SCOPES))
    type_into(bar.now, str(int(NOW)))
    type_into(bar.expect, "")
    w.vm.set_expected([])
    w.query_bar.limit.setValue(5)
    w.vm.jobs.wait_idle(30)
    assert w.vm.trace is not None
    return w


def live_for(fixture_dir: Path, preset: str = "memory-lancedb-pro", limit: int = 5,
             now: float = NOW, scopes: list[str] | None = SCOPES) -> LiveFlow:
    store = open_for_browsing(str(fixture_dir / "store"), "memories", None).store
    vec = json.loads((fixture_dir / "q_pg.json").read_text())
    q = Question(store=str(fixture_dir / "store"), preset=preset, text=TEXT, vector=vec,
                 scopes=scopes, limit=limit, now=now)
    return LiveFlow(store, q, now)


def shown(win: Any) -> list[dict[str, Any]]:
    """Every stage as the window shows it: name, header, line, and each row's cells."""
    out = []
    for sec in win.stages.visible_sections():
        m = sec.model
        rows = [(m.cell(r, "id"), m.cell(r, "score")) for r in range(len(m.kept))]
        drops = [(m.cell(r, "id"), m.cell(r, "what happened"))
                 for r in range(len(m.kept), m.rowCount())]
        out.append({"name": sec.summary.name, "header": sec.toggle.text(),
                    "line": sec.line.text(), "rows": rows, "drops": drops})
    return out


def engine_view(stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same from `inspector query --json` / to_json: names, ranked ids, scores."""
    return [{"name": st["name"],
             "rows": [(c["id"], f"{c['score']:.4f}") for c in st["candidates"]],
             "drops": sorted(d["id"] for d in st["dropped"])} for st in stages]


def as_engine(view: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": s["name"], "rows": [(i.removeprefix("★ "), sc) for i, sc in s["rows"]],
             "drops": sorted(i.removeprefix("★ ") for i, _ in s["drops"])} for s in view]


def test_a_pipeline_of_stages_shows_every_stage_in_order_with_its_count_and_line(
        win: Any, fixture_dir: Path) -> None:
    t = live_for(fixture_dir).answer()
    view = shown(win)
    assert [s["name"] for s in view] == [st.name for st in t.stages]
    assert len(view) == 13
    for s, st in zip(view, t.stages, strict=True):
        assert s["line"] == summarise(st).line
        if st.role != "query":
            assert s["header"].endswith(f"{len(st.rows)})"), s["header"]
    # the words are the drop codes' own labels
    lines = {s["name"]: s["line"] for s in view}
    assert "10 outside the window" in lines["rerank_window"]
    assert "1 below the stage's min score" in lines["hard_min_score"]
    assert "1 matched a noise pattern" in lines["noise_filter"]
    assert "re-ordered" in lines["rerank"] and "re-scored" in lines["rerank"]
    assert "3 past the limit" in lines["final"]
    assert win.stages.isVisible() and win.sliders.isVisible()


def test_the_window_shows_exactly_what_liveflow_and_inspector_query_return(
        win: Any, fixture_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sliders = win.sliders
    moves = {"hard_min_score.min": 0.5, "fused.vector_weight": 0.4,
             "decay_boost.half_life_days": 90.0}
    for key, value in moves.items():
        sliders.sliders[key].setValue(value)
    sliders.flush()
    win.vm.jobs.wait_idle(30)
    sets = dict(win.vm.question.set)
    assert sets == pytest.approx(moves, abs=1e-9)
    live = live_for(fixture_dir)
    for k, v in sets.items():
        live.sets[k] = v
    fresh = to_json(live.answer())
    assert as_engine(shown(win)) == engine_view(fresh["stages"])
    argv = ["query", str(fixture_dir / "store"), "--table", "memories", "--preset",
            "memory-lancedb-pro", "--text", TEXT, "--vector",
            "@" + str(fixture_dir / "q_pg.json"), "--scope-list", json.dumps(SCOPES),
            "--limit", "5", "--now", str(int(NOW)), "--json"]
    for k, v in sets.items():
        argv += ["--set", f"{k}={v}"]
    capsys.readouterr()
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)
    assert as_engine(shown(win)) == engine_view(cli["stages"])
    # the moves mattered: the pipeline's own parameters answer differently
    assert [s["count"] for s in fresh["stages"]] != [
        len(st.rows) for st in live_for(fixture_dir).answer().stages]


def test_every_slider_re_ranks_in_a_worker_never_on_the_gui_thread(
        win: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[bool] = []
    real = runner.run

    def spy(*args: Any, **kwargs: Any) -> Any:
        ahead = any(f.name == "_answer_ahead" for f in traceback.extract_stack())
        if not ahead:  # the next key's answer, made once the window idles, is not a tick's
            threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr("inspector.core.engine.flow.runs.run", spy)
    s = win.sliders.sliders["hard_min_score.min"]
    for v in (0.36, 0.4, 0.45, 0.6):  # a drag: latest wins
        s.setValue(v)
        win.sliders.flush()
    assert win.vm.jobs.busy("answer")
    win.vm.jobs.wait_idle(30)
    assert threads and not any(threads)
    assert win.vm.question.set["hard_min_score.min"] == pytest.approx(0.6)
    assert win.vm.trace.stage("hard_min_score").params["min"] == pytest.approx(0.6)


def test_another_pipeline_keeps_the_window_on_a_laptop_screen(flow_win: Any) -> None:
    """A pipeline's sliders and the question's bar never make the window wider than a
    laptop's screen, whichever pipeline is picked, back and forth."""
    w = flow_win
    for _ in range(2):  # one way and back, twice
        w.resize(1366, 768)
        pick_preset(w, "memory-lancedb-pro")
        w.vm.jobs.wait_idle(30)
        assert w.width() == 1366 and w.minimumSizeHint().width() <= 1366
        pick_preset(w, "docs-before-fix")
        w.vm.jobs.wait_idle(30)
        assert w.width() == 1366


def test_a_fourteen_stage_pipeline_fits_a_small_screen_with_its_title_bar(win: Any) -> None:
    """At 1024x700 the pipeline's sliders (four a row) made the window 1081 px wide, its
    edge off the screen: now a row holds the sliders its width has room for, and the window
    asks for no more than a small screen less a window manager's title bar and frame."""
    from inspector.qt.harness.visual_checks import flow_problems

    room = (1024 - 8, 700 - 38)  # a frame of 4 px each side, a title bar of 30
    # 13 stages (the CLI's 15 scroll here: the banner and the plots' room are the one view's)
    for preset in ("memory-lancedb-pro",):
        pick_preset(win, preset)
        win.vm.jobs.wait_idle(30)
        hint = win.minimumSizeHint()
        assert hint.width() <= room[0] and hint.height() <= room[1], (preset, hint)
        win.resize(*room)
        QCoreApplication.processEvents()
        assert (win.width(), win.height()) == room, preset
        sl = win.sliders
        assert len(sl.sliders) > sl.per_row  # the sliders took more rows, not more width
        for s in sl.sliders.values():
            box = s.geometry().united(s.parentWidget().rect())
            assert s.isVisible() and box == s.parentWidget().rect(), s.objectName()
        assert flow_problems(win) == [], preset
        win.resize(1366, 768)


def test_the_stage_that_matters_is_open_and_fourteen_stages_fit_a_laptop(
        win: Any, fixture_dir: Path) -> None:
    pick_preset(win, "memory-lancedb-pro-cli")
    win.vm.jobs.wait_idle(30)
    QCoreApplication.processEvents()  # a resize still queued re-decides what is open
    secs = win.stages.visible_sections()
    assert len(secs) >= 14
    opened = [s.summary.name for s in secs if s.is_open]
    # most rows dropped at the window: it opens, and the final list beside it only when both
    # tables keep their readable height (the store's notice, retired here, used to take it)
    assert opened[0] == "rerank_window" and set(opened) <= {"rerank_window", "final"}
    assert (len(opened) == 2) == win.stages._room_for(2, len(secs))
    # every open table shows at least four rows without scrolling the list
    for s in secs:
        if s.is_open:
            assert s.table.viewport().height() >= 4 * s.table.verticalHeader()\
                .defaultSectionSize()
    # every stage's header is on screen at 1366x768 without scrolling
    view = win.stages.scroll.viewport()
    for s in secs:
        top = s.toggle.mapTo(view, s.toggle.rect().topLeft()).y()
        assert 0 <= top and top + s.toggle.height() <= view.height(), s.summary.name
        assert s.toggle.visibleRegion().boundingRect().width() > 0
    # on a larger screen the final stage (the answer) opens beside it
    win.resize(1920, 1080)
    QCoreApplication.processEvents()
    assert [s.summary.name for s in secs if s.is_open] == ["rerank_window", "final"]
    win.resize(1366, 640)  # short: the stage that matters alone, the answer a key away
    QCoreApplication.processEvents()
    assert [s.summary.name for s in secs if s.is_open] == ["rerank_window"]
    win.resize(1366, 768)
    QCoreApplication.processEvents()
    # an expected row opens the stage where it fell
    cli = live_for(fixture_dir, "memory-lancedb-pro-cli").answer()
    fell = next(d.id for d in cli.stage("hard_min_score").dropped)
    type_into(win.question_bar.expect, fell)
    QCoreApplication.processEvents()
    opened = [s.summary.name for s in secs if s.is_open]
    assert "hard_min_score" in opened
    sec = next(s for s in secs if s.summary.name == "hard_min_score")
    row = sec.model.row_for_id(fell)
    assert row >= len(sec.model.kept)
    assert "below the stage's min score" in sec.model.cell(row, "what happened")
    # a stage the user closes stays closed on the next answer
    sec.toggle.click()
    win.sliders.sliders["mmr.threshold"].setValue(0.8)
    win.sliders.flush()
    win.vm.jobs.wait_idle(30)
    assert not sec.is_open


def test_the_user_chooses_which_live_parameters_have_a_slider(win: Any) -> None:
    sl = win.sliders
    from inspector.core.engine.flow.live import live_params

    live = {k for k, d in live_params(win.vm.spec()) if d.type in ("float", "int")}
    actions = {a.text(): a for a in sl.chooser.menu().actions()}
    assert set(actions) == live
    assert set(sl.sliders) == {"hard_min_score.min", "min_score_and_unexpired.min",
                               "mmr.threshold", "decay_boost.half_life_days",
                               "decay_boost.recency_weight", "fused.vector_weight",
                               "fused.bm25_weight"}
    actions["length_norm.anchor"].setChecked(True)
    assert "length_norm.anchor" in sl.sliders
    assert sl.sliders["length_norm.anchor"].value() == pytest.approx(500.0)
    actions["mmr.threshold"].setChecked(False)
    assert "mmr.threshold" not in sl.sliders
    actions["length_norm.anchor"].setChecked(False)
    actions["mmr.threshold"].setChecked(True)


def test_scopes_as_a_list_and_the_clock_reach_the_engine(win: Any, fixture_dir: Path) -> None:
    bar = win.question_bar
    assert bar.now.isVisible(), "memory-lancedb-pro has time-dependent stages"
    later = NOW + 400 * 86_400_000
    type_into(bar.now, str(int(later)))
    win.vm.jobs.wait_idle(30)
    want = to_json(live_for(fixture_dir, now=later).answer())
    assert as_engine(shown(win)) == engine_view(want["stages"])
    type_into(bar.scopes, '["global"]')
    win.vm.jobs.wait_idle(30)
    assert win.vm.question.scopes == ["global"]
    want = to_json(live_for(fixture_dir, now=later, scopes=["global"]).answer())
    assert as_engine(shown(win)) == engine_view(want["stages"])
    type_into(bar.scopes, "[]")
    win.vm.jobs.wait_idle(30)
    assert win.vm.question.scopes == []
    assert "denies everything" in win.banner.message.text()


def test_keyboard_reaches_every_stage_of_a_pipeline_and_alt_n_opens_one(win: Any) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from tests.qt.test_keyboard import tab_walk

    seen = tab_walk(win.query_bar.text)
    secs = win.stages.visible_sections()
    for sec in secs:
        assert sec.toggle in seen, sec.summary.name
        if sec.is_open:
            k = seen.index(sec.table)
            assert seen[k + 1] is not sec.table  # Tab leaves the table
    bar = win.question_bar
    for w in (bar.scopes, bar.now, bar.vector, bar.expect):
        assert w in seen
    assert seen.index(bar.scopes) < seen.index(secs[0].toggle) < seen.index(secs[-1].toggle)
    # Space on a stage's header opens it; Alt+N opens stage N and focuses its table
    third = secs[2]
    assert not third.is_open
    third.toggle.setFocus()
    QTest.keyClick(third.toggle, Qt.Key.Key_Space)
    assert third.is_open
    QTest.keyClick(win.query_bar.text, Qt.Key.Key_4, Qt.KeyboardModifier.AltModifier)
    QApplication.processEvents()
    assert secs[3].is_open and QApplication.focusWidget() is secs[3].table


def test_the_visual_checks_read_the_pipeline_and_catch_a_cut_header_or_no_open_stage(
        win: Any) -> None:
    from inspector.qt.harness.visual_checks import flow_problems

    pick_preset(win, "memory-lancedb-pro-cli")  # 14 stages; a new route forgets the toggles
    win.vm.jobs.wait_idle(30)
    QCoreApplication.processEvents()
    assert len(win.stages.visible_sections()) >= 14
    assert flow_problems(win) == []
    sections = win.stages.visible_sections()
    first = sections[0]
    first.toggle.setFixedWidth(24)
    QCoreApplication.processEvents()
    try:
        assert any(p.startswith(f"stage {first.number}: its header") for p in flow_problems(win))
    finally:
        first.toggle.setMinimumWidth(0)
        first.toggle.setMaximumWidth(16_777_215)
    opened = [sec for sec in sections if sec.is_open]
    for sec in opened:
        sec.set_open(False)
    QCoreApplication.processEvents()
    assert "no stage of the pipeline is open" in flow_problems(win)
    for sec in opened:
        sec.set_open(True)


def test_a_long_text_is_cut_in_its_cell_and_whole_in_its_tooltip(win: Any) -> None:
    """The plugin's docs chunks run to thousands of characters. Qt lays out a cell's whole
    text to elide it on every paint, so a cell holds at most CELL_CHARS of it, cut with an
    ellipsis; its tooltip still reads the whole text, and a short text is as stored."""
    from PySide6.QtCore import Qt

    from inspector.qt.pipeline.stage_model import CELL_CHARS, COLUMNS

    raw = {s.id: s.row.text for st in win.vm.trace.stages for s in (*st.rows_in, *st.rows)}
    long_seen = short_seen = 0
    col = COLUMNS.index("text")
    for sec in win.stages.visible_sections():
        m = sec.model
        for r in range(len(m.kept)):
            rid = m.kept[r].id
            line = " ".join(raw[rid].split())
            cell = m.cell(r, "text")
            tip = m.data(m.index(r, col), Qt.ItemDataRole.ToolTipRole)
            assert tip == line
            if len(line) > CELL_CHARS:
                long_seen += 1
                assert cell == line[:CELL_CHARS - 1] + "…" and len(cell) == CELL_CHARS
            else:
                short_seen += 1
                assert cell == line
    assert long_seen and short_seen  # the fixture holds both kinds


def test_the_tab_order_is_read_after_the_answers_frame_is_painted(
        win: Any, monkeypatch: pytest.MonkeyPatch, qtbot: Any) -> None:
    """Reading the Tab chain walks every panel: a tick of a slider that keeps the banner's
    fix buttons (this story has none) keeps every widget of the chain, and does not read it
    at all; Tab still reaches every control afterwards. (A tick that takes fixes away reads
    it after its frame: tests/qt/test_keyboard.py.)"""
    from PySide6.QtWidgets import QApplication

    from inspector.qt import viewmodel
    from tests.qt.test_keyboard import chain_reads, tab_walk

    monkeypatch.setattr(viewmodel, "FULL_DELAY_MS", 60_000)  # no fixes between the ticks
    told = win.banner.show_answer
    reads = []
    with chain_reads(win, monkeypatch) as events:

        def answer(*args: Any) -> Any:
            events.append("answer")
            return told(*args)

        monkeypatch.setattr(win.banner, "show_answer", answer)
        for v in (0.36, 0.4, 0.45):
            QApplication.processEvents()
            events.clear()
            before, buttons = win.vm.trace, win.banner.buttons
            win.sliders.sliders["hard_min_score.min"].setValue(v)
            win.sliders.flush()
            qtbot.waitUntil(lambda b=before: win.vm.trace is not b, timeout=30_000)
            for _ in range(20):  # the tick's frame and what is queued after it, no more:
                QApplication.processEvents()  # the fixes are searched once it rests
            told_at = events.index("answer")
            read = "chain" in events[told_at:]
            reads.append(read)
            assert read == (win.banner.buttons is not buttons), (v, events)
    assert reads == [False, False, False]
    seen = tab_walk(win.query_bar.text)
    assert all(sec.toggle in seen for sec in win.stages.visible_sections())


def test_a_tick_lays_nothing_out_and_says_its_value_on_a_line_of_its_own(
        win: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A slider's tick changes the banner's settings, the stage notes and the headline's
    count; each is one line painted anew (pipeline/one_line.py), so nothing outside the stage
    list asks for a new layout (a stage's header lays out its own count, its table its rows)
    and the window does not fit its plots again. The banner says the new value; each stage's
    note is the engine's summary line."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QWidget

    from inspector.core.engine.flow.summary import summarise
    from inspector.qt import viewmodel

    # the fixes are searched once the slider rests: on a loaded machine not between these
    # ticks (their answer may change the banner, which lays it out, as it should)
    monkeypatch.setattr(viewmodel, "FULL_DELAY_MS", 60_000)
    slider = win.sliders.sliders["hard_min_score.min"]
    first = win.vm.trace
    slider.setValue(0.36)  # the first tick shows the settings line: laid out once
    win.sliders.flush()
    qtbot.waitUntil(lambda: win.vm.trace is not first, timeout=30_000)
    for _ in range(20):
        QApplication.processEvents()
    laid: list[str] = []
    fits: list[int] = []

    class Layouts(QObject):
        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.LayoutRequest and isinstance(obj, QWidget) \
                    and obj.window() is win and not win.stages.isAncestorOf(obj):
                laid.append(f"{type(obj).__name__}:{obj.objectName()}")
            return False

    real_fit = win._fit_later
    win._fit_later = lambda: (fits.append(1), real_fit())[1]
    watch = Layouts()
    QApplication.instance().installEventFilter(watch)
    try:
        for v in (0.4, 0.45):
            before = win.vm.trace
            slider.setValue(v)
            win.sliders.flush()
            qtbot.waitUntil(lambda b=before: win.vm.trace is not b, timeout=30_000)
            for _ in range(20):
                QApplication.processEvents()
            assert win.vm.reranked
            assert win.banner.settings.isVisible()
            assert win.banner.settings.text() == f"Set on the pipeline: hard_min_score.min = {v}"
            assert win.banner.settings.shown() == win.banner.settings.text()  # fits at 1366
            for sec, run in zip(win.stages.visible_sections(), win.vm.trace.stages,
                                strict=False):
                assert sec.line.text() == summarise(run).line
            assert str(len(win.vm.trace.final.rows)) in win.stages.headline.text()
    finally:
        QApplication.instance().removeEventFilter(watch)
        win._fit_later = real_fit
    assert laid == [] and fits == [], (laid, fits)
