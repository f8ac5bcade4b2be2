"""A note for panels that keep a result (sweep, compare): it shows when that result is about
an earlier question (another query, parameter, store or version) than the window's."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QWidget


def asked_key(vm: Any) -> tuple[Any, ...]:
    """What a panel's result is about: the store version and the window's question (its
    clock aside: a question asked again later is the same question)."""
    st = vm.store
    where = (st.uri, st.table_name, st.version) if st is not None else None
    return where, vm.question.plain().model_dump_json(exclude={"now"})


class StaleNote(QLabel):
    def __init__(self, vm: Any, parent: QWidget | None = None) -> None:
        super().__init__("These results are for an earlier question or store version; run "
                         "again for the current one.", parent, objectName="staleNote")
        self.setWordWrap(True)
        self.hide()
        self.vm = vm
        self._asked: tuple[Any, ...] | None = None
        vm.question.events.connect(self._changed)
        vm.store_opened.connect(lambda _o: self.refresh())

    def _changed(self, *_: Any) -> None:
        self.refresh()

    def set_tokens(self, tk: Any) -> None:
        """The window's warning colours: a stale result must be seen, not read past."""
        self.setStyleSheet(f"background:{tk.warn_bg}; padding:4px 8px;")

    def asked(self) -> None:
        """The panel starts a result for the window's current question."""
        self._asked = asked_key(self.vm)
        self.refresh()

    def refresh(self) -> None:
        self.setVisible(self._asked is not None and self._asked != asked_key(self.vm))
