"""The query bar's row for a pipeline of stages: scopes as a list, the clock (where the
pipeline has time-dependent stages), the query vector, and the expected rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from inspector.core.engine.flow.answer import iso
from inspector.core.engine.flow.question import parse_now
from inspector.core.engine.inputs import MAX_VECTOR_BYTES, parse_vector
from inspector.core.errors import InspectorError
from inspector.core.jsonio import read_text
from inspector.qt.flow.session import parse_scopes

EMBED_HINT = "embed the text; or a JSON array, or a .json file"


class FlowBar(QWidget):
    scopes_entered = Signal(object)  # list[str] | None
    now_entered = Signal(float)
    vector_entered = Signal(object)  # list[float] | None
    expected_entered = Signal(list)
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flowBar")
        self.scopes = QLineEdit(self, objectName="flowScopes")
        self.scopes.setPlaceholderText("unscoped (every row); [] denies all")
        self.scopes.setToolTip("The caller's scopes, comma-separated or as a JSON list: a row "
                               "in any of them is in scope. Empty = unscoped; [] denies "
                               "everything, as the system does (no search is made).")
        self.now = QLineEdit(self, objectName="flowNow")
        self.now.setToolTip("The clock of the time-dependent stages (decay, recency, expiry):"
                            " epoch milliseconds or an ISO date-time (UTC unless an offset "
                            "is given).")
        self.now_label = QLabel("now", self)
        self.vector = QLineEdit(self, objectName="flowVector")
        self.vector.setPlaceholderText(EMBED_HINT)
        self.vector.setToolTip("The query vector: empty embeds the text with the store's "
                               "embedder; a JSON array of numbers, or the path of a JSON "
                               "file holding one, is used as it is.")
        self.vector_file = QToolButton(self, text="…", objectName="flowVectorFile")
        self.vector_file.setToolTip("Read the query vector from a JSON file")
        self.expect = QLineEdit(self, objectName="flowExpect")
        self.expect.setPlaceholderText("row ids, comma-separated")
        self.expect.setToolTip("Rows you expect: each is starred, and the stage where the "
                               "first of them fell opens.")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        for label, w, stretch in (("scopes", self.scopes, 3), (None, self.now, 2),
                                  ("vector", self.vector, 2), (None, self.vector_file, 0),
                                  ("expect", self.expect, 2)):
            if w is self.now:
                lay.addWidget(self.now_label)
            elif label is not None:
                lay.addWidget(QLabel(label, self))
            lay.addWidget(w, stretch)
        self._shown: dict[str, str] = {}
        self.scopes.editingFinished.connect(self._scopes)
        self.now.editingFinished.connect(self._now)
        self.vector.editingFinished.connect(self._vector)
        self.vector_file.clicked.connect(self._choose_vector)
        self.expect.editingFinished.connect(self._expect)

    # ---- from the user ----
    def _changed(self, name: str, edit: QLineEdit) -> bool:
        text = edit.text().strip()
        if self._shown.get(name) == text:
            return False
        self._shown[name] = text
        return True

    def _scopes(self) -> None:
        if self._changed("scopes", self.scopes):
            try:
                self.scopes_entered.emit(parse_scopes(self.scopes.text()))
            except InspectorError as exc:
                self.failed.emit(str(exc))

    def _now(self) -> None:
        if self._changed("now", self.now):
            try:
                self.now_entered.emit(parse_now(self.now.text().strip()))
            except InspectorError as exc:
                self.failed.emit(str(exc))

    def _vector(self) -> None:
        if self._changed("vector", self.vector):
            try:
                self.vector_entered.emit(read_vector(self.vector.text()))
            except InspectorError as exc:
                self.failed.emit(str(exc))

    def _choose_vector(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Query vector", "", "JSON (*.json)")
        if path:
            self.vector.setText(path)
            self._vector()

    def _expect(self) -> None:
        if self._changed("expect", self.expect):
            self.expected_entered.emit([s.strip() for s in self.expect.text().split(",")
                                        if s.strip()])

    def pending(self) -> None:
        """Take what is typed in every box (a Run or Enter elsewhere asks with it)."""
        self._scopes()
        self._now()
        self._vector()
        self._expect()

    # ---- showing state ----
    def show_state(self, scopes: list[str] | None, now_ms: float, clocked: bool,
                   expected: list[str], vector: Any = None) -> None:
        shown = {"scopes": "" if scopes is None else
                 (json.dumps(scopes) if not scopes else ", ".join(scopes)),
                 "now": short_iso(now_ms), "expect": ", ".join(expected)}
        for name, edit in (("scopes", self.scopes), ("now", self.now),
                           ("expect", self.expect)):
            if self._shown.get(name) != shown[name] and not edit.hasFocus():
                edit.setText(shown[name])
                self._shown[name] = shown[name]
        self.now.setVisible(clocked)
        self.now_label.setVisible(clocked)
        # a vector given elsewhere (--vector, the API) is said, not typed out: the box keeps
        # what the user types, and an empty box with a given vector searches with it
        self.vector.setPlaceholderText(EMBED_HINT if vector is None or self.vector.text() else
                                       f"the given vector ({len(vector)} dims)")

    def focus_chain(self) -> list[QWidget]:
        return [self.scopes, self.now, self.vector, self.vector_file, self.expect]


def short_iso(ms: float) -> str:
    """The clock as the box shows it: ISO to the millisecond, UTC (parse_now reads it back)."""
    full = iso(ms)  # 2026-12-01T08:17:22.582000Z
    head, _, frac = full.rstrip("Z").partition(".")
    millis = (frac + "000")[:3]
    return f"{head}{'.' + millis if millis != '000' else ''}Z"


def read_vector(text: str) -> list[float] | None:
    """A JSON array, or the path of a JSON file holding one; empty: embed the text."""
    t = text.strip()
    if not t:
        return None
    if not t.startswith("["):
        t = read_text(Path(t).expanduser(), "The vector file", MAX_VECTOR_BYTES)
    vec: Any = parse_vector(t.strip())
    return [float(x) for x in vec]
