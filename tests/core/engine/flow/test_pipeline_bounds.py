"""Pipeline files are bounded before anything runs: `extends` names only a shipped pipeline
(never a path, so nothing escapes the 4 MiB bounded read), and the pipeline has at most
MAX_ROUTES routes, MAX_STAGES stages and MAX_EXPANDED_BYTES once its [defs] references are
expanded; each refusal is one sentence, given at once (a 10,000-stage file used to run for
minutes in `shot`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.core.engine.flow import spec as flow_spec
from inspector.core.engine.flow.spec import load_file
from inspector.core.errors import InspectorError

HEAD = 'schema = 1\nname = "big"\ntitle = "big"\n'


def _stages(n: int, route: str = "r") -> str:
    return f'[[routes]]\nname = "{route}"\n' + "".join(
        f'[[routes.stages]]\nname = "s{i}"\nkind = "limit"\n' for i in range(n))


@pytest.mark.parametrize("target", ["{tmp}/base", "{rel}/base", "{tmp}/base.toml",
                                    "memory-lancedb-pro/../../x"])
def test_extends_names_only_a_shipped_pipeline_never_a_path(tmp_path: Path,
                                                            target: str) -> None:
    base = tmp_path / "base.toml"  # larger than the bound, and a valid pipeline to extend
    base.write_text(HEAD + "# " + "x" * (flow_spec.MAX_FILE_BYTES + 10) + "\n" + _stages(1))
    mine = tmp_path / "mine.toml"
    shipped = str(flow_spec.shipped_dir())
    name = target.format(tmp=tmp_path, rel=os.path.relpath(tmp_path, shipped))
    mine.write_text(f'extends = "{name}"\nname = "mine"\ntitle = "mine"\n')
    with pytest.raises(InspectorError, match="extends names one shipped pipeline") as err:
        load_file(str(mine))
    assert len(str(err.value).splitlines()) == 1
    mine.write_text('extends = "memory-lancedb-pro"\nname = "mine"\ntitle = "mine"\n')
    assert load_file(str(mine)).name == "mine"


@pytest.mark.parametrize(("text", "said"), [
    (HEAD + _stages(300), "stages; a pipeline has at most"),
    (HEAD + "".join(_stages(1, f"r{i}") for i in range(40)),
     "routes; a pipeline has at most"),
    (HEAD + "[defs]\nbig = { " + ", ".join(f'k{i} = "{"v" * 90}"' for i in range(1000))
     + " }\n" + '[[routes]]\nname = "r"\n' + "".join(
         f'[[routes.stages]]\nname = "s{i}"\nkind = "query_expansion"\nsynonyms = "@big"\n'
         for i in range(60)), "[defs] references expand to more than"),
])
def test_a_pipeline_past_its_bounds_is_refused_before_it_is_validated(
        tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text)
    start = time.monotonic()
    with pytest.raises(InspectorError, match=said.replace("[", r"\[")):
        load_file(str(path))
    assert time.monotonic() - start < 5


def test_a_ten_thousand_stage_file_is_refused_at_once_by_query_and_shot(
        tmp_path: Path, small_store: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"schema": 1, "name": "huge", "title": "huge", "routes": [
        {"name": "r", "stages": [{"name": f"s{i}", "kind": "limit"} for i in range(10_000)]}]}))
    for command in ("query", "shot"):
        extra = ["--out", str(tmp_path / "x.png")] if command == "shot" else []
        start = time.monotonic()
        got = subprocess.run([sys.executable, "-m", "inspector", command, str(small_store),
                              "--pipeline", str(path), "--vector-of", "m0001", *extra],
                             capture_output=True, text=True, timeout=120)
        took = time.monotonic() - start
        assert got.returncode == 2 and "10,000 stages" in got.stderr, got.stderr
        assert len(got.stderr.strip().splitlines()) == 1 and took < 30
    assert not (tmp_path / "x.png").exists()
