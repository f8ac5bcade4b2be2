"""A visual harness: the real window rendered in named states, at named sizes, in both themes.

`python -m inspector.qt.harness.gallery OUTDIR [--sizes 1366x768,1920x1080] [--states a,b]`
writes one PNG per state, theme and size, plus `checks.txt` with what
`visual_checks.problems` found in each. Tests drive the same `enter_state` offscreen; the
docs' page docs/developer/gallery.md says how to render it under Xvfb. Never reads or writes
the user's settings."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZES = ((1366, 768), (1920, 1080))
THEMES = ("light", "dark")
STATES = ("empty-store", "scoped-miss", "importance", "deep-pool", "tuning-dock", "map",
          "receipt", "error", "tour-scoped-miss", "tour-importance", "tour-tie",
          "lost-to-index")
INDEX_STORY = "Lost to the index"  # the demo store's story on its IVF_PQ table
INDEX_TRIES = 6
# a middle step of each story (the index story is not certain: LanceDB trains the index)
TOUR_STEPS = {"tour-scoped-miss": 2, "tour-importance": 5, "tour-tie": 8}
# the pipeline state's fixture (--pipeline-fixture): memory-lancedb-pro's store and question
PIPELINE: dict[str, Path] = {}
PIPELINE_TEXT, PIPELINE_SCOPES, PIPELINE_NOW = ("postgres connection pool size",
                                                "global, agent:main, reflection:agent:main",
                                                "1796113042582")


def empty_store(folder: Path) -> str:
    """A LanceDB store with a memories table and no rows."""
    import lancedb
    import pyarrow as pa

    schema = pa.schema([pa.field("id", pa.utf8()), pa.field("text", pa.utf8()),
                        pa.field("vector", pa.list_(pa.float32(), 8)),
                        pa.field("importance", pa.float64())])
    folder.mkdir(parents=True, exist_ok=True)
    lancedb.connect(str(folder)).create_table("memories", schema=schema, mode="overwrite")
    return str(folder)


def index_store(folder: Path, tries: int = INDEX_TRIES) -> str:
    """A demo store (the gallery's own, in its work folder) whose IVF_PQ table loses an
    in-scope row that the exact search finds. LanceDB trains the index unseeded, so the story
    is not in every build (the demo reads it off the trained index): built again until it is
    there, as tests/indexkit.py's `accept` retrains, and an error if it never is."""
    import lancedb

    from inspector.core.stores.demo import build_demo
    from inspector.core.stores.store import META_KEY

    if folder.exists():  # the story was built for this window already
        return str(folder)
    for _ in range(tries):
        build_demo(folder, overwrite=True)
        meta = lancedb.connect(str(folder)).open_table("memories").schema.metadata or {}
        if INDEX_STORY in meta.get(META_KEY, b"").decode("utf-8", "replace"):
            return str(folder)
    raise SystemExit(f"gallery: {tries} trainings of the demo's IVF_PQ index lost no row; "
                     "the lost-to-index state has no story to show")


def _idle(win: Any) -> None:
    win.vm.jobs.wait_idle(60.0)
    from PySide6.QtWidgets import QApplication

    QApplication.processEvents()


def _demo(win: Any, story: int | None) -> None:
    """The demo store; a story (suggested query) when given."""
    vm = win.vm
    if vm.store is None or not vm.opened.demo or win.tuning_receipts.offline:
        vm.open_store(None, then="none")
        _idle(win)
    if story is not None:
        vm.load_suggested(story)
        _idle(win)


def _state_empty(win: Any, work: Path) -> None:
    win.vm.open_store(empty_store(work / "empty-store"), then="none")


def _state_scoped(win: Any, work: Path) -> None:
    _demo(win, 0)


def _state_importance(win: Any, work: Path) -> None:
    _demo(win, 1)
    win.vm.set_param("blend", 0.5)


def _state_deep(win: Any, work: Path) -> None:
    """A deep pool: ranks of two and three digits, ties among them, end notes further down."""
    _demo(win, 1)
    win.vm.set_param("blend", 0.5)
    win.vm.set_param("overfetch", 20.0)
    _idle(win)
    for view in win.stages.lanes[0].views.values():  # down to the ties and the end notes
        view.table.scrollToBottom()


def _state_tuning(win: Any, work: Path) -> None:
    _demo(win, 0)
    win.tuning_dock.show_tab("sweep")
    win.tuning_dock.sweep.run()


def _state_map(win: Any, work: Path) -> None:
    _demo(win, 0)
    win.tuning_dock.show_tab("map")


def _state_receipt(win: Any, work: Path) -> None:
    _demo(win, 1)
    path = str(work / "receipt.json")
    win.tuning_receipts.export(path)
    _idle(win)
    win.tuning_receipts.open(path)


def _state_error(win: Any, work: Path) -> None:
    _demo(win, 0)
    win.vm.open_store(str(work / "no-such-store"))


def _state_pipeline(win: Any, work: Path) -> None:
    """memory-lancedb-pro's 14 stages on a store the plugin wrote, asked as a user does (the
    preset picked, then its vector, scopes and clock typed into the pipeline's bar)."""
    src = PIPELINE.get("fixture")
    if src is None:
        raise SystemExit("gallery: the pipeline state needs --pipeline-fixture DIR (a folder "
                         "with store/ and q_pg.json)")
    win.vm.open_store(str(src / "store"), "memories")
    _idle(win)
    qb = win.query_bar
    qb.text.setText(PIPELINE_TEXT)
    n = qb.preset.findData("memory-lancedb-pro")
    qb.preset.setCurrentIndex(n)
    qb.preset.activated.emit(n)
    _idle(win)
    bar = win.flow.bar
    for edit, text in ((bar.vector, str(src / "q_pg.json")), (bar.scopes, PIPELINE_SCOPES),
                       (bar.now, PIPELINE_NOW)):
        edit.setText(text)
        edit.editingFinished.emit()
        _idle(win)


def _state_lost(win: Any, work: Path) -> None:
    """The index story: agent main's question on the IVF_PQ table, whose default search
    misses a memory the exact search ranks in its top 3 (the expected row, starred)."""
    win.vm.open_store(index_store(work / "index-store"), "memories", then="none")
    _idle(win)
    stories = [str(q.get("name", "")) for q in win.vm.store.suggested_queries]
    win.vm.load_suggested(next(n for n, name in enumerate(stories)
                               if name.startswith(INDEX_STORY)))


def _state_tour(win: Any, step: int) -> None:
    """Help › Tour at one step, its bar showing that step's sentence."""
    _demo(win, None)
    win.tour.start(step)


ENTER: dict[str, Callable[[Any, Path], None]] = {
    "empty-store": _state_empty, "scoped-miss": _state_scoped, "importance": _state_importance,
    "deep-pool": _state_deep,
    "tuning-dock": _state_tuning, "map": _state_map, "receipt": _state_receipt,
    "error": _state_error, "pipeline": _state_pipeline, "lost-to-index": _state_lost,
    **{name: (lambda win, _work, n=n: _state_tour(win, n)) for name, n in TOUR_STEPS.items()},
}


def reset(win: Any) -> None:
    """Between states: docks and the tour closed, no error."""
    win.tuning_dock.hide()
    win.tour.hide()
    win.flow.leave()
    win.vm.clear_error()


def enter_state(win: Any, state: str, work: Path) -> None:
    """Put a window into a named state and wait until it is idle."""
    reset(win)
    ENTER[state](win, work)
    _idle(win)


def make_window(size: tuple[int, int], theme: str, maximized: bool = False) -> Any:
    """The window at `size`; `maximized`: as a user has it under a window manager, maximised
    on a screen of that size, so title bar and frame take their share (the screen must be
    that size: an Xvfb display made for it)."""
    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    win.apply_theme(theme)
    if maximized:
        win.showMaximized()
        screen = win.screen().availableGeometry()
        for _ in range(200):  # the window manager maps and resizes it asynchronously
            QApplication.processEvents()
            if win.isMaximized() and win.frameGeometry().width() >= screen.width() - 2:
                break
            QThread.msleep(10)
    else:
        win.resize(*size)
        win.show()
    _idle(win)
    return win


def render(out: Path, sizes: tuple[tuple[int, int], ...] = SIZES,
           states: tuple[str, ...] = STATES, themes: tuple[str, ...] = THEMES,
           maximized: bool = False) -> list[str]:
    """Write every state's PNG; returns the problems found, one line each."""
    from inspector.qt.harness.visual_checks import problems

    out.mkdir(parents=True, exist_ok=True)
    found: list[str] = []
    with tempfile.TemporaryDirectory(prefix="inspector-gallery-") as tmp:
        for size in sizes:
            for theme in themes:
                win = make_window(size, theme, maximized)
                for state in states:
                    enter_state(win, state, Path(tmp) / f"{size[0]}-{theme}")
                    name = f"{state}-{theme}-{size[0]}x{size[1]}"
                    win.grab().save(str(out / f"{name}.png"), "PNG")
                    for dock in win.dock_areas:  # a floating dock is a window of its own
                        if dock.isVisible() and dock.isFloating():
                            dock.grab().save(str(out / f"{name}-{dock.objectName()}.png"))
                    found += [f"{name}: {p}" for p in problems(win)]
                win.close()
    (out / "checks.txt").write_text("\n".join(found) + ("\n" if found else ""),
                                    encoding="utf-8")
    return found


def _parse_sizes(text: str) -> tuple[tuple[int, int], ...]:
    pairs = [part.lower().split("x") for part in text.split(",") if part]
    return tuple((int(w), int(h)) for w, h in pairs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m inspector.qt.harness.gallery",
                                 description="Render the window in named states to PNGs.")
    ap.add_argument("outdir")
    ap.add_argument("--sizes", default=",".join(f"{w}x{h}" for w, h in SIZES))
    ap.add_argument("--states", default=",".join(STATES))
    ap.add_argument("--themes", default=",".join(THEMES))
    ap.add_argument("--pipeline-fixture", type=Path, default=None,
                    help="for the pipeline state: a copy of the memory-lancedb-pro fixture "
                         "(store/ and q_pg.json); it is opened read-only")
    ap.add_argument("--maximized", action="store_true",
                    help="maximise the window under the running window manager (one size: "
                         "the screen's) instead of resizing it to each size")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from inspector.qt.app import _application

    app = _application()
    from PySide6.QtCore import QSettings

    # a gallery never touches the user's settings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      tempfile.mkdtemp(prefix="inspector-gallery-settings-"))
    if args.pipeline_fixture is not None:
        PIPELINE["fixture"] = args.pipeline_fixture
    states = tuple(s for s in args.states.split(",") if s)
    unknown = [s for s in states if s not in ENTER]
    if unknown:
        print(f"gallery: unknown state {unknown[0]!r}; states: {', '.join(STATES)}",
              file=sys.stderr)
        return 2
    found = render(Path(args.outdir), _parse_sizes(args.sizes), states,
                   tuple(t for t in args.themes.split(",") if t), args.maximized)
    print(f"wrote {args.outdir}; {len(found)} problems" + (":" if found else ""))
    for line in found:
        print("  " + line)
    app.processEvents()
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
