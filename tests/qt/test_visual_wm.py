"""The visual checks under a real window manager (issue 20): the gallery's states rendered in
a maximised window on an Xvfb screen of each size with openbox drawing title bar and frame,
light and dark, so the window has the room a user's has (about 20 px less than offscreen).
And the cut-text checks themselves, on widgets built to be cut (they must not pass a defect)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from inspector.qt.harness.cut_checks import cut_label_problems, cut_plot_text_problems
from inspector.qt.harness.painted import cut_painted_problems, painted_texts

STATES = ("scoped-miss,importance,deep-pool,tuning-dock,tour-scoped-miss,tour-tie,tour-again,"
          "lost-to-index,llamaindex-ivf")
LANGCHAIN = Path(__file__).resolve().parents[1] / "frameworks" / "data" / "langchain"


@pytest.fixture
def wm_screen(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, int]]:
    """DISPLAY of a fresh Xvfb screen of the size asked, with openbox managing it (its log
    and session files in a temporary folder, never the user's ~/.cache).

    A screen whose openbox cannot open it is made again, up to three times: once in a CI run
    a new Xvfb had written its display number and openbox, started on it, still found no
    display ("Failed to open the display"). Each failed try's Xvfb and openbox logs go into
    the failure if every try fails."""
    if not (shutil.which("Xvfb") and shutil.which("openbox")):
        pytest.skip("Xvfb and openbox are not installed")
    w, h = request.param
    failures: list[str] = []
    for _ in range(3):
        home = tmp_path_factory.mktemp("openbox")
        screen = _Screen(w, h, home)
        why = screen.wait_for_wm()
        if why is None:
            break
        screen.close()
        failures.append(why)
    else:
        pytest.fail("openbox never took a fresh screen:\n" + "\n".join(failures))
    try:
        yield screen.display, w, h
        assert screen.wm.poll() is None, \
            f"openbox exited during the test (code {screen.wm.returncode}): {screen.logs()}"
    finally:
        screen.close()


class _Screen:
    """One Xvfb server of w x h and an openbox started on it, each logging into `home`."""

    def __init__(self, w: int, h: int, home: Path) -> None:
        self.home = home
        self.xvfb_log = open(home / "xvfb.err", "w+b")  # noqa: SIM115 - closed in close()
        read, write = os.pipe()
        self.xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                                      f"{w}x{h}x24", "-nolisten", "tcp"], pass_fds=(write,),
                                     stdout=subprocess.DEVNULL, stderr=self.xvfb_log)
        os.close(write)
        with os.fdopen(read) as f:
            self.display = ":" + f.readline().strip()  # written once it accepts clients
        self.env = {**os.environ, "DISPLAY": self.display,
                    "XDG_CACHE_HOME": str(home / "cache"), "XDG_DATA_HOME": str(home / "data")}
        self.wm_log = open(home / "openbox.err", "w+b")  # noqa: SIM115 - closed in close()
        self.wm = subprocess.Popen(["openbox"], env=self.env, stdout=subprocess.DEVNULL,
                                   stderr=self.wm_log)

    def logs(self) -> str:
        """The tails of openbox's and Xvfb's logs."""
        wm = (self.home / "openbox.err").read_text(errors="replace")[-1500:]
        xvfb = (self.home / "xvfb.err").read_text(errors="replace")[-1500:]
        return f"openbox: {wm!r}; Xvfb on {self.display} (code {self.xvfb.poll()}): {xvfb!r}"

    def wait_for_wm(self, seconds: float = 60.0) -> str | None:
        """None once openbox owns the screen (it has set its check window), else why not: a
        window shown on a screen no window manager manages is never maximised, and every
        check after reads a window of its natural size."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.wm.poll() is not None:
                return f"openbox exited at start (code {self.wm.returncode}): {self.logs()}"
            probe = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"],
                                   env=self.env, capture_output=True, text=True)
            if "window id" in probe.stdout:
                return None
            time.sleep(0.1)
        return f"openbox did not take the screen within {seconds:.0f} s: {self.logs()}"

    def close(self) -> None:
        self.wm.terminate()
        self.xvfb.terminate()
        self.wm.wait(10)
        self.xvfb.wait(10)
        self.wm_log.close()
        self.xvfb_log.close()


def _gallery_passes(display: str, out: Path, size: str, states: str, *extra: str) -> None:
    """The gallery run maximised on this display finds no problem (light and dark)."""
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, "-m", "inspector.qt.harness.gallery", str(out),
                           "--sizes", size, "--maximized", "--states", states, *extra],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:] + done.stdout[-3000:]
    assert done.stdout.startswith(f"wrote {out}; 0 problems"), done.stdout[-3000:]


@pytest.mark.skipif(shutil.which("xprop") is None, reason="xprop is not installed")
@pytest.mark.parametrize("wm_screen", [(1366, 768), (1920, 1080)], indirect=True,
                         ids=["1366x768", "1920x1080"])
def test_a_pipeline_of_stages_passes_the_checks_maximised_under_openbox(
        wm_screen: tuple[str, int, int], tmp_path: Path) -> None:
    """memory-lancedb-pro's pipeline (13 stages on its hybrid route) on the store the plugin
    wrote, asked in one scope that starves it, and LangChain's post-filter starvation with
    the banner's fix clicked, at a laptop's 1366x768 and 1920x1080 with a title bar: every
    stage's header whole and in view, the stage that matters open with its rows, nothing cut
    (visual_checks.flow_problems)."""
    from tests.core.engine.flow.fixtures import fixture_copy

    display, w, h = wm_screen
    fixture = fixture_copy("memory-lancedb-pro", tmp_path)
    _gallery_passes(display, tmp_path / "shots", f"{w}x{h}", "pipeline,langchain,switch-store",
                    "--pipeline-fixture", str(fixture), "--langchain", str(LANGCHAIN))


@pytest.mark.skipif(shutil.which("xprop") is None, reason="xprop is not installed")
@pytest.mark.parametrize("wm_screen", [(1024, 700), (1366, 768), (1920, 1080)], indirect=True,
                         ids=["1024x700", "1366x768", "1920x1080"])
def test_gallery_passes_the_checks_maximised_under_openbox(wm_screen: tuple[str, int, int],
                                                          tmp_path: Path) -> None:
    display, w, h = wm_screen
    out = tmp_path / "shots"
    _gallery_passes(display, out, f"{w}x{h}", STATES)
    shot = QImage(str(out / f"scoped-miss-dark-{w}x{h}.png"))
    # the client area: the full width, the height less openbox's title bar and frame
    assert shot.width() == w and h - 60 < shot.height() < h, (shot.width(), shot.height())
    # the tuning dock opened by the user's path (its menu item, Ctrl+T) docked, not floating:
    # a floating dock is saved as a picture of its own
    assert not list(out.glob("tuning-dock-*-tuningDock.png"))


@pytest.fixture
def bare_screen() -> Iterator[str]:
    """DISPLAY of a fresh 1366x768 Xvfb screen that no window manager manages."""
    if not shutil.which("Xvfb"):
        pytest.skip("Xvfb is not installed")
    read, write = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1366x768x24",
                             "-nolisten", "tcp"], pass_fds=(write,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as f:
        display = ":" + f.readline().strip()
    try:
        yield display
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def test_a_window_the_window_manager_never_maximised_is_named_not_checked(
        bare_screen: str, tmp_path: Path) -> None:
    """With no window manager at work the window keeps its natural size: the gallery says the
    window was not maximised, instead of reporting the layout of a window no user has (a
    floating dock over the stages, a narrow text column) as the window's problems."""
    env = {**os.environ, "DISPLAY": bare_screen, "QT_QPA_PLATFORM": "xcb"}
    done = subprocess.run([sys.executable, "-m", "inspector.qt.harness.gallery",
                           str(tmp_path / "shots"), "--sizes", "1366x768", "--maximized",
                           "--states", "scoped-miss,tuning-dock", "--themes", "light",
                           "--wm-wait", "2"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0].endswith("; 1 problems:"), done.stdout
    assert "light-1366x768: the window manager did not maximise the window" in lines[1]
    assert "on a 1366x768 screen" in lines[1], lines[1]
    assert not list((tmp_path / "shots").glob("*.png"))


def test_a_wrapped_label_short_of_its_lines_is_found(qtbot) -> None:
    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    key = QLabel("one two three four five six seven eight nine ten " * 3, objectName="key")
    key.setWordWrap(True)
    key.setFixedHeight(key.fontMetrics().lineSpacing() + 2)  # room for one line
    lay.addWidget(key)
    box.resize(160, 200)
    box.show()
    qtbot.waitExposed(box)
    assert any("label key needs" in p for p in cut_label_problems(box))
    key.setFixedHeight(key.heightForWidth(key.width()))
    assert cut_label_problems(box) == []


def test_a_one_line_label_narrower_than_its_text_is_found(qtbot) -> None:
    box = QWidget()
    qtbot.addWidget(box)
    note = QLabel("out of scope: removed by the scope filter", box, objectName="note")
    note.setGeometry(0, 0, 60, 20)
    box.resize(200, 40)
    box.show()
    qtbot.waitExposed(box)
    assert cut_label_problems(box) == [f"label note needs {note.minimumSizeHint().width()} "
                                       "px, has 60: cut"]


def test_a_tick_label_past_the_plot_edge_is_found(qtbot) -> None:
    import pyqtgraph as pg

    plot = pg.PlotWidget(objectName="p")
    qtbot.addWidget(plot)
    plot.resize(300, 200)
    plot.show()
    qtbot.waitExposed(plot)
    item = plot.getPlotItem()
    item.layout.setContentsMargins(0, 0, 0, 0)
    item.setRange(yRange=(0.0, 1.0), padding=0)  # the 1.0 label centred on the top edge
    qtbot.waitUntil(lambda: any("'1.0' is cut" in p for p in cut_plot_text_problems(plot)),
                    timeout=10_000)
    item.setRange(yRange=(-0.1, 1.1), padding=0)
    qtbot.waitUntil(lambda: cut_plot_text_problems(plot) == [], timeout=10_000)


def test_a_line_label_centred_on_the_plot_edge_is_found(qtbot) -> None:
    """A line's label centred near the view's left edge reads "mit" for "limit": its glyphs
    reach past the view box that clips it, though what is left of it lies inside the plot."""
    import pyqtgraph as pg

    plot = pg.PlotWidget()
    plot.setObjectName("p")
    qtbot.addWidget(plot)
    plot.resize(300, 200)
    line = pg.InfiniteLine(pos=0.5, angle=0, label="limit", labelOpts={"position": 0.0})
    plot.addItem(line)
    plot.getPlotItem().setRange(xRange=(0, 1), yRange=(-0.1, 1.1), padding=0)
    plot.show()
    qtbot.waitExposed(plot)
    assert cut_painted_problems(plot) == ["p: the painted text 'limit' is cut"]
    line.label.anchors = [(0, 1), (0, 1)]  # its left edge on the view's: whole
    line.label.updatePosition()
    assert cut_painted_problems(plot) == []


class _Verdict(QWidget):
    """Paints a verdict into a rectangle narrower than its text (as the waterfall did)."""

    def __init__(self, room: int) -> None:
        super().__init__(objectName="verdict")
        self.room = room

    def paintEvent(self, _event: object) -> None:  # noqa: N802 - Qt's name
        from PySide6.QtCore import QRectF, Qt
        from PySide6.QtGui import QPainter

        p = QPainter(self)
        p.drawText(QRectF(4, 0, self.room, 20), Qt.AlignmentFlag.AlignVCenter,
                   "rank 2 ≤ 5: returned")
        p.end()


def test_a_painted_text_cut_by_its_rectangle_or_the_widget_is_found(qtbot) -> None:
    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    narrow, wide = _Verdict(40), _Verdict(400)
    for w in (narrow, wide):
        lay.addWidget(w)
    box.resize(500, 80)
    box.show()
    qtbot.waitExposed(box)
    cut = "verdict: the painted text 'rank 2 ≤ 5: returned' is cut"
    assert cut_painted_problems(box) == [cut]  # the narrow one, clipped to its rectangle
    box.resize(60, 80)  # the wide one's rectangle now reaches past the widget
    qtbot.waitUntil(lambda: wide.width() < 100)
    assert cut_painted_problems(box) == [cut, cut]


def test_the_waterfall_fits_its_verdicts_at_a_narrow_width(qtbot) -> None:
    """The score waterfall as wide as the detail pane at 1024x700: every text whole or
    ending in "…" (the tooltip has them all)."""
    from inspector.qt.pipeline.detail import Step, Waterfall

    fall = Waterfall()
    qtbot.addWidget(fall)
    steps = [Step("distance (L2²)", "0.2121", kind="verdict"),
             Step("vector 1/(1+d)", "0.8250", 0.0, 0.825),
             Step("× imp 0.15 · w 0.50", "× 0.575", 0.825, 0.474, kind="down"),
             Step("blended score", "0.4744", 0.0, 0.474, kind="total"),
             Step("min score 0", "passes", 0.0, 0.0, kind="threshold"),
             Step("limit 5", "rank 2 ≤ 5: returned", kind="verdict")]
    fall.set_steps(steps)
    fall.resize(215, fall.minimumHeight())
    fall.show()
    qtbot.waitExposed(fall)
    assert cut_painted_problems(fall) == []
    shown = [t.text for t in painted_texts(fall)]
    assert "rank 2 ≤ 5: returned" in shown and "0.4744" in shown
    assert "limit 5: rank 2 ≤ 5: returned" in fall.toolTip()
