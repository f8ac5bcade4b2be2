"""The main window: one view for any pipeline. Panels receive the view-model's question (an
evented model) and its answers: the query bar, the diagnosis banner with its fixes, the index
bar, sliders generated from the stage kinds' declarations, the stages top to bottom, counters
and the plots of the stage a slider drives, the selected row's path and score through every
stage, and the expected rows. Menus, shortcuts, drag and drop, export and settings. Holds no
state of its own beyond the layout."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

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
    QInputDialog,
    QLabel,
    QMenu,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)
from superqt import QElidingLabel
from superqt.utils import qdebounced

from inspector.core.engine.flow.summary import uses_clock
from inspector.core.stores.opening import Opened
from inspector.qt import fit, help_menu, shortcuts, theme
from inspector.qt import settings as cfg
from inspector.qt.extensible import ExtensibleWindow
from inspector.qt.pipeline.banner import CountersChart, DiagnosisBanner, ErrorBar
from inspector.qt.pipeline.detail import DetailPane
from inspector.qt.pipeline.expected import ExpectedPanel
from inspector.qt.pipeline.index_bar import IndexBar
from inspector.qt.pipeline.plot_box import BUMP, SCATTER, PlotBox, plotted_stage
from inspector.qt.pipeline.query_bar import FILE_ITEM, QueryBar
from inspector.qt.pipeline.question_bar import QuestionBar
from inspector.qt.pipeline.sliders import FlowSliders
from inspector.qt.pipeline.stage_list import FlowStagesPanel
from inspector.qt.shortcuts import ShortcutGuard
from inspector.qt.viewmodel import Inspector, scored
from inspector.qt.window_files import FilesMixin
from inspector.qt.wording import gui_words, plural

if TYPE_CHECKING:
    from inspector.qt.pipeline.plots import ScoreScatter
    from inspector.qt.pipeline.rank_chart import BumpChart

SPLITTERS = ("main", "left", "plots", "side")
RERANK_BUSY_MS = 300  # a re-rank shows the busy bar only once it has taken this long
PLOT_SETTLE_MS = 120  # plots redraw once a slider has rested this long (or at once when shown)
PLOTS_LATEST_MS = 1000  # the plots are built this long after the first results at the latest
STAGES_MIN_HEIGHT = 190
PIPELINE_FIELDS = frozenset({"preset", "pipeline_file", "system_config", "columns"})


class MainWindow(FilesMixin, ExtensibleWindow):
    """The pipeline window. Add-ons extend it only through its extension points (see
    qt/extensible.py) and follow the theme through `tokens_changed`."""

    def __init__(self, vm: Inspector | None = None, restore: bool = True,
                 persist: bool = True) -> None:
        """restore: read saved settings; persist: write them (recent stores, layout, the last
        query) as the user works. `inspector shot` does neither."""
        super().__init__()
        self.persist = persist
        self.vm = vm or Inspector(self)
        self.setWindowTitle("")  # Qt adds the application's display name
        self.setWindowIcon(theme.app_icon())
        self.setAcceptDrops(True)
        self.theme_choice = "system"
        self.tokens = theme.LIGHT
        self._answered: tuple[Any, ...] | None = None  # what the banner and bars tell now
        # the stage list's shape (pipeline, route, stages) and the banner's fix buttons when
        # the plots were last fitted and the Tab order last asked for: a re-rank's tick that
        # keeps both changes no widget of either (a banner or index bar that grows or shrinks
        # lays the window out, and its LayoutRequest fits the plots: event())
        self._fitted_shape: tuple[Any, ...] | None = None
        self._ordered_fixes: list[Any] | None = None
        self._reranks = 0  # re-ranks that made the window busy (a slow one shows the bar)
        self._open_handler = self.choose_store
        self._plots_stale: set[PlotBox] = set()
        self._plots_after_paint = False  # the first results came: build on the next paint
        self._plots_later = qdebounced(self.flush_plots, timeout=PLOT_SETTLE_MS)
        self._fit_later = qdebounced(self._fit_plots, timeout=0)
        self._slider_pipeline: Any = None
        self.last_file: str | None = None  # the pipeline file loaded last (File menu, shot)
        self._build_panels()
        self._build_layout()
        self._build_menus()
        self._connect()
        self.shortcut_guard = ShortcutGuard(self)
        if restore:
            self._restore_settings()
        self.apply_theme(self.theme_choice)
        self._question_changed(None)
        # add-ons: tuning (sweeps, judgments, compare, map, receipts) and store features
        # (open dialog, recent options, versions, newer-version notice, shape, embedder)
        from inspector.qt.stores.store_features import install_store_features
        from inspector.qt.tuning.tuning_dock import install_tuning

        install_tuning(self)
        self.store_features = install_store_features(self)
        self.tab_order = shortcuts.install(self)  # after every panel: the chain reads them all
        docks = cfg.load_state("window/docks") if restore else None
        if docks is not None:  # after the hooks: the docks must exist to take their places
            self.restoreState(docks)

    # ---- construction ----
    def _build_panels(self) -> None:
        self.query_bar = QueryBar(self)
        self.question_bar = QuestionBar(self)
        self.query_bar.add_row(self.question_bar)
        self.error_bar = ErrorBar(self)
        self.banner = DiagnosisBanner(self)
        self.index_bar = IndexBar(self)
        self.sliders = FlowSliders(self)
        self.stages = FlowStagesPanel(self)
        self.stages.setMinimumHeight(STAGES_MIN_HEIGHT)
        self.funnel = CountersChart(self)
        # the plots' boxes hold stand-ins until the first results are on screen: pyqtgraph
        # and the plots are built then (ensure_plots), off the launch's way to them
        self.scatter_box, self.bump_box = PlotBox(SCATTER, self), PlotBox(BUMP, self)
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
        self.banner_slot.setMinimumHeight(3 * line + 14)
        self.expected = ExpectedPanel(self)
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
        self.detail_scroll = QScrollArea(self, objectName="detailScroll")
        self.detail_scroll.setWidgetResizable(True)
        self.detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_scroll.setWidget(self.detail)  # squeezed, it scrolls: lines never overlap
        self.detail.setMinimumHeight(240)  # squeezed further, it scrolls
        self.splitters["side"].addWidget(self.detail_scroll)
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
        lay.addWidget(self.index_bar)
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
        add("file", act("&Export answer as JSON…", self.choose_json, ("Ctrl+E",),
                        "The answer on screen, as `inspector query --json` writes it"),
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
        add("query", act("&Run again", self.vm.run_again, ("Ctrl+R", "F5"),
                         "Search the store again for the same question"), "run")
        add("query", act("Back to &text query", lambda: self.vm.put(vector_of=None)),
            "text_query")
        add("query", act("Query by a row's &id…", self.ask_example_row,
                         tip="Search with a stored row's vector (query by example)"),
            "example_row")
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
        qb.text_submitted.connect(self._submit)
        qb.example_cleared.connect(lambda: vm.put(vector_of=None))
        qb.preset_picked.connect(self._preset_picked)
        qb.limit_changed.connect(lambda n: vm.put(limit=n))
        qb.table_picked.connect(lambda t: vm.open_store(None if vm.opened and vm.opened.demo
                                                        else vm.store.uri, t))
        qb.suggested_picked.connect(vm.load_suggested)
        self.question_bar.edited.connect(lambda fields: vm.put(**fields))
        self.question_bar.failed.connect(self._error)
        self.sliders.value_changed.connect(self._slider_moved)
        self.sliders.next_expected.connect(vm.answer_ahead)
        self.sliders.chosen_changed.connect(self._save_chosen)
        for box in (self.scatter_box, self.bump_box):
            box.became_visible.connect(self._catch_up_plots)
        self.banner.fix_applied.connect(vm.apply_change)
        self.banner.what_if_cleared.connect(vm.clear_what_ifs)
        self.index_bar.param_set.connect(lambda k, v: vm.set_param(k, v))
        self.index_bar.exact_set.connect(lambda on: vm.put(exact=on))
        self.index_bar.fix_applied.connect(vm.apply_change)
        self.expected.edited.connect(vm.set_expected)
        self.expected.change_applied.connect(vm.apply_change)
        self.stages.row_picked.connect(vm.select)
        self.stages.row_action.connect(self._row_action)
        self.error_bar.dismissed.connect(vm.clear_error)
        vm.question.events.connect(self._question_changed)
        vm.store_opened.connect(self._store_opened)
        vm.trace_changed.connect(self._trace_changed)
        vm.answer_changed.connect(self._answer_changed)
        vm.selection_changed.connect(self._selection_changed)
        vm.busy_changed.connect(self._busy_changed)
        vm.error_raised.connect(self._error)
        vm.error_cleared.connect(self.error_bar.hide)
        vm.notice_raised.connect(self._notice)
        vm.jobs.channel_changed.connect(self._channel)
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _s: self.theme_choice == "system" and self.apply_theme("system"))

    # ---- from the user ----
    def _submit(self, text: str) -> None:
        self.vm.set_query(text, **self.question_bar.take())

    def _preset_picked(self, name: str) -> None:
        if name == FILE_ITEM:  # the pipeline file loaded last, picked again
            if self.vm.question.pipeline_file is None and self.last_file is not None:
                self.open_pipeline_file(self.last_file)
            return
        self.store_features.preset_chosen(name)
        self.vm.set_preset(name)

    def _slider_moved(self, key: str, value: float) -> None:
        self.vm.drive(key)
        self.vm.set_param(key, value)

    def _row_action(self, action: str, rid: Any) -> None:
        vm = self.vm
        if action == "use_as_query":
            vm.use_as_query(rid)
        elif action == "expect":
            vm.toggle_expected(rid)
        elif action in ("copy_id", "copy_text"):
            row = scored(vm.trace, str(rid))
            text = str(rid) if action == "copy_id" else (row.row.text if row else "")
            QGuiApplication.clipboard().setText(text)

    def ask_example_row(self) -> None:
        rid, ok = QInputDialog.getText(self, "Query by example", "The id of a stored row:")
        if ok and rid.strip():
            self.vm.use_as_query(rid.strip())

    # ---- reacting to the question ----
    def _question_changed(self, info: Any) -> None:
        """A field of the question changed: the bars show it; another pipeline gets its
        sliders; the sliders follow the question's values (never echoing a moved one)."""
        name = info.signal.name if info is not None else None
        vm, q = self.vm, self.vm.question
        spec = vm.spec()
        if name is None or name in PIPELINE_FIELDS or name in ("set", "limit"):
            if spec is not None:
                lo, hi = spec.limit.min, spec.limit.max
                limit = q.limit if q.limit is not None else spec.limit.default
                label = f"{spec.name} (file)" if q.pipeline_file is not None else None
                self.query_bar.show_pipeline(q.preset, label, lo, hi,
                                             max(lo, min(hi, limit)), sorted(q.set))
        if name is None or name in PIPELINE_FIELDS:
            self._rebuild_sliders(spec)
        elif name == "set":
            self.sliders.show_values(vm.current)
        if name in (None, "text", "vector_of"):
            self.query_bar.show_query(q.text or "", q.vector_of)
        self.question_bar.show_question(q, spec is not None and uses_clock(spec))

    def _rebuild_sliders(self, spec: Any) -> None:
        from inspector.core.engine.flow.live import live_params

        key = (spec.name, spec.path) if spec is not None else None
        if key == self._slider_pipeline:
            self.sliders.show_values(self.vm.current)
            return
        self._slider_pipeline = key
        self.sliders.set_params(live_params(spec) if spec is not None else [],
                                self._load_chosen(spec.name) if spec is not None else None,
                                self.vm.current)

    # ---- reacting to the answer ----
    def _store_opened(self, opened: Opened) -> None:
        st = opened.store
        self.stages.forget()
        self.query_bar.show_store(opened)
        name = "demo store" if opened.demo else st.display_uri
        self.setWindowTitle(f"{name} ({st.table_name})")  # Qt appends the application name
        self.status_label.setText(f"Opened {name}: table {st.table_name}, {st.rows:,} rows.")
        if not opened.demo and self.persist:
            self._fill_recent(cfg.add_recent(st.uri))

    def _trace_changed(self) -> None:
        vm = self.vm
        t = vm.trace
        head = self._headline()
        self.stages.show_trace(t, list(vm.question.expect), vm.selected, head)
        self.funnel.set_trace(t)
        self.sliders.show_values(vm.current)
        self._answer_changed()
        self.detail.show_row(t, vm.selected, scored(t, vm.selected))
        self._status()
        shape = None if t is None else (t.spec.name, t.route, len(t.stages))
        if not (vm.reranked and shape == self._fitted_shape):
            self._fit_later()
        self._fitted_shape = shape
        self._plots_stale = {self.scatter_box, self.bump_box}
        if not self.plots_built:  # built once these results are painted: ensure_plots
            if t is not None:
                for box in (self.scatter_box, self.bump_box):
                    box.stand_in.set_text("")  # no "Run a query" beside its results
                self._build_plots_after_paint()
        elif self.vm.reranked:  # a tick: tables and counters follow each, the plots its rests
            self._plots_later()
        else:
            self.flush_plots()

    def _answer_changed(self) -> None:
        vm = self.vm
        finding = vm.finding
        shown = (vm.trace, vm.answer, tuple(vm.question.expect), finding,
                 tuple(sorted(vm.question.set.items(), key=lambda kv: kv[0])),
                 getattr(vm.store, "vector_index", None), self.tokens)
        if self._answered is not None and len(shown) == len(self._answered) and all(
                a is b or (type(a) is tuple and a == b) for a, b in zip(shown, self._answered,
                                                                          strict=True)):
            return  # told already (a tick's answer is told by its trace, then its signal)
        self._answered = shown
        self.banner.show_answer(vm.trace, vm.answer, list(vm.question.expect), finding,
                                dict(vm.question.set))
        self.banner_placeholder.setVisible(self.banner.isHidden())
        index = getattr(vm.store, "vector_index", None) if vm.store is not None else None
        self.index_bar.show_answer(vm.trace, vm.answer, index, finding)
        self.expected.show_expected(list(vm.question.expect),
                                    vm.answer.expected if vm.answer is not None else None,
                                    finding)
        if not vm.reranked:  # the banner and the index bar may have taken room
            self._fit_later()
        fixes = self.banner.buttons
        if getattr(self, "tab_order", None) is not None and (
                not vm.reranked or fixes is not self._ordered_fixes):
            self.tab_order.later()  # fix buttons join the Tab order (after the paint)
        self._ordered_fixes = fixes

    def _channel(self, channel: str, busy: bool) -> None:
        if channel == "full" and not busy:
            return  # its answer (or its failure) says so
        if channel == "full":
            self._answer_changed()

    def _headline(self) -> str:
        vm, t = self.vm, self.vm.trace
        if t is None:
            if vm.jobs.busy("answer"):
                return "Searching…"
            return "Type a query and press Enter." if vm.store is not None else ""
        return (f"{t.spec.name} · route {t.route} · {len(t.stages)} stages · "
                f"{plural(len(t.final.rows), 'result')} of limit {t.limit}")

    def _fit_plots(self) -> None:
        """The plots give their room to the stage list where it could not show every stage's
        header and the open stage's rows beside them (a long pipeline on a laptop screen),
        and come back when there is room; a dock that took their room keeps it."""
        plots, left = self.splitters["plots"], self.splitters["left"]
        secs = self.stages.visible_sections()
        crowded = False
        if secs:
            head = secs[0].toggle.sizeHint().height() + 2
            table = secs[0].table.minimumHeight()
            need = len(secs) * head + table + self.stages.headline.sizeHint().height() + 12
            # never less than the list's own least height: the splitter keeps it, and short
            # of room for both lays the list over the plots (1 stage and a tall banner)
            need = max(need, self.stages.minimumSizeHint().expandedTo(
                self.stages.minimumSize()).height())
            room = left.height() - left.handleWidth()
            least = plots.minimumSizeHint().height()
            crowded = room - need < least
            both = need + table  # the stage that matters and the final list open
            if not crowded and plots.isVisible() and self.stages.height() < both \
                    and room - both >= least:
                left.setSizes([both, room - both])
        else:  # no stages yet: the plots only where they keep their least height below
            # the list's least (short of it, the splitter laid the list over their titles)
            room = left.height() - left.handleWidth()
            least = self.stages.minimumSizeHint().expandedTo(self.stages.minimumSize())
            crowded = room - least.height() < plots.minimumSizeHint().height()
        if crowded != bool(plots.property("crowded")):
            plots.setProperty("crowded", crowded)
            if not plots.property("yielded"):
                plots.setVisible(not crowded)
        # the dock rule decided again for the window as the answer laid it out (a banner
        # with its fixes is taller than none): Ctrl+T docks it where it fits
        fit.prepare_docks(self, self.dock_areas)

    # ---- the plots: built after the first results are on screen ----
    @property
    def plots_built(self) -> bool:
        return self.scatter_box.plot is not None

    @property
    def scatter(self) -> ScoreScatter:
        """The score plot (built first if it is not yet: ensure_plots)."""
        self.ensure_plots()
        return self.scatter_box.plot

    @property
    def bump(self) -> BumpChart:
        """The rank-shift chart (built first if it is not yet: ensure_plots)."""
        self.ensure_plots()
        return self.bump_box.plot

    def ensure_plots(self) -> None:
        """Build the two plots in their boxes (once), showing the run on screen. The launch
        leaves them to the turn after its first results are painted (pyqtgraph alone imports
        in ~0.1 s); whatever reaches into them sooner (`scatter`, `bump`, `flush_plots`, a
        shot, the visual checks) builds them here first."""
        if self.plots_built:
            return
        from inspector.qt.pipeline.plots import ScoreScatter
        from inspector.qt.pipeline.rank_chart import BumpChart

        self._plots_after_paint = False
        for box, plot in ((self.scatter_box, ScoreScatter(self)),
                          (self.bump_box, BumpChart(self))):
            box.set_plot(plot)
            plot.point_clicked.connect(self.vm.select)
        self._plots_stale = {self.scatter_box, self.bump_box}
        self.flush_plots()
        if getattr(self, "tab_order", None) is not None:
            self.tab_order.apply()  # the plots join the Tab order

    def _build_plots_after_paint(self) -> None:
        """Build the plots on the turn after the window's next paint (the first results'),
        or after PLOTS_LATEST_MS if it does not paint (hidden)."""
        if not self._plots_after_paint:
            self._plots_after_paint = True
            QTimer.singleShot(PLOTS_LATEST_MS, self, self.ensure_plots)

    def _import_plots(self) -> None:
        """pyqtgraph and the plots' modules on one turn of the event loop (~0.1 s), the plots
        built on the next (the window repaints and takes input between)."""
        if not self.plots_built:
            import inspector.qt.pipeline.plots  # noqa: F401 - pyqtgraph with it
            import inspector.qt.pipeline.rank_chart  # noqa: F401

            QTimer.singleShot(0, self, self.ensure_plots)

    def _catch_up_plots(self) -> None:
        """A plot became visible: it catches up with the run on screen, if built."""
        if self.plots_built:
            self.flush_plots()

    @property
    def plots_pending(self) -> bool:
        """True while a plot still shows an older run than the tables (during a drag)."""
        return any(box.isVisible() for box in self._plots_stale)

    def flush_plots(self) -> None:
        """Bring every visible plot up to the run on screen now; hidden ones catch up when
        shown. Runs by itself once a slider rests; tests and scripts may call it (it builds
        the plots first if they are not yet: ensure_plots)."""
        self._plots_later.cancel()
        if not self.plots_built:
            self.ensure_plots()  # which brings them up to the run on screen
            return
        vm = self.vm
        stage = plotted_stage(vm.trace, vm.driven, vm.question.expect) \
            if vm.trace is not None else None
        for box in list(self._plots_stale):
            if not box.isVisible():
                continue
            self._plots_stale.discard(box)
            if box is self.scatter_box:
                self.scatter.set_trace(vm.trace, stage, vm.selected, list(vm.question.expect))
            else:
                self.bump.set_trace(vm.trace, stage, vm.selected)

    def _status(self) -> None:
        vm, t = self.vm, self.vm.trace
        if vm.busy:
            self.status_label.setText("Opening the store…" if vm.jobs.busy("open") else
                                      "Working…")
        elif t is not None:
            legs = sum(1 for st in t.stages if st.role == "fetch")
            self.status_label.setText(
                f"{plural(len(t.final.rows), 'result')} · {plural(len(t.stages), 'stage')} · "
                f"{plural(legs, 'leg')} cached, so the sliders re-rank without a new search")

    def show_loading(self, what: str) -> None:
        """The loading state shown before the store (and the engine) is loaded."""
        self.status_label.setText(f"Opening {what}…")
        self.busy_bar.show()

    def _selection_changed(self, row_id: Any) -> None:
        vm = self.vm
        self.stages.show_selected(row_id)
        self._plots_stale = {self.scatter_box, self.bump_box}
        self._catch_up_plots()
        self.detail.show_row(vm.trace, row_id, scored(vm.trace, row_id))

    def _busy_changed(self, busy: bool) -> None:
        if busy and self.vm.reranking:
            # a re-rank of the cached fetches (a tick, a few ms): the busy bar and "Working…"
            # only if it is still running after RERANK_BUSY_MS (a flash re-lays out the
            # window, on every tick)
            self._reranks += 1
            QTimer.singleShot(RERANK_BUSY_MS, self,  # not after the window is gone
                              lambda n=self._reranks: self._slow_rerank(n))
            return
        self.busy_bar.setVisible(busy)
        self.query_bar.set_busy(busy and not self.vm.reranking)
        if self.vm.trace is None:
            self.stages.headline.setText(self._headline())
        self._status()

    def _slow_rerank(self, n: int) -> None:
        if n == self._reranks and self.vm.busy and self.vm.reranking:
            self.busy_bar.setVisible(True)
            self._status()

    def _error(self, message: str) -> None:
        message = gui_words(message)
        self.error_bar.show_error(message, self._routes(message))
        self.status_label.setText(message)

    def _routes(self, message: str) -> tuple[tuple[str, Any], ...]:
        """Where a query cannot be embedded, the routes that need no embedder."""
        low = message.lower()
        if "embed" not in low:
            return ()
        routes: list[tuple[str, Any]] = [
            ("Query vector from a file…", self.question_bar.choose_vector),
            ("Query by a row's id…", self.ask_example_row)]
        fts = self._fts_setting()
        if fts is not None:
            routes.append(("Full-text search", lambda k=fts: self.vm.set_param(k, "fts")))
        return tuple(routes)

    def _fts_setting(self) -> str | None:
        """The STAGE.mode that turns this pipeline's search into a full-text one, if any."""
        from inspector.core.engine.flow.registry import kind_of

        spec = self.vm.spec()
        for route in spec.routes if spec is not None else ():
            for st in route.stages:
                for d in kind_of(st.kind).params:
                    if d.name == "mode" and "fts" in d.choices:
                        return f"{st.name}.mode"
        return None

    def _notice(self, line: str) -> None:
        self.status_label.setText(line)
        self.error_bar.show_error(line)

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
        for w in (self.stages, self.scatter_box, self.bump_box, self.detail, self.error_bar,
                  self.banner, self.index_bar):
            w.set_tokens(tk)
        self.funnel.tokens = tk
        self.funnel.update()
        self._trace_changed()
        self.tokens_changed.emit(tk)

    # ---- the sliders the user chose, per pipeline ----
    def _load_chosen(self, name: str) -> list[str] | None:
        raw = cfg.load_state(f"flow/sliders/{name}")
        try:
            got = json.loads(str(raw)) if raw is not None else None
        except ValueError:
            return None
        return got if isinstance(got, list) else None

    def _save_chosen(self, keys: list[str]) -> None:
        spec = self.vm.spec()
        if spec is not None and self.persist:
            cfg.save_state(f"flow/sliders/{spec.name}", json.dumps(keys))

    # ---- settings (qt/settings.py: what is kept between sessions) ----
    def _restore_settings(self) -> None:
        cfg.restore_window(self, SPLITTERS)

    def save_settings(self) -> None:
        cfg.save_window(self, SPLITTERS)
        if (why := cfg.refused()) is not None:
            self.status_label.setText(why)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        fit.prepare_docks(self, self.dock_areas)
        fit.make_way(self)  # taller than the screen (notices, a long banner): plots yield
        self._fit_later()  # once the splitters have their new sizes

    def event(self, event: QEvent) -> bool:
        done = super().event(event)
        if event.type() == QEvent.Type.UpdateRequest and getattr(self, "_plots_after_paint", False):
            # the first results have just been painted: the plots come on the next turns
            self._plots_after_paint = False
            QTimer.singleShot(0, self, self._import_plots)
        elif event.type() == QEvent.Type.LayoutRequest:  # a notice, the index bar came or went
            fit.make_way(self)
            if hasattr(self, "_fit_later"):
                self._fit_later()
        return done

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if self.persist:
            self.save_settings()
        super().closeEvent(event)
