"""Every bad value a user can type is one sentence naming the input and what it may be
(issue 33): inf, NaN, 1e999 and a 400-digit number in integer parameters, an over-fetch grid
of 1e308, a limit of 1e12, a lone surrogate, an export into /proc/self, wrongly shaped
system configurations; never "failed unexpectedly (OverflowError ...)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import inspector
from inspector.cli.main import main
from inspector.core.errors import InspectorError

FLOW = ["--preset", "langchain-lancedb", "--vector-of", "m0001"]


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str], *said: str) -> None:
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, (argv, err)
    assert "unexpectedly" not in err[0] and all(s in err[0] for s in said), (argv, err[0])


@pytest.mark.parametrize("value", ["1e999", "-1e999", "NaN", "Infinity", "1" * 400, "2.5",
                                   '"x"', "[1]"])
def test_a_bad_integer_parameter_names_itself_and_its_range(
        capsys: pytest.CaptureFixture[str], small_store: Path, value: str) -> None:
    _one_line(capsys, ["query", str(small_store), *FLOW, "--set",
                       f"fetch.depth_extra={value}"],
              "fetch.depth_extra must be a whole number in [0, 1,000,000], not")


@pytest.mark.parametrize(("argv", "said"), [
    (["--set", "limit.max=1e999"], "--set limit.max must be a whole number in [1, 1,000,000]"),
    (["--set", "limit.default=NaN"], "--set limit.default must be a whole number in [1,"),
    (["--limit", "1000000000000"], "limit: Input should be less than or equal to 1000000"),
    (["--set", "fetch.depth_factor=1e999"], "fetch.depth_factor must be a finite number in"),
    (["--scope", "\udc80"], "--scope holds bytes that are not UTF-8 text"),
    (["--export", "/proc/self"], "Cannot write /proc/self/"),
])
def test_bad_values_of_a_pipeline_question_are_one_sentence(
        capsys: pytest.CaptureFixture[str], small_store: Path, argv: list[str],
        said: str) -> None:
    if "--scope" in argv:
        argv = [*argv, "--set", "fetch.scope_path=repo"]
    _one_line(capsys, ["query", str(small_store), *FLOW, *argv], said)


def test_an_audits_limit_names_itself(capsys: pytest.CaptureFixture[str],
                                      small_store: Path) -> None:
    _one_line(capsys, ["audit", "recall", str(small_store), *FLOW[:2], "--limit",
                       "1000000000000"], "limit: Input should be less than or equal to 1000000")


@pytest.mark.parametrize("command", ["sweep", "report"])
@pytest.mark.parametrize("grid", ["1e308", "1,1e7", "1:2e6:1e6"])
def test_an_over_fetch_grid_past_the_deepest_fetch_is_one_sentence(
        capsys: pytest.CaptureFixture[str], small_store: Path, tmp_path: Path, command: str,
        grid: str) -> None:
    out = ["--out", str(tmp_path / "r")] if command == "report" else []
    _one_line(capsys, [command, str(small_store), "--vector-of", "m0001", "--grid-overfetch",
                       grid, *out], f"--grid-overfetch {grid}: fetch.overfetch must be a finite "
              "number in [1, 1,000,000]")
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(("config", "said"), [
    ({"retrieval": "x"}, "retrieval must be an object"),
    ({"decay": 7}, "decay must be an object"),
    ({"retrieval": {"mode": 5}}, "retrieval.mode: Pipeline memory-lancedb-pro: setting.mode"),
    ({"retrieval": {"candidatePoolSize": 1e308 * 10}}, "retrieval.candidatePoolSize:"),
    ({"retrieval": {"minScore": [1]}}, "retrieval.minScore:"),
])
def test_a_wrongly_shaped_system_config_names_its_key(
        capsys: pytest.CaptureFixture[str], small_store: Path, tmp_path: Path,
        config: dict, said: str) -> None:
    f = tmp_path / "config.json"
    f.write_text(json.dumps(config))
    _one_line(capsys, ["query", str(small_store), "--preset", "memory-lancedb-pro",
                       "--vector-of", "m0001", "--system-config", str(f)],
              f"The system configuration file {f}:", said)


@pytest.mark.parametrize(("kw", "said"), [
    (dict(limit=1e12), "limit: Input should be less than or equal to 1000000"),
    (dict(limit=float("inf")), "limit: Input should be a finite number"),
    (dict(expect=[1]), "expect takes row ids as text"),
    (dict(scopes=[1, 2]), "scopes takes a list of scope names"),
    (dict(set={"fetch.depth_extra": float("nan")}), "fetch.depth_extra must be a whole number"),
])
def test_the_api_names_a_bad_value_too(small_store: Path, kw: dict, said: str) -> None:
    with pytest.raises(InspectorError) as err:
        inspector.open(small_store).query(vector_of="m0001", preset="langchain-lancedb", **kw)
    assert said in str(err.value)
