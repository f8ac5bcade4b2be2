"""Query-bar helpers for real stores: the embedder picker.

The picker never embeds anything itself: it only sets the question's embedder name, which the
engine reads like `inspector query --embedder`.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QWidget
from superqt.utils import signals_blocked

from inspector.core.stores.embed import is_hosted
from inspector.core.stores.openai_embed import KEY_VARS, KNOWN_MODELS


def api_key_set(environ: Any = None) -> bool:
    env = os.environ if environ is None else environ
    return any(env.get(k, "").strip() for k in KEY_VARS)


def no_key_message(name: str) -> str:
    return (f"Embedding with {name} needs an API key in OPENAI_API_KEY (or "
            "INSPECTOR_EMBED_API_KEY) set before the inspector starts; until then, right-click "
            "a row and choose Use as query to search by example.")


class EmbedderPicker(QComboBox):
    """Which embedder turns query text into a vector; editable for any openai:MODEL."""

    embedder_picked = Signal(object)  # name, or None for the store's own

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, objectName="embedder", editable=True)
        self.setToolTip("Embedder for the query text. 'store's own' uses the one the store "
                        "records; hosted models (openai:MODEL) read the key from "
                        "OPENAI_API_KEY or INSPECTOR_EMBED_API_KEY, never from settings. "
                        "Query by example (right-click a row) needs no embedder.")
        self.setMinimumContentsLength(16)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.activated.connect(lambda _: self._picked())
        self.lineEdit().editingFinished.connect(self._picked)
        self._shown: str | None = None
        self.fill(None, None)

    def fill(self, dim: int | None, recorded: str | None) -> None:
        """Offer the store's own embedder, the local ones and hosted models for its dimension."""
        with signals_blocked(self):
            self.clear()
            own = f"store's own ({recorded})" if recorded else "none recorded: pick one"
            self.addItem(own, None)
            self.addItem("hash-v1", "hash-v1")
            self.addItem("minilm", "minilm")
            for model, d in KNOWN_MODELS.items():
                if dim is None or d == dim:
                    self.addItem(f"openai:{model}", f"openai:{model}")
            self.setCurrentIndex(0)
            self.lineEdit().setCursorPosition(0)  # show the start of a long name, not its end
        self._shown = None

    def show_name(self, name: str | None) -> None:
        """Show `name` as the one in use (None: the store's own), without a pick signal."""
        if name is None:
            return
        with signals_blocked(self):
            idx = self.findData(name)
            if idx >= 0:
                self.setCurrentIndex(idx)
            else:
                self.setEditText(name)
        self._shown = name

    def current_name(self) -> str | None:
        text = self.currentText().strip()
        idx = self.findText(text)
        if idx >= 0:
            return self.itemData(idx)
        return text or None

    def _picked(self) -> None:
        name = self.current_name()
        if name != self._shown:
            self._shown = name
            self.embedder_picked.emit(name)

    @staticmethod
    def missing_key(name: str | None) -> str | None:
        """The one-sentence reason a hosted embedder cannot work yet, else None."""
        if name and is_hosted(name) and not api_key_set():
            return no_key_message(name)
        return None
