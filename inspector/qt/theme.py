"""Light and dark palettes that follow the system colour scheme, plus the colour tokens the
panels and plots share. Resources are plain files found at run time."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("system", "light", "dark")


@dataclass(frozen=True)
class Tokens:
    """Semantic colours; every panel and plot reads these instead of hard-coding hex values."""

    dark: bool
    background: str
    surface: str
    text: str
    muted: str
    grid: str
    accent: str  # selection, the focused row
    returned: str  # rows that reach the final results
    scoped: str  # in scope but not returned
    out: str  # out of scope
    cut: str  # below min score / removed
    expected: str  # rows the user expects
    ok_bg: str
    warn_bg: str
    bad_bg: str
    error_bg: str


LIGHT = Tokens(dark=False, background="#ffffff", surface="#f4f6f8", text="#1d2330",
               muted="#6b7280", grid="#d9dde3", accent="#e07b00", returned="#1a9e55",
               scoped="#2f6fdb", out="#9aa3ad", cut="#d0453a", expected="#b7791f",
               ok_bg="#e6f4ea", warn_bg="#fff4d6", bad_bg="#fde7e4", error_bg="#fbd5d0")
DARK = Tokens(dark=True, background="#1e2127", surface="#262a31", text="#e3e6ea",
              muted="#9299a3", grid="#3a3f48", accent="#ffa53a", returned="#4cc47f",
              scoped="#6fa0ff", out="#6c737d", cut="#ff6b5e", expected="#f0b54a",
              ok_bg="#1f3a2a", warn_bg="#4a3b12", bad_bg="#4d2320", error_bg="#5c2520")


def outcome_colour(t: Tokens, outcome: str) -> str:
    """The one colour of each row outcome (returned, past the limit, below the min score,
    out of scope, not fetched) in tables and plots."""
    return {"returned": t.returned, "past_limit": t.scoped, "below_min_score": t.cut,
            "out_of_scope": t.out, "not_fetched": t.out}[outcome]


def resource(name: str) -> str:
    """Filesystem path of a bundled resource file (icons, stylesheet)."""
    return str(files("inspector.resources") / name)


def app_icon() -> QIcon:
    return QIcon(resource("inspector.svg"))


def system_is_dark() -> bool:
    """Qt 6.5+ reports the platform's colour scheme; unknown (e.g. offscreen) means light."""
    hints = QGuiApplication.styleHints()
    return hints.colorScheme() == Qt.ColorScheme.Dark


def tokens_for(choice: str) -> Tokens:
    if choice == "dark" or (choice == "system" and system_is_dark()):
        return DARK
    return LIGHT


def _palette(t: Tokens) -> QPalette:
    pal = QPalette()
    c = QColor
    roles = {
        QPalette.ColorRole.Window: t.surface, QPalette.ColorRole.WindowText: t.text,
        QPalette.ColorRole.Base: t.background, QPalette.ColorRole.AlternateBase: t.surface,
        QPalette.ColorRole.Text: t.text, QPalette.ColorRole.Button: t.surface,
        QPalette.ColorRole.ButtonText: t.text, QPalette.ColorRole.ToolTipBase: t.background,
        QPalette.ColorRole.ToolTipText: t.text, QPalette.ColorRole.PlaceholderText: t.muted,
        QPalette.ColorRole.Highlight: "#2f6fdb" if not t.dark else "#3d5f9e",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.Link: t.scoped,
        QPalette.ColorRole.Mid: t.grid, QPalette.ColorRole.Midlight: t.grid,
    }
    for role, colour in roles.items():
        pal.setColor(role, c(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText,
                 QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, c(t.muted))
    return pal


def apply_theme(app: QApplication, choice: str) -> Tokens:
    """Fusion style with our palette and stylesheet; returns the tokens now in force."""
    t = tokens_for(choice)
    if app.property("inspectorTokens") == repr(t):
        return t  # already in force: restyling the whole application costs ~0.5 s
    app.setStyle("Fusion")
    app.setPalette(_palette(t))
    try:
        with open(resource("style.qss"), encoding="utf-8") as fh:
            app.setStyleSheet(fh.read())
    except OSError:  # a missing stylesheet only costs looks
        pass
    app.setProperty("inspectorTokens", repr(t))
    return t
