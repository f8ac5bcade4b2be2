"""Persistent settings: window layout, recent stores, last parameters, theme.

QSettings objects are made on demand (after the application name is set), never at import;
the INI format everywhere means tests can redirect them with QSettings.setPath."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QCoreApplication, QSettings

from inspector.core.stores.options import OpenOptions, looks_secret, without_userinfo
from inspector.qt import fit, theme

ORG = "memory-store-inspector"
APP = "inspector"
MAX_RECENT = 8
RECENT_OPTIONS = "recent/options"  # JSON {uri: {"table", "storage", "docs_model"}}


def settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                     QCoreApplication.organizationName() or ORG,
                     QCoreApplication.applicationName() or APP)


def recent_stores() -> list[str]:
    value = settings().value("recent", [])
    if isinstance(value, str):  # QSettings returns a bare string for one-element lists
        value = [value]
    return [str(v) for v in (value or [])]


def add_recent(uri: str) -> list[str]:
    uri = without_userinfo(uri)  # a user:password@ part never reaches the settings file
    items = [uri, *[u for u in recent_stores() if u != uri]][:MAX_RECENT]
    settings().setValue("recent", items)
    return items


def save_params(preset: str | None, given: dict[str, Any], compare: bool, text: str) -> None:
    s = settings()
    s.setValue("params/preset", preset or "")
    s.setValue("params/given", json.dumps(given))
    s.setValue("params/compare", compare)
    s.setValue("params/text", text)


def load_params() -> tuple[str | None, dict[str, Any], bool, str] | None:
    s = settings()
    if not s.contains("params/given"):
        return None
    try:
        given = json.loads(str(s.value("params/given", "{}")))
    except ValueError:
        return None
    if not isinstance(given, dict):
        return None
    if isinstance(given.get("scope_map"), list):  # JSON turned the frozen map into lists
        given["scope_map"] = tuple((k, tuple(v)) for k, v in given["scope_map"])
    compare = str(s.value("params/compare", "false")).lower() == "true"
    return (str(s.value("params/preset", "")) or None, given, compare,
            str(s.value("params/text", "")))


def save_state(name: str, value: Any) -> None:
    settings().setValue(name, value)


def load_state(name: str) -> Any:
    return settings().value(name)


# ---- Open Recent ------------------------------------------------------------------------------

def _all_recent() -> dict[str, dict[str, Any]]:
    raw = load_state(RECENT_OPTIONS)
    try:
        data = json.loads(str(raw)) if raw else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def remember(uri: str, table: str | None, options: OpenOptions | None) -> None:
    """Keep the non-secret way this URI was opened, for Open Recent."""
    data = _all_recent()
    entry = (options or OpenOptions()).remembered()
    if table:
        entry["table"] = table
    data[without_userinfo(uri)] = entry
    keep = set(recent_stores()) | {without_userinfo(uri)}
    save_state(RECENT_OPTIONS, json.dumps({k: v for k, v in data.items() if k in keep}))


def recalled(uri: str) -> tuple[str | None, OpenOptions]:
    """The table and options a recent URI was last opened with."""
    entry = _all_recent().get(uri) or {}
    storage = entry.get("storage") if isinstance(entry.get("storage"), dict) else {}
    opts = OpenOptions.make({str(k): str(v) for k, v in storage.items()
                             if not looks_secret(str(k))},
                            docs_model=entry.get("docs_model") or None)
    table = entry.get("table")
    return (str(table) if table else None), opts


# ---- the window between sessions ----

def restore_window(win: Any, splitters: tuple[str, ...]) -> None:
    """The window as the user left it: geometry (kept on screen), table headers, splitters,
    theme, and the last query and parameters."""
    from inspector.core.engine.trace import STAGES

    geometry = load_state("window/geometry")
    if geometry is None or not win.restoreGeometry(geometry):
        fit.place_first(win)
    fit.clamp_to_screen(win)  # saved on a larger screen, or a display since unplugged
    win.stages.header_states = {
        stage: state for stage in STAGES
        if (state := load_state(f"tables/{stage}")) is not None}
    for name in splitters:
        state = load_state(f"splitters/{name}")
        if state is not None:
            win.splitters[name].restoreState(state)
    win.theme_choice = str(load_state("theme") or "system")
    if win.theme_choice not in theme.THEMES:
        win.theme_choice = "system"
    saved = load_params()
    if saved is not None:
        preset, given, compare, text = saved
        win.vm.restore(preset, given, compare)
        win.vm.text = text
        win.query_bar.show_query(text, None)


def save_window(win: Any, splitters: tuple[str, ...]) -> None:
    """What restore_window reads back."""
    save_state("window/geometry", win.saveGeometry())
    save_state("window/docks", win.saveState())
    for name, sp in win.splitters.items():
        save_state(f"splitters/{name}", sp.saveState())
    if win.stages.lanes:
        for stage, view in win.stages.lanes[0].views.items():
            header = view.table.horizontalHeader()
            save_state(f"tables/{stage}", header.saveState())
    save_state("theme", win.theme_choice)
    vm = win.vm
    save_params(vm.preset, vm.given, vm.compare, vm.text)
