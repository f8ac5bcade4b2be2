"""Real-store features of the main window, installed by one call in its constructor:
File > Open… (folders, SQLite docs files, s3:// and db:// URIs with storage options, known
default locations), Open Recent with non-secret options, the pinned version in the status bar,
the versions dock, the newer-version notice, the shape/preset suggestion and the embedder picker.
"""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel

from inspector.core.stores.opening import Opened
from inspector.core.stores.options import OpenOptions
from inspector.qt import fit
from inspector.qt.pipeline.query_extras import EmbedderPicker
from inspector.qt.settings import recalled, remember
from inspector.qt.stores.open_dialog import OpenDialog
from inspector.qt.stores.store_jobs import Newer, ShapeInfo, shape_job
from inspector.qt.stores.store_watch import NoticeBar, StoreWatch
from inspector.qt.stores.versions_view import VersionsPanel


def install_store_features(win: Any) -> StoreFeatures:
    return StoreFeatures(win)


def options_of(opened: Opened) -> OpenOptions:
    """How the open store was opened (or, when opened without options, what it carries)."""
    if opened.options is not None:
        return opened.options
    st = opened.store
    return OpenOptions.make(st.storage_options, None, getattr(st, "model", None),
                            st.role_overrides)


class StoreFeatures(QObject):
    def __init__(self, win: Any) -> None:
        super().__init__(win)
        self.win, self.vm = win, win.vm
        self.dialog: OpenDialog | None = None
        self._pending: OpenDialog | None = None
        self._dismissed: tuple[int, bool] | None = None
        self._build()
        self._menus()
        vm = self.vm
        vm.store_opened.connect(self._opened)
        vm.error_raised.connect(self._failed)
        vm.selection_changed.connect(lambda _r: self.versions.update_push_button())
        vm.version_gone.connect(self._version_gone)
        self.watch = StoreWatch(lambda: vm.store, win, vm.jobs)
        self.watch.poll_failed.connect(self._poll_failed)
        self.watch.newer_found.connect(self._newer)

    # ---- construction ----
    def _build(self) -> None:
        win = self.win
        self.newer_notice = NoticeBar("newerNotice", win)
        self.newer_notice.dismissed.connect(self._newer_dismissed)
        self.shape_notice = NoticeBar("shapeNotice", win)
        for notice in (self.newer_notice, self.shape_notice):
            win.add_notice(notice)
            win.tokens_changed.connect(notice.set_tokens)
        self.pinned_label = QLabel("", objectName="pinnedVersion")
        win.statusBar().addPermanentWidget(self.pinned_label)
        self.versions = VersionsPanel(self.vm, self.open_version, win)
        self.dock = QDockWidget("Versions", win, objectName="versionsDock")
        self.dock.setWidget(self.versions)
        win.add_dock(self.dock, Qt.DockWidgetArea.RightDockWidgetArea)
        self.dock.hide()
        self.dock.setMinimumWidth(360)
        self._dock_sized = False
        self.dock.visibilityChanged.connect(self._dock_shown)
        self.embedder = EmbedderPicker(win.query_bar)
        self.embedder.embedder_picked.connect(self._embedder_picked)
        win.add_query_widget(self.embedder)

    def _dock_shown(self, on: bool) -> None:
        if not on:
            return
        if not self._dock_sized:  # a first showing wide enough for times and row texts
            self._dock_sized = True
            self.win.resizeDocks([self.dock], [480], Qt.Orientation.Horizontal)
        self.versions.refresh()

    def _menus(self) -> None:
        win = self.win
        win.set_open_handler(self.open_dialog)  # File > Open… opens every kind of store
        opener = win.action("open")
        opener.setText("&Open…")
        opener.setStatusTip("Open a LanceDB folder, a SQLite docs file, or an s3:// or db:// "
                            "store")
        self.reload_action = QAction("Re&load latest version", win)
        self.reload_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        self.reload_action.setStatusTip("Reopen the store at its newest version and run the "
                                        "query again")
        self.reload_action.triggered.connect(self.reload)
        win.add_action("file", self.reload_action, "reload", before="demo")
        win.recent_menu.aboutToShow.connect(self._fill_recent)
        win.add_action("view", fit.toggle_action(win, self.dock, "&Versions", "Ctrl+Shift+V"),
                       "versions_dock", before="reset_layout")

    # ---- opening ----
    def open_dialog(self) -> OpenDialog:
        opened = self.vm.opened
        start = opened.store.uri if opened is not None and not opened.demo else ""
        dlg = OpenDialog(self.win, start=start)
        if opened is not None and not opened.demo:
            dlg.recall(None, options_of(opened))  # this session's options, secrets included
        dlg.open_requested.connect(lambda uri, table, opts: self._from_dialog(dlg, uri, table,
                                                                              opts))
        dlg.finished.connect(lambda _r: self._dialog_closed(dlg))
        self.dialog = dlg
        dlg.open()
        return dlg

    def _dialog_closed(self, dlg: OpenDialog) -> None:
        self.dialog = None
        if self._pending is dlg:  # cancelled while opening: the window still reports the end
            self._pending = None

    def _from_dialog(self, dlg: OpenDialog, uri: str, table: str | None,
                     options: OpenOptions) -> None:
        self._pending = dlg
        self.open(uri, table, options)

    def open(self, uri: str, table: str | None, options: OpenOptions,
             then: str | None = None) -> None:
        self.vm.open_store(uri, table, then=then, options=options)

    def open_recent(self, uri: str) -> None:
        table, options = recalled(uri)
        self.open(uri, table, options)

    def _fill_recent(self) -> None:
        """Recent stores open with the options they were last opened with (none secret)."""
        from inspector.qt import settings as cfg

        menu = self.win.recent_menu
        menu.clear()
        for uri in cfg.recent_stores():
            act = menu.addAction(uri)
            act.triggered.connect(lambda _=False, u=uri: self.open_recent(u))

    def reload(self) -> None:
        if self.vm.opened is not None:
            self.open_version(None)

    def open_version(self, version: int | None) -> None:
        """Reopen the open table at `version` (None: the latest) and run the query again."""
        opened = self.vm.opened
        if opened is None:
            return
        st = opened.store
        self.open(st.uri, st.table_name, options_of(opened).at(version))

    def _failed(self, message: str) -> None:
        if self._pending is not None and not self.vm.busy:
            self._pending.show_error(message)
            self._pending = None

    # ---- a store was opened ----
    def _opened(self, opened: Opened) -> None:
        if self._pending is not None:
            self._pending.accept()
            self._pending = None
        st = opened.store
        if not opened.demo and self.win.persist:
            remember(st.uri, st.table_name, options_of(opened))
        self.newer_notice.hide()
        self.shape_notice.hide()
        self._dismissed = None
        self._show_pinned(opened)
        self.versions.store_changed()
        if (st.embedder or {}).get("name") != self._recorded or st.dim != self._dim:
            # the window's first store keeps the embedder the window was started with
            # (`inspector shot --embedder`); another store starts from its own
            kept = self.vm.question.embedder if not self._had_store else None
            self._recorded, self._dim = (st.embedder or {}).get("name"), st.dim
            self.embedder.fill(st.dim, self._recorded)
            self.embedder.show_name(kept)
        self._had_store = True
        self.vm.jobs.start("shape", shape_job, st, on_done=self._shaped)

    _recorded: str | None = None
    _dim: int | None = None
    _had_store = False

    def show_offline(self) -> None:
        """Receipt mode: no store is open, so nothing about one (version, shape, notices)."""
        for notice in (self.newer_notice, self.shape_notice):
            notice.hide()
        self.pinned_label.setText("offline")
        self.pinned_label.setToolTip("A receipt's bundled pool: no table version is open.")

    def _show_pinned(self, opened: Opened) -> None:
        st = opened.store
        if getattr(st, "source", None) is not None:
            text, tip = "SQLite file", "A SQLite docs store has no versions; its working copy " \
                "is rebuilt when the file changes."
        elif options_of(opened).version is not None:
            text, tip = f"v{st.version} (as of)", "Opened as of this version: answers come " \
                "from it until you open the latest (File > Reload latest version)."
        else:
            text, tip = f"v{st.version} pinned", "Answers come from this version; writes " \
                "after it are not seen until you reload (File > Reload latest version)."
        self.pinned_label.setText(text)
        self.pinned_label.setToolTip(tip)
        if getattr(st, "source", None) is None:
            self.win.setWindowTitle(f"{self.win.windowTitle()} @ v{st.version}")

    def _shaped(self, shape: ShapeInfo) -> None:
        notes = "".join(f" · {escape(n)}" for n in shape.notes)  # wrapped only where cut
        tk = self.win.tokens
        from inspector.core.engine.flow.shipped import shipped_names

        if shape.preset is not None and shape.preset not in shipped_names():
            self.shape_notice.show_notice(
                f"This looks like the <b>{escape(shape.title)}</b>'s table: preset "
                f"<b>{shape.preset}</b> reproduces its ranking in <code>inspector query "
                f"--preset {shape.preset}</code>.{notes}", tokens=tk)
        elif shape.preset and shape.preset != self._current_preset():
            self._proposed = shape.preset
            self.shape_notice.show_notice(
                f"This looks like the <b>{escape(shape.title)}</b>'s table: preset "
                f"<b>{shape.preset}</b> reproduces its ranking.{notes}",
                ((f"Use {shape.preset}", lambda p=shape.preset: self.use_preset(p)),),
                tokens=tk)
        elif shape.notes:
            self.shape_notice.show_notice(f"<b>{escape(shape.title)}</b>{notes}", tokens=tk)

    _proposed: str | None = None

    def preset_chosen(self, name: str | None) -> None:
        """The user chose a preset: a notice proposing that very preset has said its piece."""
        if name is not None and name == self._proposed:
            self.shape_notice.hide()

    def _current_preset(self) -> str | None:
        spec = self.vm.spec()
        return spec.name if spec is not None else self.vm.question.preset

    def use_preset(self, preset: str) -> None:
        """Choose the preset as the query bar would (a pipeline of stages enters its view)."""
        self.shape_notice.hide()
        qb = self.win.query_bar
        i = qb.preset.findData(preset)
        if i >= 0:
            qb.preset.setCurrentIndex(i)
            qb.preset.activated.emit(i)
        else:
            self.vm.set_preset(preset)

    # ---- a newer version ----
    def _newer(self, newer: Newer) -> None:
        key = (newer.latest, newer.file)
        if key == self._dismissed or (key == self._shown_newer and self.newer_notice.isVisible()):
            return  # dismissed, or already said: the buttons are not rebuilt every poll
        self._shown_newer = key
        opened = self.vm.opened
        tk = self.win.tokens
        if newer.file:
            html = ("The SQLite file changed since it was opened; answers still come from the "
                    "copy made then.")
            label = "Reload"
        elif opened is not None and options_of(opened).version is not None:
            html = (f"Answering as of <b>v{newer.pinned}</b>; the latest version is "
                    f"<b>v{newer.latest}</b>.")
            label = "Open latest"
        else:
            html = (f"A newer version <b>v{newer.latest}</b> is available; answers stay on "
                    f"v{newer.pinned} until you reload.")
            label = "Reload"
        self.newer_notice.show_notice(html, ((label, self.reload),), kind="warn", tokens=tk)
        if self.versions.isVisible():
            self.versions.refresh()

    _shown_newer: tuple[int, bool] | None = None

    def _version_gone(self, version: int, latest: int | None) -> None:
        """The pinned version was cleaned up: no answer can come from it; offer the newest."""
        newest = f"; the newest is v{latest}" if latest is not None else ""
        self.newer_notice.show_notice(
            f"Version <b>v{version}</b> was cleaned up from this table{newest}. Answers can no "
            "longer come from it.", (("Open latest", self.reload),), kind="warn",
            tokens=self.win.tokens)

    def _poll_failed(self, message: str) -> None:
        """Say a failed version check in the status bar, once per distinct failure."""
        if message != self._last_poll_error:
            self._last_poll_error = message
            self.win.status_label.setText(f"Could not check for a newer version: {message}")

    _last_poll_error: str | None = None

    def _newer_dismissed(self) -> None:
        last = self.watch.last
        self._dismissed = (last.latest, last.file) if last is not None else None

    # ---- embedder ----
    def _embedder_picked(self, name: str | None) -> None:
        vm = self.vm
        missing = self.embedder.missing_key(name)
        if missing and vm.question.vector_of is None and vm.question.vector is None:
            self.win.error_bar.show_error(missing)
            self.win.status_label.setText(missing)
        vm.put(embedder=name)
