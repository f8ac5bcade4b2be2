"""Which engine answers the query bar: the fixed pipeline's view-model, or the view of a
pipeline of stages (FlowMode). A preset, a parameter or the text goes to the one on screen."""

from __future__ import annotations

from typing import Any

from inspector.qt.flow.session import flow_presets
from inspector.qt.pipeline.query_bar import FILE_ITEM


class QueryRouter:
    def __init__(self, win: Any) -> None:
        self.win = win
        self.vm = win.vm

    @property
    def flow(self) -> Any:
        return self.win.flow  # built after the signals are connected

    def text_submitted(self, text: str) -> None:
        vm = self.vm
        if self.flow.active:
            self.flow.submit(text)
            return
        vm.set_query(text, vm.vector_of if not text.strip() or text == vm.text else None)

    def preset_picked(self, name: str | None) -> None:
        if name == FILE_ITEM:  # the pipeline file loaded last, picked again
            if not (self.flow.active and self.flow.session.pipeline_file is not None):
                self.flow.reenter_file()
            return
        self.win.store_features.preset_chosen(name)
        if name in flow_presets():
            self.flow.enter(name)
            return
        self.flow.leave()
        adopted = self._adopt_typed()
        self.vm.set_preset(name)
        if adopted:
            self.vm.run()

    def param_changed(self, key: str, value: Any) -> None:
        if self.flow.active:
            if key == "limit":
                self.flow.set_limit(int(value))
            return
        adopted = self._adopt_typed()
        self.vm.set_param(key, value)
        if adopted:
            self.vm.run()

    def _adopt_typed(self) -> bool:
        """A parameter changed while the query box holds edited text: the query that runs is
        the one on screen, not the one that ran before the edit."""
        vm, typed = self.vm, self.win.query_bar.text.text()
        if not typed.strip() or typed.strip() == vm.text.strip():
            return False
        vm.text, vm.vector_of = typed, None
        vm.query_changed.emit()
        return True

    def run_again(self) -> None:
        """Ctrl+R / F5: fetch again, for whichever pipeline is on screen."""
        if self.flow.active:
            self.flow.session.ask()
        else:
            self.vm.run()
