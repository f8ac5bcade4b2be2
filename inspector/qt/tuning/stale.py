"""A note for panels that keep a result (sweep, compare): it shows when that result is about
an earlier question (another query, store or version) than the window's."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QWidget


class StaleNote(QLabel):
    def __init__(self, vm: Any, parent: QWidget | None = None) -> None:
        super().__init__("These results are for an earlier query or store version; run again "
                         "for the current one.", parent, objectName="staleNote")
        self.setWordWrap(True)
        self.hide()
        self.vm = vm
        self._asked: tuple[Any, ...] | None = None
        vm.query_changed.connect(self.refresh)
        vm.store_opened.connect(lambda _o: self.refresh())

    def set_tokens(self, tk: Any) -> None:
        """The window's warning colours: a stale result must be seen, not read past."""
        self.setStyleSheet(f"background:{tk.warn_bg}; padding:4px 8px;")

    def asked(self) -> None:
        """The panel starts a result for the window's current question."""
        self._asked = self.vm.question()
        self.refresh()

    def refresh(self) -> None:
        self.setVisible(self._asked is not None and self._asked != self.vm.question())
