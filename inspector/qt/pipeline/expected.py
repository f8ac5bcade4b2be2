"""Expected rows: ids the user expects to see returned, where each one is dropped, and the
over-fetch that would return it (inspector.core.engine.expect.analyse, run in a worker)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
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

from inspector.core.engine.live import MAX_OVERFETCH
from inspector.core.engine.trace import Expectation
from inspector.qt.viewmodel import Inspector

LANE_NAMES = {"post": "post-filter", "pushdown": "pushdown"}


def describe(e: Expectation, cap: int) -> str:
    """One expectation as rich text, with a link that applies the over-fetch that returns it."""
    rid = html.escape(e.id)
    if e.dropped_at is None:
        head = f"<b>★ {rid}</b>: returned"
    else:
        head = f"<b>★ {rid}</b>: dropped at the <b>{e.dropped_at}</b> stage"
    body = html.escape(e.reason[:1].upper() + e.reason[1:]) + "."
    extra = ""
    if e.dropped_at is not None and e.min_overfetch is not None:
        if e.min_overfetch <= MAX_OVERFETCH and not (cap and e.min_depth > cap):
            extra = (f" <a href='overfetch:{e.min_overfetch:.4g}'>Set over-fetch to "
                     f"{e.min_overfetch:.3g}</a> (depth {e.min_depth}).")
        else:
            extra = (f" Needs depth {e.min_depth} (over-fetch {e.min_overfetch:.3g}), beyond "
                     f"the slider or the cap.")
    rank = f" Exhaustive in-scope rank: {e.exhaustive_rank}." if e.exhaustive_rank else ""
    return f"{head}<br>{body}{rank}{extra} <a href='remove:{rid}'>remove</a>"


class ExpectedPanel(QWidget):
    def __init__(self, vm: Inspector, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        title = QLabel("Expected rows", objectName="sectionTitle")
        title.setToolTip("Rows you expect the query to return. The window says where each is "
                         "dropped and which over-fetch would return it.")
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
        # two lines at least: with a dock open the side column is no taller than the stages
        scroll.setMinimumHeight(2 * self.body.fontMetrics().lineSpacing() + 4)
        lay.addWidget(scroll, 1)  # many expected rows scroll instead of running off
        self.entry.returnPressed.connect(self._add)
        add.clicked.connect(self._add)
        vm.expectations_changed.connect(self.refresh)
        self.refresh()

    def _add(self) -> None:
        rid = self.entry.text().strip()
        if rid:
            self.vm.set_expected([*self.vm.expected, rid])
            self.entry.clear()

    def _link(self, href: str) -> None:
        kind, _, value = href.partition(":")
        if kind == "overfetch":
            self.vm.set_param("overfetch", float(value))
        elif kind == "remove":
            self.vm.set_expected([i for i in self.vm.expected if i != html.unescape(value)])

    def refresh(self) -> None:
        vm = self.vm
        if not vm.expected:
            self.status.setText("No expected rows.")
            self.body.setText("")
            return
        self.status.setText("Analysing…" if vm.expect_busy else
                            f"{len(vm.expected)} expected row(s)")
        if not vm.expectations:
            self.body.setText("<br>".join(f"★ {html.escape(i)}" for i in vm.expected))
            return
        parts = []
        for n, lane in enumerate(vm.expectations):
            if len(vm.expectations) > 1 and n < len(vm.placements):
                parts.append(f"<i>{LANE_NAMES.get(vm.placements[n], '')}</i>")
            parts.extend(describe(e, vm.params.cap) for e in lane)
        self.body.setText("<br><br>".join(parts))
