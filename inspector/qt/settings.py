"""Persistent settings: window layout, recent stores, last parameters, theme.

QSettings objects are made on demand (after the application name is set), never at import;
the INI format everywhere means tests can redirect them with QSettings.setPath."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QCoreApplication, QSettings

ORG = "memory-store-inspector"
APP = "inspector"
MAX_RECENT = 8


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
    from inspector.qt.store_options import without_userinfo

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
