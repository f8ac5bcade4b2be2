"""The preset list's item tooltips (each shipped pipeline's title and system) are read when the
list first opens: building the window parses no shipped pipeline for them."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.engine.flow.shipped import shipped_names
from inspector.core.engine.flow.spec import load_shipped
from inspector.qt.pipeline.query_bar import QueryBar

TIP = Qt.ItemDataRole.ToolTipRole


def test_the_preset_list_reads_its_tooltips_when_it_first_opens(qtbot) -> None:
    bar = QueryBar()
    qtbot.addWidget(bar)
    combo = bar.preset
    names = [combo.itemData(i) for i in range(combo.count())]
    assert names == shipped_names()
    assert all(combo.itemData(i, TIP) is None for i in range(combo.count()))
    bar.show()
    combo.showPopup()  # as a click or Alt+Down opens it
    try:
        for i, name in enumerate(names):
            spec = load_shipped(name)
            assert combo.itemData(i, TIP) == f"{spec.title}\n{spec.system}"
    finally:
        combo.hidePopup()
