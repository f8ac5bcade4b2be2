"""What the main window reads and writes as files: the answer as JSON, the stage tables, the
view as PNG, and stores dropped on it. A mixin of MainWindow (it uses the window's view-model
and status)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog

from inspector.core.errors import InspectorError
from inspector.core.jsonio import dumps
from inspector.core.stores.safety.outputs import write_file


class FilesMixin:
    """Export (Ctrl+E, Ctrl+Shift+S) and drag and drop for MainWindow."""

    vm: Any
    status_label: Any
    recent_menu: Any
    last_file: str | None

    def open_store(self, uri: str | None, table: str | None = None) -> None:
        """Open a store (None: the demo): it starts from its own suggested question."""
        self.vm.open_store(uri, table)

    def choose_store(self) -> None:
        start = self.vm.store.uri if self.vm.store else str(Path.home())
        path = QFileDialog.getExistingDirectory(self, "Open a LanceDB store folder", start)
        if path:
            self.open_store(path)

    def choose_scope_map(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load a scope map", str(Path.home()),
                                              "JSON (*.json)")
        if path:
            self.vm.load_scope_map(path)

    def choose_pipeline_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a pipeline file", str(Path.home()),
                                              "Pipeline files (*.toml *.json);;All files (*)")
        if path:
            self.open_pipeline_file(path)

    def open_pipeline_file(self, path: str, sets: dict[str, Any] | None = None) -> bool:
        """Run the pipeline of stages in the file on the open store (a bad file is one
        sentence in the window's error bar; False)."""
        done = self.vm.set_pipeline_file(path, sets)
        if done:
            self.last_file = path
        return done

    def _fill_recent(self, items: list[str]) -> None:
        self.recent_menu.clear()
        for uri in items:
            act = self.recent_menu.addAction(uri)
            act.triggered.connect(lambda _=False, u=uri: self.open_store(u))
        self.recent_menu.setEnabled(bool(items))


    def answer_json(self) -> dict[str, Any]:
        """The answer on screen as `inspector query --json` writes it: the one answer (with
        the diagnosis's fixes once they are found) and the question it answers."""
        import json

        from inspector.core.engine.flow.answer import to_json

        vm = self.vm
        if vm.trace is None:
            raise InspectorError("There is no answer to export yet: run a query first.")
        out = json.loads(dumps(to_json(vm.answer if vm.answer is not None else vm.trace)))
        out["question"] = vm.question.plain().model_dump(mode="json", by_alias=True)
        return out

    def export_json(self, path: str) -> None:
        write_file(path, dumps(self.answer_json(), indent=1), self._stores(), force=True)

    def export_tables(self, folder: str, fmt: str = "csv") -> list[Path]:
        """Every stage table of the answer on screen into folder, as `inspector query
        --export FOLDER` writes them."""
        from inspector.core.evidence.exports import export_answer

        if self.vm.trace is None:
            raise InspectorError("There are no stage tables to export yet: run a query first.")
        return export_answer(self.answer_json(), folder, fmt, stores=self._stores())

    def choose_tables(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export stage tables (CSV) into a "
                                                  "folder", str(Path.home()))
        if not folder:
            return
        try:
            paths = self.export_tables(folder)
        except InspectorError as exc:
            self._error(str(exc))
            return
        self.status_label.setText(f"Saved {len(paths)} files in {folder}")

    def export_png(self, path: str) -> None:
        """The window as a PNG, by the guarded writer (never into a store, never through a
        link; an existing file is replaced, as the save dialog asked)."""
        picture = self.grab()

        def write(tmp: Path) -> None:
            if not picture.save(str(tmp), "PNG"):
                raise InspectorError(f"Cannot write the picture to {path}.")

        write_file(path, write, self._stores(), force=True)

    def _stores(self) -> list[str]:
        """The store the window has open (every store it opened is protected as well)."""
        store = getattr(self.vm, "store", None)
        return [store.uri] if store is not None else []

    def _export(self, title: str, pattern: str, suffix: str, write: Any) -> None:
        path, _ = QFileDialog.getSaveFileName(self, title, f"inspector-trace{suffix}", pattern)
        if not path:
            return
        try:
            write(path)
        except (InspectorError, OSError) as exc:
            self._error(str(exc) if isinstance(exc, InspectorError) else
                        f"Cannot write {path}: {exc.strerror}.")
            return
        self.status_label.setText(f"Saved {path}")

    def choose_json(self) -> None:
        self._export("Export trace as JSON", "JSON (*.json)", ".json", self.export_json)

    def choose_png(self) -> None:
        self._export("Export view as PNG", "PNG image (*.png)", ".png", self.export_png)

    # ---- drag and drop ----
    @staticmethod
    def _dropped_folder(urls: list[QUrl]) -> str | None:
        """A dropped store: a LanceDB folder, or a file (a SQLite docs store)."""
        for url in urls:
            if url.isLocalFile() and Path(url.toLocalFile()).exists():
                return url.toLocalFile()
        return None

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and self._dropped_folder(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        folder = self._dropped_folder(event.mimeData().urls())
        if folder:
            event.acceptProposedAction()
            self.open_store(folder)

