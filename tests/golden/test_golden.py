"""Every documented example command gives exactly the recorded output (timings blanked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.record import EXPECTED, outputs


@pytest.fixture(scope="module")
def produced(demo_path: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = str(tmp_path_factory.mktemp("golden"))
    return dict(outputs(str(demo_path), tmp))


@pytest.mark.parametrize("name", sorted(p.stem for p in EXPECTED.glob("*.txt")))
def test_output_equals_the_recorded_one(produced: dict[str, str], name: str) -> None:
    want = (EXPECTED / f"{name}.txt").read_text(encoding="utf-8")
    assert produced[name] == want, f"`{name}` changed; rerun tests/golden/record.py if intended"


def test_every_command_is_recorded() -> None:
    from tests.golden.record import commands

    assert {n for n, _ in commands()} == {p.stem for p in EXPECTED.glob("*.txt")}
