"""A stage's parameters are checked once per dict a pipeline gives (`runner._resolved`: by
the dict's identity first, then by its content), each run handed its own copy; a dict made
anew with other values is checked as itself, whatever id it is given."""

from __future__ import annotations

import pytest

from inspector.core.engine.flow import runner
from inspector.core.engine.flow.registry import kind_of
from inspector.core.errors import InspectorError


def test_a_stages_parameters_are_each_dicts_own_and_handed_out_as_copies() -> None:
    kind = kind_of("importance_blend")
    for i in range(200):  # dicts made and dropped: CPython hands their ids out again
        given = {"weight": i / 200}
        got = runner._resolved(kind, "importance_blend", "blend", given)
        assert got == kind.resolve(given, "blend")
        assert got["weight"] == i / 200
        again = runner._resolved(kind, "importance_blend", "blend", given)
        assert again == got and again is not got  # each run keeps its own dict
        got["weight"] = again["weight"] = 9.0
        assert runner._resolved(kind, "importance_blend", "blend", given)["weight"] == i / 200
        del given, got, again
    given = {"weight": 0.5}
    runner._resolved(kind, "importance_blend", "blend", given)
    other = kind_of("min_score")
    assert runner._resolved(other, "min_score", "cut", {"min": 0.25})["min"] == 0.25
    with pytest.raises(InspectorError):  # a value the kind refuses is refused every time
        runner._resolved(kind, "importance_blend", "blend", {"weight": "heavy"})
    with pytest.raises(InspectorError):
        runner._resolved(kind, "importance_blend", "blend", {"weight": "heavy"})
