"""Nothing on screen outlives the question it answers: verdicts, banners and dock results
are recomputed or visibly marked when the query, store or version changes; the banner names
the blocker and its fixes work."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.engine.expect import analyse
from inspector.core.engine.inputs import build_query
from inspector.core.engine.pipeline import run
from inspector.core.stores.demo import BLEND_QUERY
from tests.qt.qtkit import assert_matches_engine, move


def test_expected_verdicts_follow_the_query_never_an_earlier_one(window) -> None:
    vm = window.vm
    rid = str(vm.trace.pool.ids[int(vm.trace.stage("raw").rows[0])])
    vm.set_expected([rid])
    vm.jobs.wait_idle()
    assert vm.expectations and vm.expectations[0][0].id == rid
    vm.set_query(BLEND_QUERY)
    assert vm.expectations == ()  # the old verdict is gone at once
    shown = window.expected.body.text()
    assert "dropped" not in shown and "returned" not in shown  # no verdict until recomputed
    vm.jobs.wait_idle()
    query = build_query(vm.store, vm.params.mode, text=BLEND_QUERY)
    want = analyse(vm.store, query, run(vm.store, query, vm.params), [rid])
    assert vm.expectations[0] == want


def test_a_slider_moved_while_a_new_query_runs_never_reranks_the_old_rows(window,
                                                                         monkeypatch) -> None:
    """The new query is slow: until it answers no stage shows the previous query's rows (not
    even re-ranked by the slider moved meanwhile); then it shows the engine's answer for the
    new query at the slider's value."""
    import threading

    from inspector.qt import viewmodel

    vm, real, release = window.vm, viewmodel.query_job, threading.Event()

    def job(store, req, cancelled=None):
        if req.text == BLEND_QUERY:
            release.wait(10)
        return real(store, req)

    monkeypatch.setattr(viewmodel, "query_job", job)
    vm.set_query(BLEND_QUERY)
    move(window, "blend", 0.5)
    assert vm.busy and vm.traces == ()
    assert window.stages.view("final").model.live_count() == 0
    release.set()
    vm.jobs.wait_idle()
    assert vm.params.blend == 0.5 and vm.query.text == BLEND_QUERY
    assert_matches_engine(window)


def test_an_edited_query_is_marked_until_it_runs(window, qtbot) -> None:
    bar = window.query_bar
    assert not bar.stale.isVisible()
    bar.text.setFocus()
    qtbot.keyClicks(bar.text, " please")
    assert bar.stale.isVisible()
    qtbot.keyClick(bar.text, Qt.Key.Key_Return)
    assert not bar.stale.isVisible()
    window.vm.jobs.wait_idle()
    assert window.vm.query.text.endswith("please")


def test_the_banner_offers_the_fixes_and_they_work(window, qtbot) -> None:
    vm, banner = window.vm, window.banner
    assert vm.trace.diagnosis.code == "scope_starvation"
    assert [b.text() for b in banner.buttons] == ["Apply over-fetch 2.5", "Try pushdown"]
    qtbot.mouseClick(banner.buttons[0], Qt.MouseButton.LeftButton)
    vm.jobs.wait_idle()
    assert vm.params.overfetch == 2.5 and vm.trace.counters["returned"] > 0
    assert_matches_engine(window)


def test_an_empty_result_is_never_looks_fine(window, qtbot) -> None:
    vm = window.vm
    vm.load_suggested(1)  # the importance story
    vm.jobs.wait_idle()
    move(window, "min_score", 0.99)
    assert vm.trace.counters["returned"] == 0
    assert window.banner.title.text().startswith("Min score cut")
    (fix,) = [b for b in window.banner.buttons if b.text().startswith("Lower min score")]
    qtbot.mouseClick(fix, Qt.MouseButton.LeftButton)
    vm.jobs.wait_idle()
    assert vm.trace.counters["returned"] > 0
    assert_matches_engine(window)


def test_dock_results_for_an_earlier_query_say_so(window) -> None:
    vm, compare = window.vm, window.tuning_dock.compare
    window.tuning_dock.show_tab("compare")
    compare.run()
    vm.jobs.wait_idle()
    assert compare.result is not None and not compare.stale_note.isVisible()
    vm.set_query(BLEND_QUERY)
    vm.jobs.wait_idle()
    assert compare.stale_note.isVisible()
    compare.run()
    vm.jobs.wait_idle()
    assert not compare.stale_note.isVisible()


def test_a_stale_sweep_is_said_where_a_short_dock_still_shows_it(window) -> None:
    vm, dock = window.vm, window.tuning_dock
    window.resize(1900, 1000)
    dock.show_tab("sweep")
    sweep = dock.sweep
    sweep.overfetch.setText("1,3")
    sweep.blend.setText("0,0.5")
    sweep.run()
    vm.jobs.wait_idle()
    assert sweep.result is not None and not sweep.stale_note.isVisible()
    vm.set_query(BLEND_QUERY)
    vm.jobs.wait_idle()
    dock.setFloating(False)
    window.resizeDocks([dock], [260], Qt.Orientation.Vertical)  # a short dock
    vm.jobs.wait_idle()
    assert sweep.stale_note.isVisible()
    assert not sweep.stale_note.visibleRegion().isEmpty(), "the note is scrolled out of view"


def test_ties_are_marked_and_a_tie_at_the_cut_is_said(window) -> None:
    """The demo's tie story: one memory saved twice ties across the limit of 1."""
    vm = window.vm
    names = [q["name"] for q in vm.store.suggested_queries]
    vm.load_suggested(next(n for n, x in enumerate(names) if x.startswith("Tie")))
    vm.jobs.wait_idle()
    t = vm.trace
    cut = [g for g in t.ties() if g.at_cut]
    assert cut, "the tie story has a tie across a cut"
    for g in cut:
        view = window.stages.view("raw" if g.stage in ("raw", "vec", "fts") else "blended")
        m = view.model
        shown = {str(m.row_id(r)): m.data(m.index(r, 0)) for r in range(len(m.rows))}
        assert [shown[str(x)] for x in g.ids if str(x) in shown]
        assert all(shown[str(x)].endswith("!") for x in g.ids if str(x) in shown)
        assert f"Tie at the {g.cut} cut" in window.banner.message.text()
