"""Persistent settings: window layout, recent stores, the last question asked, theme.

QSettings objects are made on demand (after the application name is set), never at import;
the INI format everywhere means tests can redirect them with QSettings.setPath."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QSettings

from inspector.core.errors import InspectorError
from inspector.core.stores.options import OpenOptions, looks_secret, without_userinfo
from inspector.core.stores.safety import outputs
from inspector.qt import fit, theme

if TYPE_CHECKING:  # the engine loads after the first paint, not with the settings
    from inspector.core.engine.flow.question import Question

ORG = "memory-store-inspector"
APP = "inspector"
MAX_RECENT = 8
RECENT_OPTIONS = "recent/options"  # JSON {uri: {"table", "storage", "docs_model"}}
QUESTION = "question/json"  # the window's question (flow.question.Question) as JSON
OLD_KEYS = ("params/preset", "params/given", "params/compare", "params/text",
            "question/compare")


def settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                     QCoreApplication.organizationName() or ORG,
                     QCoreApplication.applicationName() or APP)


def refused() -> str | None:
    """Why settings are not written now (their file lies inside a store this process opened,
    e.g. XDG_CONFIG_HOME pointed into it), as one sentence; None when they are."""
    path = settings().fileName()
    hit = outputs.inside_store(path)
    return None if hit is None else (f"Settings are not saved: their file {path} is inside "
                                     f"the store {hit}, and the inspector never writes into a "
                                     f"store.")


def _writable() -> QSettings | None:
    """The settings to write to, or None while they may not be written (`refused`)."""
    return None if refused() is not None else settings()


def recent_stores() -> list[str]:
    value = settings().value("recent", [])
    if isinstance(value, str):  # QSettings returns a bare string for one-element lists
        value = [value]
    return [str(v) for v in (value or [])]


def add_recent(uri: str) -> list[str]:
    uri = without_userinfo(uri)  # a user:password@ part never reaches the settings file
    items = [uri, *[u for u in recent_stores() if u != uri]][:MAX_RECENT]
    if (s := _writable()) is not None:
        s.setValue("recent", items)
    return items


def save_question(question: Question) -> None:
    """Keep the window's question (store URI without credentials); the old keys go."""
    from inspector.core.stores.safety.redact import redact_uri

    s = _writable()
    if s is None:
        return
    safe = question.model_copy(update={"store": redact_uri(question.store)})
    s.setValue(QUESTION, safe.model_dump_json(by_alias=True))
    for key in OLD_KEYS:
        s.remove(key)


def load_question() -> Question | None:
    """The saved question; None when none was saved or it does not validate (the window
    keeps its defaults)."""
    from inspector.core.engine.flow.question import Question

    s = settings()
    if not s.contains(QUESTION):
        return None
    try:
        return Question.model_validate(json.loads(str(s.value(QUESTION))))
    except (ValueError, RecursionError):  # a pydantic ValidationError is a ValueError
        return None


def _restore_question(win: Any) -> None:
    """The saved question into the window, without asking it (the store it names asks it
    when that store opens again); one that no longer validates here is ignored."""
    from inspector.core.engine.flow.question import resolve

    saved = load_question()
    if saved is None or saved.preset is None and saved.pipeline_file is None:
        return
    try:
        resolve(saved)  # a pipeline, --set or config this inspector cannot run is not kept
        win.vm.question.replace_with(saved)
    except (InspectorError, ValueError):
        return


def save_state(name: str, value: Any) -> None:
    if (s := _writable()) is not None:
        s.setValue(name, value)


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
    geometry = load_state("window/geometry")
    if geometry is None or not win.restoreGeometry(geometry):
        fit.place_first(win)
    fit.clamp_to_screen(win)  # saved on a larger screen, or a display since unplugged
    for name in splitters:
        state = load_state(f"splitters/{name}")
        if state is not None:
            win.splitters[name].restoreState(state)
    win.theme_choice = str(load_state("theme") or "system")
    if win.theme_choice not in theme.THEMES:
        win.theme_choice = "system"
    _restore_question(win)


def save_window(win: Any, splitters: tuple[str, ...]) -> None:
    """What restore_window reads back."""
    save_state("window/geometry", win.saveGeometry())
    save_state("window/docks", win.saveState())
    for name, sp in win.splitters.items():
        save_state(f"splitters/{name}", sp.saveState())
    save_state("theme", win.theme_choice)
    if win.vm.question.store:
        save_question(win.vm.question.plain())
