"""The window in pipeline-of-stages mode: when the chosen preset is a pipeline of stages, its
stages, sliders, scopes and clock replace the fixed pipeline's four panels and three sliders.
Installed once by the window; the fixed presets keep their LiveSession and panels."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QScrollArea, QStackedWidget

from inspector.core.engine.flow.diagnosis import diagnose
from inspector.core.errors import InspectorError
from inspector.qt import fit
from inspector.qt import settings as cfg
from inspector.qt.flow.flow_bar import FlowBar
from inspector.qt.flow.flow_detail import FlowDetail
from inspector.qt.flow.flow_sliders import FlowSliders
from inspector.qt.flow.session import CHANNEL, FlowSession, flow_presets, preset_spec
from inspector.qt.flow.stage_list import FlowStagesPanel
from inspector.qt.pipeline.query_bar import FILE_ITEM
from inspector.qt.wording import plural

RERANK_BUSY_MS = 300  # a slider's re-rank shows the busy state only when it takes this long


class FlowMode:
    """Owns the flow session and its panels, and switches the window in and out of them."""

    def __init__(self, win: Any) -> None:
        self.win = win
        vm = win.vm
        self.session = FlowSession(vm.jobs, win)
        self.bar = FlowBar(win)
        self.sliders = FlowSliders(win)
        self.panel = FlowStagesPanel(win)
        self.detail = FlowDetail(win)
        self._fixed_layout: dict[str, bool] = {}
        self.busy_shown = False  # the busy bar and "Running…" are on for this view's job
        self._busy_timer = QTimer(win, singleShot=True, interval=RERANK_BUSY_MS)
        self._busy_timer.timeout.connect(lambda: self._show_busy(self.session.busy))
        self.last_file: str | None = None  # the pipeline file loaded last (File menu, shot)
        win.query_bar.add_row(self.bar)
        win.query_bar.add_presets(flow_presets(), {n: preset_spec(n).title
                                                   for n in flow_presets()})
        central = win.centralWidget().layout()
        central.insertWidget(central.indexOf(win.sliders) + 1, self.sliders)
        left = win.splitters["left"]
        self.stack = QStackedWidget(win)
        self.stack.setObjectName("stagesStack")
        left.replaceWidget(left.indexOf(win.stages), self.stack)
        self.stack.addWidget(win.stages)
        self.stack.addWidget(self.panel)
        self.detail_scroll = QScrollArea(win, objectName="flowDetailScroll")
        self.detail_scroll.setWidgetResizable(True)
        self.detail_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_scroll.setWidget(self.detail)
        win.splitters["side"].addWidget(self.detail_scroll)
        for w in (self.bar, self.sliders, self.detail_scroll):
            w.hide()
        self._connect()

    @property
    def active(self) -> bool:
        return self.session.active

    def _connect(self) -> None:
        s, win = self.session, self.win
        self.bar.scopes_entered.connect(lambda v: self._with_text(s.set_scopes, v))
        self.bar.now_entered.connect(lambda v: self._with_text(s.set_now, v))
        self.bar.vector_entered.connect(self._vector)
        self.bar.expected_entered.connect(s.set_expected)
        self.bar.failed.connect(win._error)
        self.sliders.value_changed.connect(s.set_param)
        self.sliders.chosen_changed.connect(self._save_chosen)
        self.panel.row_picked.connect(s.select)
        s.trace_changed.connect(self._trace_changed)
        s.selection_changed.connect(self._selection_changed)
        s.failed.connect(self._failed)
        win.vm.jobs.channel_changed.connect(self._channel)
        win.tokens_changed.connect(self.panel.set_tokens)
        win.vm.store_opened.connect(lambda opened: s.set_store(opened.store)
                                    if self.active else setattr(s, "store", opened.store))

    # ---- entering and leaving ----
    def enter(self, name: str, sets: dict[str, Any] | None = None) -> None:
        """Show the shipped pipeline `name` and ask it, with its own parameters or `sets`."""
        self._enter(name, None, preset_spec(name), sets)

    def enter_file(self, path: str, sets: dict[str, Any] | None = None) -> str | None:
        """Show the pipeline of stages in the file at `path` and ask it (with `sets`). A file
        that cannot be read, is not a pipeline or runs the fixed engine is one sentence in the
        window's error bar, returned; the view stays as it was. None: it runs."""
        from inspector.core.engine.flow.spec import apply_set, load_stages_file

        try:
            spec = load_stages_file(path)
            if sets:
                apply_set(spec, sets)  # a bad --set is said before anything changes
        except InspectorError as exc:
            self.win._error(str(exc))
            return str(exc)
        self.last_file = path
        self._enter(None, path, spec, sets)
        return None

    def _enter(self, name: str | None, path: str | None, spec: Any,
               sets: dict[str, Any] | None) -> None:
        s, win = self.session, self.win
        s.store = win.vm.store
        s.text = win.query_bar.text.text()
        if not s.active:
            self._fixed_layout = {"banner": win.banner_slot.isVisible()}
        s.preset, s.sets = name, dict(sets or {})
        s.pipeline_file, s.file_spec = path, (spec if path is not None else None)
        s.limit = spec.limit.default if s.limit is None else \
            max(spec.limit.min, min(spec.limit.max, s.limit))
        # the fixed pipeline's controls leave the query bar before the pipeline's bar shows:
        # both at once were wider than a laptop screen, and the window grew to 1426 px at
        # 1366x768 (a window never shrinks back by itself)
        win.query_bar.set_flow_preset(name or FILE_ITEM, spec.limit.min, spec.limit.max,
                                      s.limit, file_label=None if path is None else
                                      f"{spec.name} (file)")
        self._layout(True)
        self.sliders.set_params(self._live_params(), self._load_chosen(name) if name else None,
                                s.current)
        self._show_bar()
        s.ask()

    def reenter_file(self) -> None:
        """The query bar's file item picked again: the last file loaded, read afresh."""
        if self.last_file is not None:
            self.enter_file(self.last_file)

    def leave(self) -> None:
        if not self.active:
            return
        self.session.deactivate()
        self._busy_timer.stop()
        self.busy_shown = False
        self._layout(False)  # the pipeline's bar leaves before the fixed controls return
        self.win.query_bar.set_flow_preset(None)
        self.win._status()

    def _layout(self, on: bool) -> None:
        win = self.win
        win.splitters["plots"].setProperty("yielded", False)  # shown or hidden here, below
        for w in (win.banner_slot, win.sliders, win.splitters["plots"],
                  win.detail.parentWidget().parentWidget(), win.expected):
            w.setVisible(not on)
        for w in (self.bar, self.sliders, self.detail_scroll):
            w.setVisible(on)
        self.stack.setCurrentWidget(self.panel if on else win.stages)
        if not on:
            fit.make_way(win)  # the plots stay out of a docked dock's room

    def _live_params(self) -> list[tuple[str, Any]]:
        from inspector.core.engine.flow.live import live_params

        spec = self.session.spec
        return [] if spec is None else live_params(spec)

    # ---- from the user ----
    def _with_text(self, setter: Any, value: Any) -> None:
        """A scope or clock change asks with the text in the box, not the text that last ran
        (the box is what the user sees)."""
        s = self.session
        typed = self.win.query_bar.text.text()
        if typed != s.text:
            s.text = typed
            self.win.query_bar.show_query(typed, None)
        setter(value)

    def submit(self, text: str) -> None:
        self.bar.pending()
        self.win.query_bar.show_query(text, None)
        self.session.set_query(text)

    def _vector(self, vec: Any) -> None:
        s = self.session
        s.vector = vec
        self._with_text(lambda _v: s.ask(), None)

    def set_limit(self, n: int) -> None:
        self.session.set_limit(n)

    # ---- showing ----
    def _show_bar(self) -> None:
        s = self.session
        self.bar.show_state(s.scopes, s.now_ms, s.clocked, s.expected, s.vector)

    def _trace_changed(self) -> None:
        s, win = self.session, self.win
        t = s.trace
        if t is None:
            head = "Searching…" if s.busy else ("Type a query and press Enter." if
                                                not s.has_query() else "")
        else:
            d = diagnose(t).to_json()
            head = (f"{t.spec.name} · route {t.route} · {len(t.stages)} stages · "
                    f"{plural(len(t.final.rows), 'result')} of limit {t.limit}"
                    + ("" if d["code"] == "ok" else f" · {d['message']}"))
            if s.error is None:
                win.error_bar.hide()
        self.panel.show_trace(t, s.expected, s.selected, head)
        self.sliders.show_values(s.current)
        self.detail.show_row(t, s.selected, s.row(s.selected))
        self._show_bar()
        self.status()
        if getattr(win, "tab_order", None) is not None:
            win.tab_order.apply()

    def _selection_changed(self, rid: Any) -> None:
        s = self.session
        self.panel.show_selected(rid)
        self.detail.show_row(s.trace, rid, s.row(rid))

    def _failed(self, message: str) -> None:
        self.win._error(message)
        self._trace_changed()

    def _channel(self, channel: str, busy: bool) -> None:
        if channel != CHANNEL or not self.active:
            return
        if busy and self.session.reranking:
            # a re-rank from the cached legs takes a few ms: flashing the busy bar and the
            # Run button's text re-laid out the window twice per slider tick; it shows only
            # when a re-rank is slow
            self._busy_timer.start()
            return
        self._show_busy(busy)

    def _show_busy(self, busy: bool) -> None:
        self._busy_timer.stop()
        if busy == self.busy_shown:
            return
        self.busy_shown = busy
        self.win.busy_bar.setVisible(busy)
        self.win.query_bar.set_busy(busy)
        self.status()

    def status(self) -> None:
        s, label = self.session, self.win.status_label
        if self.busy_shown:
            label.setText("Working…")
        elif s.trace is not None:
            legs = sum(1 for st in s.trace.stages if st.role == "fetch")
            label.setText(f"{plural(len(s.trace.final.rows), 'result')} · "
                          f"{plural(len(s.trace.stages), 'stage')} · {plural(legs, 'leg')} "
                          f"cached, so the sliders re-rank without a new search")

    # ---- the sliders the user chose, per pipeline ----
    def _load_chosen(self, name: str) -> list[str] | None:
        raw = cfg.load_state(f"flow/sliders/{name}")
        try:
            got = json.loads(str(raw)) if raw is not None else None
        except ValueError:
            return None
        return got if isinstance(got, list) else None

    def _save_chosen(self, keys: list[str]) -> None:
        if self.session.preset and self.win.persist:
            cfg.save_state(f"flow/sliders/{self.session.preset}", json.dumps(keys))
