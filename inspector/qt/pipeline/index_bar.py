"""The index bar: where a vector leg of the run searches an ANN index, what the index costs this
question (flow/insight/facet.py: per leg the rows it lost and its recall, the exact final list
beside the one returned), the legs' own index knobs as spin boxes, and the diagnosis's index fixes
(each one run) as buttons. Hidden on flat tables."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
)
from superqt.utils import signals_blocked

from inspector.core.engine.flow.answer import Answer
from inspector.core.engine.flow.insight.facet import indexed_legs
from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.runner import FlowTrace
from inspector.core.engine.flow.runs import Change
from inspector.qt.pipeline.banner import WrapLayout
from inspector.qt.theme import LIGHT, Tokens

KNOBS = ("nprobes", "refine_factor", "ef")


def _ids(ids: tuple[str, ...] | list[str], lost: set[str]) -> str:
    return ", ".join((f"<b>✗ {html.escape(x)}</b>" if x in lost else html.escape(x))
                     for x in ids) or "nothing"


def index_fix(t: FlowTrace, change: Change) -> bool:
    """Whether a fix changes the index: an index knob of a stage, or the index bypassed."""
    if change.exact:
        return True
    kinds = {st.name: st.kind for st in t.stages}
    for key, _ in change.sets:
        stage, _, param = key.partition(".")
        if stage in kinds and any(d.name == param and d.effect == "index"
                                  for d in kind_of(kinds[stage]).params):
            return True
    return False


class IndexBar(QFrame):
    """What the index costs this question, and its knobs."""

    param_set = Signal(str, object)  # STAGE.PARAM, value (None: the pipeline's own)
    exact_set = Signal(bool)
    fix_applied = Signal(object)  # a Change

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("indexBar")
        self.summary = QLabel("", objectName="indexSummary")
        self.summary.setWordWrap(True)
        self.compare = QLabel("", objectName="indexCompare")
        self.compare.setWordWrap(True)
        self._row = QHBoxLayout()
        self._row.addWidget(self.summary, 1)
        self.spins: dict[str, QSpinBox] = {}
        self.exact = QCheckBox("exact (what-if)", self, objectName="index_exact")
        self.exact.setToolTip("What-if: bypass the index, LanceDB's exact flat search "
                              "(--exact); not the system's behaviour.")
        self.exact.toggled.connect(self.exact_set)
        self._row.addWidget(self.exact)
        self._fixes = WrapLayout()
        self.buttons: list[QToolButton] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 4, 10, 4)
        lay.setSpacing(2)
        lay.addLayout(self._row)
        lay.addWidget(self.compare)
        lay.addLayout(self._fixes)
        self.set_tokens(LIGHT)
        self.hide()

    def set_tokens(self, tk: Tokens) -> None:
        self.setStyleSheet(f"QFrame#indexBar {{ background: {tk.surface}; "
                           f"border-radius: 6px; }}")

    def _spins(self, t: FlowTrace, legs: list[str], index: Any) -> None:
        hnsw = bool(getattr(index, "is_hnsw", False))
        want = [(leg, d) for leg in legs for d in kind_of(t.stage(leg).kind).params
                if d.name in KNOBS and (d.name == "ef") == hnsw or d.name == "refine_factor"
                and d.name in KNOBS]
        keys = [f"{leg}.{d.name}" for leg, d in want]
        if keys != list(self.spins):
            for spin in self.spins.values():
                spin.setParent(None)
                spin.deleteLater()
            self.spins = {}
            for (leg, d), key in zip(want, keys, strict=True):
                spin = QSpinBox(self, objectName=f"index_{d.name}")
                spin.setRange(int(d.lo or 0), int(min(d.hi or 100_000, 2**31 - 1)))
                spin.setSpecialValueText(f"{d.name} default" if not spin.minimum() else "")
                spin.setPrefix(f"{d.name} " if len(legs) == 1 else f"{leg}.{d.name} ")
                spin.setToolTip(f"{key}: {d.doc}")
                spin.setKeyboardTracking(False)  # typing 40 is one re-query, not two
                spin.valueChanged.connect(lambda v, k=key: self.param_set.emit(k, int(v)))
                self._row.insertWidget(self._row.count() - 1, spin)
                self.spins[key] = spin
        for key, spin in self.spins.items():
            leg, _, name = key.partition(".")
            v = t.stage(leg).params.get(name)
            with signals_blocked(spin):
                spin.setValue(int(v or 0))

    def show_answer(self, trace: FlowTrace | None, answer: Answer | None, index: Any,
                    finding: bool) -> None:
        legs = indexed_legs(trace, index) if trace is not None else []
        bypassed = trace is not None and trace.exact and index is not None
        if not legs and not bypassed:
            self.hide()
            return
        with signals_blocked(self.exact):
            self.exact.setChecked(bool(trace.exact))
        self._spins(trace, legs or [st.name for st in trace.stages
                                    if kind_of(st.kind).vector and st.role == "fetch"], index)
        self.show()
        kind = html.escape(str(getattr(index, "type", "ANN")))
        if bypassed:
            self.summary.setText(f"<b>{kind}</b> index bypassed (what-if): LanceDB's exact "
                                 f"search; the answer is exact.")
            self.compare.setText("")
            self._show_fixes(trace, ())
            return
        f = answer.facet if answer is not None else None
        if f is None:
            note = next((w for w in trace.warnings if "index's answer was not compared" in w),
                        None)
            self.summary.setText(f"<b>{kind}</b> index: approximate search"
                                 + (" (comparing with the exact search…)" if finding else
                                    f": {html.escape(note)}" if note else ""))
            self.compare.setText("")
            self._show_fixes(trace, ())
            return
        legs_text = "; ".join(
            f"{html.escape(leg.stage)}: ANN recall@{trace.limit} "
            f"{'–' if leg.recall is None else f'{leg.recall:.0%}'}, {len(leg.lost)} of the "
            f"exact top {leg.depth} lost" for leg in f.legs)
        self.summary.setText(f"<b>{html.escape(f.index_type)}</b> index: {legs_text}.")
        lost = set(f.lost_final)
        self.compare.setText(f"Exact search returns: {_ids(f.exact_final, lost)}<br>"
                             f"This search returns: {_ids(trace.final.ids, set())}")
        fixes = tuple(x for x in answer.diagnosis.fixes if index_fix(trace, x.change))
        self._show_fixes(trace, fixes)

    def _show_fixes(self, _t: FlowTrace, fixes: tuple[Any, ...]) -> None:
        labels = [x.label for x in fixes]
        if labels == [b.text() for b in self.buttons]:
            return
        for b in self.buttons:
            b.setParent(None)
            b.deleteLater()
        self.buttons = []
        for fix in fixes:
            b = QToolButton(self, objectName="indexFix", text=fix.label)
            b.setToolTip("Apply: inspector query … " + " ".join(fix.change.argv()))
            b.clicked.connect(lambda _=False, c=fix.change: self.fix_applied.emit(c))
            self._fixes.addWidget(b)
            self.buttons.append(b)
