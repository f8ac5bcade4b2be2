"""File > Open…: a LanceDB folder, a SQLite docs file, or an s3:// / db:// URI with storage
options, plus the default store locations that exist on this machine.

The dialog only collects what to open; the view-model opens it in a worker and the dialog
closes on success or shows the one-sentence error and stays open for another try.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.errors import InspectorError
from inspector.core.stores.options import OpenOptions, looks_secret
from inspector.core.stores.shapes import KnownStore, known_locations
from inspector.core.stores.store import is_remote

COMMON_OPTIONS = ("aws_endpoint", "region", "allow_http", "host_override")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
CREDENTIALS_NOTE = ("Credentials come from the environment (AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY, LANCEDB_API_KEY, …) and are never saved. An option "
                    "here whose name looks like a key, secret or token is used for this session "
                    "only.")


class OpenDialog(QDialog):
    """Collects a location and its options; emits open_requested(uri, table, OpenOptions)."""

    open_requested = Signal(str, object, object)

    def __init__(self, parent: QWidget | None = None,
                 known: list[KnownStore] | None = None, start: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a memory store")
        self.setObjectName("openDialog")
        self.setMinimumWidth(640)
        self.known = known_locations() if known is None else known
        self.preset_hint: str | None = None
        self._build(start)
        self._update_enabled()

    # ---- construction ----
    def _build(self, start: str) -> None:
        lay = QVBoxLayout(self)
        lay.setSpacing(10)
        if self.known:
            box = QGroupBox("Default locations on this machine")
            self.known_list = QListWidget(objectName="knownLocations")
            self.known_list.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
            self.known_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.known_list.setTextElideMode(Qt.TextElideMode.ElideMiddle)
            self.known_list.setToolTip("Click to fill in the location; double-click to open")
            for k in self.known:
                item = QListWidgetItem(f"{k.label}  ·  preset {k.preset}\n{k.path}")
                item.setData(Qt.ItemDataRole.UserRole, k)
                item.setToolTip(k.path)
                self.known_list.addItem(item)
            rows = min(len(self.known), 3)
            self.known_list.setFixedHeight(self.known_list.sizeHintForRow(0) * rows
                                           + 2 * self.known_list.frameWidth() + 4)
            self.known_list.itemClicked.connect(self._known_picked)
            self.known_list.itemDoubleClicked.connect(lambda it: (self._known_picked(it),
                                                                  self.request_open()))
            QVBoxLayout(box).addWidget(self.known_list)
            lay.addWidget(box)
        where = QGroupBox("Store")
        form = QFormLayout(where)
        self.location = QLineEdit(start, objectName="location")
        self.location.setPlaceholderText("a LanceDB folder, a SQLite docs file, s3://bucket/prefix "
                                         "or db://database")
        self.location.textChanged.connect(lambda _: self._update_enabled())
        folder = QPushButton("Folder…", objectName="chooseFolder")
        folder.setToolTip("Choose a LanceDB store folder")
        folder.clicked.connect(self._choose_folder)
        sqlite = QPushButton("SQLite file…", objectName="chooseSqlite")
        sqlite.setToolTip("Choose a docs engine SQLite file (.sqlite, .db)")
        sqlite.clicked.connect(self._choose_sqlite)
        row = QHBoxLayout()
        row.addWidget(self.location, 1)
        row.addWidget(folder)
        row.addWidget(sqlite)
        form.addRow("Location", row)
        self.table = QLineEdit(objectName="tableName")
        self.table.setPlaceholderText("default: the only table, or 'memories'")
        self.version = QSpinBox(objectName="asOf", minimum=0, maximum=10**9)
        self.version.setSpecialValueText("latest")
        self.version.setToolTip("Open the table as of this version (LanceDB stores only)")
        self.docs_model = QLineEdit(objectName="docsModel")
        self.docs_model.setPlaceholderText("default: the model with the most embeddings")
        row2 = QHBoxLayout()
        row2.addWidget(self.table, 2)
        row2.addWidget(QLabel("as of version"))
        row2.addWidget(self.version)
        form.addRow("Table", row2)
        form.addRow("Docs model", self.docs_model)
        lay.addWidget(where)
        lay.addWidget(self._options_box())
        self.error = QLabel("", objectName="openError")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("QLabel#openError { color: #c0392b; font-weight: 600; }")
        self.error.hide()
        lay.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.open_button = self.buttons.button(QDialogButtonBox.StandardButton.Open)
        self.buttons.accepted.connect(self.request_open)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

    def _options_box(self) -> QGroupBox:
        box = QGroupBox("Storage options (s3://, gs://, az://, db://)")
        self.options_box = box
        v = QVBoxLayout(box)
        self.options = QTableWidget(0, 2, objectName="storageOptions")
        self.options.setTabKeyNavigation(False)  # Tab leaves it; arrows move inside
        self.options.setHorizontalHeaderLabels(["option", "value"])
        self.options.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.options.horizontalHeader().resizeSection(0, 180)
        self.options.verticalHeader().hide()
        self.options.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.options.setMinimumHeight(90)
        self.options.setMaximumHeight(150)
        self.options.itemChanged.connect(self._mark_secret)
        v.addWidget(self.options)
        row = QHBoxLayout()
        add = QToolButton(text="Add option", objectName="addOption")
        add.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        menu = QMenu(add)
        for key in COMMON_OPTIONS:
            menu.addAction(key, lambda k=key: self.add_option(k, ""))
        add.setMenu(menu)
        add.clicked.connect(lambda: self.add_option("", ""))
        remove = QToolButton(text="Remove", objectName="removeOption")
        remove.clicked.connect(self._remove_option)
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        v.addLayout(row)
        note = QLabel(CREDENTIALS_NOTE, objectName="stageNote")
        note.setWordWrap(True)
        v.addWidget(note)
        return box

    # ---- editing ----
    def add_option(self, key: str, value: str) -> None:
        r = self.options.rowCount()
        self.options.insertRow(r)
        self.options.setItem(r, 0, QTableWidgetItem(key))
        self.options.setItem(r, 1, QTableWidgetItem(value))
        self.options.setCurrentCell(r, 0 if not key else 1)

    def _mark_secret(self, item: QTableWidgetItem) -> None:
        """A secret-looking option is shown in italics and said to be session-only."""
        if item.column() != 0:
            return
        secret = looks_secret(item.text())
        font = item.font()
        if font.italic() != secret:
            font.setItalic(secret)
            item.setFont(font)
        item.setToolTip("used for this session only, never saved" if secret else "")

    def set_options(self, opts: dict[str, str]) -> None:
        self.options.setRowCount(0)
        for k, v in opts.items():
            self.add_option(k, v)

    def _remove_option(self) -> None:
        rows = sorted({i.row() for i in self.options.selectedIndexes()}, reverse=True)
        for r in rows or ([self.options.rowCount() - 1] if self.options.rowCount() else []):
            self.options.removeRow(r)

    def _known_picked(self, item: QListWidgetItem) -> None:
        k: KnownStore = item.data(Qt.ItemDataRole.UserRole)
        self.location.setText(k.path)
        self.table.setText(k.table or "")
        self.preset_hint = k.preset

    def _choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a LanceDB store folder",
                                                self._start_dir())
        if path:
            self.location.setText(path)

    def _choose_sqlite(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a SQLite docs store", self._start_dir(),
            "SQLite docs store (*.sqlite *.sqlite3 *.db);;All files (*)")
        if path:
            self.location.setText(path)

    def _start_dir(self) -> str:
        text = self.location.text().strip()
        if text and not is_remote(text):
            p = Path(text).expanduser()
            return str(p if p.is_dir() else p.parent)
        return str(Path.home())

    def _update_enabled(self) -> None:
        uri = self.location.text().strip()
        remote = is_remote(uri)
        sqlite = not remote and uri.lower().endswith(SQLITE_SUFFIXES)
        self.options_box.setEnabled(remote or not uri)
        self.docs_model.setEnabled(sqlite)
        self.version.setEnabled(not sqlite)
        self.open_button.setEnabled(bool(uri))

    # ---- result ----
    def storage(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for r in range(self.options.rowCount()):
            key = (self.options.item(r, 0).text() if self.options.item(r, 0) else "").strip()
            value = self.options.item(r, 1).text() if self.options.item(r, 1) else ""
            if not key and not value.strip():
                continue
            if not key:
                raise InspectorError(f"Storage option row {r + 1} has a value but no name.")
            out[key.lower()] = value.strip()
        return out

    def values(self) -> tuple[str, str | None, OpenOptions]:
        uri = self.location.text().strip()
        if not uri:
            raise InspectorError("Give a folder, a SQLite file or an s3:// or db:// URI to open.")
        remote = is_remote(uri)
        storage = self.storage() if remote else {}
        version = self.version.value() if self.version.isEnabled() and self.version.value() \
            else None
        model = self.docs_model.text().strip() if self.docs_model.isEnabled() else ""
        return uri, self.table.text().strip() or None, OpenOptions.make(storage, version, model)

    def request_open(self) -> None:
        try:
            uri, table, options = self.values()
        except InspectorError as exc:
            self.show_error(str(exc))
            return
        self.error.hide()
        self.set_busy(True)
        self.open_requested.emit(uri, table, options)

    def set_busy(self, busy: bool) -> None:
        self.open_button.setEnabled(not busy and bool(self.location.text().strip()))
        self.open_button.setText("Opening…" if busy else "Open")

    def show_error(self, message: str) -> None:
        self.set_busy(False)
        self.error.setText(message)
        self.error.show()

    def recall(self, table: str | None, options: OpenOptions) -> None:
        """Fill the fields from how a recent URI was opened."""
        self.table.setText(table or "")
        self.set_options(dict(options.storage))
        self.docs_model.setText(options.docs_model or "")
