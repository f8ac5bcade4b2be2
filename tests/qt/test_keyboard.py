"""Keyboard-only use: Tab walks every control and every stage table in reading order, leaves
each table after one press and comes back round (no trap); Alt+N focuses stage N."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QApplication, QSlider


def tab_walk(start: Any, presses: int = 120) -> list[Any]:
    """The widgets focus visits, from `start`, one Tab press at a time, until it is back."""
    start.setFocus()
    QApplication.processEvents()
    seen = [QApplication.focusWidget()]
    for _ in range(presses):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        QApplication.processEvents()
        w = QApplication.focusWidget()
        if w is seen[0]:
            return seen
        seen.append(w)
    raise AssertionError("Tab never came back to where it started: "
                         + " > ".join(f"{type(w).__name__}:{w.objectName()}" for w in seen[-8:]))


@contextmanager
def chain_reads(win: Any, monkeypatch: Any) -> Iterator[list[str]]:
    """What happens, in order: "chain" each time the Tab chain is read, "paint" each update
    request of the window (its frame painted)."""
    from PySide6.QtCore import QEvent, QObject

    from inspector.qt import shortcuts

    events: list[str] = []
    real = shortcuts.tab_chain

    def chain(w: Any) -> Any:
        events.append("chain")
        return real(w)

    class Painted(QObject):
        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.UpdateRequest:
                events.append("paint")
            return False

    monkeypatch.setattr(shortcuts, "tab_chain", chain)
    watch = Painted()
    targets = [w for w in (win, win.windowHandle()) if w is not None]
    for w in targets:
        w.installEventFilter(watch)
    try:
        yield events
    finally:
        for w in targets:
            w.removeEventFilter(watch)


def test_tab_reaches_every_control_and_stage_table_and_leaves_each(window) -> None:
    qb = window.query_bar
    assert window.banner.findChildren(type(qb.suggested), "bannerFix"), "the story has fixes"
    seen = tab_walk(qb.text)
    must = {"table": qb.table, "suggested": qb.suggested, "run": qb.run_button,
            "preset": qb.preset, "limit": qb.limit,
            "embedder": window.store_features.embedder,
            "detail columns": window.detail.columns, "expected rows": window.expected.entry,
            **{f"scopes {n}": w for n, w in enumerate(window.question_bar.focus_chain())
               if w.isVisible()},
            # every stage's header; an open stage's table after it
            **{f"stage {sec.number}": sec.toggle
               for sec in window.stages.visible_sections()},
            **{f"table {sec.number}": sec.table
               for sec in window.stages.visible_sections() if sec.is_open},
            **{f"slider {k}": s for k, s in window.sliders.sliders.items()}}
    for fix in window.banner.findChildren(type(qb.suggested), "bannerFix"):
        if fix.isVisible():
            must[f"fix {fix.text()}"] = fix

    def at(w: Any) -> int:  # a composite (a labelled slider) is reached through its parts
        return next((k for k, f in enumerate(seen) if f is w or w.isAncestorOf(f)), -1)

    missing = [name for name, w in must.items() if at(w) < 0]
    assert not missing, f"Tab never reaches {missing}"
    # reading order: the query before the stages, the stages in order, the detail after them
    pos = {name: at(w) for name, w in must.items()}
    n = len(window.stages.visible_sections())
    order = ["run", *(f"stage {k}" for k in range(1, n + 1)), "detail columns",
             "expected rows"]
    assert [pos[k] for k in order] == sorted(pos[k] for k in order)
    assert all(pos[k] < pos["stage 1"] for k in pos if k.startswith(("fix ", "slider ")))
    # every table is left by the next press (Tab never moves between its cells)
    for k, w in enumerate(seen):
        if isinstance(w, QAbstractItemView):
            assert seen[(k + 1) % len(seen)] is not w


def test_shift_tab_walks_back_the_same_way(window) -> None:
    forward = tab_walk(window.query_bar.text)
    window.query_bar.text.setFocus()
    back = [QApplication.focusWidget()]
    for _ in range(len(forward) - 1):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
        back.append(QApplication.focusWidget())
    assert back[1:] == list(reversed(forward[1:]))


def test_alt_and_a_number_focuses_that_stage(window) -> None:
    window.query_bar.text.setFocus()
    secs = window.stages.visible_sections()
    for n, sec in enumerate(secs[:9], start=1):
        QTest.keyClick(QApplication.focusWidget(), Qt.Key(Qt.Key.Key_0 + n),
                       Qt.KeyboardModifier.AltModifier)
        QApplication.processEvents()
        assert sec.is_open and QApplication.focusWidget() is sec.table, sec.summary.name
    # the arrows then move the selection in that table, which selects the row everywhere
    fetch = next(sec for sec in secs if sec.summary.name == "fetch")
    QTest.keyClick(fetch.table, Qt.Key(Qt.Key.Key_0 + fetch.number),
                   Qt.KeyboardModifier.AltModifier)
    fetch.table.setCurrentIndex(fetch.model.index(0, 0))
    QTest.keyClick(fetch.table, Qt.Key.Key_Down)
    assert fetch.table.currentIndex().row() == 1
    assert window.vm.selected == fetch.model.row_id(1)


def test_a_tick_that_takes_the_fixes_away_reads_the_tab_order_after_its_frame(
        window, monkeypatch, qtbot) -> None:
    """The demo's answer offers fixes. The first tick of a slider shows a re-rank without
    them (they are searched again once it rests): the chain is read again, after the tick's
    frame is painted, and Tab no longer stops on a button that is gone; the ticks after it,
    keeping the same buttons, read nothing."""
    from inspector.qt import viewmodel

    fixes = window.banner.findChildren(QAbstractButton, "bannerFix")
    assert fixes, "the story has fixes"
    # the fixes are searched again once the slider rests: not between these three presses,
    # however loaded the machine
    monkeypatch.setattr(viewmodel, "FULL_DELAY_MS", 60_000)
    reads = []
    slider = window.sliders.sliders["blend.weight"]
    inner = slider.findChild(QSlider)
    key = Qt.Key.Key_Right if slider.value() < slider.maximum() - 0.5 else Qt.Key.Key_Left
    with chain_reads(window, monkeypatch) as events:
        for _ in range(3):  # three presses of an arrow key on the focused slider
            QApplication.processEvents()
            events.clear()
            before, value, buttons = window.vm.trace, slider.value(), window.banner.buttons
            QTest.keyClick(inner, key)
            window.sliders.flush()
            assert slider.value() != value
            qtbot.waitUntil(lambda b=before: window.vm.trace is not b, timeout=30_000)
            for _ in range(20):  # the frame and what is queued after it (the fixes of the
                QApplication.processEvents()  # new value are searched once it rests)
            assert window.vm.reranked
            assert bool(events.count("chain")) == (window.banner.buttons is not buttons)
            reads.append(events.count("chain"))
            if events.count("chain"):
                assert "paint" in events[:events.index("chain")], events
    assert reads == [1, 0, 0]
    seen = tab_walk(window.query_bar.text)
    assert not any(b in seen for b in fixes)
    assert all(sec.toggle in seen for sec in window.stages.visible_sections())
