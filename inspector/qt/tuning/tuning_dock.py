"""Tuning and evidence in the window: one dock (Sweep, Judgments, Compare, Map, Index, Audit
tabs), the Tuning menu, File > Export/Open receipt and judgment marks in the stage tables.
Every panel reads the view-model's question (`vm.question`) and the open store, and runs the
core's analyses in worker jobs. `install_tuning(window)` is the window's only hook into it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFrame,
    QScrollArea,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.qt import fit, theme
from inspector.qt.tuning.judgments_panel import JudgmentsPanel
from inspector.qt.tuning.receipts import Receipts
from inspector.qt.wording import show_value

if TYPE_CHECKING:
    from inspector.qt.tuning.audit_tab import AuditPanel
    from inspector.qt.tuning.compare_view import CompareView
    from inspector.qt.tuning.index_sweep_view import IndexSweepView
    from inspector.qt.tuning.poolmap_view import PoolMapView
    from inspector.qt.tuning.sweep_tab import SweepPanel

TABS = ("sweep", "judgments", "compare", "map", "index", "audit")
TITLES = {"sweep": "Sweep", "judgments": "Judgments", "compare": "Compare", "map": "Map",
          "index": "Index", "audit": "Audit"}


def panel_class(name: str) -> Any:
    """The class of the named tab's panel, its module imported when the panel is first built:
    the sweep's and the map's modules import pyqtgraph, which the launch leaves until its
    first results are on screen."""
    if name == "sweep":
        from inspector.qt.tuning.sweep_tab import SweepPanel
        return SweepPanel
    if name == "judgments":
        return JudgmentsPanel
    if name == "compare":
        from inspector.qt.tuning.compare_view import CompareView
        return CompareView
    if name == "map":
        from inspector.qt.tuning.poolmap_view import PoolMapView
        return PoolMapView
    if name == "index":
        from inspector.qt.tuning.index_sweep_view import IndexSweepView
        return IndexSweepView
    if name == "audit":
        from inspector.qt.tuning.audit_tab import AuditPanel
        return AuditPanel
    raise KeyError(name)


class _Tab(QWidget):
    """A tab's page; its panel is built into it when the page is first shown (the sweep and
    map panels hold several plots, and most sessions never open the dock)."""

    def __init__(self, build: Any) -> None:
        super().__init__()
        self._build = build
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._build()


class TuningDock(QDockWidget):
    """The dock and its panels; follows the window's theme. The Judgments panel (it holds
    the marks the stage tables show) is built with the dock; the others when their tab is
    first shown or first asked for (`dock.sweep` builds it)."""

    def __init__(self, window: Any) -> None:
        super().__init__("Tuning and evidence", window)
        self.setObjectName("tuningDock")
        self.window_ = window
        self._built: dict[str, QWidget] = {}
        self._tokens: theme.Tokens | None = None
        self.query_set: tuple[Any, str] = (None, "")
        self.tabs = QTabWidget(self, objectName="tuningTabs")
        for name in TABS:
            self.tabs.addTab(_Tab(lambda n=name: self.panel(n)), TITLES[name])
        self.panel("judgments")
        body = QWidget(self)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.tabs, 1)
        # docked in what the stages leave (fit.py), the dock scrolls where a tab needs more:
        # its content never grows the window
        scroll = QScrollArea(self, objectName="tuningScroll", widgetResizable=True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        self.setWidget(scroll)

    # ---- panels, built on demand ----
    def built(self, name: str) -> Any | None:
        """The panel if it exists, without building it."""
        return self._built.get(name)

    def panel(self, name: str) -> Any:
        """The panel, built (in its tab) if it is not yet."""
        if name in self._built:
            return self._built[name]
        panel = self._build(name)
        self.tabs.widget(TABS.index(name)).layout().addWidget(panel)
        return panel

    def _build(self, name: str) -> QWidget:
        panel: Any = panel_class(name)(self.window_.vm, self)
        self._built[name] = panel
        if name == "sweep":
            panel.grades = self.judgments.grade_pairs
            if self.query_set[0] is not None:
                panel.set_query_set(*self.query_set)
            panel.cell_applied.connect(
                lambda cell: self.window_.status_label.setText(
                    "Applied the sweep cell " + ", ".join(
                        f"{k}={show_value(v)}" for k, v in cell.items()) + "."))
        if self._tokens is not None and hasattr(panel, "set_tokens"):
            panel.set_tokens(self._tokens)
        return panel

    @property
    def sweep(self) -> SweepPanel:
        return self.panel("sweep")

    @property
    def judgments(self) -> JudgmentsPanel:
        return self._built["judgments"]

    @property
    def compare(self) -> CompareView:
        return self.panel("compare")

    @property
    def map(self) -> PoolMapView:
        return self.panel("map")

    @property
    def index(self) -> IndexSweepView:
        return self.panel("index")

    @property
    def audit(self) -> AuditPanel:
        return self.panel("audit")

    def set_query_set(self, judgments: Any, name: str) -> None:
        """Judgments loaded in the Judgments tab become the sweep's query set."""
        self.query_set = (judgments, name)
        if (sweep := self.built("sweep")) is not None:
            sweep.set_query_set(judgments, name)

    # ---- window-wide state ----
    def show_tab(self, name: str) -> None:
        """Show the dock on this tab; where it goes (docked or floating) is the window's one
        dock rule (inspector/qt/fit.py), applied as it becomes visible."""
        self.panel(name)
        fit.show_dock(self.window_, self)
        self.tabs.setCurrentIndex(TABS.index(name))

    def setVisible(self, visible: bool) -> None:  # noqa: N802 - Qt's name
        """Shown (by show_tab, its toggle action, Ctrl+T): the room the dock rule gave it is
        made before it appears (the plots yield first), so the window never grows."""
        if visible and self.isHidden() and self in getattr(self.window_, "dock_areas", {}):
            fit.make_way(self.window_, showing=self)
        super().setVisible(visible)

    def apply_tokens(self, tk: theme.Tokens) -> None:
        self._tokens = tk
        for panel in self._built.values():
            if hasattr(panel, "set_tokens"):
                panel.set_tokens(tk)


class StageMarks:
    """Keeps every stage table's judgment marks and context-menu entries in step."""

    def __init__(self, window: Any, panel: JudgmentsPanel) -> None:
        self.window, self.panel = window, panel
        self._hooked: set[int] = set()
        self._marks: dict[str, str] = {}
        window.vm.trace_changed.connect(self.update)
        panel.judgments_changed.connect(self.update)
        window.stages.menu_opening.connect(self.panel.add_menu_actions)

    def update(self) -> None:
        marks = self.panel.marks()
        changed = marks != self._marks
        self._marks = marks
        for sec in self.window.stages.sections:
            if changed or sec.model.marks != marks:
                sec.model.marks = marks
                sec.model.layoutChanged.emit()


def _menus(window: Any, dock: TuningDock, receipts: Receipts) -> None:
    def action(text: str, slot: Any, keys: tuple[str, ...] = (), tip: str = "") -> QAction:
        act = QAction(text, window)
        if keys:
            act.setShortcuts([QKeySequence(k) for k in keys])
        act.setStatusTip(tip)
        act.setToolTip(tip)
        act.triggered.connect(slot)
        window.addAction(act)
        return act

    for act_id, act in (("export_receipt", action(
            "Export &receipt…", receipts.choose_export, (),
            "Write the receipt (JSON + self-contained HTML) of this question")),
                        ("open_receipt", action(
            "Open rece&ipt…", receipts.choose_open, (),
            "Ask a receipt's question again on the open store, as of its recorded version"))):
        window.add_action("file", act, act_id, before="file_end")
    menu = window.add_menu("tuning", "&Tuning", before="help")
    window.add_action("tuning", fit.toggle_action(window, dock, "Tuning &panel", "Ctrl+T"),
                      "tuning_panel")
    menu.addAction(action("Run &sweep", lambda: (dock.show_tab("sweep"), dock.sweep.run()),
                          ("Ctrl+Shift+W",), "Sweep the pipeline's parameters for this query"))
    menu.addAction(action("&Compare side by side", lambda: dock.show_tab("compare")))
    menu.addAction(action("Pool &map", lambda: dock.show_tab("map")))
    menu.addAction(action("&Audit the store", lambda: dock.show_tab("audit"), (),
                          "Which memories are never recalled; which scopes leak or starve"))
    judge = menu.addMenu("&Judge selected row")
    for g in (1, 2, 3):
        judge.addAction(action(f"Relevant, grade {g}",
                               lambda _=False, g=g: dock.judgments.mark_selected(g),
                               (f"Ctrl+{g}",)))
    judge.addAction(action("Not relevant", lambda: dock.judgments.mark_selected(0),
                           ("Ctrl+0",)))
    judge.addAction(action("Clear judgment", lambda: dock.judgments.mark_selected(None)))
    menu.addAction(action("&Judgments…", lambda: dock.show_tab("judgments")))


def install_tuning(window: Any) -> TuningDock:
    """Add the tuning dock, its menus and receipts to a MainWindow (called once, at the end
    of its constructor)."""
    dock = TuningDock(window)
    dock.setObjectName("tuningDock")  # saveState/restoreState find docks by name
    window.add_dock(dock, Qt.DockWidgetArea.BottomDockWidgetArea)
    dock.hide()
    receipts = Receipts(window, dock)
    window.tuning_dock, window.tuning_receipts = dock, receipts
    window.tuning_marks = StageMarks(window, dock.judgments)
    dock.judgments.judgments_loaded.connect(
        lambda name: dock.set_query_set(dock.judgments.judgments, name))
    _menus(window, dock, receipts)
    dock.apply_tokens(window.tokens)
    window.tokens_changed.connect(dock.apply_tokens)
    return dock
