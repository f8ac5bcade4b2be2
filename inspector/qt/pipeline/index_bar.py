"""The index view: on a vector-indexed table, the approximate answer beside the exact one
(rows lost to the index marked, ANN recall) and the index's search knobs. Each knob change
is a re-query through the live session, which caches every value it fetched."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QCheckBox, QFrame, QHBoxLayout, QLabel, QSpinBox, QVBoxLayout

from inspector.core.engine.index_rule import used_index
from inspector.core.engine.trace import Trace
from inspector.qt.theme import LIGHT, Tokens
from inspector.qt.viewmodel import Inspector

KNOBS = (("nprobes", "nprobes", 0, 4096, "Partitions searched (IVF). 0: LanceDB's default (20), "
          "as the real systems search."),
         ("refine_factor", "refine", 0, 100, "Re-rank refine × k candidates with the full "
          "vectors. 0: none (LanceDB's default)."),
         ("ef", "ef", 0, 10_000, "HNSW candidate list size. 0: LanceDB's default (1.5 × k)."))


def _ids(ids: tuple[Any, ...] | list[Any], lost: set[Any]) -> str:
    return ", ".join((f"<b>✗ {html.escape(str(x))}</b>" if x in lost else html.escape(str(x)))
                     for x in ids) or "nothing"


class IndexBar(QFrame):
    """Hidden on flat tables; on an indexed one, what the index costs this query."""

    def __init__(self, vm: Inspector, parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("indexBar")
        self.vm = vm
        self.summary = QLabel("", objectName="indexSummary")
        self.summary.setWordWrap(True)
        self.compare = QLabel("", objectName="indexCompare")
        self.compare.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.summary, 1)
        self.spins: dict[str, QSpinBox] = {}
        for key, label, lo, hi, tip in KNOBS:
            spin = QSpinBox(self, objectName=f"index_{key}", minimum=lo, maximum=hi)
            spin.setSpecialValueText("default")
            spin.setToolTip(tip)
            spin.setKeyboardTracking(False)  # typing 40 is one re-query, not two
            spin.valueChanged.connect(lambda v, k=key: vm.set_param(k, v or None))
            row.addWidget(QLabel(label))
            row.addWidget(spin)
            self.spins[key] = spin
        self.exact = QCheckBox("exact", self, objectName="index_exact")
        self.exact.setToolTip("Bypass the index: LanceDB's exact flat search.")
        self.exact.toggled.connect(lambda on: vm.set_param("exact", on or None))
        row.addWidget(self.exact)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 4, 10, 4)
        lay.setSpacing(2)
        lay.addLayout(row)
        lay.addWidget(self.compare)
        self.set_tokens(LIGHT)
        self.hide()
        vm.trace_changed.connect(self.refresh)

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#indexBar {{ background: {tk.surface}; border-radius: 6px; }}")

    def refresh(self) -> None:
        t: Trace | None = self.vm.trace
        index = t.pool.index if t is not None else None
        if t is None or index is None:
            self.setVisible(t is not None and self._has_index())
            return
        p = t.params
        for key, spin in self.spins.items():
            spin.blockSignals(True)
            spin.setValue(int(getattr(p, key) or 0))
            spin.setVisible(key != "ef" or index.is_hnsw)
            spin.blockSignals(False)
        self.exact.blockSignals(True)
        self.exact.setChecked(bool(p.exact))
        self.exact.blockSignals(False)
        self.show()
        if used_index(index, p) is None:
            why = "exact search" if p.exact else "not used for this distance"
            self.summary.setText(f"<b>{index.type}</b> index on {index.column}: {why}; the "
                                 "answer is exact.")
            self.compare.setText("")
            return
        f = t.index_facet
        if f is None:
            self.summary.setText(f"<b>{index.type}</b> index on {index.column}: approximate "
                                 "search (comparing with the exact search…)")
            self.compare.setText("")
            return
        recall = "–" if f.recall is None else f"{f.recall:.0%}"
        self.summary.setText(f"<b>{index.type}</b> index on {index.column}: ANN recall@"
                             f"{p.limit} {recall}; {len(f.lost)} of the exact top {f.depth} "
                             "lost to the index.")
        lost = set(f.lost_final)
        self.compare.setText(f"Exact pipeline returns: {_ids(f.exact_final, lost)}<br>"
                             f"This search returns: {_ids(t.ids('final'), set())}")

    def _has_index(self) -> bool:
        st = self.vm.store
        return st is not None and getattr(st, "vector_index", None) is not None
