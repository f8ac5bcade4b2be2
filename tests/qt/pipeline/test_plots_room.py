"""The plots below the stage list yield their room where the splitter could not keep both
panes' least heights (it would lay the list over the plots' titles), at every window height,
also for a one-stage pipeline under a tall banner and index bar."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_the_stage_list_never_lies_over_the_plots_at_any_height(window: Any,
                                                                 tmp_path: Path) -> None:
    """CI caught LlamaIndex's IVF_PQ table at 1024x700 with the list 3 px over the plots: the
    room was reckoned from the stages' headers and one table, below the list's own least
    height (190 px here); from 1024x738 to 1024x748 it lay 14-22 px over them."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.harness import gallery
    from inspector.qt.harness.visual_checks import splitter_problems

    gallery._state_llamaindex(window, tmp_path)
    assert len(window.vm.trace.stages) == 1 and not window.index_bar.isHidden()
    bad, shown = [], 0
    for w in (1024, 1366):
        for h in range(560, 820, 4):
            window.resize(w, h)
            QApplication.processEvents()
            window._fit_plots()
            QApplication.processEvents()
            shown += window.splitters["plots"].isVisible()
            bad += [(w, h, p) for p in splitter_problems(window)]
    assert bad == []
    assert shown  # and where there is room, the plots are there
