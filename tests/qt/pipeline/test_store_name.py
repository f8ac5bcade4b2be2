"""The header names the store in full where it fits: "No store open" while the first store
opens (it read "No s…open": the label was sized in Qt's default font, before the style sheet's
bold one reached it), and a store's name after a theme change."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def _shown(label) -> str:
    return label._elidedText()  # what the eliding label paints


def test_the_header_says_no_store_open_in_full_before_a_store_opens(qtbot) -> None:
    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False)
    qtbot.addWidget(win)
    win.persist = False
    win.resize(1366, 768)
    win.show()
    QCoreApplication.processEvents()
    label = win.query_bar.store_label
    assert label.text() == "No store open"
    assert _shown(label) == "No store open"
    for theme in ("dark", "light"):
        win.apply_theme(theme)
        QCoreApplication.processEvents()
        assert _shown(label) == "No store open", theme


def test_a_short_store_name_stays_whole_across_theme_changes(window) -> None:
    label = window.query_bar.store_label
    assert label.text() == "demo store"
    for theme in ("dark", "light"):
        window.apply_theme(theme)
        QCoreApplication.processEvents()
        assert _shown(label) == "demo store", theme
