"""The query bar's second row: the question's scopes, its clock (where the pipeline has
time-dependent stages), the query vector and the expected rows. Each box writes its field of
the question when the user finishes editing it and shows the field when it changes (never
into a box the user is typing in)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from inspector.core.engine.flow.answer import iso
from inspector.core.engine.flow.inputs import parse_vector
from inspector.core.engine.flow.question import parse_now
from inspector.core.errors import InspectorError
from inspector.core.jsonio import read_text
from inspector.core.stores.safety.bounds import MAX_VECTOR_BYTES

EMBED_HINT = "embed the text; or a JSON array, or a .json file"


class QuestionBar(QWidget):
    """Scopes, clock, vector and expected rows of the window's question."""

    edited = Signal(dict)  # fields of the question the user set
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
        self.vector_file.clicked.connect(self.choose_vector)
        self.expect.editingFinished.connect(self._expect)

    # ---- from the user ----
    def _changed(self, name: str, edit: QLineEdit) -> bool:
        text = edit.text().strip()
        if self._shown.get(name) == text:
            return False
        self._shown[name] = text
        return True

    def _read(self, name: str) -> dict[str, Any]:
        """The field a box holds, when it was edited since it was shown; {} otherwise. A box
        that does not parse says why (failed) and changes nothing."""
        edit = {"scopes": self.scopes, "now": self.now, "vector": self.vector,
                "expect": self.expect}[name]
        if not self._changed(name, edit):
            return {}
        text = edit.text()
        try:
            if name == "scopes":
                return {"scopes": parse_scopes(text)}
            if name == "now":
                return {"now": parse_now(text.strip())}
            if name == "vector":
                vec = read_vector(text)
                return {"vector": vec, "vector_of": None} if vec is not None else \
                    {"vector": None}
        except InspectorError as exc:
            self._shown.pop(name, None)
            self.failed.emit(str(exc))
            return {}
        return {"expect": [s.strip() for s in text.split(",") if s.strip()]}

    def _edited(self, name: str) -> None:
        got = self._read(name)
        if got:
            self.edited.emit(got)

    def _scopes(self) -> None:
        self._edited("scopes")

    def _now(self) -> None:
        self._edited("now")

    def _vector(self) -> None:
        self._edited("vector")

    def choose_vector(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Query vector", "", "JSON (*.json)")
        if path:
            self.vector.setText(path)
            self._vector()

    def _expect(self) -> None:
        self._edited("expect")

    def take(self) -> dict[str, Any]:
        """What is typed in every box and not yet asked (a Run or Enter elsewhere asks
        with it, in one change of the question)."""
        out: dict[str, Any] = {}
        for name in ("scopes", "now", "vector", "expect"):
            out.update(self._read(name))
        return out

    # ---- showing the question ----
    def show_question(self, q: Any, clocked: bool) -> None:
        shown = {"scopes": "" if q.scopes is None else
                 (json.dumps(q.scopes) if not q.scopes else ", ".join(q.scopes)),
                 "now": short_iso(q.now) if q.now is not None else "",
                 "expect": ", ".join(q.expect)}
        for name, edit in (("scopes", self.scopes), ("now", self.now),
                           ("expect", self.expect)):
            if self._shown.get(name) != shown[name] and not edit.hasFocus():
                edit.setText(shown[name])
                self._shown[name] = shown[name]
        self.now.setVisible(clocked)
        self.now_label.setVisible(clocked)
        # a vector given elsewhere (a file, --vector, the API) is said, not typed out
        if q.vector is None and self._shown.get("vector") and not self.vector.hasFocus():
            self.vector.clear()
            self._shown["vector"] = ""
        self.vector.setPlaceholderText(EMBED_HINT if q.vector is None or self.vector.text()
                                       else f"the given vector ({len(q.vector)} dims)")

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


def parse_scopes(text: str) -> list[str] | None:
    """The scopes box: empty = unscoped, `[]` = deny everything, else a JSON list or
    comma-separated scopes."""
    t = text.strip()
    if not t:
        return None
    if t.startswith("["):
        try:
            got = json.loads(t)
        except json.JSONDecodeError:
            raise InspectorError(f"The scopes {t!r} are not a JSON list; write them "
                                 f"comma-separated or as [\"a\", \"b\"].") from None
        if not isinstance(got, list) or not all(isinstance(x, str) for x in got):
            raise InspectorError("The scopes must be a list of texts.")
        return got
    return [s.strip() for s in t.split(",") if s.strip()]
