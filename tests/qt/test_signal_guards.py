"""Widgets the window fills in code say nothing while it fills them, and speak again after,
whatever happened in between: superqt's signals_blocked, never a bare blockSignals pair
(an exception between the two left a widget deaf for the rest of the session)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

QT = Path(__file__).resolve().parents[2] / "inspector" / "qt"


def test_no_bare_block_signals_pair_in_the_window() -> None:
    calls = [f"{p.relative_to(QT)}:{n.lineno}" for p in sorted(QT.rglob("*.py"))
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(n, ast.Attribute) and n.attr == "blockSignals"]
    assert calls == []


def test_the_embedder_picker_speaks_again_after_a_failed_fill(qtbot, monkeypatch) -> None:
    from inspector.qt.pipeline.query_extras import EmbedderPicker

    picker = EmbedderPicker()
    qtbot.addWidget(picker)
    with qtbot.assertNotEmitted(picker.currentIndexChanged):
        picker.show_name("minilm")
    assert picker.currentText() == "minilm" and not picker.signalsBlocked()

    def broken(*_a: object) -> int:
        raise RuntimeError("findData failed")

    monkeypatch.setattr(picker, "findData", broken)
    with pytest.raises(RuntimeError):
        picker.show_name("hash-v1")
    assert not picker.signalsBlocked()
    monkeypatch.undo()
    with qtbot.waitSignal(picker.currentIndexChanged, timeout=1000):
        picker.setCurrentIndex(1)
