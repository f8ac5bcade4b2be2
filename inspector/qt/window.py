"""The main window: panels wired to the view-model, menus, shortcuts, drag and drop,
export and settings. Holds no state of its own beyond the layout."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QGuiApplication,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QMenu,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from superqt import QElidingLabel

from inspector.core.stores.opening import Opened
from inspector.qt import fit, help_menu, shortcuts, theme
from inspector.qt import settings as cfg
from inspector.qt.extensible import ExtensibleWindow
from inspector.qt.flow.flow_mode import FlowMode
from inspector.qt.flow.routing import QueryRouter
from inspector.qt.pipeline.detail import DetailPane
from inspector.qt.pipeline.expected import ExpectedPanel
from inspector.qt.pipeline.funnel import DiagnosisBanner, ErrorBar, FunnelChart
from inspector.qt.pipeline.index_bar import IndexBar
from inspector.qt.pipeline.plots import PlotBox, ScoreScatter
from inspector.qt.pipeline.query_bar import QueryBar
from inspector.qt.pipeline.rank_chart import BumpChart
from inspector.qt.pipeline.sliders import SliderPanel
from inspector.qt.pipeline.stages import StagesPanel
from inspector.qt.shortcuts import ShortcutGuard
from inspector.qt.viewmodel import Inspector
from inspector.qt.window_files import FilesMixin
from inspector.qt.wording import gui_words, plural

SPLITTERS = ("main", "left", "plots", "side")
PLOT_SETTLE_MS = 120  # plots redraw once a slider has rested this long (or at once when shown)
STAGES_MIN_HEIGHT = 200


class MainWindow(FilesMixin, ExtensibleWindow):
    """The pipeline window. Add-ons extend it only through its extension points (see
    qt/extensible.py) and follow the theme through `tokens_changed`."""

    def __init__(self, vm: Inspector | None = None, restore: bool = True,
                 persist: bool = True) -> None:
        """restore: read saved settings; persist: write them (recent stores, layout, the last
        query) as the user works. `inspector shot` does neither."""
        super().__init__()
        self.persist = persist
        pg.setConfigOptions(antialias=True)
        self.vm = vm or Inspector(self)
        self.setWindowTitle("")  # Qt adds the application's display name
        self.setWindowIcon(theme.app_icon())
        self.setAcceptDrops(True)
        self.theme_choice = "system"
        self.tokens = theme.LIGHT
        self._bar_key: Any = None
        self._open_handler = self.choose_store
        self._sliding = False  # inside a slider tick: plots wait until the slider rests
        self._plots_stale: set[PlotBox] = set()
        self._plot_timer = QTimer(self, singleShot=True, interval=PLOT_SETTLE_MS)
        self._plot_timer.timeout.connect(self.flush_plots)
        self._build_panels()
        self._build_layout()
        self._build_menus()
        self._connect()
        self.shortcut_guard = ShortcutGuard(self)
        if restore:
            self._restore_settings()
        self.apply_theme(self.theme_choice)
        self._show_params()
        # add-ons: tuning (sweeps, judgments, compare, map, receipts) and store features
        # (open dialog, recent options, versions, newer-version notice, shape, embedder)
        from inspector.qt.stores.store_features import install_store_features
        from inspector.qt.tuning.tuning_dock import install_tuning

        install_tuning(self)
        self.store_features = install_store_features(self)
        self.flow = FlowMode(self)  # pipelines of stages
        self.index_bar = IndexBar(self.vm, self)
        self.add_notice(self.index_bar)
        self.tokens_changed.connect(self.index_bar.set_tokens)
        self.tab_order = shortcuts.install(self)  # after every panel: the chain reads them all
        docks = cfg.load_state("window/docks") if restore else None
        if docks is not None:  # after the hooks: the docks must exist to take their places
            self.restoreState(docks)

    # ---- construction ----
    def _build_panels(self) -> None:
        vm = self.vm
        self.query_bar = QueryBar(self)
        self.error_bar = ErrorBar(self)
        self.banner = DiagnosisBanner(self)
        self.sliders = SliderPanel(self)
        self.stages = StagesPanel(vm, self)
        self.funnel = FunnelChart(self)
        self.scatter = ScoreScatter(self)
        self.bump = BumpChart(self)
        self.scatter_box, self.bump_box = PlotBox(self.scatter, self), PlotBox(self.bump, self)
        self.stages.setMinimumHeight(STAGES_MIN_HEIGHT)  # a title, a note and a few rows
        self.detail = DetailPane(self)
        # the banner's place is kept while it is hidden: results arriving never push the
        # stages down
        self.banner_slot = QWidget(self, objectName="bannerSlot")
        slot = QVBoxLayout(self.banner_slot)
        slot.setContentsMargins(0, 0, 0, 0)
        slot.addWidget(self.banner)
        self.banner_placeholder = QLabel("The diagnosis of the query appears here.",
                                         objectName="stageNote")
        self.banner_placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        slot.addWidget(self.banner_placeholder)
        line = self.banner.fontMetrics().lineSpacing()
        self.banner_slot.setMinimumHeight(3 * line + 24)  # fix buttons share the title's line
        self.expected = ExpectedPanel(vm, self)
        self.busy_bar = QProgressBar(self, minimum=0, maximum=0)
        self.busy_bar.setFixedWidth(120)
        self.busy_bar.hide()
        self.status_label = QElidingLabel("")  # a long path elides, never widens the window
        self.status_label.setElideMode(Qt.TextElideMode.ElideMiddle)
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.busy_bar)

    def _build_layout(self) -> None:
        self.splitters: dict[str, QSplitter] = {}
        for name, orient in (("main", Qt.Orientation.Horizontal),
                             ("left", Qt.Orientation.Vertical),
                             ("plots", Qt.Orientation.Horizontal),
                             ("side", Qt.Orientation.Vertical)):
            sp = QSplitter(orient, self)
            sp.setObjectName(f"split_{name}")
            sp.setChildrenCollapsible(False)
            self.splitters[name] = sp
        for w in (self.funnel, self.scatter_box, self.bump_box):
            self.splitters["plots"].addWidget(w)
        self.splitters["left"].addWidget(self.stages)
        self.splitters["left"].addWidget(self.splitters["plots"])
        detail_scroll = QScrollArea(self, objectName="detailScroll")
        detail_scroll.setWidgetResizable(True)
        detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        detail_scroll.setWidget(self.detail)  # squeezed, it scrolls: lines never overlap
        self.detail.setMinimumHeight(360)
        self.splitters["side"].addWidget(detail_scroll)
        self.splitters["side"].addWidget(self.expected)
        self.splitters["main"].addWidget(self.splitters["left"])
        self.splitters["main"].addWidget(self.splitters["side"])
        self._default_sizes()
        self.yielding.append(self.splitters["plots"])  # it yields its room to a bottom dock
        central = QWidget(self)
        lay = QVBoxLayout(central)
        lay.setContentsMargins(8, 6, 8, 4)
        lay.setSpacing(6)
        lay.addWidget(self.query_bar)
        lay.addWidget(self.error_bar)
        lay.addLayout(self.notices)
        lay.addWidget(self.banner_slot)
        lay.addWidget(self.sliders)
        lay.addWidget(self.splitters["main"], 1)
        self.setCentralWidget(central)

    def _default_sizes(self) -> None:
        self.splitters["main"].setStretchFactor(0, 4)
        self.splitters["main"].setStretchFactor(1, 1)
        self.splitters["main"].setSizes([1025, 305])  # the stages take the room on a laptop
        self.splitters["left"].setSizes([520, 340])
        self.splitters["plots"].setSizes([260, 380, 420])
        self.splitters["side"].setSizes([520, 220])

    def _build_menus(self) -> None:
        bar = self.menuBar()
        for menu_id, title in (("file", "&File"), ("query", "&Query"), ("view", "&View"),
                               ("help", "&Help")):
            self._menus[menu_id] = bar.addMenu(title)
        add, act = self.add_action, self._action
        add("file", act("&Open store…", lambda: self._open_handler(), ("Ctrl+O",),
                        "Open a LanceDB store folder"), "open")
        self.recent_menu = QMenu("Open &Recent", self)
        add("file", self.recent_menu.menuAction(), "recent")
        add("file", act("Open &demo store", lambda: self.open_store(None)), "demo")
        add("file", act("Load scope &map…", self.choose_scope_map,
                        tip="A JSON file {scope: [repo or path prefix, ...]}"), "scope_map")
        add("file", act("Open &pipeline file…", self.choose_pipeline_file,
                        tip="Run your own pipeline of stages (TOML or JSON), as `inspector "
                            "query --pipeline FILE` runs it"), "pipeline_file")
        self.menu("file").addSeparator()
        add("file", act("&Export trace as JSON…", self.choose_json, ("Ctrl+E",),
                        "The current trace, as `inspector query --json` writes it"),
            "export_json")
        add("file", act("Export stage &tables…", self.choose_tables,
                        tip="Every stage's rows and their fate, and the final list, as CSV "
                            "files in a folder (as `inspector query --export` writes them)"),
            "export_tables")
        add("file", act("Export view as &PNG…", self.choose_png, ("Ctrl+Shift+S",),
                        "A picture of the window"), "export_png")
        self._actions["file_end"] = self.menu("file").addSeparator()
        add("file", act("&Quit", self.close, ("Ctrl+Q",)), "quit")
        add("query", act("&Focus query", self.focus_query, ("Ctrl+L",)), "focus_query")
        add("query", act("&Run again", lambda: self.route.run_again(), ("Ctrl+R", "F5"),
                         "Fetch again from the store"), "run")
        add("query", act("Back to &text query", lambda: self.vm.set_query(self.vm.text, None)),
            "text_query")
        themes = self.menu("view").addMenu("&Theme")
        group = QActionGroup(self)
        self.theme_actions: dict[str, QAction] = {}
        for choice in theme.THEMES:
            t_act = QAction(choice.capitalize(), self, checkable=True)
            t_act.triggered.connect(lambda _=False, c=choice: self.apply_theme(c))
            group.addAction(t_act)
            themes.addAction(t_act)
            self.theme_actions[choice] = t_act
        add("view", act("&Reset layout", self._default_sizes), "reset_layout")
        help_menu.install(self)
        self._fill_recent(cfg.recent_stores())

    def _connect(self) -> None:
        vm, qb = self.vm, self.query_bar
        route = self.route = QueryRouter(self)
        qb.text_submitted.connect(route.text_submitted)
        qb.example_cleared.connect(lambda: vm.set_query(vm.text, None))
        qb.preset_picked.connect(route.preset_picked)
        qb.param_changed.connect(route.param_changed)
        qb.compare_changed.connect(vm.set_compare)
        qb.table_picked.connect(lambda t: vm.open_store(vm.store.uri if vm.store else None, t))
        qb.suggested_picked.connect(vm.load_suggested)
        self.sliders.value_changed.connect(self._slider_moved)
        for box in (self.scatter_box, self.bump_box):
            box.became_visible.connect(self.flush_plots)
        self.banner.fix_applied.connect(vm.set_params)
        self.scatter.point_clicked.connect(vm.select)
        self.bump.point_clicked.connect(vm.select)
        self.error_bar.dismissed.connect(vm.clear_error)
        vm.store_opened.connect(self._store_opened)
        vm.params_changed.connect(lambda _p: self._show_params())
        vm.query_changed.connect(lambda: qb.show_query(vm.text, vm.vector_of))
        vm.trace_changed.connect(self._trace_changed)
        vm.selection_changed.connect(self._selection_changed)
        vm.busy_changed.connect(self._busy_changed)
        vm.error_raised.connect(self._error)
        vm.error_cleared.connect(self.error_bar.hide)
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _s: self.theme_choice == "system" and self.apply_theme("system"))

    # ---- reacting to the view-model ------------------------------------------------------------
    def _show_params(self) -> None:
        vm = self.vm
        key = (vm.params.with_(overfetch=1.0, blend=0.0, min_score=0.0), vm.preset,
               tuple(sorted(vm.given)), vm.compare)
        if key != self._bar_key:  # a slider tick leaves the query bar as it is
            self._bar_key = key
            self.query_bar.show_params(vm.params, vm.preset, vm.given, vm.compare)
        self.sliders.show_params(vm.params)
        self.query_bar.show_modified(vm.preset, vm.given)

    def _store_opened(self, opened: Opened) -> None:
        st = opened.store
        self.query_bar.show_store(opened)
        self._bar_key = None
        self._show_params()
        name = "demo store" if opened.demo else st.display_uri
        self.setWindowTitle(f"{name} ({st.table_name})")  # Qt appends the application name
        self.status_label.setText(f"Opened {name}: table {st.table_name}, {st.rows:,} rows.")
        if not opened.demo and self.persist:
            self._fill_recent(cfg.add_recent(st.uri))

    def _slider_moved(self, key: str, value: float) -> None:
        self._sliding = True
        try:
            self.vm.set_param(key, value)
        finally:
            self._sliding = False

    def _trace_changed(self) -> None:
        vm = self.vm
        named = list(zip(vm.placements, vm.traces, strict=False))
        self.funnel.set_traces(named)
        session = vm.session
        self.banner.set_traces(named, vm.expected, None if session is None else
                               lambda fixes: session.runnable(vm.params, fixes))
        self.banner_placeholder.setVisible(self.banner.isHidden())
        self.detail.show_row(vm.trace, vm.selected)
        self._status()
        self._plots_stale = {self.scatter_box, self.bump_box}
        if self._sliding:  # a drag: tables and counters follow every tick, plots its rests
            self._plot_timer.start()
        else:
            self.flush_plots()
        if getattr(self, "tab_order", None) is not None:
            self.tab_order.apply()  # new lanes or fix buttons join the Tab order

    @property
    def plots_pending(self) -> bool:
        """True while a plot still shows an older trace than the tables (during a drag)."""
        return any(box.isVisible() for box in self._plots_stale)

    def flush_plots(self) -> None:
        """Bring every visible plot up to the current trace now; hidden ones catch up when
        shown. Runs by itself once a slider rests; tests and scripts may call it."""
        self._plot_timer.stop()
        vm = self.vm
        for box in list(self._plots_stale):
            if not box.isVisible():
                continue
            self._plots_stale.discard(box)
            if box is self.scatter_box:
                self.scatter.set_trace(vm.trace, vm.selected, vm.expected)
            else:
                self.bump.set_trace(vm.trace, vm.selected)

    def _status(self) -> None:
        vm = self.vm
        if getattr(self, "flow", None) is not None and self.flow.active:
            self.flow.status()
        elif vm.busy:
            opening = vm.jobs.busy("open")
            again = f"Querying again: {vm.requery_reason}…" if vm.requery_reason else "Working…"
            self.status_label.setText("Opening the store…" if opening else again)
        elif vm.trace is not None:
            c = vm.trace.counters
            self.status_label.setText(
                f"{plural(c['returned'], 'result')} · "
                f"{plural(c['rawCandidates'], 'raw candidate')} · a pool of "
                f"{vm.trace.pool.size} is cached, so the sliders re-rank without a new query")

    def show_loading(self, what: str) -> None:
        """The loading state shown before the store (and the engine) is loaded."""
        self.status_label.setText(f"Opening {what}…")
        self.busy_bar.show()

    def _selection_changed(self, row_id: Any) -> None:
        vm = self.vm
        self._plots_stale = {self.scatter_box, self.bump_box}
        self.flush_plots()
        self.detail.show_row(vm.trace, row_id)

    def _busy_changed(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy)
        self.query_bar.set_busy(busy)
        self._status()

    def _error(self, message: str) -> None:
        message = gui_words(message)
        self.error_bar.show_error(message)
        self.status_label.setText(message)

    # ---- commands ----
    def focus_query(self) -> None:
        self.query_bar.text.setFocus()
        self.query_bar.text.selectAll()

    def apply_theme(self, choice: str) -> None:
        self.theme_choice = choice
        self.theme_actions[choice].setChecked(True)
        app = QApplication.instance()
        tk = theme.apply_theme(app, choice) if app is not None else theme.LIGHT
        self.tokens = tk
        for w in (self.stages, self.scatter_box, self.bump_box, self.detail, self.error_bar):
            w.set_tokens(tk)
        self.funnel.tokens = self.banner.tokens = tk
        self.funnel.update()
        self._trace_changed()
        self.tokens_changed.emit(tk)

    # ---- settings (qt/settings.py: what is kept between sessions) ----
    def _restore_settings(self) -> None:
        cfg.restore_window(self, SPLITTERS)

    def save_settings(self) -> None:
        cfg.save_window(self, SPLITTERS)
        if (why := cfg.refused()) is not None:
            self.status_label.setText(why)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        fit.prepare_docks(self, self.dock_areas)
        fit.make_way(self)  # taller than the screen (notices, a long banner): plots yield

    def event(self, event: QEvent) -> bool:
        done = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest:  # a notice came or went
            fit.make_way(self)
        return done

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.persist:
            self.save_settings()
        super().closeEvent(event)
