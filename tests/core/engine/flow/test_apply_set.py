"""`--set` (apply_set) makes the changed pipeline from the parts it changes: every part it does
not change is shared with the spec it came from, and the answer, and every refusal, is what
validating the whole changed pipeline again gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from inspector.core.engine.flow.registry import kind_of
from inspector.core.engine.flow.shipped import shipped_names
from inspector.core.engine.flow.spec import PipelineSpec, apply_set, check, load_shipped
from inspector.core.errors import InspectorError


def test_the_stages_a_change_leaves_alone_are_the_spec_s_own() -> None:
    spec = load_shipped("docs-before-fix")
    out = apply_set(spec, {"blend.weight": 0.3})
    for before, after in zip(spec.routes, out.routes, strict=True):
        for a, b in zip(before.stages, after.stages, strict=True):
            if a.name == "blend":
                assert b is not a and b.params == {**a.params, "weight": 0.3}
            else:
                assert b is a
    assert out.system_config is spec.system_config and out.limit is spec.limit
    assert apply_set(spec, {}) == spec


def _assignments(spec: PipelineSpec, rng: random.Random) -> dict[str, Any]:
    keys: list[tuple[str, Any]] = [(f"{st.name}.{d.name}", d) for r in spec.routes
                                   for st in r.stages for d in kind_of(st.kind).params]
    keys += [(k, None) for k in spec.settings]
    keys += [("limit.default", None), ("limit.min", None), ("limit.max", None),
             ("nostage.x", None), ("limit.other", None), ("nosetting", None)]
    given = {}
    for key, d in rng.sample(keys, min(len(keys), rng.randint(1, 3))):
        if d is None:
            given[key] = rng.choice([1, 3, 10, 0, 100_000, "x", None, True, 2.5, ""])
        elif d.choices:
            given[key] = rng.choice([*d.choices, "bogus"])
        elif d.type in ("float", "int"):
            given[key] = rng.choice([d.default, 0, 1, 0.5, -1, 1e9, "x", None, 3])
        else:
            given[key] = rng.choice([d.default, "x", "", None, 1, True])
    return given


@pytest.mark.parametrize("name", shipped_names())
def test_a_change_equals_the_whole_pipeline_validated_again(name: str) -> None:
    spec = load_shipped(name)
    rng = random.Random(name)
    answered = refused = 0
    for _ in range(40):
        given = _assignments(spec, rng)
        try:
            out = apply_set(spec, given)
        except InspectorError:
            refused += 1
            continue
        answered += 1
        again = PipelineSpec.model_validate(out.model_dump(by_alias=True))
        check(again)  # nothing the whole check would refuse got through
        assert again == out
        for key, value in given.items():  # and each change is in it
            stage, _, param = key.partition(".")
            if stage == "limit":
                assert getattr(out.limit, param) == value
            elif param:
                assert all(st.params[param] == kind_of(st.kind).by_name[param].check(value, st.name)
                           for r in out.routes for st in r.stages if st.name == stage)
            else:
                assert out.settings[key] == value
    assert answered and refused
