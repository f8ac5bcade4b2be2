"""The banner's fixes are computed from the current settings: each one moves the pool deeper
(never a no-op, never a lower over-fetch or cap), a fix that needs a higher cap raises it and
the cap control shows it, a receipt offers only what its pool can answer, and the banner, the
sweep tab and safe over-fetch give the same numbers in the same words."""

from __future__ import annotations

from typing import Any

import pytest

from inspector.core.engine.diagnosis import depth_words, safe_words
from inspector.core.engine.params import pool_depth
from tests.qt.qtkit import assert_matches_engine, move


def _fixes(window: Any) -> dict[str, dict[str, Any]]:
    """label -> changes, as the banner's buttons apply them."""
    diag = window.vm.trace.diagnosis
    shown = [b.text() for b in window.banner.buttons]
    return {f.label: dict(f.changes) for f in diag.fixes if f.label in shown}


def _depth(window: Any) -> int:
    p = window.vm.params
    return pool_depth(p.limit, p.overfetch, p.cap)


def _click(window: Any, label: str) -> None:
    button = next(b for b in window.banner.buttons if b.text() == label)
    button.click()
    window.vm.jobs.wait_idle(30)


def test_at_over_fetch_5_5_the_fix_raises_over_fetch_and_the_cap(window) -> None:
    """The issue's regression: at 5.5 the banner offered over-fetch 2.5 (a step back); the
    full page of in-scope rows needs depth 56, past the cap of 50."""
    vm = window.vm
    move(window, "overfetch", 5.5)
    vm.jobs.wait_idle(30)
    before = vm.trace.counters["returned"]
    fixes = _fixes(window)
    forward = {k: v for k, v in fixes.items() if "overfetch" in v or "cap" in v}
    assert list(forward) == ["Apply over-fetch 5.6, cap 56"], fixes
    assert "needs over-fetch 5.6 (depth 56)" in window.banner.message.text()
    _click(window, "Apply over-fetch 5.6, cap 56")
    assert (vm.params.overfetch, vm.params.cap) == (5.6, 56)
    assert window.query_bar.cap.value() == 56  # the cap control shows what the fix set
    assert vm.trace.counters["returned"] >= before
    assert vm.trace.counters["scopedCandidates"] >= vm.params.limit  # a full page in scope
    assert not any("overfetch" in v or "cap" in v for v in _fixes(window).values())
    assert_matches_engine(window)


@pytest.mark.parametrize("start", [1.0, 2.5, 4.0, 5.5, 7.0])
def test_every_fix_offered_fetches_deeper_than_now(window, start) -> None:
    vm = window.vm
    move(window, "overfetch", start)
    vm.jobs.wait_idle(30)
    p, depth = vm.params, _depth(window)
    page = 56  # the demo story's full page of in-scope rows (the banner's own words say so)
    assert "depth 56" in window.banner.message.text()
    deeper = {k: v for k, v in _fixes(window).items() if "overfetch" in v or "cap" in v}
    assert bool(deeper) == (depth < page), (start, depth, deeper)
    for label, changes in deeper.items():
        assert changes.get("overfetch", p.overfetch) >= p.overfetch, label
        assert changes.get("cap", p.cap) >= p.cap or changes.get("cap") == 0, label
        assert pool_depth(p.limit, changes.get("overfetch", p.overfetch),
                          changes.get("cap", p.cap)) > depth, label
        assert changes != {}, label


def test_the_cap_control_drives_the_engine(window) -> None:
    vm, cap = window.vm, window.query_bar.cap
    assert cap.value() == vm.params.cap == 50
    move(window, "overfetch", 6.0)
    vm.jobs.wait_idle(30)
    assert "Raise the cap to 56" in _fixes(window)  # over-fetch suffices; the cap blocks it
    cap.setValue(56)
    vm.jobs.wait_idle(30)
    assert vm.params.cap == 56 and _depth(window) == 56
    assert_matches_engine(window)
    cap.setValue(0)
    vm.jobs.wait_idle(30)
    assert vm.params.cap == 0 and cap.text() == "none"
    assert_matches_engine(window)


def test_banner_and_sweep_give_one_number_in_one_vocabulary(window, qtbot, ready) -> None:
    from tests.qt.tuning.test_tuning_sweep import sweep

    vm = window.vm
    vm.set_param("mode", "vector")  # exact legs: the safe over-fetch exists
    ready(vm)
    banner = window.banner.message.text()
    panel = sweep(window, qtbot)
    q = panel.result.queries[0]
    words = depth_words(q.safe.depth, q.params.limit)  # the same number in the same words;
    assert words in banner and "safe " + words not in banner, (words, banner)  # "safe" only
    assert safe_words(q.safe.depth, q.params.limit) in panel.summary.text()  # where proven
    assert q.safe.reason in banner  # the cap in the same words: "above the cap of 50: ..."


def test_a_receipt_offers_no_fix_its_pool_cannot_run(window) -> None:
    from inspector.core.evidence.bundle import Loaded
    from inspector.qt.tuning import receipts

    vm = window.vm
    assert "Try pushdown" in [b.text() for b in window.banner.buttons]
    pool = vm.session.lanes[0].pool
    receipts.enter_offline(vm, Loaded(pool=pool, params=vm.params, data={}))
    assert vm.store is None
    shown = [b.text() for b in window.banner.buttons]
    assert "Try pushdown" not in shown
    assert "Try pushdown needs the store" in window.banner.message.text()
    for label, changes in _fixes(window).items():
        assert vm.session.answers(vm.params.with_(**changes)), label
