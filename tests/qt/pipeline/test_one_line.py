"""The one-line text a tick changes (qt/pipeline/one_line.py): a new text is painted without a
new layout of its parents, where a QLabel's asks for one; cut with "…" where the width ends,
the whole text in its tooltip, its accessible name and its Copy action."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from inspector.qt.pipeline.one_line import OneLine


class _Layouts(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.seen = 0

    def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.LayoutRequest:
            self.seen += 1
        return False


def _laid_out_after_new_text(line: Any) -> int:
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.addWidget(line)
    box.resize(300, 80)
    box.show()
    for _ in range(5):
        QApplication.processEvents()
    watch = _Layouts()
    box.installEventFilter(watch)
    try:
        for n in range(3):
            line.setText(f"kept {n * 37} of 1,000 · re-scored {n * 12}")
            for _ in range(5):
                QApplication.processEvents()
    finally:
        box.removeEventFilter(watch)
        box.close()
    return watch.seen


def test_a_new_text_is_painted_without_a_new_layout(isolated: Any) -> None:
    assert _laid_out_after_new_text(QLabel("")) >= 3  # what a label costs a tick
    assert _laid_out_after_new_text(OneLine(None, "stageNote")) == 0


def test_a_long_text_is_cut_with_an_ellipsis_and_kept_whole_elsewhere(isolated: Any) -> None:
    line = OneLine(None, "stageNote")
    text = "Set on the pipeline: " + ", ".join(f"stage{n}.weight = 0.{n}" for n in range(40))
    line.setText(text)
    line.resize(200, line.sizeHint().height())
    assert line.shown().endswith("…") and text.startswith(line.shown()[:-1])
    assert line.toolTip() == line.accessibleName() == line.text() == text
    line.resize(line.fontMetrics().horizontalAdvance(text) + 10, line.height())
    assert line.shown() == text
    line.actions()[0].trigger()  # its menu's Copy
    assert QGuiApplication.clipboard().text() == text
    assert line.sizeHint().height() == line.fontMetrics().height()

