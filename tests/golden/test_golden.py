"""Every documented example command gives exactly the recorded output (timings blanked), up
to the last bits of its floats."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from tests.golden.record import EXPECTED, outputs

# A float as the outputs print it (1.25, -0.5e-07, 3e+16), not part of a word, an id or a
# version (0.40.0); integers (ranks, counts, exit codes) are not floats and compare exactly.
FLOAT = re.compile(r"(?<![\w.])-?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])")
# How far a float may move: numpy hands dot products, norms and the pool map's SVD to OpenBLAS,
# whose kernel (picked for the CPU at run time) sets the order of its sums, so the last bits
# differ between machines (the map's explained variance moved by 1.3e-15 relative, on a
# machine whose OpenBLAS picks its Haswell kernel rather than the SkylakeX one that recorded
# it). A real change (a weight, a formula, a cut) moves a score by far more than 1e-9.
REL, ABS = 1e-9, 1e-12


@pytest.fixture(scope="module")
def produced(demo_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = str(tmp_path_factory.mktemp("golden"))
    return dict(outputs(str(demo_path), tmp))


def assert_same_output(got: str, want: str, name: str) -> None:
    """Everything but the floats byte for byte (ids, order, texts, integers), and each float
    within REL (ABS near zero) of the recorded one."""
    hint = f"`{name}` changed; rerun tests/golden/record.py if intended"
    assert FLOAT.sub("<float>", got) == FLOAT.sub("<float>", want), hint
    for g, w in zip(FLOAT.finditer(got), FLOAT.finditer(want), strict=True):
        assert math.isclose(float(g[0]), float(w[0]), rel_tol=REL, abs_tol=ABS), \
            f"{hint}: {g[0]} where {w[0]} was recorded: {want[max(0, w.start() - 200):w.end()]}"


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPECTED.glob("*.txt")))
def test_output_equals_the_recorded_one(produced: dict[str, str], name: str) -> None:
    want = (EXPECTED / f"{name}.txt").read_text(encoding="utf-8")
    assert_same_output(produced[name], want, name)


def test_the_comparison_forgives_float_noise_only() -> None:
    want = 'exit 0\n{"id": "a1", "rank": 2, "score": 0.12198993622908527, "v": "0.40.0"}'
    assert_same_output(want.replace("22908527", "22908526"), want, "noise")
    for changed in (want.replace("0.1219", "0.1220"), want.replace('"a1"', '"a2"'),
                    want.replace("2,", "3,"), want.replace("0.40.0", "0.41.0"),
                    want.replace("exit 0", "exit 1")):
        with pytest.raises(AssertionError):
            assert_same_output(changed, want, "changed")


def test_every_command_is_recorded() -> None:
    from tests.golden.record import commands

    assert {n for n, _ in commands()} == {p.stem for p in EXPECTED.glob("*.txt")}
