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
          "error", "tour-scoped-miss", "tour-importance", "tour-tie", "tour-again",
          "lost-to-index", "llamaindex-ivf")
INDEX_STORY = "Lost to the index"  # the demo store's story on its IVF_PQ table
INDEX_TRIES = 6
# a middle step of each story (the index story is not certain: LanceDB trains the index)
TOUR_STEPS = {"tour-scoped-miss": 2, "tour-importance": 5, "tour-tie": 8}
# the pipeline state's fixture (--pipeline-fixture): memory-lancedb-pro's store and question,
# asked in one scope only, which starves it (one row of three)
PIPELINE: dict[str, Path] = {}
PIPELINE_TEXT, PIPELINE_SCOPES, PIPELINE_NOW = ("postgres connection pool size",
                                                "reflection:agent:main", "1796113042582")
# the langchain state (--langchain DIR: store/ and cases.json as tests/frameworks records
# them): LangChain's post-filter starves a user's query; its banner's first fix applied
LANGCHAIN_CASE, LANGCHAIN_WHERE = "q0_k4_u1", "metadata.user_id = 'u1'"


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


def llamaindex_store(folder: Path, n: int = 3000, dim: int = 32) -> str:
    """A LlamaIndex-shaped table (id, doc_id, vector, text, metadata struct with the node's
    JSON in _node_content) of clustered rows with an IVF_PQ index of 16 partitions, as
    llama-index-vector-stores-lancedb writes one."""
    import json

    import lancedb
    import numpy as np
    import pyarrow as pa
    from lancedb.index import IvfPq

    if folder.exists():
        return str(folder)
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(16, dim))
    vecs = (centres[rng.integers(16, size=n)] + 0.6 * rng.normal(size=(n, dim))).astype(
        np.float32)
    table = pa.table({"id": [f"n{i:05d}" for i in range(n)],
                      "doc_id": [f"d{i // 3}" for i in range(n)],
                      "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dim),
                      "text": [f"node {i} of document d{i // 3}" for i in range(n)],
                      # LlamaIndex keeps each node's JSON in metadata._node_content
                      "metadata": pa.array([{"_node_content": json.dumps(
                          {"id_": f"n{i:05d}", "text": f"node {i} of document d{i // 3}"}),
                          "user_id": f"u{i % 4}", "year": 2020 + i % 6} for i in range(n)])})
    tbl = lancedb.connect(str(folder)).create_table("vectors", table)
    tbl.create_index("vector", config=IvfPq(distance_type="l2", num_partitions=16,
                                            num_sub_vectors=4))
    return str(folder)


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


def _slide(win: Any, key: str, value: float) -> None:
    """A slider moved as a user moves it."""
    slider = win.sliders.sliders[key]
    slider.setValue(value)
    win.sliders.flush()
    _idle(win)
    win.flush_plots()


def _state_importance(win: Any, work: Path) -> None:
    _demo(win, 1)
    _slide(win, "blend.weight", 0.5)


def _state_deep(win: Any, work: Path) -> None:
    """A deep pool: ranks of two and three digits, ties among them, further down."""
    _demo(win, 1)
    _slide(win, "blend.weight", 0.5)
    _slide(win, "fetch.overfetch", 10.0)
    for sec in win.stages.visible_sections():  # down to the ties and the drops
        sec.table.scrollToBottom()


def _state_tuning(win: Any, work: Path) -> None:
    """The tuning dock opened as a user opens it: Ctrl+T (the Tuning menu's first item)."""
    _demo(win, 0)
    toggle = win.menu("tuning").actions()[0]
    toggle.trigger()


def _state_map(win: Any, work: Path) -> None:
    _demo(win, 0)
    win.tuning_dock.show_tab("map")


def _state_error(win: Any, work: Path) -> None:
    _demo(win, 0)
    win.vm.open_store(str(work / "no-such-store"))


def _pick(win: Any, preset: str) -> None:
    qb = win.query_bar
    n = qb.preset.findData(preset)
    qb.preset.setCurrentIndex(n)
    qb.preset.activated.emit(n)
    _idle(win)


def _type(win: Any, edit: Any, text: str) -> None:
    edit.setText(text)
    edit.editingFinished.emit()
    _idle(win)


def _state_pipeline(win: Any, work: Path) -> None:
    """memory-lancedb-pro's 13 stages on a store the plugin wrote, asked as a user does (the
    preset picked, its vector, scope and clock typed into the question's bar), in one scope
    that starves it."""
    src = PIPELINE.get("fixture")
    if src is None:
        raise SystemExit("gallery: the pipeline state needs --pipeline-fixture DIR (a folder "
                         "with store/ and q_pg.json)")
    win.vm.open_store(str(src / "store"), "memories")
    _idle(win)
    _pick(win, "memory-lancedb-pro")
    qb, bar = win.query_bar, win.question_bar
    for edit, text in ((bar.vector, str(src / "q_pg.json")), (bar.scopes, PIPELINE_SCOPES),
                       (bar.now, PIPELINE_NOW)):
        _type(win, edit, text)
    qb.text.setText(PIPELINE_TEXT)
    qb.text_submitted.emit(PIPELINE_TEXT)
    _idle(win)


def _state_switch(win: Any, work: Path) -> None:
    """A store switched as a user switches it: the demo's scoped question asked, then the
    store memory-lancedb-pro wrote opened (its embedder unknown here), and a text typed: the
    question starts from the new store (its preset, nothing of the demo's), and the error bar
    offers the routes that need no embedder."""
    src = PIPELINE.get("fixture")
    if src is None:
        raise SystemExit("gallery: the switch-store state needs --pipeline-fixture DIR (a "
                         "folder with store/ and q_pg.json)")
    _demo(win, 0)
    win.vm.open_store(str(src / "store"), "memories")
    _idle(win)
    win.query_bar.text.setText(PIPELINE_TEXT)
    win.query_bar.text_submitted.emit(PIPELINE_TEXT)
    _idle(win)


def _state_langchain(win: Any, work: Path) -> None:
    """LangChain's post-filter (a user's filter after LanceDB's top k) starves the query; the
    banner's first fix, applied with a click, returns the page."""
    import json

    src = PIPELINE.get("langchain")
    if src is None:
        raise SystemExit("gallery: the langchain state needs --langchain DIR (store/ and "
                         "cases.json)")
    doc = json.loads((src / "cases.json").read_text())
    case = next(c for c in doc["cases"] if c["name"] == LANGCHAIN_CASE)
    vec = work / "langchain-q.json"
    vec.parent.mkdir(parents=True, exist_ok=True)
    vec.write_text(json.dumps(doc["vectors"][case["query"]]))
    win.vm.open_store(str(src / "store"), "vectorstore")
    _idle(win)
    _pick(win, "langchain-lancedb")
    win.vm.put(set={"where": LANGCHAIN_WHERE}, limit=case["k"])
    _type(win, win.question_bar.vector, str(vec))
    win.query_bar.text.setText(case["query"])
    win.query_bar.text_submitted.emit(case["query"])
    _idle(win)
    if win.banner.buttons:
        win.banner.buttons[0].click()
        _idle(win)


def _state_llamaindex(win: Any, work: Path) -> None:
    """A LlamaIndex-shaped IVF_PQ table: the index bar beside LlamaIndex's own search."""
    win.vm.open_store(llamaindex_store(work / "llamaindex-store"), "vectors")
    _idle(win)
    _pick(win, "llamaindex-lancedb")
    win.vm.use_as_query("n00042")
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


def _state_tour_again(win: Any, work: Path) -> None:
    """Help › Tour started a second time, from its menu, after a whole first tour, then
    Next: the second step of the first story."""
    tour = win.tour
    win.action("tour").trigger()
    tour.go(len(tour.steps) - 1)
    tour.hide()
    win.action("tour").trigger()
    tour.next.click()


ENTER: dict[str, Callable[[Any, Path], None]] = {
    "empty-store": _state_empty, "scoped-miss": _state_scoped, "importance": _state_importance,
    "deep-pool": _state_deep,
    "tuning-dock": _state_tuning, "map": _state_map,
    "error": _state_error, "pipeline": _state_pipeline, "langchain": _state_langchain,
    "switch-store": _state_switch,
    "llamaindex-ivf": _state_llamaindex, "lost-to-index": _state_lost,
    "tour-again": _state_tour_again,
    **{name: (lambda win, _work, n=n: _state_tour(win, n)) for name, n in TOUR_STEPS.items()},
}


def reset(win: Any) -> None:
    """Between states: docks and the tour closed, no error."""
    win.tuning_dock.hide()
    win.tour.hide()
    win.vm.driven = None
    win.vm.clear_error()


def enter_state(win: Any, state: str, work: Path) -> None:
    """Put a window into a named state and wait until it is idle."""
    reset(win)
    ENTER[state](win, work)
    _idle(win)
    win.ensure_plots()  # a picture of the plots, even where they would come a turn later


def make_window(size: tuple[int, int], theme: str, maximized: bool = False,
                wm_wait: float = 20.0) -> Any:
    """The window at `size`; `maximized`: as a user has it under a window manager, maximised
    on a screen of that size, so title bar and frame take their share (the screen must be
    that size: an Xvfb display made for it), waiting up to `wm_wait` s for the window
    manager to do it."""
    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    from inspector.qt.window import MainWindow

    win = MainWindow(restore=False, persist=False)
    win.apply_theme(theme)
    if maximized:
        win.showMaximized()
        # the window manager maps and resizes it asynchronously, late on a loaded machine
        for tick in range(1, int(wm_wait * 100) + 1):
            QApplication.processEvents()
            if is_maximised(win):
                break
            if tick % 300 == 0:  # asked again, as a user double-clicks the title bar again
                win.showNormal()
                win.showMaximized()
            QThread.msleep(10)
    else:
        win.resize(*size)
        win.show()
    _idle(win)
    return win


def is_maximised(win: Any) -> bool:
    """The window manager has maximised the window: it spans its screen's width."""
    screen = win.screen().availableGeometry()
    return bool(win.isMaximized()) and win.frameGeometry().width() >= screen.width() - 2


def _settled(win: Any, maximized: bool, seconds: float = 5.0) -> None:
    """Let the window manager apply the last resize (on a loaded machine it answers late): a
    maximised window back inside the screen, or `seconds` passed (then the checks say so)."""
    import time

    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    if not maximized or QApplication.platformName() == "offscreen":
        return
    screen = win.screen().availableGeometry().adjusted(-1, -1, 1, 1)
    end = time.monotonic() + seconds
    while not screen.contains(win.frameGeometry()) and time.monotonic() < end:
        QApplication.processEvents()
        QThread.msleep(20)


def render(out: Path, sizes: tuple[tuple[int, int], ...] = SIZES,
           states: tuple[str, ...] = STATES, themes: tuple[str, ...] = THEMES,
           maximized: bool = False, wm_wait: float = 20.0) -> list[str]:
    """Write every state's PNG; returns the problems found, one line each."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness.visual_checks import problems

    out.mkdir(parents=True, exist_ok=True)
    found: list[str] = []
    with tempfile.TemporaryDirectory(prefix="inspector-gallery-") as tmp:
        for size in sizes:
            for theme in themes:
                win = make_window(size, theme, maximized, wm_wait)
                if maximized and QApplication.platformName() != "offscreen" \
                        and not is_maximised(win):
                    screen = win.screen().availableGeometry()
                    found.append(f"{theme}-{size[0]}x{size[1]}: the window manager did not "
                                 f"maximise the window (it is {win.width()}x{win.height()} "
                                 f"on a {screen.width()}x{screen.height()} screen); no state "
                                 f"was checked in it")
                    win.close()
                    continue
                for state in states:
                    enter_state(win, state, Path(tmp) / f"{size[0]}-{theme}")
                    _settled(win, maximized)
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
    ap.add_argument("--langchain", type=Path, default=None,
                    help="for the langchain state: a folder with store/ and cases.json (as "
                         "tests/frameworks/data/langchain has them)")
    ap.add_argument("--maximized", action="store_true",
                    help="maximise the window under the running window manager (one size: "
                         "the screen's) instead of resizing it to each size")
    ap.add_argument("--wm-wait", type=float, default=20.0, metavar="SECONDS",
                    help="with --maximized: how long the window manager has to maximise the "
                         "window before the gallery says it did not (default 20)")
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
    if args.langchain is not None:
        PIPELINE["langchain"] = args.langchain
    states = tuple(s for s in args.states.split(",") if s)
    unknown = [s for s in states if s not in ENTER]
    if unknown:
        print(f"gallery: unknown state {unknown[0]!r}; states: {', '.join(STATES)}",
              file=sys.stderr)
        return 2
    found = render(Path(args.outdir), _parse_sizes(args.sizes), states,
                   tuple(t for t in args.themes.split(",") if t), args.maximized,
                   args.wm_wait)
    print(f"wrote {args.outdir}; {len(found)} problems" + (":" if found else ""))
    for line in found:
        print("  " + line)
    app.processEvents()
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
