"""Expected rows in the view-model: ids the user expected, and where each was dropped.

A mixin of `viewmodel.Inspector` (it uses the view-model's signals, traces and job runner);
the analysis itself is `core.expect.analyse`, run in a worker because it queries LanceDB."""

from __future__ import annotations

from typing import Any

from inspector.qt import workers
from inspector.qt.workers import Answer


class ExpectedRows:
    """set_expected / toggle_expected, and the debounced background analysis they start."""

    def set_expected(self, ids: list[str]) -> None:
        self.expected = list(dict.fromkeys(str(i) for i in ids if str(i).strip()))
        self.expectations = ()
        self.expect_busy = bool(self.expected and self.traces)
        self.expectations_changed.emit()
        self.trace_changed.emit()
        if self.expect_busy:
            self._expect_timer.start(0)

    def toggle_expected(self, row_id: Any) -> None:
        rid = str(row_id)
        ids = [i for i in self.expected if i != rid] if rid in self.expected \
            else [*self.expected, rid]
        self.set_expected(ids)

    def _start_expect(self) -> None:
        if not (self.expected and self.traces and self.query is not None) or self.store is None:
            self.expect_busy = False
            self.expectations_changed.emit()
            if self.expected and self.store is None and self.traces:
                self.fail("Expected-row analysis searches the store, and this receipt is open "
                           "without it; open the store to analyse expected rows.")
            return
        self._expect_generation += 1
        self._run(workers.expect_job, self._expect_generation, self.store, self.query,
                  self.traces, list(self.expected), dict(self._exhaustive),
                  on_answer=self._expected_ready)

    def _expected_ready(self, ans: Answer) -> None:
        if ans.generation != self._expect_generation:
            return
        self.expect_busy = False
        if ans.error:
            self.fail(ans.error)
        else:
            self.expectations, self._exhaustive = ans.value
        self.expectations_changed.emit()
