"""The versions panel: a table's versions (time, rows), opening one as of a version, the
current query on two versions side by side, and which write pushed a row out of the results.

Every answer comes from core (stores.versions, analysis.version_diff), run in a worker; the
panel only shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.qt.stores.store_jobs import compare_job, push_out_job, versions_job

# the question on two versions and the write that pushed a row out, as `inspector
# diff-versions --from A --to B [--who-pushed-out ID]` asks them (core.analysis.version_diff)
question_compare_job = compare_job
question_push_out_job = push_out_job

OUT, IN, MOVED = "#c0392b", "#1a9e55", "#2f6fdb"
ROLE = Qt.ItemDataRole.UserRole


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


class VersionsPanel(QWidget):
    """Lists versions and compares the current query across two of them."""

    def __init__(self, vm: Any, open_version: Callable[[int | None], None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="versionsPanel")
        self.vm = vm
        self._open_version = open_version
        self.versions: list[Any] = []
        self.diff: Any = None
        self.push: Any = None
        self._failed: dict[str, Callable[[str], None]] = {"list": self._list_failed}
        self._build()

    # ---- construction ----
    def _build(self) -> None:
        self.pinned = QLabel("No store open", objectName="sectionTitle")
        self.pinned.setWordWrap(True)
        self.table = QTreeWidget(objectName="versionList")
        self.table.setHeaderLabels(["version", "written", "rows", ""])
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.itemDoubleClicked.connect(lambda it, _c: self._open_version(it.data(0, ROLE)))
        self.open_button = QPushButton("Open as of selected", objectName="openAsOf")
        self.open_button.setToolTip("Answer from the selected version (double-click a row)")
        self.open_button.clicked.connect(self._open_selected)
        self.latest_button = QPushButton("Open latest", objectName="openLatest")
        self.latest_button.clicked.connect(lambda: self._open_version(None))
        self.refresh_button = QPushButton("Refresh", objectName="refreshVersions")
        self.refresh_button.clicked.connect(self.refresh)
        self.a, self.b = QComboBox(objectName="versionA"), QComboBox(objectName="versionB")
        self.compare_button = QPushButton("Compare", objectName="compareVersions")
        self.compare_button.setToolTip("Run the current query (same vector, same parameters) "
                                       "on both versions")
        self.compare_button.clicked.connect(self.compare)
        self.diff_view = QTreeWidget(objectName="versionDiff")
        self.diff_view.setHeaderLabels(["row", "rank A", "rank B", "change", "text"])
        self.diff_view.setRootIsDecorated(False)
        self.diff_view.header().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.diff_view.itemSelectionChanged.connect(self.update_push_button)
        self.summary = QLabel("", objectName="stageNote")
        self.summary.setWordWrap(True)
        self.push_button = QPushButton("Which write pushed this row out?", objectName="pushOut")
        self.push_button.setToolTip("Walk the versions between A and B and name the first write "
                                    "after which the row left the final results")
        self.push_button.clicked.connect(self.find_push_out)
        self.push_label = QLabel("", objectName="pushOutAnswer")
        self.push_label.setWordWrap(True)
        self.push_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message = QLabel("", objectName="versionsMessage")
        self.message.setWordWrap(True)
        self._layout()

    def _layout(self) -> None:
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.pinned)
        lay.addWidget(self.table, 1)
        row = QHBoxLayout()
        for w in (self.open_button, self.latest_button, self.refresh_button):
            row.addWidget(w)
        row.addStretch(1)
        lay.addLayout(row)
        title = QLabel("Compare the current query on two versions", objectName="sectionTitle")
        lay.addWidget(title)
        cmp = QHBoxLayout()
        cmp.addWidget(QLabel("A"))
        cmp.addWidget(self.a)
        cmp.addWidget(QLabel("B"))
        cmp.addWidget(self.b)
        cmp.addWidget(self.compare_button)
        cmp.addStretch(1)
        lay.addLayout(cmp)
        lay.addWidget(self.summary)
        lay.addWidget(self.diff_view, 3)
        lay.addWidget(self.push_button)
        lay.addWidget(self.push_label)
        lay.addWidget(self.message)

    # ---- plumbing ----
    def _start(self, kind: str, fn: Callable[..., Any], *args: Any,
               on_done: Callable[[Any], None]) -> None:
        """One of this panel's jobs (latest wins per kind); a failure is said in the panel."""
        self.vm.jobs.start(f"versions.{kind}", fn, *args, on_done=on_done,
                           on_error=self._failed.get(kind, self._say))

    def _say(self, text: str) -> None:
        self.message.setText(text)

    # ---- versions ----
    def store_changed(self) -> None:
        """A store (or another version of it) was opened: forget answers about the old one."""
        for kind in ("list", "compare", "push"):
            self.vm.jobs.cancel(f"versions.{kind}")
        self.diff, self.push = None, None
        self.diff_view.clear()
        self.summary.setText("")
        self.push_label.setText("")
        self._say("")
        self._show_pinned()
        if self.isVisible():
            self.refresh()

    def refresh(self) -> None:
        store = self.vm.store
        if store is None:
            return
        self._say("Reading versions…")
        self._start("list", versions_job, store, on_done=self._listed)

    def _list_failed(self, message: str) -> None:
        self.versions = []
        self.table.clear()
        self._say(message)
        self._enable(False)

    def _listed(self, versions: Any) -> None:
        self._say("")
        self.versions = list(versions)
        self._enable(True)
        pinned = self.vm.store.version if self.vm.store else None
        bold = QFont()
        bold.setBold(True)
        self.table.clear()
        for v in reversed(self.versions):  # newest first
            ts = v.timestamp.strftime("%Y-%m-%d %H:%M:%S") if v.timestamp else "-"
            item = QTreeWidgetItem([f"v{v.version}", ts, "-" if v.rows is None else
                                    f"{v.rows:,}", "● answering" if v.version == pinned else ""])
            item.setData(0, ROLE, v.version)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if v.version == pinned:
                for c in range(4):
                    item.setFont(c, bold)
            self.table.addTopLevelItem(item)
        for c in (0, 2, 3):
            self.table.resizeColumnToContents(c)
        self._fill_pickers(pinned)
        self._show_pinned()

    def _fill_pickers(self, pinned: int | None) -> None:
        """Offer every version; keep the user's picks, else A = pinned (or the one before the
        latest) and B = the latest."""
        nums = [v.version for v in self.versions]
        kept = (self.a.currentData(), self.b.currentData())
        for combo in (self.a, self.b):
            combo.clear()
            for n in nums:
                combo.addItem(f"v{n}", n)
        if not nums:
            return
        b = nums[-1]
        a = pinned if pinned is not None and pinned != b else (nums[-2] if len(nums) > 1 else b)
        if kept[0] in nums and kept[1] in nums:
            a, b = kept
        self.a.setCurrentIndex(self.a.findData(a))
        self.b.setCurrentIndex(self.b.findData(b))

    def _enable(self, on: bool) -> None:
        for w in (self.open_button, self.latest_button, self.compare_button, self.a, self.b):
            w.setEnabled(on)
        self.update_push_button()

    def _show_pinned(self) -> None:
        st = self.vm.store
        if st is None:
            self.pinned.setText("No store open")
            return
        latest = self.versions[-1].version if self.versions else None
        tail = f" (latest v{latest})" if latest is not None and latest != st.version else \
            " (the latest)" if latest is not None else ""
        self.pinned.setText(f"Answering from v{st.version}{tail} · table {st.table_name}")

    def _open_selected(self) -> None:
        item = self.table.currentItem()
        if item is None:
            self._say("Select a version to open.")
            return
        self._open_version(item.data(0, ROLE))

    # ---- comparison ----
    def compare(self) -> None:
        vm = self.vm
        if vm.store is None or vm.trace is None:
            self._say("Run a query first: the comparison runs the current query on both "
                      "versions.")
            return
        a, b = self.a.currentData(), self.b.currentData()
        if a is None or b is None:
            self._say("List the versions first (Refresh).")
            return
        self._say(f"Running the query on v{a} and v{b}…")
        self._start("compare", question_compare_job, vm.store, vm.question.plain(), int(a),
                    int(b), on_done=self._compared)

    def _compared(self, diff: Any) -> None:
        self._say("")
        self.diff = d = diff
        self.push_label.setText("")
        ra = {_plain(x): r for r, x in enumerate(d.a.stage(d.stage).ids, 1)}
        rb = {_plain(x): r for r, x in enumerate(d.b.stage(d.stage).ids, 1)}
        texts = {s.id: s.row.text for t in (d.b, d.a) for s in t.stage(d.stage).rows}
        self.diff_view.clear()
        first_out = None
        for rid in [*ra, *[x for x in rb if x not in ra]]:
            a, b = ra.get(rid), rb.get(rid)
            change, colour = _change(a, b)
            text = str(texts.get(rid) or "")
            item = QTreeWidgetItem([str(rid), f"#{a}" if a else "—", f"#{b}" if b else "—",
                                    change, text.replace("\n", " ")[:200]])
            item.setData(0, ROLE, rid)
            if colour:
                item.setForeground(3, QBrush(QColor(colour)))
            self.diff_view.addTopLevelItem(item)
            if b is None and first_out is None:
                first_out = item
        self.diff_view.headerItem().setText(1, f"rank v{d.version_a}")
        self.diff_view.headerItem().setText(2, f"rank v{d.version_b}")
        for c in range(4):
            self.diff_view.resizeColumnToContents(c)
        self.summary.setText(f"{d.stage} results: {len(d.only_a)} only in v{d.version_a} "
                             f"(pushed out or deleted), {len(d.only_b)} only in v{d.version_b} "
                             f"(came in), {len(d.moved)} moved.")
        if first_out is not None:
            self.diff_view.setCurrentItem(first_out)
        self.update_push_button()

    # ---- push-out ----
    def target_row(self) -> Any:
        """The row the push-out question is about: the one picked in the comparison, else the
        row selected in the window."""
        item = self.diff_view.currentItem()
        if item is not None and item.isSelected():
            return item.data(0, ROLE)
        return self.vm.selected

    def update_push_button(self) -> None:
        rid = self.target_row()
        self.push_button.setEnabled(rid is not None and bool(self.versions))
        self.push_button.setText("Which write pushed this row out?" if rid is None else
                                 f"Which write pushed {rid} out?")

    def find_push_out(self) -> None:
        vm, rid = self.vm, self.target_row()
        if vm.store is None or vm.trace is None or rid is None:
            self._say("Select a row and run a query first.")
            return
        span = None
        if self.diff is not None:
            lo, hi = sorted((self.diff.version_a, self.diff.version_b))
            span = [v.version for v in self.versions if lo <= v.version <= hi]
        self._say(f"Walking {len(span) if span else len(self.versions)} versions for {rid}…")
        self._start("push", question_push_out_job, vm.store, vm.question.plain(), rid, span,
                    on_done=self._pushed)

    def _pushed(self, push: Any) -> None:
        self._say("")
        self.push = p = push
        checked = ", ".join(f"v{v}" for v in p.checked)
        if p.first_without is None:
            self.push_label.setText(f"{p.id} never left the final results in {checked}.")
            return
        came = ", ".join(str(_plain(x)) for x in p.entered) or "nothing new"
        self.push_label.setText(f"<b>{p.id}</b> was in the results at v{p.last_with} and gone "
                                f"at <b>v{p.first_without}</b>: the write that made "
                                f"v{p.first_without} pushed it out (or deleted it). Came in "
                                f"with that write: {came}.")
        for n in range(self.table.topLevelItemCount()):
            item = self.table.topLevelItem(n)
            if item.data(0, ROLE) == p.first_without:
                self.table.setCurrentItem(item)


def _change(a: int | None, b: int | None) -> tuple[str, str | None]:
    if b is None:
        return "pushed out / deleted", OUT
    if a is None:
        return "came in", IN
    if a == b:
        return "same", None
    return (f"up {a - b}" if b < a else f"down {b - a}"), MOVED
