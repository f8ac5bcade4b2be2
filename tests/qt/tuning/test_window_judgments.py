"""Judgments in the window: marks from the stage tables' context menu or a key, shown in the
tables, saved and loaded through the core, and metrics equal to core.metrics."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu

from inspector.core.analysis.judgments import load_judgments
from inspector.core.analysis.metrics import all_metrics
from tests.qt.qtkit import section


def final_ids(win) -> list:
    return win.vm.trace.final.ids


def menu_action(panel, row_id, label: str):
    menu = QMenu()
    panel.add_menu_actions(menu, row_id)
    return menu, next(a for a in menu.actions() if a.text().startswith(label))


def test_marks_from_the_menu_and_keys_show_in_tables_and_metrics_equal_core(window,
                                                                              ready) -> None:
    vm = window.vm
    vm.set_param("scope_rule.pushdown", True)  # ten in-scope results to judge
    vm.jobs.wait_idle(60)
    panel = window.tuning_dock.judgments
    ids = final_ids(window)
    assert len(ids) == 10
    # right-click > "Mark relevant, grade 2" on the third result, as the stage menu offers it
    view = section(window, "final")
    menus = []
    window.stages.menu_opening.connect(
        lambda m, rid: menus.append([a.text() for a in m.actions()]))
    menu = QMenu()
    view.menu_opening.emit(menu, ids[2])
    assert any(t.startswith("Mark relevant, grade 2") for t in menus[0])
    _m, act = menu_action(panel, ids[2], "Mark relevant, grade 2")
    act.trigger()
    # Ctrl+3 grades the selected row; Ctrl+0 marks one not relevant
    vm.select(ids[7])
    qt_key = next(a for a in window.actions() if a.shortcut().toString() == "Ctrl+3")
    qt_key.trigger()
    vm.select(ids[0])
    next(a for a in window.actions() if a.shortcut().toString() == "Ctrl+0").trigger()
    grades = {str(ids[2]): 2.0, str(ids[7]): 3.0, str(ids[0]): 0.0}
    assert panel.grades() == grades
    model = view.model
    texts = {str(model.row_id(r)): model.data(model.index(r, 2), Qt.ItemDataRole.DisplayRole)
             for r in range(len(model.kept))}
    assert texts[str(ids[2])].startswith("✓2 ")
    assert texts[str(ids[7])].startswith("✓3 ")
    assert texts[str(ids[0])].startswith("⊘ ")
    fetched = section(window, "fetch").model
    assert fetched.marks == model.marks  # every stage shows them
    want = all_metrics(ids, vm.trace.limit, grades, None)
    assert panel.metric_values() == want
    for key, value in want.items():
        assert f"{key} {value:.3f}" in panel.metrics.text()
    # a slider tick changes the results; the metrics follow
    window.sliders.sliders["fetch.overfetch"].setValue(2.0)
    window.sliders.flush()
    vm.set_param("blend.weight", 1.0)
    vm.jobs.wait_idle(60)
    assert panel.metric_values() == all_metrics(final_ids(window), vm.trace.limit, grades,
                                                None)
    _m, clear = menu_action(panel, ids[2], "Clear judgment")
    clear.trigger()
    assert str(ids[2]) not in panel.grades()
    assert not model.marks.get(str(ids[2]))


def test_judgments_save_and_load_as_json_and_csv(window, tmp_path) -> None:
    vm = window.vm
    panel = window.tuning_dock.judgments
    raw = window.vm.trace.stage("fetch").ids
    panel.mark(raw[0], 2)
    panel.mark(raw[1], 1)
    for name in ("j.json", "j.csv"):
        path = tmp_path / name
        assert panel.save(str(path))
        loaded = load_judgments(path)
        assert loaded.grades_for(vm.question.text, vm.question.scopes[0]) == {
            str(raw[0]): 2.0, str(raw[1]): 1.0}
    panel.mark(raw[0], None)
    assert panel.load(str(tmp_path / "j.csv"))
    assert panel.grades() == {str(raw[0]): 2.0, str(raw[1]): 1.0}
    # the loaded file is offered to the sweep as a query set
    assert window.tuning_dock.sweep.source.currentData() == "set"
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert not panel.load(str(tmp_path / "bad.json"))
    assert window.error_bar.isVisible()
    assert "is not valid JSON" in window.error_bar.label.text()
    assert panel.grades() == {str(raw[0]): 2.0, str(raw[1]): 1.0}  # kept


def test_sweep_with_judgments_uses_ndcg_as_objective(window, qtbot, ready) -> None:
    vm = window.vm
    vm.set_param("scope_rule.pushdown", True)
    vm.jobs.wait_idle(60)
    panel = window.tuning_dock.judgments
    ids = final_ids(window)
    panel.mark(ids[4], 3)
    sweep = window.tuning_dock.sweep
    sweep.run()
    qtbot.waitUntil(lambda: not sweep.running, timeout=60_000)
    q = sweep.result.queries[0]
    assert q.case.grades == ((str(ids[4]), 3.0),)
    assert q.objective == "ndcg"
    assert {sweep.metric.itemData(i) for i in range(sweep.metric.count())} >= {
        "ndcg", "recall", "precision", "mrr", "scoped_recall"}


def test_loaded_judgments_naming_no_row_are_said(window, tmp_path) -> None:
    import json

    f = tmp_path / "ghost.json"
    real = window.vm.trace.stage("fetch").ids[0]
    f.write_text(json.dumps({"format": "inspector-judgments", "version": 1, "queries": [
        {"query": window.vm.question.text, "judgments": {"ghost-1": 2, real: 1}}]}))
    panel = window.tuning_dock.judgments
    assert panel.load(str(f))
    window.vm.jobs.wait_idle()
    assert panel.unknown == ["ghost-1"]
    assert "1 judged id(s) in ghost.json match no row of this table: ghost-1." == \
        window.error_bar.label.text()
