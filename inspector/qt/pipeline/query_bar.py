"""The query bar: which store and table, the query (text or an example row), the pipeline
(a shipped preset or a pipeline file) and the limit; the question's scopes, clock, vector and
expected rows are its second row (question_bar)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
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
from superqt.utils import signals_blocked

from inspector.core.stores.opening import Opened

FILE_ITEM = "pipeline-file:"  # the preset list's item of a pipeline loaded from a file
TIPS = {
    "preset": "The pipeline: a real system's retrieval reproduced stage by stage (its "
              "depths, filters, re-scoring and cuts), or LanceDB's own search (lancedb).",
    "limit": "How many results the caller asks for.",
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


class PresetCombo(ShrinkCombo):
    """The shipped pipelines: each item's tooltip (the pipeline's title and system) is read
    the first time the list opens, not while the window is built (parsing every shipped
    pipeline is on the way to the first results; the tooltips show only in the open list)."""

    def showPopup(self) -> None:  # noqa: N802 - Qt override
        self.item_tips()
        super().showPopup()

    def item_tips(self) -> None:
        """Each shipped pipeline's item names its title and system (once)."""
        if getattr(self, "_tips", False):
            return
        from inspector.core.engine.flow.shipped import accepted_names
        from inspector.core.engine.flow.spec import load_shipped

        shipped = set(accepted_names())
        for n in range(self.count()):
            name = self.itemData(n)
            if isinstance(name, str) and name in shipped:
                spec = load_shipped(name)
                self.setItemData(n, f"{spec.title}\n{spec.system}", Qt.ItemDataRole.ToolTipRole)
        self._tips = True


def _combo(items: list[tuple[str, Any]], tip: str, name: str,
           kind: type[ShrinkCombo] = ShrinkCombo) -> QComboBox:
    c = kind(objectName=name)
    for label, data in items:
        c.addItem(label, data)
    c.setToolTip(tip)
    return c


def _select_data(combo: QComboBox, value: Any) -> None:
    with signals_blocked(combo):
        idx = combo.findData(value)
        combo.setCurrentIndex(max(idx, 0))


class QueryBar(QWidget):
    text_submitted = Signal(str)
    example_cleared = Signal()
    preset_picked = Signal(object)  # a shipped pipeline's name, or FILE_ITEM
    limit_changed = Signal(int)
    table_picked = Signal(str)
    suggested_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from inspector.core.engine.flow.shipped import shipped_names

        self.store_label = QElidingLabel("", objectName="sectionTitle")
        self.store_label.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.store_label.installEventFilter(self)  # its font comes with the style sheet
        self._name_store("No store open")  # while the first store opens too
        self.table = QComboBox(objectName="table")
        self.table.setToolTip("Table in this store")
        self.table.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.roles = QElidingLabel("", objectName="rolesLabel")
        self.roles.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.suggested = QToolButton(text="Suggested queries", objectName="suggested")
        self.suggested.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.suggested.setMenu(QMenu(self.suggested))
        # the menu arrow is drawn inside the button: room for it beside the text
        self.suggested.setMinimumWidth(
            self.suggested.fontMetrics().horizontalAdvance(self.suggested.text()) + 40)
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
        names = shipped_names()
        self.preset = _combo([(n, n) for n in names], TIPS["preset"], "preset", PresetCombo)
        self.modified = QElidingLabel("", objectName="stageNote")  # elides on a narrow screen
        self.limit = QSpinBox(objectName="limit", minimum=1, maximum=1000)
        self.limit.setKeyboardTracking(False)
        self.limit.setToolTip(TIPS["limit"])
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
        for label, w in (("preset", self.preset), ("limit", self.limit)):
            lab = QLabel(label)
            lab.setToolTip(w.toolTip())
            row.addWidget(lab)
            row.addWidget(w)
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
        self.limit.valueChanged.connect(lambda v: self.limit_changed.emit(int(v)))
        self.table.activated.connect(lambda _: self.table_picked.emit(self.table.currentText()))

    # ---- showing state ----
    def _name_store(self, text: str) -> None:
        """The header's store name, given the room it needs (a long path elides in the
        middle, past 260 px): a label sized for none was squeezed ("No s…open")."""
        self.store_label.setText(text)
        self._fit_store_name()

    def _fit_store_name(self) -> None:
        label = self.store_label
        width = label.fontMetrics().horizontalAdvance(label.text()) + 8
        label.setMinimumWidth(min(width, 260))
        label.setMaximumWidth(min(width, 480))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        # the style sheet's font (bold) reaches the label when it is polished, after it was
        # sized with Qt's default font, and again when the theme changes
        if obj is self.store_label and event.type() == QEvent.Type.FontChange:
            self._fit_store_name()
        return super().eventFilter(obj, event)

    def show_offline(self, name: str, tip: str) -> None:
        """Receipt mode: the header names the receipt, not a store that is not open."""
        self._name_store(f"receipt {name} (offline)")
        self.store_label.setToolTip(tip)
        self.table.clear()

    def show_store(self, opened: Opened) -> None:
        self._opened = opened
        st = opened.store
        name = "demo store" if opened.demo else st.display_uri
        self._name_store(name)
        self.store_label.setToolTip(f"{st.display_uri}\n{st.rows} rows, version {st.version}, "
                                    f"{st.dim}-dimensional vectors")
        with signals_blocked(self.table):
            self.table.clear()
            self.table.addItems(list(opened.tables))
            self.table.setCurrentText(st.table_name)
        roles = ", ".join(f"{r}={c}" for r, c in st.roles.as_dict().items() if c)
        self.roles.setText(f"{st.rows:,} rows · dim {st.dim} · roles: {roles}")
        self.roles.setToolTip("Detected column roles (which column is the id, text, vector, "
                              f"importance, scope...):\n{roles}")
        menu = self.suggested.menu()
        menu.clear()
        for n, q in enumerate(st.suggested_queries):
            act = menu.addAction(q.get("name", f"Suggested query {n + 1}"))
            act.setToolTip(q.get("story", ""))
            act.triggered.connect(lambda _=False, k=n: self.suggested_picked.emit(k))
        menu.setToolTipsVisible(True)
        self.suggested.setVisible(bool(st.suggested_queries))

    def show_pipeline(self, preset: str | None, file_label: str | None, lo: int, hi: int,
                      limit: int, modified: list[str]) -> None:
        """The question's pipeline (a file is the preset list's last item, FILE_ITEM), its
        limit within the pipeline's range, and the parameters set on top of it."""
        if file_label is not None:
            if self.preset.findData(FILE_ITEM) < 0:
                self.preset.insertSeparator(self.preset.count())
                self.preset.addItem(file_label, FILE_ITEM)
            at = self.preset.findData(FILE_ITEM)
            self.preset.setItemText(at, file_label)
            self.preset.setItemData(at, "A pipeline of stages read from a file (File › Open "
                                    "pipeline file…)", Qt.ItemDataRole.ToolTipRole)
        _select_data(self.preset, FILE_ITEM if file_label is not None else preset)
        with signals_blocked(self.limit):  # unchanged: untouched (a slider's tick sets the
            # question's values, and a range set again re-lays out the window before its answer)
            if (self.limit.minimum(), self.limit.maximum()) != (lo, min(hi, 100_000)):
                self.limit.setRange(lo, min(hi, 100_000))
            if self.limit.value() != limit:
                self.limit.setValue(limit)
        text = f"+ {', '.join(modified)}" if modified else ""
        if text != self.modified.text():
            self.modified.setText(text)
            self.modified.setToolTip(f"Parameters you changed on top of the pipeline's own: "
                                     f"{', '.join(modified)}." if modified else "")

    def add_row(self, widget: QWidget) -> None:
        """Controls at the end of the pipeline's row (the question's scopes and clock)."""
        self._params_row.insertWidget(self._params_row.count() - 1, widget, 100)

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
