"""Expected rows: ids the user expects to see returned, where each one fell and the smallest
change that returns it (flow/insight/expect.py `explain`, run in a worker with the diagnosis), each
change a link that sets it on the question."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.core.engine.flow.rows import DROP_LABELS
from inspector.core.engine.flow.runs import Change, freeze
from inspector.core.engine.flow.spec import parse_assignment


def change_of(argv: list[str]) -> Change:
    """The Change a fix's command-line arguments stand for (what the engine ran)."""
    sets: dict[str, Any] = {}
    widen: dict[str, int] = {}
    exact, limit = False, None
    it = iter(argv)
    for arg in it:
        if arg == "--set":
            k, v = parse_assignment(next(it))
            sets[k] = v
        elif arg == "--widen":
            k, _, d = next(it).partition("=")
            widen[k] = int(d)
        elif arg == "--exact":
            exact = True
        elif arg == "--limit":
            limit = int(next(it))
    return Change(freeze(sets), freeze(widen), exact, limit)


def describe(e: dict[str, Any], n: int) -> str:
    """One expected row as rich text: where it fell, and its smallest fix as a link."""
    rid = html.escape(str(e["id"]))
    if e.get("reason") == "returned":
        return f"<b>★ {rid}</b>: returned at rank {e.get('rank')}."
    where = f" at <b>{html.escape(str(e['dropped_at']))}</b>" if e.get("dropped_at") else ""
    words = DROP_LABELS.get(e["reason"], str(e["reason"]).replace("_", " "))
    parts = [f"<b>★ {rid}</b>: {html.escape(words)}{where}."]
    for k, fix in enumerate([e["fix"], *e.get("alternatives", [])][:3]):
        if fix is None:
            continue
        what = " ".join(fix["argv"])
        tag = " (what-if)" if fix.get("kind") == "what_if" else ""
        lead = "Smallest fix" if k == 0 else "or"
        parts.append(f"{lead}{tag}: <a href='fix:{n}:{k}'>{html.escape(what)}</a> "
                     f"(returns it at rank {fix.get('rank')})")
    if e.get("no_fix"):
        parts.append(html.escape(str(e["no_fix"])[:1].upper() + str(e["no_fix"])[1:]) + ".")
    parts.append(f"<a href='remove:{rid}'>remove</a>")
    return "<br>".join(parts)


class ExpectedPanel(QWidget):
    """The question's expected rows and what the engine found about each."""

    edited = Signal(list)  # the expected ids
    change_applied = Signal(object)  # a Change

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("Expected rows", objectName="sectionTitle")
        title.setToolTip("Rows you expect the query to return. The window says where each "
                         "fell and the smallest change that returns it (each one was run).")
        self.entry = QLineEdit(objectName="expectEntry")
        self.entry.setPlaceholderText("Type an id and press Enter, or right-click a row")
        add = QPushButton("Add")
        self.status = QLabel("", objectName="stageNote")
        self.body = QLabel("", objectName="expectBody")
        self.body.setWordWrap(True)
        self.body.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.body.setOpenExternalLinks(False)
        self.body.linkActivated.connect(self._link)
        row = QHBoxLayout()
        row.addWidget(self.entry, 1)
        row.addWidget(add)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(title)
        lay.addLayout(row)
        lay.addWidget(self.status)
        scroll = QScrollArea(self, objectName="expectScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.body)
        scroll.setMinimumHeight(2 * self.body.fontMetrics().lineSpacing() + 4)
        lay.addWidget(scroll, 1)  # many expected rows scroll instead of running off
        self.entry.returnPressed.connect(self._add)
        add.clicked.connect(self._add)
        self.ids: list[str] = []
        self.explained: tuple[dict[str, Any], ...] = ()
        self.show_expected([], None, False)

    def _add(self) -> None:
        rid = self.entry.text().strip()
        if rid:
            self.edited.emit([*self.ids, rid])
            self.entry.clear()

    def _link(self, href: str) -> None:
        kind, _, value = href.partition(":")
        if kind == "fix":
            n, _, k = value.partition(":")
            e = self.explained[int(n)]
            fix = [e["fix"], *e.get("alternatives", [])][int(k)]
            self.change_applied.emit(change_of(fix["argv"]))
        elif kind == "remove":
            self.edited.emit([i for i in self.ids if i != html.unescape(value)])

    def show_expected(self, ids: list[str], explained: tuple[dict[str, Any], ...] | None,
                      busy: bool) -> None:
        """`explained`: the answer's expected rows (None while they are being found)."""
        self.ids = list(ids)
        self.explained = explained or ()
        if not ids:
            self.status.setText("No expected rows.")
            self.body.setText("")
            return
        self.status.setText("Finding where each fell…" if busy and explained is None else
                            f"{len(ids)} expected row(s)")
        if explained is None:
            self.body.setText("<br>".join(f"★ {html.escape(i)}" for i in ids))
            return
        self.body.setText("<br><br>".join(describe(e, n) for n, e in enumerate(explained)))
