"""The query bar: which store and table, the query (text or an example row), and the
parameters that need a new fetch (preset, mode, scope, filter placement, limit)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QToolButton,
    QWidget,
)
from superqt import QElidingLabel

from inspector.core.engine.inputs import build_params
from inspector.core.engine.params import MAX_CANDIDATES, MODES, Params
from inspector.core.engine.presets import PRESETS
from inspector.core.engine.scope import STRATEGIES
from inspector.core.stores.opening import Opened

FILE_ITEM = "pipeline-file:"  # the preset list's item of a pipeline loaded from a file
FILTER_CHOICES = (("post", "post-filter"), ("pushdown", "pushdown"),
                  ("both", "both, side by side"))
TIPS = {
    "preset": "Reproduce a real system: sets mode, depths, blend, min score, scope rule and "
              "filter placement the way that system does.",
    "mode": "vector: nearest vectors; fts: full-text (BM25); hybrid: both fused by "
            "reciprocal rank (k = 60).",
    "scope": "The caller's scope. Empty = no scope (everything matches). Suggestions come from "
             "the store's repo / scope / agent column.",
    "rule": "How a row is matched to the scope: repo_prefix (repo == key or path under it), "
            "path_prefix, map (scope map file), column (a column equals the scope), "
            "column_global (equals, or '' / NULL = global), agent_scope (AGENT or AGENT/SCOPE: "
            "the agent column and the scope column, as OpenClaw), none.",
    "filter": "post-filter: scope applied after the global top-k cut (can starve); "
              "pushdown: scope applied inside the search; both: compare them side by side.",
    "limit": "How many results the caller asks for.",
    "cap": "The deepest candidate pool any over-fetch may fetch (none: no cap). The banner "
           "says when a fix needs it raised.",
    "text": "Query text (Enter runs). Embedded with the store's embedder for vector and "
            "hybrid search. A JSON array of numbers is searched as the vector itself.",
}


SHRINK_CHARS = 9  # a squeezed combo still shows this many characters, then "…"


class ShrinkCombo(QComboBox):
    """A combo as wide as its longest item where there is room, down to SHRINK_CHARS
    characters where there is not (a 1024 px screen), its current text elided to fit."""

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        hint = super().minimumSizeHint()
        fm = self.fontMetrics()
        widest = max((fm.horizontalAdvance(self.itemText(i)) for i in range(self.count())),
                     default=0)
        room = fm.horizontalAdvance("x" * SHRINK_CHARS)
        return QSize(hint.width() - max(0, widest - room), hint.height())

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QStylePainter(self)
        opt = QStyleOptionComboBox()
        self.initStyleOption(opt)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, opt)
        box = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, opt,
                                          QStyle.SubControl.SC_ComboBoxEditField, self)
        opt.currentText = self.fontMetrics().elidedText(opt.currentText,
                                                        Qt.TextElideMode.ElideRight,
                                                        box.width() - 2)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, opt)


def _combo(items: list[tuple[str, Any]], tip: str, name: str) -> QComboBox:
    c = ShrinkCombo(objectName=name)
    for label, data in items:
        c.addItem(label, data)
    c.setToolTip(tip)
    return c


def _select_data(combo: QComboBox, value: Any) -> None:
    combo.blockSignals(True)
    idx = combo.findData(value)
    combo.setCurrentIndex(max(idx, 0))
    combo.blockSignals(False)


class QueryBar(QWidget):
    text_submitted = Signal(str)
    example_cleared = Signal()
    preset_picked = Signal(object)  # name or None
    param_changed = Signal(str, object)  # key, value (None = not given)
    compare_changed = Signal(bool)
    table_picked = Signal(str)
    suggested_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store_label = QElidingLabel("No store open", objectName="sectionTitle")
        self.store_label.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.table = QComboBox(objectName="table")
        self.table.setToolTip("Table in this store")
        self.table.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.roles = QElidingLabel("", objectName="rolesLabel")
        self.roles.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.suggested = QToolButton(text="Suggested queries", objectName="suggested")
        self.suggested.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.suggested.setMenu(QMenu(self.suggested))
        self.text = QLineEdit(objectName="queryText")
        self.text.setPlaceholderText("Type a query and press Enter (Ctrl+L); a JSON array "
                                     "like [0.1, 0.2, …] is used as the vector itself")
        self.text.setToolTip(TIPS["text"])
        self.text.setClearButtonEnabled(True)
        self.stale = QLabel("edited: Enter runs it", objectName="queryStale")
        self.stale.setToolTip("The results below are for the query that last ran, not for the "
                              "text you have typed since. Press Enter or Run to run it.")
        self.stale.hide()
        self._ran = ""
        self.text.textEdited.connect(lambda t: self.stale.setVisible(t.strip() != self._ran))
        self.example = QToolButton(objectName="chip")
        self.example.setToolTip("Searching with this stored row's vector (query by example). "
                                "Click to go back to the text query.")
        self.example.hide()
        self.run_button = QPushButton("Run", objectName="run")
        self.run_button.setToolTip("Run the query again (Ctrl+R, F5)")
        self.preset = _combo([("custom", None)] + [(n, n) for n in PRESETS], TIPS["preset"],
                             "preset")
        for n, p in enumerate(PRESETS.values(), 1):
            self.preset.setItemData(n, f"{p.title}\nDepth: {p.depth_rule}",
                                    Qt.ItemDataRole.ToolTipRole)
        self.modified = QElidingLabel("", objectName="stageNote")  # elides on a narrow screen
        self._preset_params: dict[str, Params] = {}
        self.mode = _combo([(m, m) for m in MODES], TIPS["mode"], "mode")
        self.scope = QComboBox(objectName="scope", editable=True)
        self.scope.setToolTip(TIPS["scope"])
        self.scope.lineEdit().setPlaceholderText("no scope")
        self.scope.setMinimumContentsLength(10)
        self.rule = _combo([(s, s) for s in STRATEGIES], TIPS["rule"], "rule")
        self.filter = _combo([(label, key) for key, label in FILTER_CHOICES], TIPS["filter"],
                             "filter")
        self.limit = QSpinBox(objectName="limit", minimum=1, maximum=1000)
        self.limit.setKeyboardTracking(False)
        self.limit.setToolTip(TIPS["limit"])
        self.cap = QSpinBox(objectName="cap", minimum=0, maximum=MAX_CANDIDATES)
        self.cap.setSpecialValueText("none")
        self.cap.setKeyboardTracking(False)
        self.cap.setToolTip(TIPS["cap"])
        self._scope_values: dict[str, list[str]] = {}
        self._opened: Opened | None = None
        self._layout()
        self._connect()

    def _layout(self) -> None:
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setVerticalSpacing(4)
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(self.store_label)
        top.addSpacing(8)
        top.addWidget(QLabel("table"))
        top.addWidget(self.table)
        top.addWidget(self.roles, 1)
        top.addWidget(self.suggested)
        grid.addLayout(top, 0, 0)
        self._query_row = q = QHBoxLayout()
        q.addWidget(self.text, 1)
        q.addWidget(self.example)
        q.addWidget(self.stale)
        q.addWidget(self.run_button)
        grid.addLayout(q, 1, 0)
        row = QHBoxLayout()
        self._fixed_only: list[QWidget] = []  # hidden for a pipeline of stages
        for label, w in (("preset", self.preset), ("mode", self.mode), ("scope", self.scope),
                         ("rule", self.rule), ("filter", self.filter), ("limit", self.limit),
                         ("cap", self.cap)):
            lab = QLabel(label)
            lab.setToolTip(w.toolTip())
            row.addWidget(lab)
            row.addWidget(w)
            if label in ("mode", "scope", "rule", "filter", "cap"):
                self._fixed_only += [lab, w]
            if label == "preset":
                row.addWidget(self.modified)
            row.addSpacing(6)
        row.addStretch(1)
        grid.addLayout(row, 2, 0)
        self._params_row = row

    def _connect(self) -> None:
        self.text.returnPressed.connect(lambda: self.text_submitted.emit(self.text.text()))
        self.run_button.clicked.connect(lambda: self.text_submitted.emit(self.text.text()))
        self.example.clicked.connect(self.example_cleared)
        self.preset.activated.connect(lambda _: self.preset_picked.emit(self.preset.currentData()))
        self.mode.activated.connect(lambda _: self.param_changed.emit("mode",
                                                                      self.mode.currentData()))
        self.rule.activated.connect(self._rule_picked)
        self.scope.activated.connect(lambda _: self._scope_entered())
        self.scope.lineEdit().editingFinished.connect(self._scope_entered)
        self.filter.activated.connect(self._filter_picked)
        self.limit.valueChanged.connect(lambda v: self.param_changed.emit("limit", int(v)))
        self.cap.valueChanged.connect(lambda v: self.param_changed.emit("cap", int(v)))
        self.table.activated.connect(lambda _: self.table_picked.emit(self.table.currentText()))

    def _scope_entered(self) -> None:
        value = self.scope.currentText().strip() or None
        if value != self._shown_scope:
            self._shown_scope = value
            self.param_changed.emit("scope", value)

    def _rule_picked(self, _: int) -> None:
        self.param_changed.emit("scope_strategy", self.rule.currentData())

    def _filter_picked(self, _: int) -> None:
        key = self.filter.currentData()
        if key == "both":
            self.compare_changed.emit(True)
            return
        self.compare_changed.emit(False)
        self.param_changed.emit("filter", key)

    _shown_scope: str | None = None
    _options_key: Any = None

    # ---- showing state ----
    def show_offline(self, name: str, tip: str) -> None:
        """Receipt mode: the header names the receipt, not a store that is not open."""
        text = f"receipt {name} (offline)"
        self.store_label.setText(text)
        width = self.store_label.fontMetrics().horizontalAdvance(text) + 8
        self.store_label.setMinimumWidth(min(width, 260))
        self.store_label.setMaximumWidth(min(width, 480))
        self.store_label.setToolTip(tip)
        self.table.clear()

    def show_store(self, opened: Opened) -> None:
        self._opened = opened
        st = opened.store
        name = "demo store" if opened.demo else st.display_uri
        self.store_label.setText(f"{name}")
        width = self.store_label.fontMetrics().horizontalAdvance(name) + 8
        self.store_label.setMinimumWidth(min(width, 260))  # long paths elide in the middle
        self.store_label.setMaximumWidth(min(width, 480))
        self.store_label.setToolTip(f"{st.display_uri}\n{st.rows} rows, version {st.version}, "
                                    f"{st.dim}-dimensional vectors")
        self.table.blockSignals(True)
        self.table.clear()
        self.table.addItems(list(opened.tables))
        self.table.setCurrentText(st.table_name)
        self.table.blockSignals(False)
        roles = ", ".join(f"{r}={c}" for r, c in st.roles.as_dict().items() if c)
        self.roles.setText(f"{st.rows:,} rows · dim {st.dim} · roles: {roles}")
        self.roles.setToolTip("Detected column roles (which column is the id, text, vector, "
                              f"importance, scope...):\n{roles}")
        self._scope_values = opened.scope_values
        menu = self.suggested.menu()
        menu.clear()
        for n, q in enumerate(st.suggested_queries):
            act = menu.addAction(q.get("name", f"Suggested query {n + 1}"))
            act.setToolTip(q.get("story", ""))
            act.triggered.connect(lambda _=False, k=n: self.suggested_picked.emit(k))
        self.suggested.setVisible(bool(st.suggested_queries))

    def _scope_options(self, p: Params) -> list[str]:
        from inspector.qt.pipeline.query_extras import scope_suggestions

        roles = self._opened.store.roles if self._opened else None
        values, hint, compared = scope_suggestions(p, roles, self._scope_values)
        self.scope.lineEdit().setPlaceholderText(hint)
        self.scope.setToolTip(TIPS["scope"] + (f"\nCompared with: {compared}" if compared else ""))
        return values

    def show_modified(self, preset: str | None, given: dict[str, Any]) -> None:
        """"+ blend, min_score": the parameters that differ from the preset's own values (a
        slider moved back to the preset's value drops out again)."""
        extra: list[str] = []
        if preset:
            if preset not in self._preset_params:
                self._preset_params[preset] = build_params(preset=preset)
            base = self._preset_params[preset]
            extra = sorted(k for k, v in given.items() if k not in ("limit", "scope")
                           and getattr(base, k, None) != v)
        text = f"+ {', '.join(extra)}" if extra else ""
        if text != self.modified.text():
            self.modified.setText(text)
            self.modified.setToolTip(f"Parameters you changed on top of the preset: "
                                     f"{', '.join(extra)}." if extra else "")

    def show_params(self, p: Params, preset: str | None, given: dict[str, Any],
                    compare: bool) -> None:
        _select_data(self.preset, self._flow_preset or preset)
        self.show_modified(preset, given)
        _select_data(self.mode, p.mode)
        _select_data(self.rule, p.scope_strategy)
        _select_data(self.filter, "both" if compare else p.filter)
        if self._flow_preset is None:
            self.limit.blockSignals(True)
            self.limit.setValue(p.limit)
            self.limit.blockSignals(False)
        self.cap.blockSignals(True)
        self.cap.setValue(p.cap)
        self.cap.blockSignals(False)
        self.scope.blockSignals(True)
        key = (id(self._opened), p.scope_strategy, p.scope_column, p.scope_map)
        if key != self._options_key:  # refilling hundreds of items on every tick is not free
            self._options_key = key
            self.scope.clear()
            self.scope.addItems(self._scope_options(p))
        if self.scope.currentText() != (p.scope or ""):
            self.scope.setEditText(p.scope or "")
        self.scope.blockSignals(False)
        self._shown_scope = p.scope

    # ---- pipelines of stages ----
    _flow_preset: str | None = None

    def add_row(self, widget: QWidget) -> None:
        """Controls at the end of the parameters' row (the flow mode's scopes and clock: the
        fixed pipeline's mode, scope, rule and filter make way for them)."""
        self._params_row.insertWidget(self._params_row.count() - 1, widget, 100)

    def add_presets(self, names: tuple[str, ...], titles: dict[str, str]) -> None:
        """Pipelines of stages, after the fixed presets."""
        self.preset.insertSeparator(self.preset.count())
        for name in names:
            self.preset.addItem(name, name)
            self.preset.setItemData(self.preset.count() - 1,
                                    f"{titles.get(name, name)}\nA pipeline of stages",
                                    Qt.ItemDataRole.ToolTipRole)

    def set_flow_preset(self, name: str | None, lo: int = 1, hi: int = 1000,
                        limit: int | None = None, file_label: str | None = None) -> None:
        """Show a pipeline of stages (its limit range; no mode, scope rule or filter
        placement: the pipeline has its own), or the fixed pipeline's controls again. A
        pipeline loaded from a file is the preset list's last item, FILE_ITEM, `file_label`."""
        self._flow_preset = name
        if file_label is not None:
            if self.preset.findData(FILE_ITEM) < 0:
                self.preset.insertSeparator(self.preset.count())
                self.preset.addItem(file_label, FILE_ITEM)
            at = self.preset.findData(FILE_ITEM)
            self.preset.setItemText(at, file_label)
            self.preset.setItemData(at, "A pipeline of stages read from a file (File › Open "
                                    "pipeline file…)", Qt.ItemDataRole.ToolTipRole)
        for w in self._fixed_only:
            w.setVisible(name is None)
        self.modified.setVisible(name is None)
        self.limit.blockSignals(True)
        if name is None:
            self.limit.setRange(1, 1000)
        else:
            self.limit.setRange(lo, hi)
            if limit is not None:
                self.limit.setValue(limit)
            _select_data(self.preset, name)
        self.limit.blockSignals(False)

    def add_widget(self, widget: QWidget) -> None:
        """A control in the query row, just before Run (the window's add_query_widget)."""
        self._query_row.insertWidget(self._query_row.indexOf(self.run_button), widget)

    def show_query(self, text: str, vector_of: str | None) -> None:
        """The query that runs (or ran): what the results are about; clears the edited mark."""
        self._ran = text.strip()
        self.stale.hide()
        if self.text.text() != text:
            self.text.setText(text)
        if vector_of is None:
            self.example.hide()
        else:
            short = vector_of if len(vector_of) <= 28 else vector_of[:25] + "…"
            self.example.setText(f"by example: {short}  ✕")
            self.example.show()

    def set_busy(self, busy: bool) -> None:
        self.run_button.setText("Running…" if busy else "Run")
